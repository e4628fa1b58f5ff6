"""Convert a data dir from the layout before Qdrant Edge (qdrant-client local mode under `<dir>/qdrant`).

Old layout: whole payload records (a source each; a registry per collection; a head, a body and a feedback
record per toolset; one record per session) and chunk vectors keyed like today's. Everything is rewritten
through today's classes into `<dir>/edge.partial`, which becomes `<dir>/edge` only once all of it is
written, so an interrupted run leaves the data dir as it was. The old files are never touched.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxsieve.ingest.embedding import Embedder
from ctxsieve.ingest.tokens import Tokenizer

from .collections import CollectionIndex, NewDocument
from .sessions import SESSIONS
from .sources import SourceStore
from .store import DataDir, EdgeStore, PointData, explain_store_error, open_edge, point_id
from .tools import ToolIndex
from .tools.formats import Tool
from .vectors import EmbeddingCache

log = logging.getLogger("ctxsieve")


@dataclass
class Migrated:
    sources: int = 0
    vectors: int = 0
    collections: int = 0
    documents: int = 0
    toolsets: int = 0
    recorded: int = 0
    reads: int = 0


def _records(client: Any, collection: str, vectors: bool = False) -> Iterator[Any]:
    if not client.collection_exists(collection):
        return
    offset = None
    while True:
        records, offset = client.scroll(collection, limit=512, offset=offset, with_payload=True, with_vectors=vectors)
        yield from records
        if offset is None:
            return


def migrate(data_dir: Path, embedder: Embedder, tokenizer: Tokenizer, chunk_tokens: int) -> Migrated:
    from qdrant_client import QdrantClient

    folders = DataDir(data_dir)
    old_dir, target, partial = folders.old_qdrant, folders.edge, folders.edge_partial
    if not (old_dir / "meta.json").exists():
        raise FileNotFoundError(f"{old_dir} holds no data in the old layout (no meta.json)")
    if target.exists():
        raise FileExistsError(f"{target} exists already: this data dir was converted (remove it to convert again)")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        old = QdrantClient(path=str(old_dir))
    except Exception as exc:  # a held lock, a damaged file
        raise RuntimeError(f"cannot open {old_dir}: {explain_store_error(exc)}") from exc
    store = open_edge(data_dir, staging=True)
    try:
        done = _copy(old, store, embedder, tokenizer, chunk_tokens)
    finally:
        store.close()
        old.close()
    partial.rename(target)
    return done


def _copy(old: Any, store: EdgeStore, embedder: Embedder, tokenizer: Tokenizer, chunk_tokens: int) -> Migrated:
    done = Migrated()
    cache = EmbeddingCache(store, embedder)
    done.vectors = _copy_vectors(old, store, cache)
    sources = SourceStore(store, tokenizer, chunk_tokens, retention_days=0)
    for record in _records(old, "ctxsieve_sources"):
        sources.restore(record.payload)
        done.sources += 1
    collections = CollectionIndex(store, cache, tokenizer, chunk_tokens)
    _copy_collections(old, collections, cache, done)
    _copy_toolsets(old, ToolIndex(store, cache, tokenizer), done)
    store.ensure(SESSIONS)
    for record in _records(old, "ctxsieve_sessions"):
        p = record.payload
        store.upsert(SESSIONS.name, [PointData(key=f"read:{p['tenant']}:{p['session']}:migrated-{i}", payload={
            "tenant": p["tenant"], "session": p["session"], **r}) for i, r in enumerate(p["requests"])])
        done.reads += len(p["requests"])
    return done


def _copy_vectors(old: Any, store: EdgeStore, cache: EmbeddingCache) -> int:
    """Chunk vectors keep their point ids (the same key scheme): nothing is embedded again."""
    copied = 0
    for info in old.get_collections().collections:
        if not info.name.startswith("ctxsieve_chunks__"):
            continue
        vector = info.name.removeprefix("ctxsieve_chunks__")
        if vector != cache.vector:
            log.warning("skipping %s: vectors of another model (%s); they are a cache", info.name, vector)
            continue
        batch = [PointData(key="", id=str(r.id), payload={}, dense={vector: r.vector[vector]})
                 for r in _records(old, info.name, vectors=True) if isinstance(r.vector, dict) and vector in r.vector]
        store.upsert(cache.space, batch)
        copied += len(batch)
    return copied


def _copy_collections(old: Any, index: CollectionIndex, cache: EmbeddingCache, done: Migrated) -> None:
    """Documents are rebuilt from their stored chunks (text and offsets); their vectors are cache hits."""
    chunks_by_doc: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for record in _records(old, f"ctxsieve_docs__{cache.vector}"):
        p = record.payload
        chunks_by_doc.setdefault((p["tenant"], p["collection"], p["document_id"]), []).append(p)
    for record in _records(old, "ctxsieve_collections"):
        registry = record.payload
        if "documents" not in registry:  # a head record
            continue
        tenant, name = registry["tenant"], registry["name"]
        index.create(tenant, name, registry.get("description", ""))
        done.collections += 1
        for doc_id, entry in sorted(registry["documents"].items()):
            parts = sorted((c for c in chunks_by_doc.get((tenant, name, doc_id), []) if c["hash"] == entry["hash"]),
                           key=lambda c: c["index"])
            if not parts:
                log.warning("collection %s: document %s has no stored chunks; skipped", name, doc_id)
                continue
            text = _document_text(parts)
            index.add(tenant, name, [NewDocument(doc_id, text, entry.get("title"), entry.get("url"),
                                                 parts[0].get("metadata") or None)])
            done.documents += 1


def _document_text(parts: list[dict[str, Any]]) -> str:
    """The document's view, put back together from its chunks' offsets (gaps were whitespace)."""
    text = ""
    for c in parts:
        text = text.ljust(c["start"]) + c["text"]
    return text


def _old_payload(old: Any, collection: str, key: str) -> dict[str, Any] | None:
    """An old record by its key (ids were uuid5 of the key, in the same namespace as today)."""
    found = old.retrieve(collection, [point_id(key)], with_payload=True, with_vectors=False)
    return found[0].payload if found else None


def _copy_toolsets(old: Any, index: ToolIndex, done: Migrated) -> None:
    for record in _records(old, "ctxsieve_toolsets"):
        head = record.payload
        if head.get("kind") != "head":
            continue
        tenant, name = head["tenant"], head["name"]
        body = _old_payload(old, "ctxsieve_toolsets", f"toolset-body:{tenant}:{name}:{head['tools_version']}")
        if body is None:
            log.warning("toolset %s has no stored definitions; skipped", name)
            continue
        index.put_tools(tenant, name, [Tool.from_dict(t) for t in body["tools"]])
        done.toolsets += 1
        feedback = _old_payload(old, "ctxsieve_toolsets", f"toolset-feedback:{tenant}:{name}") or {}
        for tool, queries in sorted((feedback.get("feedback") or {}).items()):
            for query in queries:  # oldest first, so the newest stay newest
                done.recorded += index.record(tenant, query, [tool], [name])


