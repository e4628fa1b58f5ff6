"""The store: what retrieval needs from Qdrant, as one protocol with two adapters.

- `EdgeStore`: Qdrant Edge (`qdrant-edge-py`), Qdrant's engine in-process, the embedded default: one shard
  per space under the data dir (WAL, segments, payload indexes on disk, sparse vectors with IDF).
- `ClientStore`: qdrant-client, for a Qdrant server or cluster by URL (`:memory:` stands in for a server in
  tests: it speaks the same client API).

A *space* is a logical collection (sources, chunk vectors, collection documents, toolsets, sessions).
Points are addressed by a deterministic key (id = uuid5 of the key), so every write is an idempotent
upsert and no record is ever read-modified-written. Qdrant Edge is pre-1.0: its calls stay in this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from .errors import StoreUnavailable

NAMESPACE = uuid.UUID("5b0f3f0e-8c56-4a57-9d8e-6a7c4e2f9a11")
T = TypeVar("T")
# "partition": a keyword that splits a space into the parts every vector search names (a collection's chunks):
# the engine stores each part together and links each part's points in HNSW. No other index adds HNSW links:
# for a linked field the engine builds another graph over the points of each of its values that has more than
# the full-scan threshold of points (an 8-valued metadata field over a whole collection: the build's work twice),
# while filters on those fields work without them (filter first when selective, else the graph checked).
IndexKind = Literal["keyword", "tenant", "partition", "integer", "float", "datetime", "bool"]


def point_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


# --- what goes in and comes out -----------------------------------------------------------------------


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


class Store(Protocol):
    def ensure(self, spec: SpaceSpec) -> None: ...
    def index(self, space: str, field: str, kind: IndexKind) -> None: ...
    def upsert(self, space: str, points: Sequence[PointData]) -> None: ...
    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]: ...
    def delete(self, space: str, keys: Sequence[str]) -> None: ...
    def delete_where(self, space: str, condition: Where) -> None: ...
    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]: ...
    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]: ...
    def count(self, space: str, condition: Where | None) -> int: ...
    def tally(self, space: str, key: str, value: str) -> int: ...
    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None: ...
    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]: ...
    def ping(self) -> bool: ...
    def close(self) -> None: ...


def _linked_elsewhere(spec: SpaceSpec, indexed: Mapping[str, tuple[str, Any]]) -> list[tuple[str, IndexKind]]:
    """Indexed fields the spec does not declare (metadata fields, indexed as documents name them) whose index
    an older build made with HNSW links: they are re-created without, as `index` makes them now."""
    kinds: dict[str, IndexKind] = {"keyword": "keyword", "integer": "integer", "float": "float",
                                   "datetime": "datetime", "bool": "bool"}
    out = []
    for name, (data_type, params) in sorted(indexed.items()):
        kind = kinds.get(data_type.rsplit(".", 1)[-1].lower())
        if name not in spec.indexes and kind is not None and getattr(params, "enable_hnsw", None) is not False:
            out.append((name, kind))
    return out


def scroll_all(store: Store, space: str, condition: Where | None, *, payload: bool | tuple[str, ...] = True,
               vectors: tuple[str, ...] = (), page: int = 1024, most: int | None = None) -> Iterator[Found]:
    """Every point matching, page by page (listings and exports; never a query's hot path)."""
    offset: str | None = None
    seen = 0
    while True:
        found, offset = store.scroll(space, condition, limit=page, offset=offset, payload=payload, vectors=vectors)
        for item in found:
            yield item
            seen += 1
            if most is not None and seen >= most:
                return
        if offset is None:
            return


def explain_store_error(exc: BaseException) -> str:
    """Say what the operator can do: a full or read-only disk is fixed outside, and writes then resume."""
    detail = f"{type(exc).__name__}: {exc}"
    errno_ = getattr(exc, "errno", None)
    lowered = detail.lower()
    if errno_ == 28 or "disk is full" in lowered or "no space left" in lowered or "storagefull" in lowered:
        return (f"the data directory is full ({detail}); free some space: writes resume without a restart, "
                "and nothing already acknowledged was lost")
    if errno_ == 30 or "read-only" in lowered or "readonly" in lowered:
        return (f"the data directory is read-only ({detail}); make it writable: writes resume without a "
                "restart, and nothing already acknowledged was lost")
    return f"vector store error: {detail}"


def _guarded(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except (StoreUnavailable, ValueError):
        raise
    except Exception as exc:  # both engines raise many types (RuntimeError, OSError, their own)
        raise StoreUnavailable(explain_store_error(exc)) from exc


def _dense_rows(vectors: Mapping[str, np.ndarray]) -> dict[str, list[float]]:
    return {name: np.asarray(v, dtype=np.float32).tolist() for name, v in vectors.items()}


def _found(record: Any, sparse_type: type[Any], score: float | None) -> Found:
    """A record or scored point of either library, its named vectors split into dense and sparse."""
    dense: dict[str, np.ndarray] = {}
    sparse: dict[str, Sparse] = {}
    for name, value in (record.vector.items() if isinstance(record.vector, dict) else ()):
        if isinstance(value, sparse_type):
            sparse[name] = Sparse(tuple(value.indices), tuple(value.values))
        else:
            dense[name] = np.asarray(value, dtype=np.float32)
    return Found(id=str(record.id), payload=record.payload or {}, dense=dense, sparse=sparse, score=score)


def _tree(condition: Where | None, make: Callable[[list[Any] | None, list[Any] | None], Any],
          leaf: Callable[[Condition], Any]) -> Any:
    """A Where as the library's filter: `make(must, must_not)` for each level, `leaf` for each condition."""
    if condition is None:
        return None

    def one(c: Condition) -> Any:
        return _tree(c, make, leaf) if isinstance(c, Where) else leaf(c)

    return make([one(c) for c in condition.must] or None, [one(c) for c in condition.must_not] or None)


# --- Qdrant Edge ----------------------------------------------------------------------------------------


class EdgeStore:
    """Qdrant Edge under `root`: one shard per space, opened once and kept for the process's life.

    `optimize()` (HNSW building) holds the GIL for its whole run (38 s for 20k 384-d points here, every
    other thread stopped), so the service never calls it: spaces are searched exactly, filters first.
    """

    def __init__(self, root: Path, min_free_bytes: int = 256 << 20) -> None:
        import qdrant_edge as qe

        self.qe = qe
        self.root = root
        self.min_free_bytes = min_free_bytes
        self._shards: dict[str, Any] = {}
        self._open = threading.Lock()
        self._lock_file = self._hold(root)

    @staticmethod
    def _hold(root: Path) -> Any:
        """One process per data dir: the engine's own WAL lock would fail later, on the first shard."""
        try:
            root.mkdir(parents=True, exist_ok=True)
            handle = open(root / ".ctxsieve.lock", "a+")  # noqa: SIM115 - held for the store's life
        except OSError as exc:
            raise StoreUnavailable(f"cannot open the data directory {root}: {explain_store_error(exc)}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise StoreUnavailable(f"the data directory {root} is in use by another process (another "
                                   "`ctxsieve serve`?); stop it or give this one another --data-dir") from exc
        return handle

    def _room(self) -> None:
        """Refuse a write while the disk is nearly full. The engine memory-maps its WAL and storage files
        (sparse, 32 MB a page): filling the disk through a mapping kills the process with SIGBUS instead of
        failing the write, so writes stop while less than `min_free_bytes` is free, and resume by themselves."""
        try:
            stat = os.statvfs(self.root)
        except OSError as exc:
            raise StoreUnavailable(explain_store_error(exc)) from exc
        free = stat.f_bavail * stat.f_frsize
        if free < self.min_free_bytes:
            raise StoreUnavailable(explain_store_error(OSError(
                28, f"No space left on device: {free >> 20} MiB free in {self.root}, writes need "
                    f"{self.min_free_bytes >> 20} MiB (CTXSIEVE_MIN_FREE_MB)")))

    def _write(self, space: str, operation: Any) -> None:
        self._room()
        shard = self._shard(space)
        _guarded(lambda: shard.update(operation))

    def _shard(self, space: str) -> Any:
        shard = self._shards.get(space)
        if shard is None:
            raise StoreUnavailable(f"space {space!r} was not opened (ensure it first)")
        return shard

    def ensure(self, spec: SpaceSpec) -> None:
        with self._open:
            if spec.name in self._shards:
                return
            qe = self.qe
            # Edge refuses a shard without a vector; a payload-only space gets one sparse vector it never fills.
            sparse = spec.sparse or (() if spec.dense else ("unused",))
            placement = qe.Memory.Cached if spec.searched else qe.Memory.Cold
            config = qe.EdgeConfig(
                vectors={n: qe.EdgeVectorParams(size=d, distance=qe.Distance.Dot, memory=placement)
                         for n, d in spec.dense.items()},
                sparse_vectors={n: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf) for n in sparse},
                payload_memory=qe.Memory.Cold,  # payloads (whole sources) stay on disk, not in RAM
            )
            path = self.root / spec.name
            exists = (path / "edge_config.json").exists() or any(path.glob("segments*"))
            if not exists:
                self._room()
            self._shards[spec.name] = _guarded(lambda: qe.EdgeShard.load(str(path), config) if exists
                                               else qe.EdgeShard.create(str(path), config))
        for name, kind in spec.indexes.items():
            self.index(spec.name, name, kind)
        schema = _guarded(lambda: self._shards[spec.name].info()).payload_schema
        for name, kind in _linked_elsewhere(spec, {n: (str(i.data_type), i.params) for n, i in schema.items()}):
            self.index(spec.name, name, kind)

    def index(self, space: str, field: str, kind: IndexKind) -> None:
        qe = self.qe
        schema: Any = {
            "keyword": qe.KeywordIndexParams(enable_hnsw=False),
            "tenant": qe.KeywordIndexParams(is_tenant=True, enable_hnsw=False),
            "partition": qe.KeywordIndexParams(is_tenant=True),
            "integer": qe.IntegerIndexParams(lookup=True, range=True, enable_hnsw=False),
            "float": qe.FloatIndexParams(enable_hnsw=False), "datetime": qe.DatetimeIndexParams(enable_hnsw=False),
            "bool": qe.BoolIndexParams(enable_hnsw=False)}[kind]
        self._write(space, qe.UpdateOperation.create_field_index(field, schema))

    def upsert(self, space: str, points: Sequence[PointData]) -> None:
        qe = self.qe
        for start in range(0, len(points), 512):
            batch = [qe.Point(p.id or point_id(p.key), {**_dense_rows(p.dense), **{
                n: qe.SparseVector(list(s.indices), list(s.values)) for n, s in p.sparse.items()}}, p.payload)
                     for p in points[start : start + 512]]
            self._write(space, qe.UpdateOperation.upsert_points(batch))

    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]:
        shard = self._shard(space)
        ids = {point_id(k): k for k in keys}
        out: dict[str, Found] = {}
        for start in range(0, len(keys), 1024):
            batch = list(ids)[start : start + 1024]
            records = _guarded(lambda b=batch: shard.retrieve(  # type: ignore[misc]
                b, with_payload=self._payload(payload), with_vector=list(vectors) or False))
            for record in records:
                found = self._found(record, None)
                out[ids[found.id]] = found
        return out

    def delete(self, space: str, keys: Sequence[str]) -> None:
        if keys:
            self._write(space, self.qe.UpdateOperation.delete_points([point_id(k) for k in keys]))

    def delete_where(self, space: str, condition: Where) -> None:
        self._write(space, self.qe.UpdateOperation.delete_points_by_filter(self._filter(condition)))

    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]:
        qe, shard = self.qe, self._shard(space)
        requests = [qe.QueryRequest(
            limit=s.limit, query=qe.Query.Nearest(self._vector(s.vector), using=s.using),
            filter=self._filter(s.where), with_payload=self._payload(s.payload), with_vector=list(s.vectors) or False,
            params=qe.SearchParams(idf=qe.IdfParams(corpus=self._filter(s.idf_corpus))) if s.idf_corpus else None)
            for s in searches]
        results = _guarded(lambda: shard.query_batch(qe.QueryBatchRequest(requests)))
        return [[self._found(p, p.score) for p in batch] for batch in results]

    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]:
        qe, shard = self.qe, self._shard(space)
        direction = qe.Direction.Desc if descending else qe.Direction.Asc
        request = qe.ScrollRequest(offset=offset, limit=limit, filter=self._filter(condition),
                                   with_payload=self._payload(payload), with_vector=list(vectors) or False,
                                   order_by=qe.OrderBy(order_by, direction) if order_by else None)
        records, next_offset = _guarded(lambda: shard.scroll(request))
        return [self._found(r, None) for r in records], None if next_offset is None else str(next_offset)

    def count(self, space: str, condition: Where | None) -> int:
        shard = self._shard(space)
        return int(_guarded(lambda: shard.count(self.qe.CountRequest(exact=True, filter=self._filter(condition)))))

    def tally(self, space: str, key: str, value: str) -> int:
        """Points whose keyword-indexed `key` equals `value`, read from the payload index instead of a scan (an
        exact count visits every matching point). The engine's estimate of a single indexed match is exact."""
        shard = self._shard(space)
        request = self.qe.CountRequest(exact=False, filter=self._filter(Where((Match(key, value),))))
        return int(_guarded(lambda: shard.count(request)))

    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None:
        """Set these payload fields on every point matching `condition` (one engine operation, nothing read)."""
        self._write(space, self.qe.UpdateOperation.set_payload_by_filter(self._filter(condition), dict(payload)))

    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]:
        shard = self._shard(space)
        request = self.qe.FacetRequest(key=key, limit=limit, exact=True, filter=self._filter(condition))
        return {hit.value: hit.count for hit in _guarded(lambda: shard.facet(request)).hits}

    def ping(self) -> bool:
        return self.root.is_dir()

    def optimize_all(self, prefix: str = "collections__") -> list[tuple[str, float]]:
        """Run Qdrant's optimizers (HNSW, segment merging) on the spaces searched by vector (collections), one
        at a time; (space, seconds). Offline only (`ctxsieve optimize`, service stopped): `optimize()` holds the
        GIL throughout, so in a serving process it would stop every request for as long as it runs."""
        done = []
        for path in sorted(p for p in self.root.iterdir() if p.is_dir() and p.name.startswith(prefix)
                           and (p / "edge_config.json").exists()):
            started = time.perf_counter()
            shard = _guarded(lambda p=path: self.qe.EdgeShard.load(str(p)))  # type: ignore[misc]
            try:
                _guarded(shard.optimize)
            finally:
                shard.close()
            done.append((path.name, time.perf_counter() - started))
        return done

    def close(self) -> None:
        with self._open:
            for shard in self._shards.values():
                with contextlib.suppress(Exception):  # closing is best effort: the WAL already has every write
                    shard.close()
            self._shards.clear()
        self._lock_file.close()

    # -- translation --

    def _payload(self, payload: bool | tuple[str, ...]) -> Any:
        return self.qe.PayloadSelector.Include(list(payload)) if isinstance(payload, tuple) else payload

    def _vector(self, vector: np.ndarray | Sparse) -> Any:
        if isinstance(vector, Sparse):
            return self.qe.SparseVector(list(vector.indices), list(vector.values))
        return np.asarray(vector, dtype=np.float32).tolist()

    def _found(self, record: Any, score: float | None) -> Found:
        return _found(record, self.qe.SparseVector, score)

    def _filter(self, condition: Where | None) -> Any:
        return _tree(condition, lambda must, must_not: self.qe.Filter(must=must, must_not=must_not), self._condition)

    def _condition(self, c: Condition) -> Any:
        qe = self.qe
        if isinstance(c, Match):
            return qe.FieldCondition(c.field, match=qe.MatchValue(c.value))
        if isinstance(c, MatchAny):
            return qe.FieldCondition(c.field, match=qe.MatchAny(list(c.values)))
        if isinstance(c, Range):
            bounds = {"gte": c.gte, "gt": c.gt, "lte": c.lte, "lt": c.lt}
            return qe.FieldCondition(c.field, range=qe.RangeDateTime(**bounds) if c.dates else qe.RangeFloat(**bounds))
        if isinstance(c, IsEmpty):
            return qe.IsEmptyCondition(c.field)
        assert isinstance(c, HasIds), "nested filters are built by _tree"
        return qe.HasIdCondition(set(c.ids))


# --- qdrant-client (a server or cluster by URL) ----------------------------------------------------------


class ClientStore:
    """The same protocol over qdrant-client: one Qdrant collection per space, prefixed `ctxsieve_`."""

    def __init__(self, client: Any) -> None:
        from qdrant_client import models

        self.client = client
        self.m = models
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
        return f"ctxsieve_{space}"

    def _call(self, fn: Callable[[], T]) -> T:
        with self._lock:
            return _guarded(fn)

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
        for name, kind in _linked_elsewhere(spec, {n: (str(i.data_type), i.params) for n, i in schema.items()}):
            self.index(spec.name, name, kind)

    def index(self, space: str, field: str, kind: IndexKind) -> None:
        m = self.m
        keyword = m.KeywordIndexType.KEYWORD
        schema: Any = {  # as EdgeStore.index: HNSW links for partitions only
            "keyword": m.KeywordIndexParams(type=keyword, enable_hnsw=False),
            "tenant": m.KeywordIndexParams(type=keyword, is_tenant=True, enable_hnsw=False),
            "partition": m.KeywordIndexParams(type=keyword, is_tenant=True),
            "integer": m.IntegerIndexParams(type=m.IntegerIndexType.INTEGER, lookup=True, range=True,
                                            enable_hnsw=False),
            "float": m.FloatIndexParams(type=m.FloatIndexType.FLOAT, enable_hnsw=False),
            "datetime": m.DatetimeIndexParams(type=m.DatetimeIndexType.DATETIME, enable_hnsw=False),
            "bool": m.BoolIndexParams(type=m.BoolIndexType.BOOL, enable_hnsw=False)}[kind]
        if self.local:  # qdrant-client's local mode has no payload indexes (it scans) and warns on each call
            return
        self._call(lambda: self.client.create_payload_index(self.collection(space), field, schema, wait=True))

    def upsert(self, space: str, points: Sequence[PointData]) -> None:
        m = self.m
        structs = [m.PointStruct(id=p.id or point_id(p.key), payload=p.payload, vector={
            **_dense_rows(p.dense),
            **{n: m.SparseVector(indices=list(s.indices), values=list(s.values)) for n, s in p.sparse.items()}})
            for p in points]
        for start in range(0, len(structs), 256):
            batch = structs[start : start + 256]
            self._call(lambda b=batch: self.client.upsert(self.collection(space), points=b, wait=True))  # type: ignore[misc]

    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]:
        ids = {point_id(k): k for k in keys}
        out: dict[str, Found] = {}
        for start in range(0, len(ids), 1024):
            batch = list(ids)[start : start + 1024]
            records = self._call(lambda b=batch: self.client.retrieve(  # type: ignore[misc]
                self.collection(space), b, with_payload=self._payload(payload), with_vectors=list(vectors) or False))
            for record in records:
                found = self._found(record, None)
                out[ids[found.id]] = found
        return out

    def delete(self, space: str, keys: Sequence[str]) -> None:
        if keys:
            selector = self.m.PointIdsList(points=[point_id(k) for k in keys])
            self._call(lambda: self.client.delete(self.collection(space), points_selector=selector, wait=True))

    def delete_where(self, space: str, condition: Where) -> None:
        selector = self.m.FilterSelector(filter=self._filter(condition))
        self._call(lambda: self.client.delete(self.collection(space), points_selector=selector, wait=True))

    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]:
        m = self.m
        requests = [m.QueryRequest(
            query=self._vector(s.vector), using=s.using, limit=s.limit, filter=self._filter(s.where),
            with_payload=self._payload(s.payload), with_vector=list(s.vectors) or False,
            params=m.SearchParams(idf=m.IdfCorpusParams(corpus=self._filter(s.idf_corpus))) if s.idf_corpus else None)
            for s in searches]
        responses = self._call(lambda: self.client.query_batch_points(self.collection(space), requests))
        return [[self._found(p, p.score) for p in r.points] for r in responses]

    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]:
        m = self.m
        order = m.OrderBy(key=order_by, direction=m.Direction.DESC if descending else m.Direction.ASC) \
            if order_by else None
        records, next_offset = self._call(lambda: self.client.scroll(
            self.collection(space), scroll_filter=self._filter(condition), limit=limit, offset=offset,
            with_payload=self._payload(payload), with_vectors=list(vectors) or False, order_by=order))
        return [self._found(r, None) for r in records], None if next_offset is None else str(next_offset)

    def count(self, space: str, condition: Where | None) -> int:
        result = self._call(lambda: self.client.count(self.collection(space), count_filter=self._filter(condition),
                                                      exact=True))
        return int(result.count)

    def tally(self, space: str, key: str, value: str) -> int:
        result = self._call(lambda: self.client.count(self.collection(space), count_filter=self._filter(
            Where((Match(key, value),))), exact=False))
        return int(result.count)

    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None:
        self._call(lambda: self.client.set_payload(self.collection(space), payload=dict(payload),
                                                   points=self._filter(condition), wait=True))

    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]:
        result = self._call(lambda: self.client.facet(self.collection(space), key, facet_filter=self._filter(condition),
                                                      limit=limit, exact=True))
        return {hit.value: hit.count for hit in result.hits}

    def ping(self) -> bool:
        try:
            self._call(self.client.get_collections)
        except StoreUnavailable:
            return False
        return True

    def close(self) -> None:
        self.client.close()

    # -- translation --

    def _payload(self, payload: bool | tuple[str, ...]) -> Any:
        return list(payload) if isinstance(payload, tuple) else payload

    def _vector(self, vector: np.ndarray | Sparse) -> Any:
        if isinstance(vector, Sparse):
            return self.m.SparseVector(indices=list(vector.indices), values=list(vector.values))
        return np.asarray(vector, dtype=np.float32).tolist()

    def _found(self, record: Any, score: float | None) -> Found:
        return _found(record, self.m.SparseVector, score)

    def _filter(self, condition: Where | None) -> Any:
        return _tree(condition, lambda must, must_not: self.m.Filter(must=must, must_not=must_not), self._condition)

    def _condition(self, c: Condition) -> Any:
        m = self.m
        if isinstance(c, Match):
            return m.FieldCondition(key=c.field, match=m.MatchValue(value=c.value))
        if isinstance(c, MatchAny):
            return m.FieldCondition(key=c.field, match=m.MatchAny(any=list(c.values)))
        if isinstance(c, Range):
            bounds = {"gte": c.gte, "gt": c.gt, "lte": c.lte, "lt": c.lt}
            return m.FieldCondition(key=c.field, range=m.DatetimeRange(**bounds) if c.dates else m.Range(**bounds))
        if isinstance(c, IsEmpty):
            return m.IsEmptyCondition(is_empty=m.PayloadField(key=c.field))
        assert isinstance(c, HasIds), "nested filters are built by _tree"
        return m.HasIdCondition(has_id=list(c.ids))


def open_store(data_dir: Path | None = None, url: str | None = None, api_key: str | None = None,
               timeout: float = 10.0, min_free_bytes: int = 256 << 20) -> Store:
    """A URL reaches Qdrant through qdrant-client; otherwise Qdrant Edge under data_dir. Neither: qdrant-client's
    in-memory mode (tests and benchmarks that keep nothing)."""
    if url or data_dir is None:
        return ClientStore.connect(url or ":memory:", api_key, timeout)
    return EdgeStore(Path(os.fspath(data_dir)) / "edge", min_free_bytes)
