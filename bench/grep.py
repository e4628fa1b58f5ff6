"""Coding agents' greps: does the cut of a grep output keep the file an issue's fix edits, and a line near the edit?

Usage: python -m bench.grep [--budget 1500] [--splits dev,test,held-out] [--limit N] [--repos a,b] [--url URL]
                            [--repository] [--lists]

Cases, built here from ../shared/data/swe_dev (an issue's text, the Python file its fix edits at the issue's base
commit, the lines the gold patch edits):
- a tree per case: the edited file at its path and, as distractors, every other file of the same repository that
  another swe_dev case holds (one version each: the first case's by instance id), written to a temporary folder;
- the issue's identifiers: words of the issue written as code, not a Python keyword or builtin, that occur as a
  word in the edited file: names (an underscore or a case change inside) first, then words the issue writes
  `in backticks` or calls `name(`, each in the issue's order; the first MAX_IDENTIFIERS;
- an output per identifier: `grep -rnF <identifier> .` over the tree (GNU grep, files in path order:
  `./path:line:text` lines), kept when it is over the budget in tokens (under it the service passes it whole);
- the intent as the hooks send it: the issue, then the command (ctxsieve_client.intent.step_intent), its end
  within the API's 4,000 characters.
Facts, judged on the output lines shown: the edited file shown (any line of it), and a line near an edit (a line
of the edited file within NEAR lines of a gold line). `possible` is the share of outputs holding such a line at all.

Splits: a repository is held out when the first byte of sha256(its name) is odd (openlibrary and pyvista here): all
its outputs are `held-out`. The other repositories' outputs are `dev` when the first byte of sha256(instance id) is
even, else `test`: one rule for every repository, and one issue never in two splits. The grep kind's rule was chosen
on `dev` alone.

--repository: each repository's tree is indexed on the service as a repository (`PUT /v1/repos/{name}`), kept in
step with each case's version of its file (`POST /v1/repos/{name}/sync`, waited for) before its outputs are cut, so
the cut ranks the output's files with the repository's own search as it does for a user who ran `ctxsieve index`
(the scratch service's read roots are the trees' folder; with --url, that service must be able to read it).

--lists: each output's files in order (`grep -l`, or Claude Code's Grep in its default files_with_matches mode),
as the tool lists them (path order here) and as the indexed repository orders them for the intent (`POST
/v1/repos/rank-files`, as the Claude Code hook sends them): where the edited file lands (first, in the first 5, MRR).

Peers, per output, at the same tokens: ctxsieve through the service as the hooks call it (`POST /v1/filter`,
content_type auto, the Bash call as the source, k 50, max_tokens the budget), its tokens counted as the model
receives them (o200k_base of the snippets as ctxsieve_client.wrap renders them: each under its heading, joined by
the separator; the placeholder, which any cut needs, left out of both), with the call's p50 latency; and BM25 over
single lines (the prose analyzer; the best lines while they fit in exactly ctxsieve's tokens for that output, each
with its newline, shown as the output's own lines in their order). Per repository (>= 10 outputs) and pooled, per
split.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import hashlib
import json
import keyword
import re
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bench.loadtest import scratch_process, service_url
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.cutting import MAX_INTENT_CHARS
from ctxsieve_client.intent import step_intent
from ctxsieve_client.models import Snippet
from ctxsieve_client.rendering import SEPARATOR, View, snippet

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe_dev" / "cases.jsonl"
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")
BUDGET = 1500  # what the hooks send for any output but a source file (cutting.PROSE_TOKENS)
MAX_IDENTIFIERS = 3
NEAR = 30
SPLITS = ("dev", "test", "held-out")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PLAIN = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls"}
_LINE = re.compile(r"^\./(.+?):(\d+):")


@dataclass(frozen=True)
class GrepCase:
    repo: str
    instance: str
    path: str  # the edited file, as the output names it (without ./)
    intent: str
    command: str
    output: str
    gold: tuple[int, ...]
    split: str

    def located(self) -> list[tuple[str, int] | None]:
        """Per output line, the file and line it shows."""
        return [(m.group(1), int(m.group(2))) if (m := _LINE.match(line)) else None for line in self.output.split("\n")]


@dataclass(frozen=True)
class Outcome:
    file: bool
    near: bool
    tokens: int
    possible: bool
    ms: float = 0.0


def split_of(repo: str, instance: str) -> str:
    if hashlib.sha256(repo.encode()).digest()[0] % 2:
        return "held-out"
    return "dev" if hashlib.sha256(instance.encode()).digest()[0] % 2 == 0 else "test"


def identifiers(issue: str, text: str) -> list[str]:
    """The issue's words written as code that occur as a word in the file: names (an underscore or a case change
    inside) first, then words the issue writes `in backticks` or calls `name(`, each in the issue's order."""
    names: list[str] = []
    quoted: list[str] = []
    for word in _WORD.findall(issue):
        if word in _PLAIN or word in names or word in quoted \
                or not re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text):
            continue
        if "_" in word.strip("_") or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]", word):
            names.append(word)
        elif f"`{word}" in issue or f"{word}(" in issue:
            quoted.append(word)
    return [*names, *quoted][:MAX_IDENTIFIERS]


def case_rows(repos: set[str] | None) -> list[dict]:  # type: ignore[type-arg]
    with DATA.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if not repos or r["repo"] in repos]


def _grep(root: Path, files: list[str], word: str) -> str:
    done = subprocess.run(["grep", "-nF", "-e", word, "--", *(f"./{f}" for f in files)], cwd=root,
                          capture_output=True, text=True, check=False)
    return done.stdout.rstrip("\n")


def build(budget: int, repos: set[str] | None = None) -> Iterator[GrepCase]:
    """The cases whose grep output is over `budget` tokens, a repository at a time."""
    rows = case_rows(repos)
    for repo, tree in trees_of(rows).items():
        with tempfile.TemporaryDirectory(prefix="bench-grep-") as folder:
            root = Path(folder)
            write_tree(root, tree)
            for row in (r for r in rows if r["repo"] == repo):
                yield from _cases(root, sorted(tree), row, budget)
                (root / row["path"]).write_text(tree[row["path"]], encoding="utf-8")  # the distractor's version


def trees_of(rows: list[dict]) -> dict[str, dict[str, str]]:  # type: ignore[type-arg]
    """Per repository, every file a case holds: path -> the first case's text of it (by instance id)."""
    trees: dict[str, dict[str, str]] = defaultdict(dict)
    for row in sorted(rows, key=lambda r: r["instance_id"]):
        trees[row["repo"]].setdefault(row["path"], row["file_text"])
    return trees


def write_tree(root: Path, tree: dict[str, str]) -> None:
    for path, text in tree.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def _cases(root: Path, files: list[str], row: dict, budget: int) -> Iterator[GrepCase]:  # type: ignore[type-arg]
    """A grep per identifier of the issue over the tree with the case's own version of the edited file, those
    over `budget` tokens."""
    (root / row["path"]).write_text(row["file_text"], encoding="utf-8")
    for word in identifiers(row["problem_statement"], row["file_text"]):
        output = _grep(root, files, word)
        if TOKENS.count(output) <= budget:
            continue
        command = f"grep -rnF {word} ."
        intent = (step_intent(row["problem_statement"], None, {"command": command}) or "")[-MAX_INTENT_CHARS:]
        yield GrepCase(row["repo"], row["instance_id"], row["path"], intent, command, output,
                       tuple(row["gold_lines"]), split_of(row["repo"], row["instance_id"]))


def judged(case: GrepCase, shown: set[int], tokens: int) -> Outcome:
    """`shown`: 1-based lines of the output."""
    located = case.located()

    def near(where: tuple[str, int] | None) -> bool:
        return where is not None and where[0] == case.path and any(abs(where[1] - g) <= NEAR for g in case.gold)

    return Outcome(file=any((w := located[n - 1]) is not None and w[0] == case.path for n in shown),
                   near=any(near(located[n - 1]) for n in shown), tokens=tokens,
                   possible=any(near(w) for w in located))


def rendered_tokens(snippets: list[Snippet]) -> int:
    """The snippets as the model receives them (wrap.render without the placeholder)."""
    shown = [snippet(s, View(by_lines=True, headed=False)) for s in snippets]  # as the surfaces show grep's
    return TOKENS.count(SEPARATOR.join(shown)) if snippets else 0


def ctxsieve(client: Client, case: GrepCase, budget: int) -> Outcome:
    started = time.perf_counter()
    result = client.filter(case.intent, case.output, source={"tool": "Bash", "args": {"command": case.command}},
                           k=50, max_tokens=budget, placeholder="tools")
    ms = (time.perf_counter() - started) * 1000
    shown = {n for s in result.snippets for n in range(s.line_start, s.line_end + 1)}
    return replace(judged(case, shown, rendered_tokens(result.snippets)), ms=ms)


def bm25_lines(case: GrepCase, budget: int) -> Outcome:
    """BM25 over the output's single lines, best first while they fit in `budget` tokens (each line with its
    newline), shown as the output's lines in their order."""
    lines = case.output.split("\n")
    scores = Bm25Index.build(lines).scores(case.intent)
    used, shown = 0, set()
    for i in sorted(range(len(lines)), key=lambda j: (-scores[j], j)):
        cost = TOKENS.count(lines[i] + "\n")
        if used + cost > budget:
            continue
        used += cost
        shown.add(i + 1)
    return judged(case, shown, used)


def report(name: str, rows: dict[str, list[Outcome]]) -> Iterator[str]:
    pooled = [o for outcomes in rows.values() for o in outcomes]
    for repo, outcomes in [*sorted(rows.items()), ("pooled", pooled)]:
        if not outcomes or (repo != "pooled" and len(outcomes) < 10):
            continue  # the small Lite-dev repositories are in the pooled figure
        n = len(outcomes)
        latency = f"  p50 {statistics.median(o.ms for o in outcomes):.0f} ms" if any(o.ms for o in outcomes) else ""
        yield (f"{name:<22} {repo:<28} n={n:<4} edited file {sum(o.file for o in outcomes) / n:.3f}  "
               f"line near an edit {sum(o.near for o in outcomes) / n:.3f} (possible "
               f"{sum(o.possible for o in outcomes) / n:.3f})  tokens median "
               f"{statistics.median(o.tokens for o in outcomes):.0f}{latency}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--limit", type=int, default=None, help="at most N cases per split")
    parser.add_argument("--repos", default="")
    parser.add_argument("--url", default="", help="a running service instead of a scratch one")
    parser.add_argument("--repository", action="store_true", help="index each tree as a repository (see above)")
    parser.add_argument("--lists", action="store_true", help="the outputs' lists of files ordered by the indexed "
                        "repository instead of cut (see above; implies --repository)")
    args = parser.parse_args()
    args.repository = args.repository or args.lists
    splits = [s for s in args.splits.split(",") if s]
    chosen: dict[str, list[GrepCase]] = {s: [] for s in splits}
    for case in build(args.budget, set(filter(None, args.repos.split(",")))):
        if case.split in chosen and (args.limit is None or len(chosen[case.split]) < args.limit):
            chosen[case.split].append(case)
    sizes = [TOKENS.count(c.output) for cases in chosen.values() for c in cases]
    print(f"{sum(map(len, chosen.values()))} grep outputs over {args.budget} tokens from {DATA.parent.name}; output "
          f"tokens median {statistics.median(sizes):.0f}; budget {args.budget}", flush=True)
    for split, cases in chosen.items():
        print(f"  {split}: {len(cases)} outputs of {len({c.instance for c in cases})} issues, from "
              f"{', '.join(sorted({c.repo for c in cases}))}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-grep-trees-") as folder, \
            tree_service(args.url, Path(folder) if args.repository else None) as url:
        client = Client(url, timeout=600)
        trees = Trees(client, Path(folder), case_rows(None)) if args.repository else None
        if trees is not None and args.lists:
            for split, cases in chosen.items():
                for line in ordered_lists(client, trees, split, cases):
                    print(line, flush=True)
            return
        for split, cases in chosen.items():
            shipped: dict[str, list[Outcome]] = defaultdict(list)
            peer: dict[str, list[Outcome]] = defaultdict(list)
            for case in cases:
                if trees is not None:
                    trees.as_in(case)
                outcome = ctxsieve(client, case, args.budget)
                shipped[case.repo].append(outcome)
                peer[case.repo].append(bm25_lines(case, outcome.tokens))
            for line in [*report(f"{split}: ctxsieve", shipped), *report(f"{split}: bm25 lines", peer)]:
                print(line, flush=True)


def ordered_lists(client: Client, trees: Trees, split: str, cases: list[GrepCase]) -> Iterator[str]:
    """Each output's files (what `grep -l` or Claude Code's Grep in files_with_matches mode lists), in the tool's
    order (path order here; Claude Code's is newest first) and as `POST /v1/repos/rank-files` orders them: where the
    edited file lands."""
    places: dict[str, list[int]] = {"the tool's order": [], "ranked by the repository": []}
    sizes, took = [], []
    for case in cases:
        trees.as_in(case)
        folder = trees.folder(case.repo)
        listed = list(dict.fromkeys(f"./{where[0]}" for where in case.located() if where is not None))
        started = time.perf_counter()
        order = client.rank_files(case.intent, listed, base=str(folder))
        took.append((time.perf_counter() - started) * 1000)
        edited = f"./{case.path}"
        places["the tool's order"].append(listed.index(edited) + 1)
        places["ranked by the repository"].append(order.paths.index(edited) + 1)
        sizes.append(len(listed))
    for name, found in places.items():
        n = len(found)
        yield (f"{split}: {name:<25} n={n:<4} edited file first {sum(p == 1 for p in found) / n:.3f}  in the first 5 "
               f"{sum(p <= 5 for p in found) / n:.3f}  MRR {statistics.fmean(1 / p for p in found):.3f}  "
               f"files listed median {statistics.median(sizes):.0f}"
               + (f"  p50 {statistics.median(took):.0f} ms" if name.startswith("ranked") else ""))


@contextlib.contextmanager
def tree_service(url: str, readable: Path | None) -> Iterator[str]:
    """The service named, or a scratch one that may read `readable` (the repositories' trees), if given."""
    if url or readable is None:
        with service_url(url, "bench-grep-") as found:
            yield found
        return
    with scratch_process("bench-grep-", {"CTXSIEVE_READ_ROOTS": str(readable)}) as (_, scratch, _root):
        yield scratch


class TreeCase(Protocol):
    """A case read from its repository's tree (bench.grep's outputs, bench.code's reads)."""

    repo: str
    instance: str
    path: str


class Trees:
    """Each repository's tree under `root` (the distractors' versions), indexed on the service and kept in step
    with the case being cut: its own version of its file written, synced and waited for."""

    def __init__(self, client: Client, root: Path, rows: list[dict]) -> None:  # type: ignore[type-arg]
        self.client, self.root = client, root
        self.texts = {(r["repo"], r["instance_id"]): r["file_text"] for r in rows}
        self.base = trees_of(rows)
        self.indexed: set[str] = set()
        self.written: dict[str, str] = {}  # repo -> the path holding a case's version

    def folder(self, repo: str) -> Path:
        return self.root / repo.replace("/", "+")

    def as_in(self, case: TreeCase) -> Path:
        """The case's repository tree with the case's own version of its file, indexed; the file's path in it."""
        folder = self.folder(case.repo)
        if case.repo not in self.indexed:
            write_tree(folder, self.base[case.repo])
            self.indexed.add(case.repo)
        if (last := self.written.pop(case.repo, None)) is not None:
            (folder / last).write_text(self.base[case.repo][last], encoding="utf-8")
        (folder / case.path).write_text(self.texts[(case.repo, case.instance)], encoding="utf-8")
        self.written[case.repo] = case.path
        name = _repo_name(case.repo)
        info = self.client.index_repo(name, str(folder))  # registered once; then each call syncs it
        while info.state == "indexing":
            time.sleep(0.05)
            info = self.client.repo(name)
        return folder / case.path


def _repo_name(repo: str) -> str:
    return repo.replace("/", "-").replace(".", "-")


if __name__ == "__main__":
    main()
