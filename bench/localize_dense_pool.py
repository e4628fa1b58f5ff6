"""A dense first stage beside the lexical one, on the localization split: would the definitions whose vectors are
nearest the issue's (every shipped unit's, as a `ready` repository has them) find files the lexical pool misses?

Usage: python -m bench.localize_dense_pool [--splits dev] [--repos a,b]

Each case's repository is synced at its base commit as bench.localize does; every unit with a vector (`has_vector`)
is embedded as the service embeds it (`passage_of`, kept by passage in ~/.cache/ctxsieve/bench/localize/
dense-pool-vectors.pkl across commits and runs: ansible's first commit is 48k units, ~20 minutes here). Then, on the
same candidates, side by side:
- `lexical`, `shipped`: the rule as a `lexical` and a `ready` repository rank (the best DENSE_TOP re-ranked);
- `dense only`: the DENSE nearest units by cosine alone;
- `every D w`: the lexical pool plus the D nearest, each unit's dense signal its cosine scaled from the D-th
  nearest's (0) to the nearest's (1), weight w;
- `rrf D a`: the rule's order fused with the D nearest by reciprocal rank (k 60), the nearest weighted a;
and how many gold files only the DENSE nearest hold (none of the lexical pool's units is theirs).
"""

from __future__ import annotations

import argparse
import pickle
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from bench.localize_ctxsieve import CtxsieveLocalizer, dense_model, rates, synced
from bench.localize_data import CACHE, LocCase, load
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import (
    QUERY_TOKENS,
    SIGNALS,
    WEIGHTS,
    has_vector,
    order_of,
    passage_of,
    rerank,
    score,
    signals,
)
from ctxsieve.ingest.coderank.units import CodeUnit
from ctxsieve.ingest.embedding import Embedder, head_of

VECTORS = CACHE / "dense-pool-vectors.pkl"
DENSE = 200  # nearest units kept per case
RRF_K = 60


@dataclass
class Case:
    case: LocCase
    units: list[CodeUnit]  # the lexical pool and the DENSE nearest
    rows: np.ndarray  # their signals (the dense column empty)
    lexical: np.ndarray  # True: in the lexical pool
    cosines: np.ndarray  # with the vector; NaN for a unit without one
    nearest: np.ndarray  # rank among the nearest (DENSE and beyond: not among them)


def gather(cases: list[LocCase]) -> list[Case]:
    vectors: dict[str, np.ndarray] = pickle.loads(VECTORS.read_bytes()) if VECTORS.exists() else {}
    model = dense_model()
    used: set[str] = set()  # the passages of every case's commit
    out = [_case(case, localizer, vectors, model, used) for case, localizer in synced(cases, CtxsieveLocalizer)]
    VECTORS.write_bytes(pickle.dumps(vectors))
    print(f"  {len(used)} distinct passages embedded (kept in {VECTORS})", flush=True)
    return out


def _case(case: LocCase, localizer: CtxsieveLocalizer, vectors: dict[str, np.ndarray], model: Embedder,
          used: set[str]) -> Case:
    memory = localizer.memory
    query = read_code_query(case.problem_statement)
    lexical = memory._lexical.scores(query.terms)  # noqa: SLF001 -- the pool as a search makes it
    pool = set(memory._pool(query, lexical, None, None))  # noqa: SLF001
    units = dict(memory._units)  # noqa: SLF001
    embedded = [i for i in sorted(units) if has_vector(units[i])]
    passages = [passage_of(units[i]) for i in embedded]
    used.update(passages)
    new = sorted(set(passages) - set(vectors), key=lambda p: (len(p), p))
    for start in range(0, len(new), 16):
        vectors.update(zip(new[start : start + 16], model.embed_passages(new[start : start + 16]), strict=True))
    asked = model.embed_queries([head_of(model, case.problem_statement, QUERY_TOKENS)])[0]
    cosines = np.stack([vectors[p] for p in passages]) @ asked
    ranked = np.argsort(-cosines, kind="stable")
    rank_of = {embedded[j]: r for r, j in enumerate(ranked)}
    cosine_of = dict(zip(embedded, cosines.tolist(), strict=True))
    ids = sorted(pool | {embedded[j] for j in ranked[:DENSE]})
    chosen = [units[i] for i in ids]
    counts = {u.leaf: len(memory._by_leaf.get(u.leaf, ())) for u in chosen}  # noqa: SLF001
    return Case(case, chosen, signals(query, chosen, lexical[ids], name_counts=counts),
                np.array([i in pool for i in ids]), np.array([cosine_of.get(i, np.nan) for i in ids]),
                np.array([rank_of.get(i, DENSE) for i in ids]))


Ranking = Callable[[Case], tuple[list[CodeUnit], np.ndarray]]


def metrics(cases: list[Case], rank: Ranking) -> tuple[float, ...]:
    return rates(_ranked(c, rank) for c in cases)


def _ranked(c: Case, rank: Ranking) -> tuple[LocCase, list[CodeUnit], np.ndarray, list[int]]:
    units, scores = rank(c)
    return c.case, units, scores, order_of(scores, units)[:100]


def _subset(c: Case, mask: np.ndarray) -> tuple[list[CodeUnit], np.ndarray, np.ndarray, np.ndarray]:
    kept = np.flatnonzero(mask)
    return [c.units[i] for i in kept], c.rows[kept].copy(), c.cosines[kept], c.nearest[kept]


def lexical_rule(c: Case) -> tuple[list[CodeUnit], np.ndarray]:
    units, rows, _, _ = _subset(c, c.lexical)
    return units, score(rows, units, replace(WEIGHTS, dense=0.0))


def shipped_rule(c: Case) -> tuple[list[CodeUnit], np.ndarray]:
    units, rows, cosines, _ = _subset(c, c.lexical)
    cosine_of = {id(u): x for u, x in zip(units, cosines, strict=True)}
    return units, rerank(rows, units, score(rows, units), lambda us: np.array([cosine_of[id(u)] for u in us]))


def dense_only(c: Case) -> tuple[list[CodeUnit], np.ndarray]:
    units, _, cosines, _ = _subset(c, c.nearest < DENSE)
    return units, np.nan_to_num(cosines, nan=-1.0) + 1.0


def every(d: int, weight: float) -> Ranking:
    def rank(c: Case) -> tuple[list[CodeUnit], np.ndarray]:
        units, rows, cosines, _ = _subset(c, c.lexical | (c.nearest < d))
        known = np.sort(c.cosines[~np.isnan(c.cosines)])[::-1]
        floor, top = known[min(d, len(known)) - 1], known[0]
        scaled = (np.nan_to_num(cosines, nan=-1.0) - floor) / (top - floor) if top > floor else np.zeros(len(units))
        rows[:, SIGNALS.index("dense")] = np.clip(scaled, 0.0, None)
        return units, score(rows, units, replace(WEIGHTS, dense=weight))
    return rank


def rrf(d: int, weight: float) -> Ranking:
    def rank(c: Case) -> tuple[list[CodeUnit], np.ndarray]:
        units, rows, _, nearest = _subset(c, c.lexical | (c.nearest < d))
        place = np.empty(len(units))
        place[np.array(order_of(score(rows, units, replace(WEIGHTS, dense=0.0)), units))] = np.arange(len(units))
        return units, 1.0 / (RRF_K + place) + weight * np.where(nearest < d, 1.0 / (RRF_K + nearest), 0.0)
    return rank


def only_dense_holds(cases: list[Case]) -> tuple[int, int]:
    found = total = 0
    for c in cases:
        pooled = {u.path for u, m in zip(c.units, c.lexical, strict=True) if m}
        near = {u.path for u, r in zip(c.units, c.nearest, strict=True) if r < DENSE}
        total += len(c.case.gold_files)
        found += sum(f not in pooled and f in near for f in c.case.gold_files)
    return found, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", default="dev")
    parser.add_argument("--repos", default="")
    args = parser.parse_args()
    splits, repos = args.splits.split(","), {r for r in args.repos.split(",") if r}
    cases = [c for c in load(skip_missing=True)[0] if c.split in splits and (not repos or c.repo in repos)]
    gathered = gather(cases)
    rules: list[tuple[str, Ranking]] = [("lexical", lexical_rule), ("shipped", shipped_rule),
                                        (f"dense only ({DENSE})", dense_only)]
    rules += [(f"every {d} {w}", every(d, w)) for d in (20, 50, 100, 200) for w in (0.5, 1.0, 2.0)]
    rules += [(f"rrf {d} {w}", rrf(d, w)) for d in (50, 200) for w in (0.3, 0.6, 1.0)]
    print(f"{args.splits} ({len(gathered)} cases): file Acc@1 / Acc@5 / MRR / function Acc@10")
    for name, rank in rules:
        print(f"  {name:<20} " + " / ".join(f"{v:.3f}" for v in metrics(gathered, rank)))
    found, total = only_dense_holds(gathered)
    print(f"  gold files that only the {DENSE} nearest hold: {found} of {total}")


if __name__ == "__main__":
    main()
