"""Hybrid ranking and packing: fuse dense and lexical scores, then fill a token budget by score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def normalise(scores: np.ndarray) -> np.ndarray:
    """Min-max to [0, 1] over the defined (finite) entries; constant or empty input gives zeros."""
    out = np.zeros_like(scores, dtype=np.float64)
    finite = np.isfinite(scores)
    if not finite.any():
        return out
    lo, hi = float(scores[finite].min()), float(scores[finite].max())
    if hi > lo:
        out[finite] = (scores[finite] - lo) / (hi - lo)
    return out


def fuse(dense: np.ndarray, lexical: np.ndarray, dense_weight: float) -> np.ndarray:
    """Convex combination of min-max normalised scores (relative score fusion).

    Chunks the dense stage did not score (NaN) take the dense minimum: they were judged less relevant.
    """
    lexical_part = lexical / lexical.max() if lexical.size and lexical.max() > 0 else np.zeros_like(lexical)
    return dense_weight * normalise(dense) + (1.0 - dense_weight) * lexical_part


def standardise(scores: np.ndarray) -> np.ndarray:
    """z-scores. Tool selection fuses these rather than min-max: over thousands of tools a sharp lexical
    match drowned in the dense spread (compared, and the weight chosen, on the training split by
    `python -m bench.tools_tune`)."""
    std = float(scores.std()) if scores.size else 0.0
    return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores, dtype=np.float64)


def rank_order(scores: np.ndarray, tie_break: np.ndarray | None = None) -> list[int]:
    """Indices best first; scores rounded so float noise cannot reorder; ties broken by `tie_break`
    (smaller first) when given, then by position. One numpy lexsort."""
    rounded = np.round(np.asarray(scores, dtype=np.float64), 9)
    keys = [np.arange(len(rounded))] + ([tie_break] if tie_break is not None else []) + [-rounded]
    return np.lexsort(keys).tolist()  # type: ignore[no-any-return]


def interleave(rankings: Sequence[Sequence[int]], n: int) -> list[int]:
    """The first n distinct indices, taking turns between rankings (each best first): an entry that only
    one ranking rates highly still gets in."""
    chosen: dict[int, None] = {}
    for position in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if position < len(ranking):
                chosen.setdefault(ranking[position])
        if len(chosen) >= n:
            break
    return list(chosen)[:n]


def neighbours(pool: Sequence[int], dense: np.ndarray, documents: np.ndarray, best: int, radius: int = 1
               ) -> list[int]:
    """Chunks within `radius` of the pool's `best` dense hits, in the same document and not scored yet
    (NaN in `dense`), in index order. Evidence sits next to what restates the question."""
    top = sorted(pool, key=lambda i: (-round(float(dense[i]), 9), i))[:best]  # the order rank_order gives
    around = {j for i in top for offset in range(1, radius + 1) for j in (i - offset, i + offset)
              if 0 <= j < len(dense) and documents[j] == documents[i] and np.isnan(dense[j])}
    return sorted(around)


@dataclass(frozen=True)
class Candidate:
    index: int
    tokens: int
    text: str


def pack_to_budget(candidates: Sequence[Candidate], fused: np.ndarray, k: int, max_tokens: int | None,
                   eligible: np.ndarray | None = None, distinct: bool = True) -> list[int]:
    """Best-first selection: at most k chunks, at most max_tokens in total, no repeated text when `distinct` (the
    same paragraph on two pages is one answer; the same lines at two places of a log or a file are two).

    A chunk too large for what is left of the budget is skipped, and smaller ones further down still get
    their chance. Ties break by position so the same input always selects the same chunks.
    """
    order = rank_order(fused)
    chosen: list[int] = []
    seen: set[str] = set()
    used = 0
    for i in order:
        if len(chosen) >= k:
            break
        cand = candidates[i]
        if eligible is not None and not eligible[i]:
            continue
        if (distinct and cand.text in seen) or (max_tokens is not None and used + cand.tokens > max_tokens):
            continue
        chosen.append(i)
        seen.add(cand.text)
        used += cand.tokens
    return chosen


def select(candidates: Sequence[Candidate], dense: np.ndarray, lexical: np.ndarray, dense_weight: float, k: int,
           max_tokens: int | None, min_score: float | None = None, boost: np.ndarray | None = None,
           unscored_compete: bool = False, distinct: bool = True) -> list[int]:
    """Fuse, then pack: only chunks with a dense score (NaN = not scored) that reach min_score compete, or, with
    `unscored_compete` (code, whose budget spans many definitions), every chunk, an unscored one on its lexical
    score alone; a `boost` (what the request names) is added to the fused score, so a boosted chunk goes first."""
    eligible = np.ones(len(dense), dtype=bool) if unscored_compete else np.isfinite(dense)
    if min_score is not None:
        eligible &= np.nan_to_num(dense, nan=-2.0) >= min_score
    fused = fuse(dense, lexical, dense_weight)
    return pack_to_budget(candidates, fused if boost is None else fused + boost, k, max_tokens, eligible,
                          distinct)
