"""A collection's records as they are stored: a head per collection, a point per document (its content hash: the
record that acknowledges it) and a point per chunk (text, offsets, metadata, dense and BM25 vectors). Keys, the
scope field and each payload are written here only."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from ..store import Found, PointData, Sparse, where
from ..store import Where as Condition

Kind = Literal["document", "chunk"]
BM25 = "bm25"  # the chunks' sparse vector, scored with the engine's IDF


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


def scope(tenant: str, name: str, kind: Kind) -> str:
    """One indexed keyword per (tenant, collection, kind): see `of`."""
    return json.dumps([tenant, name, kind])


def of(tenant: str, name: str, kind: Kind) -> Condition:
    """A collection's documents or chunks: one indexed field, not three conditions, because the engine checks
    a filter point by point in an exact search and in BM25's IDF pass (both much slower with three), and
    counts one indexed value from its index (`Store.tally`) instead of scanning."""
    return where(scope=scope(tenant, name, kind))


@dataclass(frozen=True, kw_only=True)
class CollectionHead:
    tenant: str
    name: str
    description: str = ""
    created_at: str = ""

    @staticmethod
    def key(tenant: str, name: str) -> str:
        return f"collection:{tenant}:{name}"

    def point(self) -> PointData:
        return PointData(key=self.key(self.tenant, self.name), payload={
            "kind": "collection", "tenant": self.tenant, "collection": self.name, "description": self.description,
            "created_at": self.created_at})

    @classmethod
    def of(cls, found: Found) -> CollectionHead:
        p = found.payload
        return cls(tenant=p["tenant"], name=p["collection"], description=p.get("description", ""),
                   created_at=p.get("created_at", ""))


@dataclass(frozen=True, kw_only=True)
class DocumentRecord:
    tenant: str
    collection: str
    id: str
    hash: str  # the content digest whose chunks are served
    chunks: int
    tokens: int = 0
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any]
    added_at: str = ""

    @staticmethod
    def key(tenant: str, collection: str, doc_id: str) -> str:
        return f"document:{tenant}:{collection}:{doc_id}"

    def point(self) -> PointData:
        return PointData(key=self.key(self.tenant, self.collection, self.id), payload={
            "kind": "document", "tenant": self.tenant, "collection": self.collection,
            "scope": scope(self.tenant, self.collection, "document"), "document_id": self.id, "hash": self.hash,
            "chunks": self.chunks, "tokens": self.tokens, "title": self.title, "url": self.url,
            "metadata": self.metadata, "added_at": self.added_at})

    @classmethod
    def of(cls, found: Found) -> DocumentRecord:
        p = found.payload
        return cls(tenant=p["tenant"], collection=p["collection"], id=p["document_id"], hash=p["hash"],
                   chunks=p["chunks"], tokens=p.get("tokens", 0), title=p.get("title"), url=p.get("url"),
                   metadata=p.get("metadata") or {}, added_at=p.get("added_at", ""))


# What ranking and packing read of each candidate; the rest of a chunk's payload is read for the chosen few.
CANDIDATE_FIELDS = ("document_id", "index", "hash", "tokens", "text")
LISTING_FIELDS = ("tenant", "collection", "document_id", "hash", "chunks", "title", "url", "metadata")


@dataclass(frozen=True, kw_only=True)
class ChunkRecord:
    tenant: str
    collection: str
    document_id: str
    hash: str  # of the document version it belongs to
    index: int
    start: int
    end: int
    tokens: int
    text: str
    context: str
    title: str | None
    url: str | None
    metadata: dict[str, Any]

    @staticmethod
    def key(tenant: str, collection: str, doc_id: str, digest: str, index: int) -> str:
        return f"chunk:{tenant}:{collection}:{doc_id}:{digest}:{index}"

    @property
    def passage(self) -> str:
        """What is embedded and indexed for BM25: the chunk with what it is part of."""
        return f"{self.context}\n{self.text}" if self.context else self.text

    def point(self, vector_name: str, dense: Any, sparse: Sparse) -> PointData:
        return PointData(
            key=self.key(self.tenant, self.collection, self.document_id, self.hash, self.index),
            dense={vector_name: dense}, sparse={BM25: sparse}, payload={
                "kind": "chunk", "tenant": self.tenant, "collection": self.collection,
                "scope": scope(self.tenant, self.collection, "chunk"), "document_id": self.document_id,
                "hash": self.hash, "index": self.index, "start": self.start, "end": self.end,
                "tokens": self.tokens, "text": self.text, "context": self.context, "title": self.title,
                "url": self.url, "metadata": self.metadata})

    @classmethod
    def of(cls, found: Found) -> ChunkRecord:
        p = found.payload
        return cls(tenant=p["tenant"], collection=p["collection"], document_id=p["document_id"], hash=p["hash"],
                   index=p["index"], start=p["start"], end=p["end"], tokens=p["tokens"], text=p["text"],
                   context=p["context"], title=p["title"], url=p["url"], metadata=p["metadata"])
