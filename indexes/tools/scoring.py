"""How a tool is scored against a request: the fusion of its text and its usage evidence with BM25, and the
abstention calibration from a toolset's own near-misses. Functions of arrays only: the service's ToolIndex and
the tuning bench (`python -m bench.tools_tune`) call these same functions, so what is tuned is what ships."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ranking import standardise
from ..toolformats import Tool


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


MIN_EVIDENCE_POPULATION = 8  # tools with recorded queries before their evidence is judged among themselves
# Abstention calibration: this many of a toolset's tools ask for themselves (their description as a request)
# with themselves left out; a request whose best cosine is ABSTAIN_MARGIN below the ABSTAIN_QUANTILE of
# those near-misses fits no tool. The margin is the smallest that keeps abstentions on ordinary requests
# <= 5% on every pool's training queries (chosen by `python -m bench.tools_tune --abstain`; descriptions are
# closer to tools than users' requests are, hence a margin).
CALIBRATION_SAMPLE = 64
ABSTAIN_QUANTILE = 0.05
ABSTAIN_MARGIN = 0.01


def calibration_asks(tools: Sequence[Tool]) -> tuple[list[int], list[str]]:
    """Which tools ask for themselves in the abstention calibration (a fixed sample, by name digest), and
    how: their description, as a request."""
    sample = sorted(range(len(tools)), key=lambda i: digest(tools[i].name))[:CALIBRATION_SAMPLE]
    return sample, [tools[i].description or tools[i].name for i in sample]


def near_miss(best_without_own: Sequence[float]) -> float:
    """The ABSTAIN_QUANTILE of the near-misses' best cosines (-inf, never abstain, with fewer than two)."""
    return float(np.quantile(best_without_own, ABSTAIN_QUANTILE)) if len(best_without_own) > 1 else -np.inf


TOOL_DENSE_WEIGHT = 0.74  # chosen leave-one-pool-out on training queries (python -m bench.tools_tune)


def nearest_evidence(vectors: np.ndarray, owner: np.ndarray, tools: int, q: np.ndarray) -> np.ndarray:
    """Per tool, the cosine of its recorded query (or example) nearest to q; -1 for a tool without any."""
    nearest = np.full(tools, -1.0)
    np.maximum.at(nearest, owner, vectors @ q)
    return nearest


def fuse_tool_scores(cosine: np.ndarray, lexical: np.ndarray, dense_weight: float,
                     evidence: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Dense: the tool's own text, or usage evidence when it stands out more; fused with BM25 as z-scores.

    `evidence` is (nearest recorded query, centroid of them all) per tool, as cosines; they are averaged
    (Tool2Vec's usage embedding): one odd query cannot capture a tool, and one example is still used whole.
    Query-to-query cosines run higher than query-to-tool ones (e5's baseline), so evidence is compared as
    a z-score among the tools that have evidence, against the tool text's z-score among all tools: compared
    raw, every tool with any evidence outranked the right tool without it (`python -m bench.tools_tune
    --feedback` compares the two).
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
        dense_z = np.where(has, np.maximum(dense_z, evidence_z), dense_z)
        dense = np.where(has, np.maximum(cosine, scored), cosine)
    return dense, dense_weight * dense_z + (1.0 - dense_weight) * standardise(lexical)


