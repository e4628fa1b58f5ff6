"""One translation from this store's values to a Qdrant library's types, shared by both adapters.

Each adapter says how its library spells a leaf (a match, a range, a filter node, an index's parameters); the
walk over the filter tree, the vectors of a point, the split of a returned record and the index-kind table are
written once here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .types import (
    Condition,
    Found,
    HasIds,
    IndexKind,
    IsEmpty,
    Match,
    MatchAny,
    Range,
    SpaceSpec,
    Sparse,
    Where,
    point_id,
)

# Index kind -> the parameters class both libraries name alike, and its options (HNSW links only for partitions).
INDEX_KINDS: dict[IndexKind, tuple[str, dict[str, bool]]] = {
    "keyword": ("KeywordIndexParams", {"enable_hnsw": False}),
    "tenant": ("KeywordIndexParams", {"is_tenant": True, "enable_hnsw": False}),
    "partition": ("KeywordIndexParams", {"is_tenant": True}),
    "integer": ("IntegerIndexParams", {"lookup": True, "range": True, "enable_hnsw": False}),
    "float": ("FloatIndexParams", {"enable_hnsw": False}),
    "datetime": ("DatetimeIndexParams", {"enable_hnsw": False}),
    "bool": ("BoolIndexParams", {"enable_hnsw": False}),
}
_PLAIN_KINDS: dict[str, IndexKind] = {"keyword": "keyword", "integer": "integer", "float": "float",
                                      "datetime": "datetime", "bool": "bool"}


class Translation:
    """Subclasses implement the leaf builders for their library (`lib` is its models module)."""

    sparse_type: type[Any]

    def __init__(self, lib: Any) -> None:
        self.lib = lib

    # -- what each library spells its own way --

    def match(self, field: str, value: str | int | bool) -> Any: raise NotImplementedError
    def match_any(self, field: str, values: list[Any]) -> Any: raise NotImplementedError
    def range(self, field: str, bounds: dict[str, Any], dates: bool) -> Any: raise NotImplementedError
    def is_empty(self, field: str) -> Any: raise NotImplementedError
    def has_ids(self, ids: tuple[str, ...]) -> Any: raise NotImplementedError
    def node(self, must: list[Any] | None, must_not: list[Any] | None) -> Any: raise NotImplementedError
    def sparse(self, vector: Sparse) -> Any: raise NotImplementedError
    def payload(self, payload: bool | tuple[str, ...]) -> Any: raise NotImplementedError
    def index_params(self, class_name: str, options: dict[str, bool]) -> Any: raise NotImplementedError

    # -- written once --

    def filter(self, condition: Where | None) -> Any:
        if condition is None:
            return None
        return self.node([self.condition(c) for c in condition.must] or None,
                         [self.condition(c) for c in condition.must_not] or None)

    def condition(self, c: Condition) -> Any:
        if isinstance(c, Where):
            return self.filter(c)
        if isinstance(c, Match):
            return self.match(c.field, c.value)
        if isinstance(c, MatchAny):
            return self.match_any(c.field, list(c.values))
        if isinstance(c, Range):
            return self.range(c.field, {"gte": c.gte, "gt": c.gt, "lte": c.lte, "lt": c.lt}, c.dates)
        if isinstance(c, IsEmpty):
            return self.is_empty(c.field)
        assert isinstance(c, HasIds)
        return self.has_ids(c.ids)

    def vector(self, vector: np.ndarray | Sparse) -> Any:
        if isinstance(vector, Sparse):
            return self.sparse(vector)
        return np.asarray(vector, dtype=np.float32).tolist()

    def vectors(self, dense: Mapping[str, np.ndarray], sparse: Mapping[str, Sparse]) -> dict[str, Any]:
        """A point's named vectors as the library takes them."""
        return {**{n: np.asarray(v, dtype=np.float32).tolist() for n, v in dense.items()},
                **{n: self.sparse(s) for n, s in sparse.items()}}

    def found(self, record: Any, score: float | None = None) -> Found:
        """A record or scored point of the library, its named vectors split into dense and sparse."""
        dense: dict[str, np.ndarray] = {}
        sparse: dict[str, Sparse] = {}
        for name, value in (record.vector.items() if isinstance(record.vector, dict) else ()):
            if isinstance(value, self.sparse_type):
                sparse[name] = Sparse(tuple(value.indices), tuple(value.values))
            else:
                dense[name] = np.asarray(value, dtype=np.float32)
        return Found(id=str(record.id), payload=record.payload or {}, dense=dense, sparse=sparse, score=score)

    def by_key(self, keys: Sequence[str], retrieve: Callable[[list[str]], Iterable[Any]]) -> dict[str, Found]:
        """Points fetched by key, `retrieve` called with ids in batches; a missing key is simply absent."""
        ids = {point_id(k): k for k in keys}
        out: dict[str, Found] = {}
        batches = list(ids)
        for start in range(0, len(batches), 1024):
            for record in retrieve(batches[start : start + 1024]):
                found = self.found(record)
                out[ids[found.id]] = found
        return out

    def index(self, kind: IndexKind) -> Any:
        class_name, options = INDEX_KINDS[kind]
        return self.index_params(class_name, options)


def linked_elsewhere(spec: SpaceSpec, indexed: Mapping[str, tuple[str, Any]]) -> list[tuple[str, IndexKind]]:
    """Indexed fields the spec does not declare (metadata fields, indexed as documents name them) whose index
    an older build made with HNSW links: they are re-created without, as `index` makes them now."""
    out = []
    for name, (data_type, params) in sorted(indexed.items()):
        kind = _PLAIN_KINDS.get(data_type.rsplit(".", 1)[-1].lower())
        if name not in spec.indexes and kind is not None and getattr(params, "enable_hnsw", None) is not False:
            out.append((name, kind))
    return out
