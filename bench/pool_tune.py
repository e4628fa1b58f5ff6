"""Choose fast mode's dense budget on the dev split: every rule simulated from one dump of exact scores.

Usage: python -m bench.pool_tune [--questions 300] [--store FOLDER]
For each dev question (disjoint from the test questions bench/recall.py reports) every chunk's dense, BM25
and static score is computed once; a rule (which chunks reach the dense model) is then replayed exactly as
the sieve would run it, fused and packed, and scored for evidence recall at 300 / 600 tokens against
`accurate` (every chunk). Rules: N plain candidates, or N candidates plus the chunks either side of the
best K dense hits (radius R). The pool columns are how many chunks the full model embeds (mean / max).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.datasets import Case, cmrc_dev_cases, found, squad_dev_cases
from bench.recall import BUDGETS, CACHE, make_sieve
from indexes.ranking import Candidate, fuse, pack_to_budget, rank_order
from indexes.sources import SourceInput
from indexes.store import QdrantStore
from ingest.embedding import load_sentence_transformer
from ingest.normalize import Document
from ingest.tokens import load_tokenizer


@dataclass
class Scored:
    case: Case
    lexical: np.ndarray
    static: np.ndarray
    dense: np.ndarray
    candidates: list[Candidate]
    documents: np.ndarray  # each chunk's document, so neighbours stay inside one


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
                           np.array([chunk.document for _, chunk in prep.units])))
    return rows


def interleaved(row: Scored, n: int) -> list[int]:
    rankings = [rank_order(row.lexical), rank_order(row.static)]
    pool: dict[int, None] = {}
    for position in range(len(row.lexical)):
        for ranking in rankings:
            pool.setdefault(ranking[position])
        if len(pool) >= n:
            break
    return list(pool)[:n]


def plain(n: int) -> Rule:
    return lambda row: interleaved(row, n) if len(row.dense) > n else list(range(len(row.dense)))


def with_neighbours(n: int, best: int, radius: int = 1) -> Rule:
    def rule(row: Scored) -> list[int]:
        if len(row.dense) <= n + 2 * best * radius:  # as the sieve: no more than the most it could embed
            return list(range(len(row.dense)))
        first = interleaved(row, n)
        top = sorted(first, key=lambda i: (-round(float(row.dense[i]), 9), i))[:best]
        around = [j for i in top for offset in range(1, radius + 1) for j in (i - offset, i + offset)
                  if 0 <= j < len(row.dense) and row.documents[j] == row.documents[i]]
        return first + [j for j in dict.fromkeys(around) if j not in first]
    return rule


def recall(rows: list[Scored], rule: Rule) -> tuple[float, int, list[float]]:
    hits = dict.fromkeys(BUDGETS, 0)
    sizes = []
    for row in rows:
        pool = rule(row)
        sizes.append(len(pool))
        dense = np.full(len(row.dense), np.nan)
        dense[pool] = row.dense[pool]
        fused = fuse(dense, row.lexical, 0.6)
        for budget in BUDGETS:
            chosen = pack_to_budget(row.candidates, fused, 50, budget, np.isfinite(dense))
            hits[budget] += found(row.case.answers, "\n".join(row.candidates[i].text for i in chosen))
    return float(np.mean(sizes)), max(sizes), [hits[b] / len(rows) for b in BUDGETS]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--store", type=Path, help="keep chunk vectors in this folder across runs")
    args = parser.parse_args()
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = load_sentence_transformer("multilingual-e5-small", CACHE / "models")
    sieve = make_sieve(QdrantStore.open(args.store), 96, 0.6, embedder, tokenizer)
    rules: dict[str, Rule] = {"accurate (every chunk)": lambda row: list(range(len(row.dense)))}
    rules.update({f"{n} plain candidates": plain(n) for n in (16, 20, 24)})
    rules.update({f"{n} + neighbours of {k}, radius {r}": with_neighbours(n, k, r)
                  for n in (10, 12, 14, 16) for k in (2, 3, 4) for r in (1, 2) if n + 2 * k * r <= 24})
    sets = {"squad": squad_dev_cases(args.questions), "cmrc": cmrc_dev_cases(args.questions)}
    results = {name: {label: recall(rows, rule) for label, rule in rules.items()}
               for name, rows in ((name, dump(cases, sieve)) for name, cases in sets.items())}
    print(f"{'rule':<34}" + "".join(f"{name + ' pool mean/max  @300  @600':>36}" for name in results))
    for label in rules:
        cells = [results[name][label] for name in results]
        print(f"{label:<34}" + "".join(f"{mean:>21.1f}/{most:<3d} {r[0]:.3f} {r[1]:.3f}" for mean, most, r in cells))


if __name__ == "__main__":
    main()
