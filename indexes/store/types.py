"""What goes into the store and comes out: points, their vectors, a small filter tree, and space specs.

Points are addressed by a deterministic key (id = uuid5 of the key), so every write is an idempotent upsert and
no record is ever read-modified-written.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

import numpy as np

NAMESPACE = uuid.UUID("5b0f3f0e-8c56-4a57-9d8e-6a7c4e2f9a11")
# "partition": a keyword that splits a space into the parts every vector search names (a collection's chunks):
# the engine stores each part together and links each part's points in HNSW. No other index adds HNSW links:
# for a linked field the engine builds another graph over the points of each of its values that has more than
# the full-scan threshold of points, while filters on those fields work without them.
IndexKind = Literal["keyword", "tenant", "partition", "integer", "float", "datetime", "bool"]


def point_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


@dataclass(frozen=True)
class Sparse:
    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class PointData:
    key: str  # the point's id is uuid5(key): the same record always lands on the same point
    payload: dict[str, Any]
    id: str | None = None  # only to copy a point whose key is unknown (migration); else derived from key
    dense: Mapping[str, np.ndarray] = field(default_factory=dict)
    sparse: Mapping[str, Sparse] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Found:
    id: str
    payload: dict[str, Any]
    dense: dict[str, np.ndarray] = field(default_factory=dict)
    sparse: dict[str, Sparse] = field(default_factory=dict)
    score: float | None = None


# --- filters: a small tree each adapter translates ----------------------------------------------------


@dataclass(frozen=True)
class Match:
    field: str
    value: str | int | bool


@dataclass(frozen=True)
class MatchAny:
    field: str
    values: tuple[str, ...] | tuple[int, ...]


@dataclass(frozen=True)
class Range:
    field: str
    _: KW_ONLY
    gte: float | str | None = None  # numbers, or ISO 8601 strings when `dates`
    gt: float | str | None = None
    lte: float | str | None = None
    lt: float | str | None = None
    dates: bool = False


@dataclass(frozen=True)
class IsEmpty:
    field: str


@dataclass(frozen=True)
class HasIds:
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Where:
    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()

    def and_(self, *must: Condition) -> Where:
        return Where((*self.must, *must), self.must_not)


Condition = Match | MatchAny | Range | IsEmpty | HasIds | Where


def where(**equal: str | int | bool) -> Where:
    """All of these payload fields equal these values."""
    return Where(tuple(Match(k, v) for k, v in equal.items()))


@dataclass(frozen=True, kw_only=True)
class SpaceSpec:
    name: str
    dense: Mapping[str, int] = field(default_factory=dict)  # vector name -> dimension (dot product, unit rows)
    sparse: tuple[str, ...] = ()  # sparse vectors, scored with the engine's IDF modifier
    indexes: Mapping[str, IndexKind] = field(default_factory=dict)
    # Searched by vector (collections)? Else vectors are only fetched by id (the chunk-vector cache, recorded
    # queries): they stay on disk and get no HNSW index.
    searched: bool = False


@dataclass(frozen=True, kw_only=True)
class Search:
    using: str
    vector: np.ndarray | Sparse
    limit: int
    where: Where | None = None
    vectors: tuple[str, ...] = ()
    payload: bool | tuple[str, ...] = True
    idf_corpus: Where | None = None  # IDF statistics over these points (sparse only); None: the whole space
