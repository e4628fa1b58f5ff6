"""Code localization from the issue text alone: does a repository search find the files and functions a fix edits?

Usage: python -m bench.localize [--ranker bm25[,other]] [--splits dev,test,held-out] [--limit N] [--repos a,b]
                                [--k 100] [--skip-missing] [--cases]

Cases: bench.localize_data (each swe_dev instance's gold files and functions, from the gold patches in the mirrors);
--limit N keeps the first N by instance id of each split and repository. A repository is materialised once at
~/.cache/ctxsieve/bench/localize/repos/<owner+name> (a shared clone of the mirror) and its cases run in base-commit
order (`git checkout -f <commit>`, `git clean -fdx`), so an incremental index re-reads only what changed between
consecutive commits. Each ranker gets a fresh localizer per repository: `sync(folder)` after each checkout, then
`search(problem statement, k)`.
Metrics per case, over the hits in the order returned:
- file Acc@1 / Acc@5: every gold file is among the first 1 / 5 distinct files of the hits; file MRR: 1 / the rank
  of the first gold file among the distinct files (0 when none);
- function Acc@10: every gold function (path, qualified name) is among the first 10 hits of kind function/method
  (over the cases with at least one gold function);
- reachable file@1 / @5: the share of cases whose fix edits at most 1 / 5 files, the most file Acc@1 / @5 can be;
  each split is also reported over its cases with one gold file alone (SWE-bench Lite's instances all are);
- timing: each sync (the first of a repository, a full index build, apart) and each search.
Per split, per repository (>= 10 cases) and pooled; rankers side by side.

Plugging a ranker in: a class with `sync(root: Path) -> None` and `search(query: str, k: int) -> list[Hit]`
(the Localizer protocol below), named in RANKERS as "module:factory" (a zero-argument callable returning one).
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import math
import os
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bench.localize_data import CACHE, LocCase, git, git_dir, load

SPLITS = ("dev", "test", "held-out")
WORK = CACHE / "repos"  # a working folder per repository
K = 100  # hits asked for: enough for 5 distinct files and 10 functions in practice
FUNCTION_KINDS = frozenset({"function", "method"})
# name -> "module:factory"; a factory takes no argument and returns a fresh Localizer (one per repository)
RANKERS = {
    "bm25": "bench.localize_bm25:Bm25Localizer",
    "ctxsieve": "bench.localize_ctxsieve:CtxsieveLocalizer",
    "ctxsieve-lexical": "bench.localize_ctxsieve:lexical_only",
    "ctxsieve-fused": "bench.localize_ctxsieve:fused",  # tried at stop 68, not kept (see bench.localize_ctxsieve)
}


@dataclass(frozen=True)
class Hit:
    path: str  # relative to the root, posix
    name: str  # qualified, dotted (`QuerySet.filter`); `<module>` for a file's code outside definitions
    kind: str  # function, method, class, module (or the grammar's word: struct, interface, ...)
    start_line: int  # 1-based, inclusive
    end_line: int
    score: float


class Localizer(Protocol):
    def sync(self, root: Path) -> None:
        """Bring the index in step with the folder: new, changed and deleted files."""

    def search(self, query: str, k: int) -> list[Hit]:
        """The best `k` hits, best first."""


@dataclass(frozen=True)
class Outcome:
    repo: str
    split: str
    file1: bool | None  # None: the case has no gold file
    file5: bool | None
    mrr: float | None
    function10: bool | None  # None: the case has no gold function
    sync_ms: float
    search_ms: float
    cold: bool  # the repository's first sync
    gold_files: int  # how many files the fix edits: a case of two or more can never count at file@1
    instance: str = ""  # the case's instance id (`--cases` prints each)


def ranker(name: str) -> Callable[[], Localizer]:
    """A ranker by name; `ctxsieve-lexical@file_name=0.25` is that ranker with one of the rule's weights set (a
    weight's grid, run as the rankers of one command)."""
    base, _, weight = name.partition("@")
    if base not in RANKERS:
        raise SystemExit(f"unknown ranker {base!r}: one of {', '.join(sorted(RANKERS))}")
    module, factory = RANKERS[base].split(":")
    made: Callable[[], Localizer] = getattr(importlib.import_module(module), factory)
    if not weight:
        return made
    field, _, value = weight.partition("=")

    def weighted() -> Localizer:
        from ctxsieve.ingest.coderank.ranker import WEIGHTS

        localizer = made()
        localizer.weights = replace(WEIGHTS, **{field: float(value)})  # type: ignore[attr-defined]
        return localizer

    return weighted


def judged(case: LocCase, hits: list[Hit]) -> tuple[bool | None, bool | None, float | None, bool | None]:
    files = list(dict.fromkeys(h.path for h in hits))
    gold = set(case.gold_files)
    functions = [(h.path, h.name) for h in hits if h.kind in FUNCTION_KINDS][:10]
    if not gold:
        file1 = file5 = mrr = None
    else:
        file1, file5 = gold <= set(files[:1]), gold <= set(files[:5])
        mrr = next((1 / (i + 1) for i, f in enumerate(files) if f in gold), 0.0)
    function10 = set(case.gold_functions) <= set(functions) if case.gold_functions else None
    return file1, file5, mrr, function10


# --- working folders -----------------------------------------------------------------------------------

@contextmanager
def workdir(repo: str, under: Path = WORK) -> Iterator[Path]:
    """A clone of the mirror sharing its objects (made once): checkouts touch only the files that change. Held
    under an exclusive lock while in use: another run on the same folder waits instead of checking out under us."""
    under.mkdir(parents=True, exist_ok=True)
    with (under / f"{repo.replace('/', '+')}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield _cloned(repo, under / repo.replace("/", "+"))


def _cloned(repo: str, folder: Path) -> Path:
    if not (folder / ".git").is_dir():
        subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(git_dir(repo)), str(folder)],
                       check=True)
    return folder


def checkout(folder: Path, commit: str) -> None:
    """The tree at `commit`, less the blobs the snapshot lacks (files of 4 MiB and more are not in a snapshot; a
    localizer skips files that big anyway): those are kept out through a sparse checkout."""
    entries = [e.split("\t", 1) for e in git(folder, "ls-tree", "-r", "-z", commit).decode().split("\0") if e]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    checked = git(folder, "cat-file", "--batch-check", data="".join(f"{sha}\n" for sha, _ in blobs).encode())
    missing = [path for (_, path), line in zip(blobs, checked.decode().split("\n"), strict=False)
               if line.endswith(" missing")]
    git(folder, "config", "core.sparseCheckout", "true")
    git(folder, "config", "core.sparseCheckoutCone", "false")
    (folder / ".git" / "info").mkdir(exist_ok=True)
    (folder / ".git" / "info" / "sparse-checkout").write_text(
        "".join(["/*\n", *(f"!/{_escaped(p)}\n" for p in missing)]), encoding="utf-8")
    git(folder, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", commit)
    git(folder, "clean", "-fdxq")


def _escaped(path: str) -> str:
    """A path as a gitignore-style pattern that matches it alone."""
    return "".join(f"\\{c}" if c in "*?[]\\!# " else c for c in path)


def commit_order(folder: Path, cases: list[LocCase]) -> list[LocCase]:
    """The cases by their base commit's committer time (then id), so consecutive checkouts are close."""
    commits = sorted({c.base_commit for c in cases})
    stamps = git(folder, "show", "-s", "--format=%H %ct", *commits).decode().split()
    when = dict(zip(stamps[::2], map(int, stamps[1::2]), strict=True))
    return sorted(cases, key=lambda c: (when[c.base_commit], c.base_commit, c.instance_id))


def run(cases: list[LocCase], names: list[str], k: int, under: Path = WORK) -> Iterator[tuple[str, Outcome]]:
    """(ranker, outcome) per case and ranker, a repository at a time."""
    by_repo: dict[str, list[LocCase]] = defaultdict(list)
    for case in cases:
        by_repo[case.repo].append(case)
    for repo in sorted(by_repo):
        with workdir(repo, under) as folder:
            yield from _repository(folder, by_repo[repo], names, k)
        print(f"  {repo}: {len(by_repo[repo])} cases", flush=True)


def _repository(folder: Path, cases: list[LocCase], names: list[str], k: int) -> Iterator[tuple[str, Outcome]]:
    localizers = {name: ranker(name)() for name in names}
    for n, case in enumerate(commit_order(folder, cases)):
        checkout(folder, case.base_commit)
        for name, localizer in localizers.items():
            started = time.perf_counter()
            localizer.sync(folder)
            synced = time.perf_counter()
            hits = localizer.search(case.problem_statement, k)
            done = time.perf_counter()
            yield name, Outcome(case.repo, case.split, *judged(case, hits), (synced - started) * 1000,
                                (done - synced) * 1000, n == 0, len(case.gold_files), case.instance_id)


# --- the report ----------------------------------------------------------------------------------------

def _rate(values: list[bool | None] | list[float | None]) -> str:
    kept = [float(v) for v in values if v is not None]
    return f"{sum(kept) / len(kept):.3f}" if kept else "  -  "


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{statistics.median(ordered):.0f}/{ordered[math.ceil(0.9 * len(ordered)) - 1]:.0f}"  # nearest rank


def line(name: str, label: str, outcomes: list[Outcome]) -> str:
    with_files = sum(o.file1 is not None for o in outcomes)
    with_functions = sum(o.function10 is not None for o in outcomes)
    warm = [o.sync_ms for o in outcomes if not o.cold]
    cold = [o.sync_ms for o in outcomes if o.cold]
    judged_files = [o for o in outcomes if o.file1 is not None]
    return (f"{label:<38} {name:<10} n={len(outcomes):<4} file@1 {_rate([o.file1 for o in outcomes])}  "
            f"file@5 {_rate([o.file5 for o in outcomes])}  MRR {_rate([o.mrr for o in outcomes])} (n={with_files})  "
            f"fn@10 {_rate([o.function10 for o in outcomes])} (n={with_functions})  "
            f"reachable file@1/@5 {_rate([o.gold_files <= 1 for o in judged_files])}/"
            f"{_rate([o.gold_files <= 5 for o in judged_files])}  "
            f"sync ms p50/p90 {_ms(warm)} first {_ms(cold)}  search ms p50/p90 "
            f"{_ms([o.search_ms for o in outcomes])}")


def report(results: dict[str, list[Outcome]], splits: list[str]) -> Iterator[str]:
    names = list(results)
    first = results[names[0]]
    # (label, split, repo, one gold file only): None takes any. The cases whose fix edits one file are reported
    # apart: SWE-bench Lite's are all such, so published file@k figures compare with these rows, not the pooled
    # ones, whose file@1 cannot exceed the share of such cases ("reachable").
    groups: list[tuple[str, str | None, str | None, bool]] = []
    for split in splits:
        for repo in sorted({o.repo for o in first if o.split == split}):
            if sum(o.split == split and o.repo == repo for o in first) >= 10:
                groups.append((f"{split}: {repo}", split, repo, False))
        groups.append((f"{split}: pooled", split, None, False))
        groups.append((f"{split}: one gold file", split, None, True))
    groups.append(("all splits: pooled", None, None, False))
    for label, in_split, in_repo, single in groups:
        for name in names:
            picked = [o for o in results[name] if in_split in (None, o.split) and in_repo in (None, o.repo)
                      and (not single or o.gold_files == 1)]
            if picked:
                yield line(name, label, picked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranker", default="bm25", help=f"comma-separated, of: {', '.join(sorted(RANKERS))}")
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--limit", type=int, default=None,
                        help="at most N cases per split and repository (the first by instance id)")
    parser.add_argument("--repos", default="")
    parser.add_argument("--k", type=int, default=K, help="hits asked of each search")
    parser.add_argument("--skip-missing", action="store_true", help="leave out the cases of absent snapshots")
    parser.add_argument("--workdir", type=Path, default=WORK, help="where the working folders are")
    parser.add_argument("--cases", action="store_true",
                        help="also each case's file@1, file@5, MRR and function@10, a line per ranker and case")
    args = parser.parse_args()
    names = [n for n in args.ranker.split(",") if n]
    for name in names:
        ranker(name)
    splits = [s for s in args.splits.split(",") if s]
    repos = set(filter(None, args.repos.split(",")))
    all_cases, notes = load(args.skip_missing, repos)
    chosen: list[LocCase] = []
    for split in splits:
        for repo in sorted({c.repo for c in all_cases}):
            chosen.extend([c for c in all_cases if c.split == split and c.repo == repo][:args.limit])
    for note in notes:
        print(note)
    print(f"{len(chosen)} cases ({', '.join(f'{s} {sum(c.split == s for c in chosen)}' for s in splits)}) "
          f"from {len({c.repo for c in chosen})} repositories; k {args.k}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    results: dict[str, list[Outcome]] = {name: [] for name in names}
    for name, outcome in run(chosen, names, args.k, args.workdir):
        results[name].append(outcome)
    for text in report(results, splits):
        print(text)
    if args.cases:
        for name, outcomes in results.items():
            for o in sorted(outcomes, key=lambda o: (o.split, o.repo, o.instance)):
                mrr = "-" if o.mrr is None else f"{o.mrr:.3f}"
                print(f"case {name} {o.split} {o.instance} file@1 {o.file1} file@5 {o.file5} MRR {mrr} fn@10 "
                      f"{o.function10}")


if __name__ == "__main__":
    main()
