"""Static collections: reference material (glossaries, specs, style guides) indexed ahead of time.

The registry (one payload per tenant and collection) lists each document with the hash of its content;
chunk points carry their text and vector. Writes store the chunks first and the registry last, so a
document is served only once all of it is stored: a crash in between leaves nothing half-written visible.
Queries run on an in-memory copy of the collection, rebuilt when the registry's version changes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ingest.chunking import chunk_view
from ingest.normalize import Document, build_view
from ingest.tokens import Tokenizer

from .errors import NotFound
from .lexical import Bm25Index
from .lru import Lru
from .ranking import Candidate, fuse, pack_to_budget
from .sieve import EmbeddingCache, Usage, make_usage
from .store import QdrantStore

REGISTRY = "ctxsieve_collections"
# Loaded collections kept in memory: 10k chunks hold ~30 MB; an evicted one is re-read from the store.
LOADED_BYTES = 128 << 20


def _version(registry: dict[str, Any]) -> str:
    """Names the exact set of documents, so every replica knows when its in-memory copy is stale."""
    listing = sorted((doc_id, entry["hash"]) for doc_id, entry in registry["documents"].items())
    return hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class NewDocument:
    id: str
    text: str
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] | None = None
    content_type: str = "auto"

    def digest(self) -> str:
        body = json.dumps([self.text, self.title, self.url, self.metadata or {}, self.content_type],
                          sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class CollectionHit:
    document_id: str
    text: str
    score: float
    start: int
    end: int
    tokens: int
    title: str | None
    url: str | None
    context: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class CollectionResult:
    snippets: list[CollectionHit]
    placeholder: str
    usage: Usage


@dataclass
class _Loaded:
    version: str
    payloads: list[dict[str, Any]]
    vectors: np.ndarray
    lexical: Bm25Index
    candidates: list[Candidate]  # built once per version, not per query (10k chunks cost ~30 ms in Python)
    tokens: int

    def nbytes(self) -> int:
        """About what it holds: vectors, BM25, each chunk's passage and text, ~500 bytes of payload a chunk."""
        texts = sum(sys.getsizeof(p.get("passage", "")) + sys.getsizeof(p.get("text", "")) + 500 for p in self.payloads)
        return int(self.vectors.nbytes) + self.lexical.nbytes + texts


class CollectionIndex:
    def __init__(self, store: QdrantStore, vectors: EmbeddingCache, tokenizer: Tokenizer, chunk_tokens: int,
                 dense_weight: float = 0.6) -> None:
        self.store = store
        self.vectors = vectors
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.dense_weight = dense_weight
        self.points = f"ctxsieve_docs__{vectors.vector}"
        store.ensure_collection(REGISTRY)
        store.ensure_collection(self.points, {vectors.vector: vectors.embedder.dim})
        self._write = threading.Lock()
        self._loaded: Lru[tuple[str, str], _Loaded] = Lru(32, LOADED_BYTES, _Loaded.nbytes)

    # --- registry -----------------------------------------------------------------------------------

    @staticmethod
    def _key(tenant: str, name: str) -> str:
        return f"collection:{tenant}:{name}"

    @staticmethod
    def _head_key(tenant: str, name: str) -> str:
        """A small record naming the current version: what a query reads, instead of the whole registry."""
        return f"collection-head:{tenant}:{name}"

    def _save(self, tenant: str, name: str, registry: dict[str, Any]) -> None:
        self.store.put_payload(REGISTRY, self._key(tenant, name), registry)
        self.store.put_payload(REGISTRY, self._head_key(tenant, name),
                               {"tenant": tenant, "kind": "head", "version": registry["version"]})

    def _registry(self, tenant: str, name: str) -> dict[str, Any]:
        found = self.store.get_payloads(REGISTRY, [self._key(tenant, name)]).get(self._key(tenant, name))
        if found is None:
            raise NotFound(f"unknown collection {name!r}")
        return found

    def create(self, tenant: str, name: str, description: str) -> dict[str, Any]:
        with self._write:
            try:
                registry = self._registry(tenant, name)
            except NotFound:
                registry = {"tenant": tenant, "name": name, "documents": {}, "version": "0",
                            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            registry["description"] = description
            self._save(tenant, name, registry)
        return registry

    def info(self, tenant: str, name: str) -> dict[str, Any]:
        registry = self._registry(tenant, name)
        docs = registry["documents"]
        return {"name": name, "description": registry.get("description", ""), "documents": len(docs),
                "chunks": sum(d["chunks"] for d in docs.values())}

    def documents(self, tenant: str, name: str) -> list[dict[str, Any]]:
        registry = self._registry(tenant, name)
        return [{"id": doc_id, "hash": e["hash"], "chunks": e["chunks"], "title": e.get("title"), "url": e.get("url")}
                for doc_id, e in sorted(registry["documents"].items())]

    def all(self, tenant: str) -> list[dict[str, Any]]:
        names = sorted(p["name"] for p in self.store.scroll_payloads(REGISTRY, "tenant", tenant) if "name" in p)
        return [self.info(tenant, n) for n in names]

    def delete(self, tenant: str, name: str) -> None:
        with self._write:
            registry = self._registry(tenant, name)
            self.store.delete_keys(REGISTRY, [self._head_key(tenant, name), self._key(tenant, name)])  # unlisted first
            for doc_id, entry in registry["documents"].items():
                self.store.delete_keys(self.points, self._chunk_keys(tenant, name, doc_id, entry))

    # --- documents ----------------------------------------------------------------------------------

    @staticmethod
    def _chunk_keys(tenant: str, name: str, doc_id: str, entry: dict[str, Any]) -> list[str]:
        return [f"doc:{tenant}:{name}:{doc_id}:{entry['hash']}:{i}" for i in range(entry["chunks"])]

    def add(self, tenant: str, name: str, documents: Sequence[NewDocument]) -> tuple[list[str], int]:
        """Add or replace by id; an unchanged document is skipped, a changed one re-chunked."""
        with self._write:
            registry = self._registry(tenant, name)
            replaced: list[tuple[str, dict[str, Any]]] = []
            keys: list[str] = []
            payloads: list[dict[str, Any]] = []
            for doc in documents:
                old = registry["documents"].get(doc.id)
                digest = doc.digest()
                if old is not None and old["hash"] == digest:
                    continue
                entry, doc_payloads = self._chunk_document(tenant, name, doc, digest)
                registry["documents"][doc.id] = entry
                keys += self._chunk_keys(tenant, name, doc.id, entry)
                payloads += doc_payloads
                if old is not None:
                    replaced.append((doc.id, old))
            stored = len(payloads)
            if payloads:  # one embedding batch for the whole request, not one per document
                vectors = self.vectors.passages([p["passage"] for p in payloads])
                self.store.put_vectors(self.points, self.vectors.vector, keys, vectors, payloads)
            if stored or replaced:
                registry["version"] = _version(registry)
                self._save(tenant, name, registry)  # acknowledges the batch
            for doc_id, old in replaced:  # old chunks go only once the new ones are listed
                self.store.delete_keys(self.points, self._chunk_keys(tenant, name, doc_id, old))
        return [d.id for d in documents], stored

    def _chunk_document(self, tenant: str, name: str, doc: NewDocument, digest: str
                        ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        view = build_view([Document(doc.text, doc.title, doc.url, doc.metadata or {})], doc.content_type)
        chunks = chunk_view(view, self.tokenizer, self.chunk_tokens)
        texts = [view.text[c.start : c.end] for c in chunks]
        passages = [f"{c.context}\n{t}" if c.context else t for c, t in zip(chunks, texts, strict=True)]
        entry = {"hash": digest, "chunks": len(chunks), "title": doc.title, "url": doc.url}
        payloads = [{"tenant": tenant, "collection": name, "document_id": doc.id, "hash": digest, "index": i,
                     "start": c.start, "end": c.end, "tokens": c.tokens, "text": t, "passage": p,
                     "context": c.context, "title": doc.title, "url": doc.url, "metadata": doc.metadata or {}}
                    for i, (c, t, p) in enumerate(zip(chunks, texts, passages, strict=True))]
        return entry, payloads

    def remove(self, tenant: str, name: str, doc_id: str) -> None:
        with self._write:
            registry = self._registry(tenant, name)
            entry = registry["documents"].pop(doc_id, None)
            if entry is None:
                raise NotFound(f"unknown document {doc_id!r} in collection {name!r}")
            registry["version"] = _version(registry)
            self._save(tenant, name, registry)
            self.store.delete_keys(self.points, self._chunk_keys(tenant, name, doc_id, entry))

    # --- query --------------------------------------------------------------------------------------

    def query(self, tenant: str, name: str, query: str, k: int, max_tokens: int | None,
              where: dict[str, Any], min_score: float | None = None) -> CollectionResult:
        loaded = self._load(tenant, name)
        n = len(loaded.payloads)
        dense = loaded.vectors @ self.vectors.query(query) if n else np.zeros(0)
        fused = fuse(dense.astype(np.float64), loaded.lexical.scores(query), self.dense_weight)
        eligible = np.array([all(p["metadata"].get(key) == value for key, value in where.items())
                             for p in loaded.payloads], dtype=bool) if where else np.ones(n, dtype=bool)
        if min_score is not None:
            eligible &= dense >= min_score
        chosen = pack_to_budget(loaded.candidates, fused, k, max_tokens, eligible)
        hits = [self._hit(loaded.payloads[i], float(dense[i])) for i in chosen]
        usage = make_usage(loaded.tokens, sum(h.tokens for h in hits), n, len(hits))
        line = (f"[ctxsieve collection {name}: {len(hits)} of {n} chunks shown, {usage.output_tokens} tokens; "
                f"more: POST /v1/collections/{name}/query with another query, k or max_tokens]")
        return CollectionResult(hits, line, usage)

    @staticmethod
    def _hit(p: dict[str, Any], score: float) -> CollectionHit:
        return CollectionHit(p["document_id"], p["text"], round(score, 4), p["start"], p["end"], p["tokens"],
                             p["title"], p["url"], p["context"], p["metadata"])

    def _load(self, tenant: str, name: str) -> _Loaded:
        key = (tenant, name)
        head = self.store.get_payloads(REGISTRY, [self._head_key(tenant, name)]).get(self._head_key(tenant, name))
        loaded = self._loaded.get(key)
        if head is not None and loaded is not None and loaded.version == head["version"]:
            return loaded
        registry = self._registry(tenant, name)
        if loaded is not None and loaded.version == registry["version"]:  # stored before heads existed
            return loaded
        keys = [k for doc_id, entry in sorted(registry["documents"].items())
                for k in self._chunk_keys(tenant, name, doc_id, entry)]
        records = self.store.get_records(self.points, self.vectors.vector, keys)
        payloads = [records[k][0] for k in keys if k in records]
        vectors = np.stack([records[k][1] for k in keys if k in records]) if payloads else \
            np.zeros((0, self.vectors.embedder.dim), dtype=np.float32)
        loaded = _Loaded(registry["version"], payloads, vectors, Bm25Index.build([p["passage"] for p in payloads]),
                         [Candidate(i, p["tokens"], p["text"]) for i, p in enumerate(payloads)],
                         sum(p["tokens"] for p in payloads))
        return self._loaded.put(key, loaded)

