"""Choose the code ranker's weights on the localization dev split: each case's candidates and their signals are
gathered once (a sync per base commit), then every rule of a small grid is scored on them in memory.

Usage: python -m bench.localize_tune [--splits dev] [--limit N] [--repos a,b] [--top 15] [--dense] [--k3 0,1,4]
                                      [--per-file 1,2,3] [--phrases 0,0.5,1,2] [--title 0,1,2,4,8]

Prints each rule's file Acc@1 / Acc@5 / MRR and function Acc@10 (bench.localize's metrics), best first by the sum
of file Acc@5 and function Acc@10; the rule shipped (ingest/coderank/ranker.py WEIGHTS) is printed first. The
signals of every case are kept in ~/.cache/ctxsieve/bench/localize/signals-<split>.pkl for a re-run with --cached.
--dense: the dense weight alone (the other weights as shipped), each case's best DENSE_TOP units re-ranked by the
dense model's vectors as a ready repository's are (`ranker.rerank`); the vectors are kept beside the signals.
--k3 A,B,...: how much a word the issue repeats counts in BM25 (`coderank.lexical.K3`): the signals gathered again
with each value, the shipped weights' lexical rule (dense 0) scored on them.
--per-file A,B,...: at most A (B, ...) units of a file first, the file's others after them, against no cap (the
shipped weights' lexical rule).
--phrases A,B,...: the phrase signal's weight (`ranker.phrases_held`) with the issue's error messages and quoted
strings read as a short search's are (an issue is read without them): the signals gathered so, the shipped weights'
lexical rule scored with each weight.
--title A,B,...: how many more times the issue's title words count (`titled`; tried at stop 66, not shipped): each
case's candidates read with each value at one sync, the shipped weights' lexical rule scored on them.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench.localize import SPLITS
from bench.localize_ctxsieve import CtxsieveLocalizer, rates, synced
from bench.localize_data import CACHE, LocCase, load
from ctxsieve.ingest.analyzers import code_terms
from ctxsieve.ingest.coderank.lexical import K3
from ctxsieve.ingest.coderank.query import CodeQuery, message_phrases, read_code_query
from ctxsieve.ingest.coderank.ranker import SIGNALS, WEIGHTS, Cosines, Weights, order_of, passage_of, rerank, score
from ctxsieve.ingest.coderank.units import CodeUnit


@dataclass
class Gathered:
    case: LocCase
    units: list[CodeUnit]
    rows: np.ndarray
    query: np.ndarray | None = None  # the problem statement's vector (--dense)


def gather(cases: list[LocCase], k3: float = K3, phrases: bool = False) -> list[Gathered]:
    return [Gathered(case, *localizer.memory.candidates(_read(case.problem_statement, phrases)))
            for case, localizer in synced(cases, lambda: CtxsieveLocalizer(k3=k3))]


def _read(text: str, phrases: bool) -> CodeQuery:
    """The issue as a search reads it; with `phrases`, its messages' phrases too, as a short search's are."""
    read = read_code_query(text)
    return replace(read, phrases=message_phrases(text)) if phrases else read


def evaluate(gathered: list[Gathered], weights: Weights, k: int = 100, vectors: dict[str, np.ndarray] | None = None,
             per_file: int | None = None) -> tuple[float, float, float, float]:
    return rates(_ranked(g, weights, k, vectors, per_file) for g in gathered)


def _ranked(g: Gathered, weights: Weights, k: int, vectors: dict[str, np.ndarray] | None, per_file: int | None
            ) -> tuple[LocCase, list[CodeUnit], np.ndarray, list[int]]:
    scores = score(g.rows, g.units, weights)
    if vectors is not None and g.query is not None:
        scores = rerank(g.rows.copy(), g.units, scores, _cosines(g.query, vectors), weights)
    return g.case, g.units, scores, capped(order_of(scores, g.units), g.units, per_file)[:k]


def capped(order: list[int], units: list[CodeUnit], per_file: int | None) -> list[int]:
    """`order` with at most `per_file` units of a file first, each file's others after them (None: as it is)."""
    if per_file is None:
        return order
    seen: dict[str, int] = defaultdict(int)
    first, later = [], []
    for j in order:
        seen[units[j].path] += 1
        (first if seen[units[j].path] <= per_file else later).append(j)
    return first + later


def _cosines(query: np.ndarray, vectors: dict[str, np.ndarray]) -> Cosines:
    def of(units: Sequence[CodeUnit]) -> np.ndarray:
        return np.stack([vectors[passage_of(u)] for u in units]) @ query
    return of


def embed_best(gathered: list[Gathered], vectors: dict[str, np.ndarray]) -> None:
    """The query's vector and those of the units the rule re-ranks (its best DENSE_TOP without the dense signal,
    the same for every dense weight), as bench.localize_ctxsieve makes them."""
    from bench.localize_ctxsieve import dense_model
    from ctxsieve.ingest.coderank.ranker import DENSE_TOP, QUERY_TOKENS
    from ctxsieve.ingest.embedding import head_of

    model = dense_model()
    for n, g in enumerate(gathered, 1):
        g.query = model.embed_queries([head_of(model, g.case.problem_statement, QUERY_TOKENS)])[0]
        best = order_of(score(g.rows, g.units, replace(WEIGHTS, dense=0.0)), g.units)[:DENSE_TOP]
        new = sorted({passage_of(g.units[j]) for j in best} - set(vectors))
        for start in range(0, len(new), 8):
            vectors.update(zip(new[start : start + 8], model.embed_passages(new[start : start + 8]), strict=True))
        if n % 10 == 0:
            print(f"  {n} of {len(gathered)} cases embedded ({len(vectors)} passages)", flush=True)


DENSE_GRID = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)
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
    parser.add_argument("--dense", action="store_true", help="tune the dense weight alone (see above)")
    parser.add_argument("--k3", default="", help="comma-separated values of BM25's k3 to compare (see above)")
    parser.add_argument("--per-file", default="", help="comma-separated caps of a file's units first (see above)")
    parser.add_argument("--phrases", default="", help="comma-separated weights of the phrase signal (see above)")
    parser.add_argument("--title", default="", help="comma-separated repeats of the title's words (see above)")
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s in SPLITS]
    if args.k3:
        compare_k3(splits, [float(v) for v in args.k3.split(",")], args.limit)
        return
    if args.title:
        compare_title(splits, [int(v) for v in args.title.split(",")], args.limit)
        return
    store = CACHE / f"signals-{'-'.join(splits)}{'-phrases' if args.phrases else ''}.pkl"
    if args.cached and store.exists():
        gathered = pickle.loads(store.read_bytes())
    else:
        repos = set(filter(None, args.repos.split(",")))
        cases = [c for c in load(skip_missing=True, repos=repos or None)[0] if c.split in splits]
        if args.limit:
            cases = [c for i, c in enumerate(sorted(cases, key=lambda c: c.instance_id)) if i < args.limit]
        gathered = gather(cases, phrases=bool(args.phrases))
        store.write_bytes(pickle.dumps(gathered))
    print(f"{len(gathered)} cases of {', '.join(splits)}", flush=True)
    if args.dense:
        dense_only(gathered, CACHE / f"vectors-{'-'.join(splits)}.pkl")
        return
    if args.phrases:
        print(f"{sum(1 for g in gathered if g.rows[:, SIGNALS.index('phrase')].any())} cases with a phrase some "
              "definition holds", flush=True)
        for weight in (float(v) for v in args.phrases.split(",")):
            a1, a5, m, f10 = evaluate(gathered, replace(WEIGHTS, dense=0.0, phrase=weight))
            print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  phrase={weight}", flush=True)
        return
    if args.per_file:
        for cap in [None, *(int(v) for v in args.per_file.split(","))]:
            a1, a5, m, f10 = evaluate(gathered, replace(WEIGHTS, dense=0.0), per_file=cap)
            print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  per_file={cap}", flush=True)
        return
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


def compare_k3(splits: list[str], values: list[float], limit: int | None) -> None:
    cases = [c for c in load(skip_missing=True)[0] if c.split in splits]
    if limit:
        cases = sorted(cases, key=lambda c: c.instance_id)[:limit]
    lexical = replace(WEIGHTS, dense=0.0)
    for k3 in values:
        a1, a5, m, f10 = evaluate(gather(cases, k3), lexical)
        shipped = " (shipped)" if k3 == K3 else ""
        print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  k3={k3:g}{shipped}", flush=True)


# an issue's title under its heading: `## Title`, `# Title: ...`, `# ...`
_TITLE_LABEL = re.compile(r"^\s*#*\s*(?:title\b\s*:?)?\s*", re.IGNORECASE)


def title_of(text: str) -> str:
    """The request's first line of words, after a heading's marks and a `Title` label (SWE-bench Pro's issues put
    the title under a `## Title` heading of its own); "" for a request of one line, all of it title."""
    lines = [_TITLE_LABEL.sub("", line, count=1) for line in text.strip().split("\n")]
    words = [i for i, line in enumerate(lines) if line.strip()]
    return lines[words[0]] if len(words) > 1 else ""


def titled(text: str, repeats: int) -> CodeQuery:
    """The issue as a search reads it, its title's words counted `repeats` more times (an issue, not a short search
    nor a pasted trace)."""
    read = read_code_query(text)
    if not repeats or read.short or read.trace:
        return read
    return replace(read, terms=(*read.terms, *code_terms(title_of(text)) * repeats))


def compare_title(splits: list[str], values: list[int], limit: int | None) -> None:
    cases = [c for c in load(skip_missing=True)[0] if c.split in splits]
    if limit:
        cases = sorted(cases, key=lambda c: c.instance_id)[:limit]
    gathered: dict[int, list[Gathered]] = {v: [] for v in values}
    for case, localizer in synced(cases, CtxsieveLocalizer):
        for value in values:
            gathered[value].append(Gathered(case, *localizer.memory.candidates(titled(case.problem_statement, value))))
    for value in values:
        a1, a5, m, f10 = evaluate(gathered[value], replace(WEIGHTS, dense=0.0))
        note = " (shipped)" if value == 0 else ""
        print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  title={value}{note}", flush=True)


def dense_only(gathered: list[Gathered], kept: Path) -> None:
    vectors: dict[str, np.ndarray] = pickle.loads(kept.read_bytes()) if kept.exists() else {}
    embed_best(gathered, vectors)
    kept.write_bytes(pickle.dumps(vectors))
    for weight in DENSE_GRID:
        a1, a5, m, f10 = evaluate(gathered, replace(WEIGHTS, dense=weight), vectors=vectors)
        shipped = " (shipped)" if weight == WEIGHTS.dense else ""
        print(f"file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}  dense={weight}{shipped}", flush=True)


if __name__ == "__main__":
    main()
