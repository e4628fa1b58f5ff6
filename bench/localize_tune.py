"""Choose the code ranker's weights on the localization dev split: each case's candidates and their signals are
gathered once (a sync per base commit), then every rule of a small grid is scored on them in memory.

Usage: python -m bench.localize_tune [--splits dev] [--limit N] [--repos a,b] [--top 15]

Prints each rule's file Acc@1 / Acc@5 / MRR and function Acc@10 (bench.localize's metrics), best first by the sum
of file Acc@5 and function Acc@10; the rule shipped (ingest/coderank/ranker.py WEIGHTS) is printed first. The
signals of every case are kept in ~/.cache/ctxsieve/bench/localize/signals-<split>.pkl for a re-run with --cached.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from bench.localize import SPLITS, Hit, checkout, commit_order, judged, workdir
from bench.localize_ctxsieve import CtxsieveLocalizer
from bench.localize_data import CACHE, LocCase, load
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import WEIGHTS, Weights, combine, with_files
from ctxsieve.ingest.coderank.units import CodeUnit


@dataclass
class Gathered:
    case: LocCase
    units: list[CodeUnit]
    rows: np.ndarray


def gather(cases: list[LocCase]) -> list[Gathered]:
    by_repo: dict[str, list[LocCase]] = defaultdict(list)
    for case in cases:
        by_repo[case.repo].append(case)
    out = []
    for repo in sorted(by_repo):
        localizer = CtxsieveLocalizer()
        with workdir(repo) as folder:
            for case in commit_order(folder, by_repo[repo]):
                checkout(folder, case.base_commit)
                localizer.sync(folder)
                units, rows = localizer.memory.candidates(read_code_query(case.problem_statement))
                out.append(Gathered(case, units, rows))
        print(f"  {repo}: {len(by_repo[repo])} cases gathered", flush=True)
    return out


def evaluate(gathered: list[Gathered], weights: Weights, k: int = 100) -> tuple[float, float, float, float]:
    file1, file5, mrr, fn10 = [], [], [], []
    for g in gathered:
        scores = with_files(combine(g.rows, g.units, weights), g.units, weights)
        order = sorted(range(len(g.units)), key=lambda j: (-scores[j], g.units[j].path, g.units[j].start_line))[:k]
        hits = [Hit(g.units[j].path, g.units[j].name, g.units[j].kind, g.units[j].start_line, g.units[j].end_line,
                    float(scores[j])) for j in order if scores[j] > 0]
        a1, a5, m, f10 = judged(g.case, hits)
        for bucket, value in ((file1, a1), (file5, a5), (mrr, m), (fn10, f10)):
            if value is not None:
                bucket.append(float(value))
    return tuple(statistics.fmean(b) if b else 0.0 for b in (file1, file5, mrr, fn10))  # type: ignore[return-value]


GRID = {
    "named": (0.0, 0.3, 0.6, 1.0, 1.5),
    "pair": (0.0, 0.4, 1.0),
    "path": (0.0, 0.5, 1.0, 2.0),
    "frame": (0.6,),
    "tests": (0.1, 0.3, 0.6, 1.0),
    "file": (0.0, 0.5, 1.0, 2.0),
    "aside": (0.5,),
    "vendored": (0.3,),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default="dev")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repos", default="")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--cached", action="store_true", help="reuse the signals gathered by the last run")
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s in SPLITS]
    store = CACHE / f"signals-{'-'.join(splits)}.pkl"
    if args.cached and store.exists():
        gathered = pickle.loads(store.read_bytes())
    else:
        repos = set(filter(None, args.repos.split(",")))
        cases = [c for c in load(skip_missing=True, repos=repos or None)[0] if c.split in splits]
        if args.limit:
            cases = [c for i, c in enumerate(sorted(cases, key=lambda c: c.instance_id)) if i < args.limit]
        gathered = gather(cases)
        store.write_bytes(pickle.dumps(gathered))
    print(f"{len(gathered)} cases of {', '.join(splits)}", flush=True)
    shipped = evaluate(gathered, WEIGHTS)
    print(f"shipped {WEIGHTS}: file@1 {shipped[0]:.3f} file@5 {shipped[1]:.3f} MRR {shipped[2]:.3f} "
          f"fn@10 {shipped[3]:.3f}")
    results = []
    for values in itertools.product(*GRID.values()):
        weights = replace(WEIGHTS, **dict(zip(GRID, values, strict=True)))
        results.append((evaluate(gathered, weights), weights))
    results.sort(key=lambda r: -(r[0][1] + r[0][3]))
    for (a1, a5, m, f10), weights in results[: args.top]:
        chosen = ", ".join(f"{name}={getattr(weights, name)}" for name in GRID)
        print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  {chosen}")


if __name__ == "__main__":
    main()
