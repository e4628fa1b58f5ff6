"""Choosing the tool-selection rule by leave-one-pool-out, on TRAINING queries only (bench.tools reports test).

Usage: python -m bench.tools_tune [--feedback | --abstain | --abstain-curve | --uses]
--uses: whether a tool's usage evidence should count more the more uses back it (it does not, measured).
--abstain: ToolIndex's abstention judge calibrated at each quantile of the tools' own near-misses, how often
each pool's training queries are kept with their gold tools present and abstained on with them removed; then
the quantile each leave-one-pool-out rotation chooses (the largest keeping >= 95% on the other two).
--feedback: which recorded queries lend their words to BM25 (none, all, only those that led to one tool),
replayed with ToolIndex's evidence rule: each pool's training queries split 80/20 into recorded and held-out.
For every candidate rule (representation, fusion, multi-intent merge) the zero-shot R@5 and completeness@5
on each pool's training queries; then, for each pool, the rule that is best on the OTHER two pools (mean
R@5) and what it scores on the held-out one. The shipped rule is the one every rotation picks; if the
rotations disagree, that is printed too. Scores are computed here from the same parts ToolIndex uses
(its texts, BM25 and the query splitter), so the table is fast to recompute; bench.tools then measures
the shipped rule through ToolIndex.select itself.
Vectors are kept under ~/.cache/ctxsieve/bench/tools so a rerun does not re-embed.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench.models import dense_model
from bench.tools import CACHE, Query, pool_split, pools
from ctxsieve.indexes.intents import split_intents
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.indexes.ranking import normalise, standardise
from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.toolformats import Tool, index_text, name_text, parse_toolset
from ctxsieve.indexes.tools import (
    TOOL_DENSE_WEIGHT,
    Evidence,
    attribute,
    calibrate,
    calibration_asks,
    centroids,
    fit_signals,
    fuse_tool_scores,
    nearest_evidence,
    without,
)
from ctxsieve.indexes.vectors import EmbeddingCache

K = 5


@dataclass
class Features:
    """Per query text: each leg's score for every tool."""

    tool: np.ndarray  # dense, tool text (name words, description, parameters)
    name: np.ndarray  # dense, "name: description"
    bm25: np.ndarray  # BM25 over the tool text

    def dense(self, which: str) -> np.ndarray:
        """"avg" is what ToolIndex uses: the mean of both texts' cosines."""
        return {"avg": (self.tool + self.name) / 2, "tool": self.tool, "name": self.name}[which]


@dataclass
class Pool:
    label: str
    tools: list[Tool]
    tool_vectors: np.ndarray
    name_vectors: np.ndarray
    queries: list[Query]
    whole: list[Features]
    parts: list[list[Features]]

    @property
    def index(self) -> dict[str, int]:
        return {t.name: i for i, t in enumerate(self.tools)}


Fusion = Callable[[Features], np.ndarray]


def z_fusion(weight: float, dense: str) -> Fusion:
    def fuse(f: Features) -> np.ndarray:
        return weight * standardise(f.dense(dense)) + (1 - weight) * standardise(f.bm25)
    return fuse


def minmax_fusion(weight: float, dense: str) -> Fusion:
    def fuse(f: Features) -> np.ndarray:
        return weight * normalise(f.dense(dense)) + (1 - weight) * normalise(f.bm25)
    return fuse


def rrf_fusion(weight: float, dense: str, c: float = 60.0) -> Fusion:
    def ranks(scores: np.ndarray) -> np.ndarray:
        out = np.empty(len(scores))
        out[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
        return out

    def fuse(f: Features) -> np.ndarray:
        return weight / (c + ranks(f.dense(dense))) + (1 - weight) / (c + ranks(f.bm25))
    return fuse


def merged(fuse: Fusion, merge: str, whole: Features, parts: list[Features]) -> list[int]:
    """Top K tool indices for a request: the whole request alone, or with its intents merged in."""
    base = fuse(whole)
    if merge == "none" or not parts:
        return list(np.argsort(-base, kind="stable")[:K])
    scored = [standardise(fuse(p)) for p in parts]
    if merge == "max":  # each tool by its best showing, whole or any one intent
        return list(np.argsort(-np.maximum(standardise(base), np.max(scored, axis=0)), kind="stable")[:K])
    # "interleave": the whole request's best first, then each intent's best in turn
    rankings = [np.argsort(-s, kind="stable")[:K] for s in [base, *scored]]
    chosen: dict[int, None] = {}
    for position in range(K):
        for ranking in rankings:
            chosen.setdefault(int(ranking[position]))
    return list(chosen)[:K]


def evaluate(pool: Pool, fuse: Fusion, merge: str) -> tuple[float, float]:
    recall = complete = 0.0
    index = pool.index
    for (_, gold), whole, parts in zip(pool.queries, pool.whole, pool.parts, strict=True):
        top = set(merged(fuse, merge, whole, parts))
        hits = sum(index[g] in top for g in gold)
        recall += hits / len(gold)
        complete += hits == len(gold)
    return recall / len(pool.queries), complete / len(pool.queries)


def load(label: str, tools: list[dict], queries: list[Query], cache: EmbeddingCache) -> Pool:
    parsed = parse_toolset(tools)
    tool_m = cache.passages([index_text(t) for t in parsed])
    name_m = cache.passages([name_text(t) for t in parsed])
    lexical = Bm25Index.build([index_text(t) for t in parsed])
    texts = [q for q, _ in queries]
    all_parts = [split_intents(q) for q in texts]
    flat = list(dict.fromkeys([*texts, *itertools.chain.from_iterable(all_parts)]))
    vectors = dict(zip(flat, cache.queries(flat), strict=True))

    def features(text: str) -> Features:
        q = vectors[text]
        return Features(tool_m @ q, name_m @ q, lexical.scores(text))

    return Pool(label, parsed, tool_m, name_m, queries, [features(q) for q in texts],
                [[features(p) for p in parts] for parts in all_parts])


def candidates() -> dict[str, tuple[Fusion, str]]:
    rules: dict[str, tuple[Fusion, str]] = {}
    for merge in ("none", "interleave", "max"):
        for dense in ("avg", "tool", "name"):
            for w in (0.6, 0.7, 0.74, 0.8, 0.9):
                rules[f"z w={w} dense={dense} merge={merge}"] = (z_fusion(w, dense), merge)
                rules[f"minmax w={w} dense={dense} merge={merge}"] = (minmax_fusion(w, dense), merge)
            for w in (0.5, 0.6, 0.7):
                rules[f"rrf w={w} dense={dense} merge={merge}"] = (rrf_fusion(w, dense), merge)
    return rules


def feedback_rules(label: str, tools: list[dict], train: list[Query], cache: EmbeddingCache) -> None:
    """ToolIndex's evidence rule (`fuse_tool_scores`) with four ways of using recorded multi-tool requests:
    none / all / single-tool lend the whole request's words to none, all, or only single-tool requests' tools
    (its vector counting fully for each); attributed is `attribute`, what ToolIndex ships: each intent of a
    multi-tool request lends its words and vector to the used tool it fits best, the whole vector counts for
    each at WHOLE_WEIGHT. The rows the 80% recorded make are scored on the 20% held out."""
    recorded, held = train[: int(len(train) * 0.8)], train[int(len(train) * 0.8):]
    pool = load(label, tools, held, cache)
    index = pool.index
    uses = [(text, [index[t] for t in sorted(gold)]) for text, gold in recorded]
    query_vectors = cache.queries([q for q, _ in recorded])
    dim = query_vectors.shape[1]

    def fit(v: np.ndarray) -> np.ndarray:
        return (pool.tool_vectors @ v + pool.name_vectors @ v) / 2

    whole = Evidence(vectors=np.repeat(query_vectors, [len(t) for _, t in uses], axis=0),
                     owner=np.array([t for _, tools_ in uses for t in tools_]),
                     weight=np.ones(sum(len(t) for _, t in uses)), words={})

    def lexical(most_tools: int) -> dict[int, list[str]]:
        """Recorded requests lend their words to their tools when they led to at most `most_tools` tools."""
        lent: dict[int, list[str]] = {}
        for text, used in uses:
            for t in used if len(used) <= most_tools else ():
                lent.setdefault(t, []).append(text)
        return lent

    rules = {"none": (whole, lexical(0)), "all": (whole, lexical(len(pool.tools))),
             "single-tool": (whole, lexical(1))}
    for weight, words_too in itertools.product((1.0, 0.9, 0.8), (True, False)):
        attributed = attribute(uses, query_vectors, cache.queries, fit, dim, whole_weight=weight,
                               part_words=words_too)
        rules[f"attributed w{weight}{' +words' if words_too else ''}"] = (attributed, attributed.words)
    held_vectors = cache.queries([q for q, _ in held])
    multi = sum(len(t) > 1 for _, t in uses)
    line = f"{label}: {len(recorded)} recorded ({multi} multi-tool), {len(held)} held out; R@5  zero-shot "
    line += f"{_recall(pool, held, held_vectors, None, Bm25Index.build([index_text(t) for t in pool.tools])):.3f}"
    for name, (evidence, words) in rules.items():
        bm25 = Bm25Index.build([index_text(t) + "\n" + "\n".join(words.get(i, [])) for i, t in enumerate(pool.tools)])
        line += f"  {name} {_recall(pool, held, held_vectors, evidence, bm25):.3f}"
    print(line, flush=True)


def _recall(pool: Pool, held: list[Query], held_vectors: np.ndarray, evidence: Evidence | None,
            bm25: Bm25Index) -> float:
    index = pool.index
    means = centroids(evidence, len(pool.tools)) if evidence is not None else None
    recall = 0.0
    for (text, gold), features, q in zip(held, pool.whole, held_vectors, strict=True):
        scored = None if evidence is None or means is None else (
            nearest_evidence(evidence.vectors, evidence.owner, len(pool.tools), q, evidence.weight), means @ q)
        _, fused = fuse_tool_scores(features.dense("avg"), bm25.scores(text), TOOL_DENSE_WEIGHT, scored)
        top = set(np.argsort(-fused, kind="stable")[:K].tolist())
        recall += sum(index[g] in top for g in gold) / len(gold)
    return recall / len(held)


def evidence_by_uses(label: str, tools: list[dict], train: list[Query], cache: EmbeddingCache) -> None:
    """Should a tool's evidence count more the more uses it has? ToolIndex lifts a tool's dense z-score to its
    evidence's when higher (`fuse_tool_scores`), however many uses back it. Here the lift is scaled by
    n / (n + c) for a tool with n evidence rows (c = 0: ToolIndex's rule), with 20% and 80% of the training
    queries recorded, scored on the last 20%."""
    held = train[int(len(train) * 0.8):]
    pool = load(label, tools, held, cache)
    index = pool.index
    held_vectors = cache.queries([q for q, _ in held])
    for share in (0.2, 0.8):
        recorded = train[: int(len(train) * share)]
        uses = [(text, [index[t] for t in sorted(gold)]) for text, gold in recorded]
        vectors = cache.queries([q for q, _ in recorded])
        evidence = attribute(uses, vectors, cache.queries,
                             lambda v: (pool.tool_vectors @ v + pool.name_vectors @ v) / 2, vectors.shape[1])
        bm25 = Bm25Index.build([index_text(t) + "\n" + "\n".join(evidence.words.get(i, []))
                                for i, t in enumerate(pool.tools)])
        means = centroids(evidence, len(pool.tools))
        count = np.bincount(evidence.owner, minlength=len(pool.tools)).astype(float)
        line = f"{label}: {len(recorded)} recorded; R@5 on {len(held)} held out, lift scaled by n/(n+c):"
        for c in (0.0, 0.5, 1.0, 2.0, 4.0):
            scale = count / (count + c) if c else np.ones_like(count)
            recall = 0.0
            for (text, gold), features, q in zip(held, pool.whole, held_vectors, strict=True):
                nearest = nearest_evidence(evidence.vectors, evidence.owner, len(pool.tools), q, evidence.weight)
                has = nearest > -1.0
                dense_z = standardise(features.dense("avg").astype(np.float64))
                evidence_z = np.zeros_like(dense_z)
                evidence_z[has] = standardise(((nearest + means @ q) / 2)[has])
                lifted = np.where(has, dense_z + scale * np.maximum(0.0, evidence_z - dense_z), dense_z)
                fused = TOOL_DENSE_WEIGHT * lifted + (1 - TOOL_DENSE_WEIGHT) * standardise(bm25.scores(text))
                top = set(np.argsort(-fused, kind="stable")[:K].tolist())
                recall += sum(index[g] in top for g in gold) / len(gold)
            line += f"  c={c} {recall / len(held):.3f}"
        print(line, flush=True)


QUANTILES = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1)
KEEP = 0.95


@dataclass
class AbstainRun:
    """One pool's training requests under the shipped judge calibrated at each quantile: kept (gold present) and
    abstained (gold removed)."""

    label: str
    kept: dict[float, float]
    abstained: dict[float, float]


def abstain_quantiles(label: str, tools: list[dict], train: list[Query], cache: EmbeddingCache) -> AbstainRun:
    """ToolIndex's judge (`calibration_asks`, `fit_signals`, `calibrate`) at each quantile, on training queries."""
    pool = load(label, tools, train, cache)
    index = pool.index
    lexical = Bm25Index.build([index_text(t) for t in pool.tools])
    sample, texts = calibration_asks(pool.tools)
    hits, misses = [], []
    for i, text, q in zip(sample, texts, cache.queries(texts), strict=True):
        cosine, bm25, ceiling = (pool.tool_vectors @ q + pool.name_vectors @ q) / 2, lexical.scores(text), \
            lexical.ceiling(text)
        hits.append(fit_signals(cosine, bm25, ceiling))
        misses.append(fit_signals(without(cosine, [i]), without(bm25, [i]), ceiling))
    present, removed = [], []
    for (text, gold), features in zip(pool.queries, pool.whole, strict=True):
        cosine, ceiling = features.dense("avg"), lexical.ceiling(text)
        present.append(fit_signals(cosine, features.bm25, ceiling))
        drop = [index[g] for g in gold]
        removed.append(fit_signals(np.delete(cosine, drop), np.delete(features.bm25, drop), ceiling))
    run = AbstainRun(label, {}, {})
    line = f"{label}:"
    for quantile in QUANTILES:
        judge = calibrate(np.array(hits), np.array(misses), quantile)
        run.kept[quantile] = float(np.mean([judge.fits(s) for s in present]))
        run.abstained[quantile] = float(np.mean([not judge.fits(s) for s in removed]))
        line += f"  q{quantile:.2f} kept {run.kept[quantile]:.1%} abstained {run.abstained[quantile]:.0%}"
    print(line, flush=True)
    return run


def choose_quantile(runs: list[AbstainRun]) -> None:
    """Leave one pool out: the largest quantile that keeps >= KEEP of ordinary requests on the other pools."""
    for held, run in enumerate(runs):
        others = [r for i, r in enumerate(runs) if i != held]
        fine = [q for q in QUANTILES if all(r.kept[q] >= KEEP for r in others)]
        chosen = max(fine) if fine else min(QUANTILES)
        print(f"held out {run.label}: chosen on the other two: q{chosen:.2f}; on {run.label} kept "
              f"{run.kept[chosen]:.1%}, abstained with the gold tools removed {run.abstained[chosen]:.0%}")


def _signals(cosine: np.ndarray, bm25: np.ndarray) -> dict[str, float]:
    """What a judge could weigh: the best tool's cosine, how far it stands out of the rest (z-score), and its
    lexical overlap with the request (best BM25 score)."""
    spread = float(cosine.std()) or 1.0
    return {"cosine": float(cosine.max()), "margin": float((cosine.max() - cosine.mean()) / spread),
            "lexical": float(bm25.max())}


def abstain_curve(label: str, tools: list[dict], train: list[Query], cache: EmbeddingCache) -> None:
    """How far any judge on these signals could go: each signal, and margin + lexical (z-scored on the ordinary
    requests), thresholded to keep 99/97/95/90/80% of ordinary training requests (an oracle threshold, set on
    the very requests it is scored on), and the share of gold-removed requests it then abstains on."""
    pool = load(label, tools, train, cache)
    index = pool.index
    present, removed = [], []
    for (_, gold), features in zip(pool.queries, pool.whole, strict=True):
        cosine, bm25 = features.dense("avg"), features.bm25
        present.append(_signals(cosine, bm25))
        drop = [index[g] for g in gold]
        removed.append(_signals(np.delete(cosine, drop), np.delete(bm25, drop)))

    def column(rows: list[dict[str, float]], key: str) -> np.ndarray:
        return np.array([r[key] for r in rows])

    scores: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for key in ("cosine", "margin", "lexical"):
        scores[key] = column(present, key), column(removed, key)
    z = {k: ((p - p.mean()) / (p.std() or 1.0), (r - p.mean()) / (p.std() or 1.0)) for k, (p, r) in scores.items()}
    scores["margin+lexical"] = z["margin"][0] + z["lexical"][0], z["margin"][1] + z["lexical"][1]
    scores["all three"] = (sum(z[k][0] for k in z), sum(z[k][1] for k in z))
    print(f"{label}: {len(present)} training requests; abstained with the gold tools removed, at kept", flush=True)
    for name, (p, r) in scores.items():
        cells = [f"{kept:.0%}: {np.mean(r < np.quantile(p, 1 - kept)):.0%}" for kept in (0.99, 0.97, 0.95, 0.9, 0.8)]
        print(f"  {name:<16}" + "  ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--feedback", action="store_true", help="the lexical-evidence rules for recorded queries")
    parser.add_argument("--abstain", action="store_true", help="the abstention margin")
    parser.add_argument("--abstain-curve", action="store_true", help="abstained vs kept for each signal")
    parser.add_argument("--uses", action="store_true", help="evidence weighted by each tool's number of uses")
    args = parser.parse_args()
    embedder = dense_model()
    store = open_store(CACHE / "bench" / "tools")
    cache = EmbeddingCache(store, embedder)
    if args.abstain:
        choose_quantile([abstain_quantiles(label, tools, pool_split(label, queries)[0], cache)
                         for label, (tools, queries) in pools().items()])
        store.close()
        return
    if args.feedback or args.abstain_curve or args.uses:
        run = feedback_rules if args.feedback else abstain_curve if args.abstain_curve else evidence_by_uses
        for label, (tools, queries) in pools().items():
            run(label, tools, pool_split(label, queries)[0], cache)
        store.close()
        return
    loaded = []
    for label, (tools, queries) in pools().items():
        train, _ = pool_split(label, queries)
        loaded.append(load(label, tools, train, cache))
        print(f"{label}: {len(tools)} tools, {len(train)} training queries", flush=True)
    store.close()
    rules = candidates()
    table = {name: [evaluate(p, fuse, merge) for p in loaded] for name, (fuse, merge) in rules.items()}
    print(f"{'rule':<40}" + "".join(f"{p.label[:14] + ' R@5/C@5':>26}" for p in loaded))
    for name, row in sorted(table.items(), key=lambda kv: -np.mean([r for r, _ in kv[1]]))[:25]:
        print(f"{name:<40}" + "".join(f"{r:>17.3f} / {c:.3f}" for r, c in row))
    picks = set()
    for held, pool in enumerate(loaded):
        best = max(table, key=lambda n: (np.mean([r for i, (r, _) in enumerate(table[n]) if i != held]), n))
        picks.add(best)
        print(f"held out {pool.label}: chosen on the other two: {best}; on {pool.label} R@5 "
              f"{table[best][held][0]:.3f} C@5 {table[best][held][1]:.3f}")
    print("every rotation picks the same rule" if len(picks) == 1 else f"rotations disagree: {sorted(picks)}")


if __name__ == "__main__":
    main()
