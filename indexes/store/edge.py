"""Qdrant Edge (`qdrant-edge-py`), Qdrant's engine in-process: the embedded default.

One shard per space under the data dir (WAL, segments, payload indexes on disk, sparse vectors with IDF).
Qdrant Edge is pre-1.0: its calls stay in this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import StoreUnavailable
from .base import explain_store_error, guarded
from .layout import is_searched
from .translate import Translation, linked_elsewhere
from .types import Found, IndexKind, Match, PointData, Search, SpaceSpec, Sparse, Where, point_id


class EdgeTranslation(Translation):
    def __init__(self, lib: Any) -> None:
        super().__init__(lib)
        self.sparse_type = lib.SparseVector

    def match(self, field: str, value: str | int | bool) -> Any:
        return self.lib.FieldCondition(field, match=self.lib.MatchValue(value))

    def match_any(self, field: str, values: list[Any]) -> Any:
        return self.lib.FieldCondition(field, match=self.lib.MatchAny(values))

    def range(self, field: str, bounds: dict[str, Any], dates: bool) -> Any:
        kind = self.lib.RangeDateTime if dates else self.lib.RangeFloat
        return self.lib.FieldCondition(field, range=kind(**bounds))

    def is_empty(self, field: str) -> Any:
        return self.lib.IsEmptyCondition(field)

    def has_ids(self, ids: tuple[str, ...]) -> Any:
        return self.lib.HasIdCondition(set(ids))

    def node(self, must: list[Any] | None, must_not: list[Any] | None) -> Any:
        return self.lib.Filter(must=must, must_not=must_not)

    def sparse(self, vector: Sparse) -> Any:
        return self.lib.SparseVector(list(vector.indices), list(vector.values))

    def payload(self, payload: bool | tuple[str, ...]) -> Any:
        return self.lib.PayloadSelector.Include(list(payload)) if isinstance(payload, tuple) else payload

    def index_params(self, class_name: str, options: dict[str, bool]) -> Any:
        return getattr(self.lib, class_name)(**options)


class EdgeStore:
    """Qdrant Edge under `root`: one shard per space, opened once and kept for the process's life.

    `optimize()` (HNSW building) holds the GIL for its whole run (every other thread stops), so the service
    never calls it: spaces are searched exactly, filters first; `ctxsieve optimize` builds it offline.
    """

    def __init__(self, root: Path, min_free_bytes: int = 256 << 20) -> None:
        import qdrant_edge as qe

        self.qe = qe
        self.t = EdgeTranslation(qe)
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
        (sparse files): filling the disk through a mapping kills the process with SIGBUS instead of
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
        guarded(lambda: shard.update(operation))

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
            self._shards[spec.name] = guarded(lambda: qe.EdgeShard.load(str(path), config) if exists
                                               else qe.EdgeShard.create(str(path), config))
        for name, kind in spec.indexes.items():
            self.index(spec.name, name, kind)
        schema = guarded(lambda: self._shards[spec.name].info()).payload_schema
        for name, kind in linked_elsewhere(spec, {n: (str(i.data_type), i.params) for n, i in schema.items()}):
            self.index(spec.name, name, kind)

    def index(self, space: str, field: str, kind: IndexKind) -> None:
        self._write(space, self.qe.UpdateOperation.create_field_index(field, self.t.index(kind)))

    def upsert(self, space: str, points: Sequence[PointData]) -> None:
        qe = self.qe
        for start in range(0, len(points), 512):
            batch = [qe.Point(p.id or point_id(p.key), self.t.vectors(p.dense, p.sparse), p.payload)
                     for p in points[start : start + 512]]
            self._write(space, qe.UpdateOperation.upsert_points(batch))

    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]:
        shard = self._shard(space)
        return self.t.by_key(keys, lambda ids: guarded(lambda: shard.retrieve(
            ids, with_payload=self.t.payload(payload), with_vector=list(vectors) or False)))

    def delete(self, space: str, keys: Sequence[str]) -> None:
        if keys:
            self._write(space, self.qe.UpdateOperation.delete_points([point_id(k) for k in keys]))

    def delete_where(self, space: str, condition: Where) -> None:
        self._write(space, self.qe.UpdateOperation.delete_points_by_filter(self.t.filter(condition)))

    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]:
        qe, shard = self.qe, self._shard(space)
        requests = [qe.QueryRequest(
            limit=s.limit, query=qe.Query.Nearest(self.t.vector(s.vector), using=s.using),
            filter=self.t.filter(s.where), with_payload=self.t.payload(s.payload), with_vector=list(s.vectors) or False,
            params=qe.SearchParams(idf=qe.IdfParams(corpus=self.t.filter(s.idf_corpus))) if s.idf_corpus else None)
            for s in searches]
        results = guarded(lambda: shard.query_batch(qe.QueryBatchRequest(requests)))
        return [[self.t.found(p, p.score) for p in batch] for batch in results]

    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]:
        qe, shard = self.qe, self._shard(space)
        direction = qe.Direction.Desc if descending else qe.Direction.Asc
        request = qe.ScrollRequest(offset=offset, limit=limit, filter=self.t.filter(condition),
                                   with_payload=self.t.payload(payload), with_vector=list(vectors) or False,
                                   order_by=qe.OrderBy(order_by, direction) if order_by else None)
        records, next_offset = guarded(lambda: shard.scroll(request))
        return [self.t.found(r, None) for r in records], None if next_offset is None else str(next_offset)

    def count(self, space: str, condition: Where | None) -> int:
        shard = self._shard(space)
        return int(guarded(lambda: shard.count(self.qe.CountRequest(exact=True, filter=self.t.filter(condition)))))

    def tally(self, space: str, key: str, value: str) -> int:
        """Points whose keyword-indexed `key` equals `value`, read from the payload index instead of a scan (an
        exact count visits every matching point). The engine's estimate of a single indexed match is exact."""
        shard = self._shard(space)
        request = self.qe.CountRequest(exact=False, filter=self.t.filter(Where((Match(key, value),))))
        return int(guarded(lambda: shard.count(request)))

    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None:
        """Set these payload fields on every point matching `condition` (one engine operation, nothing read)."""
        self._write(space, self.qe.UpdateOperation.set_payload_by_filter(self.t.filter(condition), dict(payload)))

    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]:
        shard = self._shard(space)
        request = self.qe.FacetRequest(key=key, limit=limit, exact=True, filter=self.t.filter(condition))
        return {hit.value: hit.count for hit in guarded(lambda: shard.facet(request)).hits}

    def ping(self) -> bool:
        return self.root.is_dir()

    def optimize_all(self) -> list[tuple[str, float]]:
        """Run Qdrant's optimizers (HNSW, segment merging) on the spaces searched by vector (collections), one
        at a time; (space, seconds). Offline only (`ctxsieve optimize`, service stopped): `optimize()` holds the
        GIL throughout, so in a serving process it would stop every request for as long as it runs."""
        done = []
        for path in sorted(p for p in self.root.iterdir() if p.is_dir() and is_searched(p.name)
                           and (p / "edge_config.json").exists()):
            started = time.perf_counter()
            shard = guarded(lambda p=path: self.qe.EdgeShard.load(str(p)))  # type: ignore[misc]
            try:
                guarded(shard.optimize)
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
