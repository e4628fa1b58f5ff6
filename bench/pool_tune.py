"""Choose fast mode's dense budget on the dev split: every rule simulated from one dump of exact scores.

Usage: python -m bench.pool_tune [--questions 300] [--store FOLDER]
For each dev question (disjoint from the test questions bench/recall.py reports) every chunk's dense, BM25
and static score is computed once; a rule (which chunks reach the dense model) is then replayed with the
sieve's own functions (interleave, neighbours, select) and scored for evidence recall at 300 / 600 tokens
against `accurate` (every chunk). Rules: N plain candidates, or N candidates plus the chunks either side of the
best K dense hits (radius R). The pool columns are how many chunks the full model embeds (mean / max).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.datasets import Case, cmrc_cases, cmrc_dev_cases, found, squad_cases, squad_dev_cases
from bench.models import dense_model
from bench.recall import BUDGETS, CACHE, make_sieve
from ctxsieve.indexes.ranking import Candidate, interleave, neighbours, rank_order, select
from ctxsieve.indexes.sieve import FAST_CANDIDATES, FAST_NEIGHBOURS
from ctxsieve.indexes.sources import SourceInput
from ctxsieve.indexes.store import open_store
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.tokens import load_tokenizer


@dataclass
class Scored:
    case: Case
    lexical: np.ndarray
    static: np.ndarray
    dense: np.ndarray
    candidates: list[Candidate]
    documents: np.ndarray  # as Prepared.documents: neighbours stay inside one


Rule = Callable[[Scored], list[int]]


def dump(cases: list[Case], sieve) -> list[Scored]:  # type: ignore[no-untyped-def]
    rows = []
    for case in cases:
        source = sieve.sources.put("bench", SourceInput((Document(case.text),), True, "text"))
        prep = sieve._prepared_of([source])
        every = list(range(len(prep.passages)))
        static = prep.static @ sieve.static.embed([case.question])[0]
        dense = sieve._passage_vectors(prep, every) @ sieve.vectors.query(case.question)
        rows.append(Scored(case, prep.lexical.scores(case.question), static, dense, prep.candidates,
                           prep.documents))
    return rows


def first_stage(row: Scored, n: int) -> list[int]:
    return interleave([rank_order(row.lexical), rank_order(row.static)], n)


def plain(n: int) -> Rule:
    return lambda row: first_stage(row, n) if len(row.dense) > n else list(range(len(row.dense)))


def with_neighbours(n: int, best: int, radius: int = 1) -> Rule:
    def rule(row: Scored) -> list[int]:
        if len(row.dense) <= n + 2 * best * radius:  # as the sieve: no more than the most it could embed
            return list(range(len(row.dense)))
        first = first_stage(row, n)
        return first + neighbours(first, only(row.dense, first), row.documents, best, radius)
    return rule


def only(dense: np.ndarray, pool: list[int]) -> np.ndarray:
    """The dense scores the sieve would have: those of the pool, NaN elsewhere."""
    out = np.full(len(dense), np.nan)
    out[pool] = dense[pool]
    return out


def hit(row: Scored, pool: list[int], budget: int) -> bool:
    chosen = select(row.candidates, only(row.dense, pool), row.lexical, 0.6, 50, budget)
    return found(row.case.answers, "\n".join(row.candidates[i].text for i in chosen))


def recall(rows: list[Scored], rule: Rule) -> tuple[float, int, list[float]]:
    pools = [rule(row) for row in rows]
    rates = [sum(hit(row, pool, b) for row, pool in zip(rows, pools, strict=True)) / len(rows) for b in BUDGETS]
    return float(np.mean([len(p) for p in pools])), max(len(p) for p in pools), rates


def explain(rows: list[Scored]) -> None:
    """Where fast mode misses what accurate finds: each gold chunk's rank by BM25, static and dense."""
    fast = with_neighbours(FAST_CANDIDATES, FAST_NEIGHBOURS)
    for number, row in enumerate(rows):
        pool = fast(row)
        missed = [b for b in BUDGETS if hit(row, list(range(len(row.dense))), b) and not hit(row, pool, b)]
        if not missed:
            continue
        gold = [i for i, c in enumerate(row.candidates) if found(row.case.answers, c.text)]
        ranks = {name: [rank_order(scores).index(g) + 1 for g in gold]
                 for name, scores in (("BM25", row.lexical), ("static", row.static), ("dense", row.dense))}
        print(f"question {number} ({row.case.question}), missed @{missed}: gold chunk in the pool "
              f"{[g in pool for g in gold]}, rank by " + ", ".join(f"{k} {v}" for k, v in ranks.items()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--store", type=Path, help="keep chunk vectors in this folder across runs")
    parser.add_argument("--explain", choices=("squad", "cmrc"), help="instead: the first 150 TEST questions of a set "
                        "that fast mode misses and accurate finds, and where each ranker put the gold chunk")
    args = parser.parse_args()
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = dense_model()
    sieve = make_sieve(open_store(args.store), 96, 0.6, embedder, tokenizer)
    if args.explain:
        explain(dump((squad_cases if args.explain == "squad" else cmrc_cases)(150), sieve))
        return
    rules: dict[str, Rule] = {"accurate (every chunk)": lambda row: list(range(len(row.dense)))}
    # Up to 24 chunks: the budgets chosen on ONNX Runtime; up to 32: what OpenVINO bf16's faster dense stage could
    # spend in the same time, if the dev split says it buys recall.
    rules.update({f"{n} plain candidates": plain(n) for n in (16, 20, 24, 28, 32)})
    rules.update({f"{n} + neighbours of {k}, radius {r}": with_neighbours(n, k, r)
                  for n in (10, 12, 14, 16, 20, 24) for k in (2, 3, 4) for r in (1, 2) if n + 2 * k * r <= 32})
    sets = {"squad": squad_dev_cases(args.questions), "cmrc": cmrc_dev_cases(args.questions)}
    results = {name: {label: recall(rows, rule) for label, rule in rules.items()}
               for name, rows in ((name, dump(cases, sieve)) for name, cases in sets.items())}
    print(f"{'rule':<34}" + "".join(f"{name + ' pool mean/max  @300  @600':>36}" for name in results))
    for label in rules:
        cells = [results[name][label] for name in results]
        print(f"{label:<34}" + "".join(f"{mean:>21.1f}/{most:<3d} {r[0]:.3f} {r[1]:.3f}" for mean, most, r in cells))


if __name__ == "__main__":
    main()
