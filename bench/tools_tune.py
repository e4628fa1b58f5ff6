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
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.indexes.ranking import normalise, standardise
from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.tools import (
    TOOL_DENSE_WEIGHT,
    Evidence,
    Judge,
    attribute,
    calibrate,
    calibration_asks,
    centroids,
    fit_signals,
    fuse_tool_scores,
    nearest_evidence,
    without,
)
from ctxsieve.indexes.tools.formats import Tool, index_text, name_text, parse_toolset
from ctxsieve.indexes.tools.intents import split_intents
from ctxsieve.indexes.tools.scoring import INTENT_GATE_MIN_TOOLS
from ctxsieve.indexes.vectors import EmbeddingCache

K = 5


@dataclass
class Features:
    """Per query text: each leg's score for every tool."""

    tool: np.ndarray  # dense, tool text (name words, description, parameters)
    name: np.ndarray  # dense, "name: description"
    bm25: np.ndarray  # BM25 over the tool text
    peer_bm25: np.ndarray | None = None  # BM25 over names, descriptions and argument names (the plain fusion's)

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
    if merge.startswith("sure"):  # only intents whose best tool stands out by at least this many sd
        scored = [z for z in scored if len(z) < INTENT_GATE_MIN_TOOLS or float(z.max()) >= float(merge[4:])]
        if not scored:
            return list(np.argsort(-base, kind="stable")[:K])
        merge = "interleave"
    if merge == "max":  # each tool by its best showing, whole or any one intent
        return list(np.argsort(-np.maximum(standardise(base), np.max(scored, axis=0)), kind="stable")[:K])
    rankings = [np.argsort(-s, kind="stable")[:K] for s in [base, *scored]]
    chosen: dict[int, None] = {}
    # "interleave": the whole request's best first, then each intent's best in turn
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
    peer = Bm25Index.build([" ".join([t["name"], t["description"], *((t.get("parameters") or {}).get("properties")
                                                                         or {})]) for t in tools])
    texts = [q for q, _ in queries]
    all_parts = [split_intents(q) for q in texts]
    flat = list(dict.fromkeys([*texts, *itertools.chain.from_iterable(all_parts)]))
    vectors = dict(zip(flat, cache.queries(flat), strict=True))

    def features(text: str) -> Features:
        q = vectors[text]
        return Features(tool_m @ q, name_m @ q, lexical.scores(text), peer.scores(text))

    return Pool(label, parsed, tool_m, name_m, queries, [features(q) for q in texts],
                [[features(p) for p in parts] for parts in all_parts])


def plain_fusion(f: Features) -> np.ndarray:
    """The peer every stage must beat: "name: description" dense and BM25 over names, descriptions and argument
    names, each min-max normalised, averaged (bench.tools' `fusion_peer`)."""
    assert f.peer_bm25 is not None
    return normalise(f.name) + normalise(f.peer_bm25)


ABLATION_WEIGHTS = (0.5, 0.6, 0.7, 0.74, 0.8, 0.9)


def _weighted(dense: str, peer_text: bool) -> Callable[[float], Fusion]:
    def rule(w: float) -> Fusion:
        def fuse(f: Features) -> np.ndarray:
            lexical = f.peer_bm25 if peer_text and f.peer_bm25 is not None else f.bm25
            return w * standardise(f.dense(dense)) + (1 - w) * standardise(lexical)
        return fuse
    return rule


def ablation(loaded: list[Pool]) -> None:
    """Each stage of ToolIndex's ranking added alone to the plain fusion, and all together, leave-one-pool-out: a
    stage with a setting (the fusion weight) has it chosen on the other two pools' training queries, then is
    scored on the held-out pool's. Request focusing only changes a request over LONG_REQUEST characters."""
    from ctxsieve.indexes.tools.request import LONG_REQUEST

    def fields(f: Features) -> np.ndarray:
        return normalise(f.dense("avg")) + normalise(f.bm25)

    stages: dict[str, tuple[Callable[[float], Fusion], str, bool]] = {  # (rule by weight, merge, weighted)
        "plain fusion": (lambda _: plain_fusion, "none", False),
        "+ tool text fields (dense: tool text and name; BM25: tool text)": (lambda _: fields, "none", False),
        "+ fusion weights (z-scores, weight chosen on the other two)": (_weighted("name", True), "none", True),
        "+ intent splitting (interleaved)": (lambda _: plain_fusion, "interleave", False),
        "+ intent splitting, intents whose best stands 4 sd out": (lambda _: plain_fusion, "sure4", False),
        "+ intent splitting, intents whose best stands 5 sd out": (lambda _: plain_fusion, "sure5", False),
        "+ intent splitting, intents whose best stands 6 sd out": (lambda _: plain_fusion, "sure6", False),
        "all together, every intent takes turns (the second round's rule)": (_weighted("avg", False), "interleave",
                                                                             True),
        "all but intent splitting": (_weighted("avg", False), "none", True),
        "all, intents whose best stands 4 sd out": (_weighted("avg", False), "sure4", True),
        "all, intents whose best stands 5 sd out": (_weighted("avg", False), "sure5", True),
        "all, intents whose best stands 6 sd out (ToolIndex's rule)": (_weighted("avg", False), "sure6", True),
        "all, each tool's best of whole and intents (max)": (_weighted("avg", False), "max", True),
        "all but fusion weights (min-max, equal)": (lambda _: fields, "sure6", False),
        "all but tool text fields": (_weighted("name", True), "sure6", True),
    }
    long = {p.label: sum(len(q) > LONG_REQUEST for q, _ in p.queries) for p in loaded}
    print("requests over LONG_REQUEST characters (the only ones request focusing changes): "
          + ", ".join(f"{label} {n}" for label, n in long.items()))
    header = f"{'stage':<66}" + "".join(f"{p.label[:15]:>22}" for p in loaded)
    print(header)
    plain = [evaluate(p, plain_fusion, "none")[0] for p in loaded]
    for name, (rule, merge, weighted) in stages.items():
        cells = []
        for held, pool in enumerate(loaded):
            w = 0.5
            if weighted:
                w = max(ABLATION_WEIGHTS, key=lambda x: (np.mean([evaluate(p, rule(x), merge)[0]
                                                                  for i, p in enumerate(loaded) if i != held]), x))
            r = evaluate(pool, rule(w), merge)[0]
            tag = f" w{w:g}" if weighted else ""
            cells.append(f"{r:.3f} ({r - plain[held]:+.3f}){tag}")
        print(f"{name:<66}" + "".join(f"{c:>22}" for c in cells), flush=True)


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


SMALL_TOOLSET = 8  # tools a small per-request toolset holds: the request's gold tools and others of its pool
KEEP_FITTING = 0.95


@dataclass
class SmallRun:
    """Per request of one pool, on its small toolset with the gold tools present and removed: the best cosine
    (what a plain e5 threshold judges) and whether ToolIndex's judge says a tool fits."""

    label: str
    cosine_present: np.ndarray
    cosine_removed: np.ndarray
    judge_present: np.ndarray
    judge_removed: np.ndarray


def small_toolsets(label: str, tools: list[dict], queries: list[Query], cache: EmbeddingCache, seed: int = 7
                   ) -> SmallRun:
    """Per request, a small toolset: its gold tools and others of its pool drawn at random (a fixed seed) up to
    SMALL_TOOLSET, judged with the gold present and with it removed; ToolIndex's judge is calibrated on each
    small toolset's own descriptions, as `select(abstain=True)` does."""
    pool = load(label, tools, queries, cache)
    index = pool.index
    texts = [index_text(t) for t in pool.tools]
    asks = [t.description or t.name for t in pool.tools]
    distinct = list(dict.fromkeys(asks))
    ask_vectors = dict(zip(distinct, cache.queries(distinct), strict=True))
    rng = np.random.default_rng(seed)
    cosines: dict[bool, list[float]] = {True: [], False: []}
    fits: dict[bool, list[bool]] = {True: [], False: []}
    for (text, gold), features in zip(pool.queries, pool.whole, strict=True):
        own = sorted(index[g] for g in gold)[:SMALL_TOOLSET - 1]
        others = [int(i) for i in rng.permutation(len(pool.tools)) if int(i) not in own]
        for has_gold, members in ((True, sorted(own + others[:SMALL_TOOLSET - len(own)])),
                                  (False, sorted(others[:SMALL_TOOLSET]))):
            lexical = Bm25Index.build([texts[i] for i in members])
            hits, misses = [], []
            for j, i in enumerate(members):
                q = ask_vectors[asks[i]]
                cos = (pool.tool_vectors[members] @ q + pool.name_vectors[members] @ q) / 2
                bm = lexical.scores(asks[i])
                hits.append(fit_signals(cos, bm, lexical.ceiling(asks[i])))
                misses.append(fit_signals(without(cos, [j]), without(bm, [j]), lexical.ceiling(asks[i])))
            judge = calibrate(np.array(hits), np.array(misses))
            cos = features.dense("avg")[members]
            cosines[has_gold].append(float(cos.max()))
            fits[has_gold].append(judge.fits(fit_signals(cos, lexical.scores(text), lexical.ceiling(text))))
    return SmallRun(label, np.array(cosines[True]), np.array(cosines[False]), np.array(fits[True]),
                    np.array(fits[False]))


def abstain_small(runs: list[SmallRun], tests: list[SmallRun]) -> None:
    """ToolIndex's judge against a plain e5 cosine threshold set to keep KEEP_FITTING of fitting training requests:
    of the other two pools (leave-one-pool-out) and of the pool's own (what a user with that pool's history could
    set); all scored on the held-out pool's test requests."""
    for held, test in enumerate(tests):
        others = np.concatenate([r.cosine_present for i, r in enumerate(runs) if i != held])
        threshold = float(np.quantile(others, 1 - KEEP_FITTING))
        kept = float(np.mean(test.cosine_present >= threshold))
        abstained = float(np.mean(test.cosine_removed < threshold))
        own = float(np.quantile(runs[held].cosine_present, 1 - KEEP_FITTING))
        print(f"{test.label}: e5 cosine threshold {threshold:.3f} (set on the other two): kept {kept:.1%}, "
              f"abstained {abstained:.1%} | set on its own training requests {own:.3f}: kept "
              f"{np.mean(test.cosine_present >= own):.1%}, abstained {np.mean(test.cosine_removed < own):.1%} | "
              f"ToolIndex's judge: kept {np.mean(test.judge_present):.1%}, "
              f"abstained {np.mean(~test.judge_removed):.1%}", flush=True)


GATEWAY_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)


def _toolset_judges(loaded: list[Pool], cache: EmbeddingCache
                    ) -> list[tuple[Judge, float, float, Bm25Index]]:
    """Per pool: ToolIndex's judge calibrated on its own tools, the mean and spread of its near-misses' judged
    fit, and its own BM25."""
    out = []
    for pool in loaded:
        lexical = Bm25Index.build([index_text(t) for t in pool.tools])
        sample, texts = calibration_asks(pool.tools)
        hits, misses = [], []
        for i, text, q in zip(sample, texts, cache.queries(texts), strict=True):
            cos, bm = (pool.tool_vectors @ q + pool.name_vectors @ q) / 2, lexical.scores(text)
            hits.append(fit_signals(cos, bm, lexical.ceiling(text)))
            misses.append(fit_signals(without(cos, [i]), without(bm, [i]), lexical.ceiling(text)))
        judge = calibrate(np.array(hits), np.array(misses))
        judged = np.array([judge.score(m) for m in misses])
        out.append((judge, float(judged.mean()), float(judged.std()) or 1.0, lexical))
    return out


def gateway(loaded: list[Pool], cache: EmbeddingCache) -> None:
    """The three pools searched together, as one gateway in front of three servers: each pool's requests ranked
    over every tool (ToolIndex's fused z-scores over the union), plus, for each toolset, a weight times how far
    the request's judged fit in that toolset stands above the toolset's own near-misses (its judge, in its own
    near-misses' sd). Recall@5 of each pool's gold alone and together; the weight chosen leave-one-pool-out to
    keep the other two pools' worst loss smallest."""
    judges = _toolset_judges(loaded, cache)
    offsets = np.cumsum([0] + [len(p.tools) for p in loaded])
    group = np.concatenate([np.full(len(p.tools), g) for g, p in enumerate(loaded)])
    tool_m = np.vstack([p.tool_vectors for p in loaded])
    name_m = np.vstack([p.name_vectors for p in loaded])
    union = Bm25Index.build([index_text(t) for p in loaded for t in p.tools])
    together = {w: [] for w in GATEWAY_WEIGHTS}  # type: dict[float, list[float]]
    alone = []
    for g, pool in enumerate(loaded):
        vectors = cache.queries([q for q, _ in pool.queries])
        recall = dict.fromkeys(GATEWAY_WEIGHTS, 0.0)
        for (text, gold), q in zip(pool.queries, vectors, strict=True):
            cos = (tool_m @ q + name_m @ q) / 2
            base = TOOL_DENSE_WEIGHT * standardise(cos) + (1 - TOOL_DENSE_WEIGHT) * standardise(union.scores(text))
            fit = []
            for h, (judge, mean, spread, lexical) in enumerate(judges):
                rows = slice(offsets[h], offsets[h + 1])
                signals = fit_signals(cos[rows], lexical.scores(text), lexical.ceiling(text))
                fit.append((judge.score(signals) - mean) / spread)
            gold_rows = {offsets[g] + pool.index[t] for t in gold}
            for w in GATEWAY_WEIGHTS:
                top = set(np.argsort(-(base + w * np.array(fit)[group]), kind="stable")[:K].tolist())
                recall[w] += len(gold_rows & top) / len(gold_rows)
        for w in GATEWAY_WEIGHTS:
            together[w].append(recall[w] / len(pool.queries))
        alone.append(evaluate(pool, _weighted("avg", False)(TOOL_DENSE_WEIGHT), "interleave")[0])
    print(f"{'toolset fit weight':<20}" + "".join(f"{p.label[:15]:>26}" for p in loaded))
    print(f"{'alone':<20}" + "".join(f"{a:>26.3f}" for a in alone))
    for w in GATEWAY_WEIGHTS:
        print(f"{w:<20g}" + "".join(f"{r:>17.3f} ({r - a:+.3f})" for r, a in zip(together[w], alone, strict=True)))
    for held, pool in enumerate(loaded):
        w = max(GATEWAY_WEIGHTS, key=lambda x: (min(together[x][i] - alone[i] for i in range(len(loaded))
                                                    if i != held), -x))
        print(f"held out {pool.label}: chosen on the other two: weight {w:g}; {pool.label} together "
              f"{together[w][held]:.3f}, alone {alone[held]:.3f} ({together[w][held] - alone[held]:+.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--feedback", action="store_true", help="the lexical-evidence rules for recorded queries")
    parser.add_argument("--abstain", action="store_true", help="the abstention margin")
    parser.add_argument("--abstain-curve", action="store_true", help="abstained vs kept for each signal")
    parser.add_argument("--uses", action="store_true", help="evidence weighted by each tool's number of uses")
    parser.add_argument("--ablation", action="store_true", help="each ranking stage against the plain fusion")
    parser.add_argument("--gateway", action="store_true", help="the three pools behind one gateway")
    parser.add_argument("--test", action="store_true", help="--gateway on the test queries (reporting)")
    parser.add_argument("--abstain-small", action="store_true",
                        help="abstention on small per-request toolsets: the judge against a plain e5 threshold")
    args = parser.parse_args()
    embedder = dense_model()
    store = open_store(CACHE / "bench" / "tools")
    cache = EmbeddingCache(store, embedder)
    if args.abstain_small:
        splits = {label: pool_split(label, queries) for label, (_, queries) in pools().items()}
        sets = pools()
        runs = [small_toolsets(label, sets[label][0], splits[label][0], cache) for label in sets]
        tests = [small_toolsets(label, sets[label][0], splits[label][1], cache) for label in sets]
        abstain_small(runs, tests)
        store.close()
        return
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
        train, test = pool_split(label, queries)
        loaded.append(load(label, tools, test if args.test else train, cache))
        print(f"{label}: {len(tools)} tools, {len(train)} training queries", flush=True)
    if args.gateway:
        gateway(loaded, cache)
        store.close()
        return
    store.close()
    if args.ablation:
        ablation(loaded)
        return
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
