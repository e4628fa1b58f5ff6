"""How a tool is scored against a request: the fusion of its text and its usage evidence with BM25, and the
abstention calibration from a toolset's own near-misses. Functions of arrays only: the service's ToolIndex and
the tuning bench (`python -m bench.tools_tune`) call these same functions, so what is tuned is what ships."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..ranking import standardise
from .formats import Tool
from .intents import split_intents


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


MIN_EVIDENCE_POPULATION = 8  # tools with recorded queries before their evidence is judged among themselves
# Abstention calibration: this many of a toolset's tools ask for themselves (their description as a request),
# once with themselves (a hit) and once with themselves scored as an ordinary tool (a near-miss: what a request
# scores when its tool is missing). The judge weighs three signals of the best fit (`fit_signals`) by how well
# each tells those hits from those near-misses in this toolset (`calibrate`), and abstains below the
# ABSTAIN_QUANTILE of the near-misses' judged fit: the one quantile that keeps >= 95% of ordinary training
# requests on every pool (`python -m bench.tools_tune --abstain`; two leave-one-pool-out rotations of three pick
# it, the third 0.02).
CALIBRATION_SAMPLE = 64
ABSTAIN_QUANTILE = 0.0
SIGNALS = ("cosine", "margin", "lexical")
# The margin is a z-score over the toolset's tools, and over a few tools it is pinned by their count (the best of
# three can stand at most 1.41 sd out): below this many tools it is left out (0 for every request, so no weight).
MARGIN_MIN_TOOLS = 8


def calibration_asks(tools: Sequence[Tool]) -> tuple[list[int], list[str]]:
    """Which tools ask for themselves in the abstention calibration (a fixed sample, by name digest), and
    how: their description, as a request."""
    sample = sorted(range(len(tools)), key=lambda i: digest(tools[i].name))[:CALIBRATION_SAMPLE]
    return sample, [tools[i].description or tools[i].name for i in sample]


def fit_signals(dense: np.ndarray, lexical: np.ndarray, lexical_ceiling: float) -> np.ndarray:
    """How well the best tool fits a request, three ways: its cosine (with usage evidence, when closer: the
    recorded queries' nearest neighbour), how far it stands out of the rest (z-score: a request every tool
    half-fits has no best), and the share of the request's words (by IDF) the best lexical match carries
    (BM25 over its ceiling, the score of a tool holding every term: a long request is not favoured)."""
    if not len(dense):
        return np.zeros(len(SIGNALS))
    best = float(dense.max())
    spread = float(dense.std()) or 1.0
    margin = (best - float(dense.mean())) / spread if len(dense) >= MARGIN_MIN_TOOLS else 0.0
    return np.array([best, margin,
                     float(lexical.max()) / lexical_ceiling if lexical_ceiling > 0 else 0.0])


def without(scores: np.ndarray, own: Sequence[int]) -> np.ndarray:
    """A near-miss's scores: its own tools scored as an ordinary tool (the mean of the rest) rather than dropped,
    so the toolset keeps its size: over three tools, dropping one leaves two, whose best always stands exactly
    one sd out, and the margin would tell hits from near-misses by the count alone."""
    out = scores.astype(np.float64)
    rest = np.delete(out, list(own))
    out[list(own)] = float(rest.mean()) if len(rest) else 0.0
    return out


@dataclass(frozen=True)
class Judge:
    """A linear judge of fit, per set of toolsets: signals weighted by how far apart their hits and near-misses
    lie over their pooled variance (a diagonal linear discriminant), and a threshold below which no tool fits."""

    weights: np.ndarray
    centre: np.ndarray
    threshold: float

    def score(self, signals: np.ndarray) -> float:
        return float(self.weights @ (signals - self.centre))

    def fits(self, signals: np.ndarray) -> bool:
        return self.score(signals) >= self.threshold


def calibrate(hits: np.ndarray, misses: np.ndarray, quantile: float | None = None) -> Judge:
    """The judge from (asks, signals) of hits and near-misses; with fewer than two asks it never abstains."""
    if len(misses) < 2:
        return Judge(np.zeros(len(SIGNALS)), np.zeros(len(SIGNALS)), -np.inf)
    pooled = (hits.var(axis=0) + misses.var(axis=0)) / 2
    # A better cosine, margin or word share never means a worse fit: a signal whose near-misses happen to score
    # above its hits gets no weight rather than a negative one.
    weights = np.maximum(hits.mean(axis=0) - misses.mean(axis=0), 0.0) / np.where(pooled > 0, pooled, 1.0)
    centre = (hits.mean(axis=0) + misses.mean(axis=0)) / 2
    judged = (misses - centre) @ weights
    return Judge(weights, centre, float(np.quantile(judged, ABSTAIN_QUANTILE if quantile is None else quantile)))


TOOL_DENSE_WEIGHT = 0.74  # chosen leave-one-pool-out on training queries (python -m bench.tools_tune)
# An intent of a multi-intent request takes turns in the ranking only when its best tool's fused score stands this
# many sd out of the rest (`python -m bench.tools_tune --ablation`: rotations pick 6, 5 and 6 of 4, 5 and 6).
INTENT_SURE_SD = 6.0
INTENT_GATE_MIN_TOOLS = 100  # a score can stand at most sqrt(n - 1) sd out of n: below this the gate is not applied
# Several toolsets searched together (one gateway in front of several servers): each tool's fused score gains this
# times how far the request's judged fit in its toolset stands above that toolset's own near-misses (in their sd).
# The leave-one-pool-out rotations of `python -m bench.tools_tune --gateway` chose 0.25, 1.5 and 2 (each keeping
# the other two pools' worst loss smallest): no weight holds every pool within 5 points of its figure alone; this
# is the middle of their choices.
TOOLSET_FIT_WEIGHT = 1.0


def nearest_evidence(vectors: np.ndarray, owner: np.ndarray, tools: int, q: np.ndarray,
                     weight: np.ndarray | None = None) -> np.ndarray:
    """Per tool, the (weighted) cosine of its recorded query (or example) nearest to q; -1 for a tool without any."""
    nearest = np.full(tools, -1.0)
    cosines = vectors @ q
    np.maximum.at(nearest, owner, cosines if weight is None else cosines * weight)
    return nearest


def centroids(evidence: Evidence, tools: int) -> np.ndarray:
    """Per tool, the normalised weighted mean of its evidence vectors (zero when it has none)."""
    out = np.zeros((tools, evidence.vectors.shape[1]), dtype=np.float32)
    np.add.at(out, evidence.owner, evidence.vectors * evidence.weight[:, None].astype(np.float32))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)


def fuse_tool_scores(cosine: np.ndarray, lexical: np.ndarray, dense_weight: float,
                     evidence: tuple[np.ndarray, np.ndarray] | None = None,
                     lift: float | np.ndarray = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Dense: the tool's own text, or usage evidence when it stands out more; fused with BM25 as z-scores.

    `evidence` is (nearest recorded query, centroid of them all) per tool, as cosines; they are averaged
    (Tool2Vec's usage embedding): one odd query cannot capture a tool, and one example is still used whole.
    Query-to-query cosines run higher than query-to-tool ones (e5's baseline), so evidence is compared as
    a z-score among the tools that have evidence, against the tool text's z-score among all tools: compared
    raw, every tool with any evidence outranked the right tool without it (`python -m bench.tools_tune
    --feedback` compares the two).
    `lift` (per tool, or one for all): how far toward the evidence's z-score a tool is lifted when that is higher
    (1: all the way; a toolset's history chooses: `feedback.choose_rule`).
    Returns the cosine (the one min_score and abstention judge) and the fused score used for ranking.
    """
    dense = cosine
    dense_z = standardise(cosine.astype(np.float64))
    if evidence is not None:
        nearest, centroid = evidence
        has = nearest > -1.0
        scored = (nearest + centroid) / 2
        if has.sum() >= MIN_EVIDENCE_POPULATION:
            evidence_z = np.zeros_like(dense_z)
            evidence_z[has] = standardise(scored[has])
        else:  # too few tools with evidence for a z-score: put the cosine on the tool text's scale
            std = float(cosine.std())
            evidence_z = (scored - float(cosine.mean())) / (std if std > 0 else 1.0)
        dense_z = np.where(has, dense_z + lift * (np.maximum(dense_z, evidence_z) - dense_z), dense_z)
        dense = np.where(has, np.maximum(cosine, scored), cosine)
    return dense, dense_weight * dense_z + (1.0 - dense_weight) * standardise(lexical)




# A request that led to several tools, as evidence for each of them: its whole vector counts at this weight, and
# each of its parts (lent to the tool it fits best) fully. Parts lend their vectors only: lending their words to
# BM25 too cost both multi-tool pools recall. Chosen with `python -m bench.tools_tune --feedback`
# (bench/results/tools_tune-feedback.txt).
WHOLE_WEIGHT = 1.0
PART_WORDS = False


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """Recorded uses as rows: a vector, the tool it speaks for, how much it counts; and the words each tool is
    lent for BM25."""

    vectors: np.ndarray  # (rows, dim)
    owner: np.ndarray  # (rows,) tool index
    weight: np.ndarray  # (rows,)
    words: dict[int, list[str]]


def attribute(uses: Sequence[tuple[str, Sequence[int]]], query_vectors: np.ndarray,
              part_vectors: Callable[[list[str]], np.ndarray], fit: Callable[[np.ndarray], np.ndarray],
              dim: int, *, whole_weight: float | None = None, part_words: bool | None = None,
              lend: Literal["attributed", "whole", "none"] = "attributed") -> Evidence:
    """Each recorded use as evidence. A use of one tool lends that tool its words and its vector. A use of several
    tools ("book a hotel and then a taxi to it") is split into its intents: each part lends its vector (and, with
    PART_WORDS, its words) to the used tool it fits best (`fit`: a part's vector -> its cosine with every tool),
    so the hotel tool learns about hotels and the taxi tool about taxis; the whole request's vector counts for
    each of them at WHOLE_WEIGHT. A multi-tool request's own words are lent to none (they would describe the
    other tools too). That is `lend="attributed"`; `lend="whole"` lends a multi-tool request's whole vector and
    words to each of its tools, undivided, and `lend="none"` lends it to none (a toolset's history chooses:
    `feedback.choose_rule`)."""
    whole_weight = WHOLE_WEIGHT if whole_weight is None else whole_weight  # the tuning bench varies these
    part_words = PART_WORDS if part_words is None else part_words
    if lend == "none":
        uses, query_vectors = _single_tool(uses, query_vectors)
    elif lend == "whole":
        whole_weight, part_words = 1.0, False
    rows: list[np.ndarray] = []
    owners: list[int] = []
    weights: list[float] = []
    words: dict[int, list[str]] = {}
    splits = [split_intents(text) if len(set(tools)) > 1 and lend == "attributed" else [] for text, tools in uses]
    flat = [part for parts in splits for part in parts]
    embedded = iter(part_vectors(flat) if flat else np.zeros((0, dim), np.float32))
    for (text, tools), vector, parts in zip(uses, query_vectors, splits, strict=True):
        used = list(dict.fromkeys(tools))
        whole = 1.0 if len(used) == 1 else whole_weight
        for tool in used:
            rows.append(vector)
            owners.append(tool)
            weights.append(whole)
        if len(used) == 1 or lend == "whole":
            for tool in used:
                words.setdefault(tool, []).append(text)
        for part in parts:
            part_vector = next(embedded)
            cosines = fit(part_vector)
            best = max(used, key=lambda t: (float(cosines[t]), -t))
            rows.append(part_vector)
            owners.append(best)
            weights.append(1.0)
            if part_words:
                words.setdefault(best, []).append(part)
    return Evidence(vectors=np.stack(rows) if rows else np.zeros((0, dim), np.float32),
                    owner=np.array(owners, dtype=np.int64), weight=np.array(weights, dtype=np.float64), words=words)


def _single_tool(uses: Sequence[tuple[str, Sequence[int]]], vectors: np.ndarray
                 ) -> tuple[list[tuple[str, Sequence[int]]], np.ndarray]:
    keep = [i for i, (_, tools) in enumerate(uses) if len(set(tools)) == 1]
    return [uses[i] for i in keep], vectors[keep] if len(keep) else vectors[:0]
