"""The code ranker: one rule that scores code units against a request, for every cut of code.

Signals (each measured on the localization dev split, `python -m bench.localize`):
- lexical: BM25 over the units with the repository's (or the file's) own statistics (`UnitIndex`);
- named: the unit's own name is an identifier the request writes as code, more so with its class (`Class.method`),
  worth less the more units share the name (`__init__`, `run`);
- path: the request names the unit's file (its path, its module's dotted path) or a traceback frame points into it;
- place: tests, examples, docs and vendored code are rarely what a request is about;
- dense: the cosine of the unit's vector with the request's, where the caller has vectors.
The score is lexical (scaled to the best unit's) plus the weighted signals, times the place's factor.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .query import CodeQuery
from .units import CodeUnit

__all__ = ["Weights", "WEIGHTS", "place_factor", "score_units"]

_TESTS = re.compile(r"(^|/)(tests?|testing|test_utils|unittests?|integration|fixtures)(/|$)|(^|/)test_[^/]*$"
                    r"|_tests?\.[a-z]+$|(^|/)conftest\.py$|\.(spec|test)\.[jt]sx?$")
_ASIDE = re.compile(r"(^|/)(examples?|docs?|doc_src|benchmarks?|scripts|hacking|contrib)(/|$)")
_VENDORED = re.compile(r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external|node_modules)(/|$)")


@dataclass(frozen=True)
class Weights:
    named: float = 0.6
    pair: float = 0.4
    path: float = 0.5
    frame: float = 0.6
    dense: float = 0.0
    tests: float = 0.3
    aside: float = 0.5
    vendored: float = 0.3


WEIGHTS = Weights()


def place_factor(path: str, weights: Weights = WEIGHTS) -> float:
    """Tests, examples and docs, and vendored code, count for less than the code they exercise or ship."""
    lowered = path.lower()
    if _VENDORED.search(lowered):
        return weights.vendored
    if _TESTS.search(lowered):
        return weights.tests
    if _ASIDE.search(lowered):
        return weights.aside
    return 1.0


def score_units(query: CodeQuery, units: Sequence[CodeUnit], lexical: np.ndarray, *,
                name_counts: dict[str, int] | None = None, dense: np.ndarray | None = None,
                weights: Weights = WEIGHTS) -> np.ndarray:
    """Each unit's score (see the module's docstring); `lexical` and `dense` hold one value per unit, in order;
    `name_counts` how many units of the whole index bear each leaf name (the units' own when not given)."""
    if not units:
        return np.zeros(0)
    top = float(lexical.max()) if len(lexical) else 0.0
    score = lexical / top if top > 0 else np.zeros(len(units))
    counts = name_counts if name_counts is not None else _leaf_counts(units)
    file_named: dict[str, float] = {}
    for i, unit in enumerate(units):
        bonus = _named(query, unit, counts, weights)
        if unit.path not in file_named:
            file_named[unit.path] = _path_signal(query, unit.path, weights)
        bonus += file_named[unit.path] + _frame_in(query, unit, weights)
        score[i] += bonus
    if dense is not None and weights.dense:
        score += weights.dense * np.nan_to_num(dense, nan=0.0)
    factors = np.fromiter((place_factor(u.path, weights) for u in units), dtype=np.float64, count=len(units))
    return score * factors


def _leaf_counts(units: Sequence[CodeUnit]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for unit in units:
        counts[unit.leaf] = counts.get(unit.leaf, 0) + 1
    return counts


def _named(query: CodeQuery, unit: CodeUnit, counts: dict[str, int], weights: Weights) -> float:
    if unit.kind == "module" or unit.leaf not in query.names:
        return 0.0
    rarity = 1.0 / (1.0 + math.log(max(1, counts.get(unit.leaf, 1))))
    parts = unit.name.split(".")
    paired = len(parts) > 1 and (parts[-2], parts[-1]) in query.pairs
    return weights.named * rarity + (weights.pair if paired else 0.0)


def _path_signal(query: CodeQuery, path: str, weights: Weights) -> float:
    return weights.path * query.names_file(path) / 2


def _frame_in(query: CodeQuery, unit: CodeUnit, weights: Weights) -> float:
    for frame in query.frames:
        if frame.line is None or not (unit.start_line <= frame.line <= unit.end_line):
            continue
        if query.names_file(unit.path) and unit.path.endswith(frame.path.replace("\\", "/").rsplit("/", 1)[-1]):
            return weights.frame
    return 0.0
