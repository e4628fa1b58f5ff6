"""qdrant-client: the same store protocol over a Qdrant server or cluster by URL.

`:memory:` (qdrant-client's local mode) stands in for a server in tests: it speaks the same client API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import StoreUnavailable
from .base import explain_store_error, guarded
from .layout import SERVER_PREFIX
from .translate import Translation, linked_elsewhere
from .types import Found, IndexKind, Match, PointData, Search, SpaceSpec, Sparse, Where, point_id

T = TypeVar("T")


class ClientTranslation(Translation):
    def __init__(self, lib: Any) -> None:
        super().__init__(lib)
        self.sparse_type = lib.SparseVector

    def match(self, field: str, value: str | int | bool) -> Any:
        return self.lib.FieldCondition(key=field, match=self.lib.MatchValue(value=value))

    def match_any(self, field: str, values: list[Any]) -> Any:
        return self.lib.FieldCondition(key=field, match=self.lib.MatchAny(any=values))

    def range(self, field: str, bounds: dict[str, Any], dates: bool) -> Any:
        return self.lib.FieldCondition(key=field, range=(self.lib.DatetimeRange if dates else self.lib.Range)(**bounds))

    def is_empty(self, field: str) -> Any:
        return self.lib.IsEmptyCondition(is_empty=self.lib.PayloadField(key=field))

    def has_ids(self, ids: tuple[str, ...]) -> Any:
        return self.lib.HasIdCondition(has_id=list(ids))

    def node(self, must: list[Any] | None, must_not: list[Any] | None) -> Any:
        return self.lib.Filter(must=must, must_not=must_not)

    def sparse(self, vector: Sparse) -> Any:
        return self.lib.SparseVector(indices=list(vector.indices), values=list(vector.values))

    def payload(self, payload: bool | tuple[str, ...]) -> Any:
        return list(payload) if isinstance(payload, tuple) else payload

    def index_params(self, class_name: str, options: dict[str, bool]) -> Any:
        # Each index type enum has one member (KeywordIndexType.KEYWORD, ...): the server wants it named.
        kind = next(iter(getattr(self.lib, class_name.replace("Params", "Type"))))
        return getattr(self.lib, class_name)(type=kind, **options)


class ClientStore:
    """The same protocol over qdrant-client: one Qdrant collection per space, prefixed `ctxsieve_`."""

    def __init__(self, client: Any) -> None:
        from qdrant_client import models

        self.client = client
        self.m = models
        self.t = ClientTranslation(models)
        self.local = getattr(client, "_client", None).__class__.__name__ == "QdrantLocal"
        self._known: set[str] = set()
        # qdrant-client's `:memory:` mode keeps plain Python structures without locking; a server does not care.
        self._lock = threading.RLock()

    @classmethod
    def connect(cls, url: str, api_key: str | None = None, timeout: float = 10.0) -> ClientStore:
        from qdrant_client import QdrantClient

        try:
            client = QdrantClient(location=url) if url == ":memory:" else \
                QdrantClient(url=url, api_key=api_key, timeout=int(timeout))
        except Exception as exc:
            raise StoreUnavailable(f"cannot reach Qdrant at {url}: {explain_store_error(exc)}") from exc
        return cls(client)

    @staticmethod
    def collection(space: str) -> str:
        return SERVER_PREFIX + space

    def _call(self, fn: Callable[[], T]) -> T:
        with self._lock:
            return guarded(fn)

    def ensure(self, spec: SpaceSpec) -> None:
        m, name = self.m, self.collection(spec.name)
        if spec.name not in self._known:
            def create() -> None:
                if not self.client.collection_exists(name):
                    self.client.create_collection(
                        name, vectors_config={n: m.VectorParams(size=d, distance=m.Distance.DOT)
                                              for n, d in spec.dense.items()},
                        sparse_vectors_config={n: m.SparseVectorParams(modifier=m.Modifier.IDF) for n in spec.sparse},
                        on_disk_payload=True)
            self._call(create)
            self._known.add(spec.name)
        for field_name, kind in spec.indexes.items():
            self.index(spec.name, field_name, kind)
        schema = self._call(lambda: self.client.get_collection(self.collection(spec.name))).payload_schema
        for name, kind in linked_elsewhere(spec, {n: (str(i.data_type), i.params) for n, i in schema.items()}):
            self.index(spec.name, name, kind)

    def index(self, space: str, field: str, kind: IndexKind) -> None:
        if self.local:  # qdrant-client's local mode has no payload indexes (it scans) and warns on each call
            return
        schema = self.t.index(kind)
        self._call(lambda: self.client.create_payload_index(self.collection(space), field, schema, wait=True))

    def upsert(self, space: str, points: Sequence[PointData]) -> None:
        structs = [self.m.PointStruct(id=p.id or point_id(p.key), payload=p.payload,
                                      vector=self.t.vectors(p.dense, p.sparse)) for p in points]
        for start in range(0, len(structs), 256):
            batch = structs[start : start + 256]
            self._call(lambda b=batch: self.client.upsert(self.collection(space), points=b, wait=True))  # type: ignore[misc]

    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]:
        return self.t.by_key(keys, lambda ids: self._call(lambda: self.client.retrieve(
            self.collection(space), ids, with_payload=self.t.payload(payload), with_vectors=list(vectors) or False)))

    def delete(self, space: str, keys: Sequence[str]) -> None:
        if keys:
            selector = self.m.PointIdsList(points=[point_id(k) for k in keys])
            self._call(lambda: self.client.delete(self.collection(space), points_selector=selector, wait=True))

    def delete_where(self, space: str, condition: Where) -> None:
        selector = self.m.FilterSelector(filter=self.t.filter(condition))
        self._call(lambda: self.client.delete(self.collection(space), points_selector=selector, wait=True))

    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]:
        m = self.m
        requests = [m.QueryRequest(
            query=self.t.vector(s.vector), using=s.using, limit=s.limit, filter=self.t.filter(s.where),
            with_payload=self.t.payload(s.payload), with_vector=list(s.vectors) or False,
            params=m.SearchParams(idf=m.IdfCorpusParams(corpus=self.t.filter(s.idf_corpus))) if s.idf_corpus else None)
            for s in searches]
        responses = self._call(lambda: self.client.query_batch_points(self.collection(space), requests))
        return [[self.t.found(p, p.score) for p in r.points] for r in responses]

    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]:
        m = self.m
        order = m.OrderBy(key=order_by, direction=m.Direction.DESC if descending else m.Direction.ASC) \
            if order_by else None
        records, next_offset = self._call(lambda: self.client.scroll(
            self.collection(space), scroll_filter=self.t.filter(condition), limit=limit, offset=offset,
            with_payload=self.t.payload(payload), with_vectors=list(vectors) or False, order_by=order))
        return [self.t.found(r, None) for r in records], None if next_offset is None else str(next_offset)

    def count(self, space: str, condition: Where | None) -> int:
        result = self._call(lambda: self.client.count(self.collection(space), count_filter=self.t.filter(condition),
                                                      exact=True))
        return int(result.count)

    def tally(self, space: str, key: str, value: str) -> int:
        result = self._call(lambda: self.client.count(self.collection(space), count_filter=self.t.filter(
            Where((Match(key, value),))), exact=False))
        return int(result.count)

    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None:
        self._call(lambda: self.client.set_payload(self.collection(space), payload=dict(payload),
                                                   points=self.t.filter(condition), wait=True))

    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]:
        result = self._call(lambda: self.client.facet(
            self.collection(space), key, facet_filter=self.t.filter(condition), limit=limit, exact=True))
        return {hit.value: hit.count for hit in result.hits}

    def ping(self) -> bool:
        try:
            self._call(self.client.get_collections)
        except StoreUnavailable:
            return False
        return True

    def close(self) -> None:
        self.client.close()
