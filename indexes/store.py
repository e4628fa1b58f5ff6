"""Durable state in Qdrant: whole sources (payload only) and chunk vectors (one collection per model).

Embedded local mode (`path=`) is the default; a URL reaches a Qdrant server or cluster through the same
calls. Hot paths fetch points by deterministic id, never by filtered scan: local mode is exact but slow
on filters, and ids make every write idempotent.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from qdrant_client import QdrantClient, models

from .errors import StoreUnavailable

NAMESPACE = uuid.UUID("5b0f3f0e-8c56-4a57-9d8e-6a7c4e2f9a11")
SOURCES = "ctxsieve_sources"
T = TypeVar("T")


def point_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


def explain_store_error(exc: BaseException) -> str:
    """Say what the operator can do: a full or read-only disk is fixed outside, and writes then resume."""
    detail = f"{type(exc).__name__}: {exc}"
    errno_ = getattr(exc, "errno", None)
    lowered = detail.lower()
    if errno_ == 28 or "disk is full" in lowered or "no space left" in lowered:
        return (f"the data directory is full ({detail}); free some space: writes resume without a restart, "
                "and nothing already acknowledged was lost")
    if errno_ == 30 or "read-only" in lowered or "readonly" in lowered:
        return (f"the data directory is read-only ({detail}); make it writable: writes resume without a "
                "restart, and nothing already acknowledged was lost")
    return f"vector store error: {detail}"


class QdrantStore:
    def __init__(self, client: QdrantClient, local: bool) -> None:
        self.client = client
        self.local = local
        # Local mode keeps Python structures without locking; a server handles concurrency itself.
        self._lock: threading.RLock | None = threading.RLock() if local else None
        self._known: set[str] = set()

    @classmethod
    def open(cls, path: Path | None = None, url: str | None = None, api_key: str | None = None,
             timeout: float = 10.0) -> QdrantStore:
        try:
            if url:
                return cls(QdrantClient(url=url, api_key=api_key, timeout=int(timeout)), local=False)
            if path is None:
                return cls(QdrantClient(location=":memory:"), local=True)
            path.mkdir(parents=True, exist_ok=True)
            return cls(QdrantClient(path=str(path)), local=True)
        except Exception as exc:  # qdrant-client raises many types (RuntimeError for a held lock, OSError, ...)
            raise StoreUnavailable(f"cannot open the vector store: {explain_store_error(exc)}") from exc

    def close(self) -> None:
        self.client.close()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        if self._lock is None:
            yield
            return
        with self._lock:
            yield

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            with self._guard():
                return fn()
        except StoreUnavailable:
            raise
        except ValueError:
            raise
        except Exception as exc:
            raise StoreUnavailable(explain_store_error(exc)) from exc

    def ping(self) -> bool:
        try:
            self._call(self.client.get_collections)
        except StoreUnavailable:
            return False
        return True

    # --- collections ------------------------------------------------------------------------------

    def ensure_collection(self, name: str, vectors: dict[str, int] | None = None) -> None:
        if name in self._known:
            return
        # DOT on unit vectors: Qdrant would re-normalise for COSINE and change the stored bits.
        config = {vn: models.VectorParams(size=d, distance=models.Distance.DOT) for vn, d in (vectors or {}).items()}

        def create() -> None:
            if not self.client.collection_exists(name):
                self.client.create_collection(name, vectors_config=config)

        self._call(create)
        self._known.add(name)

    def chunk_collection(self, vector: str) -> str:
        return f"ctxsieve_chunks__{vector}"

    # --- payload records --------------------------------------------------------------------------

    def get_payloads(self, collection: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        ids = [point_id(k) for k in keys]
        records = self._call(lambda: self.client.retrieve(collection, ids, with_payload=True, with_vectors=False))
        by_id = {str(r.id): r.payload or {} for r in records}
        return {k: by_id[i] for k, i in zip(keys, ids, strict=True) if i in by_id}

    def put_payload(self, collection: str, key: str, payload: dict[str, Any]) -> None:
        point = models.PointStruct(id=point_id(key), vector={}, payload=payload)
        self._call(lambda: self.client.upsert(collection, points=[point], wait=True))

    def scroll_payloads(self, collection: str, field: str, value: str, limit: int = 10_000) -> list[dict[str, Any]]:
        """Every payload whose `field` equals `value`: a filtered scan, for listings only, never a hot path."""
        condition = models.Filter(must=[models.FieldCondition(key=field, match=models.MatchValue(value=value))])
        records, _ = self._call(lambda: self.client.scroll(collection, scroll_filter=condition, limit=limit,
                                                           with_payload=True, with_vectors=False))
        return [r.payload or {} for r in records]

    def delete_keys(self, collection: str, keys: Sequence[str]) -> None:
        selector = models.PointIdsList(points=[point_id(k) for k in keys])
        self._call(lambda: self.client.delete(collection, points_selector=selector, wait=True))

    # --- vectors ----------------------------------------------------------------------------------

    def get_vectors(self, collection: str, vector: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if not keys:
            return {}
        ids = [point_id(k) for k in keys]
        records = self._call(lambda: self.client.retrieve(collection, ids, with_payload=False, with_vectors=[vector]))
        found = {}
        for record in records:
            vectors = record.vector
            if isinstance(vectors, dict) and vector in vectors:
                found[str(record.id)] = np.asarray(vectors[vector], dtype=np.float32)
        return {k: found[i] for k, i in zip(keys, ids, strict=True) if i in found}

    def get_records(self, collection: str, vector: str, keys: Sequence[str]
                    ) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
        """Payload and vector of each key found, fetched by id in batches."""
        out: dict[str, tuple[dict[str, Any], np.ndarray]] = {}
        for start in range(0, len(keys), 1024):
            batch = list(keys[start : start + 1024])
            ids = [point_id(k) for k in batch]
            records = self._call(lambda i=ids: self.client.retrieve(collection, i, with_payload=True,  # type: ignore[misc]
                                                                    with_vectors=[vector]))
            by_id = {str(r.id): r for r in records}
            for key, pid in zip(batch, ids, strict=True):
                record = by_id.get(pid)
                if record is not None and isinstance(record.vector, dict) and vector in record.vector:
                    out[key] = (record.payload or {}, np.asarray(record.vector[vector], dtype=np.float32))
        return out

    def put_vectors(self, collection: str, vector: str, keys: Sequence[str], vectors: np.ndarray,
                    payloads: Sequence[dict[str, Any]] | None = None) -> None:
        points = [
            models.PointStruct(id=point_id(k), vector={vector: v.tolist()}, payload=(payloads[i] if payloads else {}))
            for i, (k, v) in enumerate(zip(keys, vectors, strict=True))
        ]
        for start in range(0, len(points), 256):
            batch = points[start : start + 256]
            self._call(lambda b=batch: self.client.upsert(collection, points=b, wait=True))  # type: ignore[misc]
