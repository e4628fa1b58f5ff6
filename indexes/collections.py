"""Static collections: reference material (glossaries, specs, style guides) indexed ahead of time.

Everything is a point in the store: one per collection, one per document (its content hash: the record
that acknowledges it) and one per chunk (text, offsets, metadata, a dense vector and a BM25 sparse vector).
A query is run by the engine: a dense and a BM25 search under the metadata filter; the project's fusion
and packing then work on the few candidates returned. Nothing of a collection is copied into memory.

Writes store a document's chunks first and its document point last; a query serves a chunk only when its
document point names the chunk's hash, so a half-written or replaced document is never served.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from ctxsieve.ingest.chunking import chunk_view
from ctxsieve.ingest.normalize import Document, build_view
from ctxsieve.ingest.tokens import Tokenizer

from .errors import InvalidInput, NotFound
from .lexical import sparse_document, sparse_query
from .more import More, more_of
from .ranking import Candidate, fuse, pack_to_budget
from .sources import utc_stamp
from .store import (
    Condition,
    Found,
    HasIds,
    IndexKind,
    IsEmpty,
    Match,
    MatchAny,
    PointData,
    Range,
    Search,
    SpaceSpec,
    Store,
    Where,
    layout,
    scroll_all,
    where,
)
from .usage import Usage, make_usage
from .vectors import EmbeddingCache

log = logging.getLogger("ctxsieve")
BM25 = "bm25"
# Candidates each engine search returns: enough for k up to 50 and a budget of a few thousand tokens.
CANDIDATES = 64
# What ranking and packing read of each candidate; the rest of a chunk's payload is read for the chosen few.
CANDIDATE_FIELDS = ("document_id", "index", "hash", "tokens", "text")
OPERATORS = ("any", "gte", "gt", "lte", "lt", "not")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


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


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class CollectionResult:
    snippets: list[CollectionHit]
    more: More
    usage: Usage


def _iso(value: Any) -> str | None:
    """An ISO 8601 date or datetime as RFC 3339 (what the engine compares), else None."""
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.isoformat() if parsed.tzinfo else parsed.isoformat() + "Z"


def index_kind(value: Any) -> IndexKind | None:
    """The payload index a metadata value calls for (lists by their first element)."""
    if isinstance(value, list):
        return index_kind(value[0]) if value else None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "datetime" if _iso(value) else "keyword"
    return None


def translate_filter(key: str, condition: Any) -> Condition:
    """One entry of a query's `filter` (metadata key -> condition) as an engine condition; 422 otherwise."""
    field = f"metadata.{key}"
    if not isinstance(condition, dict):
        if isinstance(condition, bool | int | str):
            return Match(field, condition)
        if isinstance(condition, float):
            return Range(field, gte=condition, lte=condition)
        raise InvalidInput(f"filter on {key!r}: {condition!r} is not a value or a condition")
    unknown = sorted(set(condition) - set(OPERATORS))
    if unknown or not condition:
        raise InvalidInput(f"filter on {key!r}: unknown operator(s) {', '.join(map(repr, unknown)) or '(none)'}; "
                           f"use a value or {', '.join(OPERATORS)}")
    parts: list[Condition] = []
    if "any" in condition:
        parts.append(_any(key, field, condition["any"]))
    bounds = {op: condition[op] for op in ("gte", "gt", "lte", "lt") if op in condition}
    if bounds:
        parts.append(_range(key, field, bounds))
    if "not" in condition:
        parts.append(Where(must_not=(translate_filter(key, condition["not"]),)))
    return parts[0] if len(parts) == 1 else Where(tuple(parts))


def _any(key: str, field: str, values: Any) -> Condition:
    if not isinstance(values, list) or not values:
        raise InvalidInput(f"filter on {key!r}: 'any' takes a non-empty list")
    if all(isinstance(v, str) for v in values):
        return MatchAny(field, tuple(values))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return MatchAny(field, tuple(values))
    raise InvalidInput(f"filter on {key!r}: 'any' takes strings or integers, all of one kind")


def _range(key: str, field: str, bounds: Mapping[str, Any]) -> Condition:
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in bounds.values()):
        return Range(field, **bounds)
    dates = {op: _iso(v) for op, v in bounds.items()}
    if all(dates.values()):
        return Range(field, dates=True, **dates)
    raise InvalidInput(f"filter on {key!r}: gte/gt/lte/lt take numbers or ISO 8601 dates, not {dict(bounds)!r}")


class CollectionIndex:
    def __init__(self, store: Store, vectors: EmbeddingCache, tokenizer: Tokenizer, chunk_tokens: int,
                 dense_weight: float = 0.6) -> None:
        self.store = store
        self.vectors = vectors
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.dense_weight = dense_weight
        self.space = layout.collection_chunks(vectors.vector)
        store.ensure(SpaceSpec(name=self.space, dense={vectors.vector: vectors.embedder.dim}, sparse=(BM25,),
                               searched=True, indexes={"tenant": "keyword", "collection": "keyword", "kind": "keyword",
                                                       "scope": "partition", "document_id": "keyword"}))
        self._indexed: set[str] = set()  # metadata fields given a payload index by this process
        self._give_scopes()

    # --- keys and conditions ------------------------------------------------------------------------

    @staticmethod
    def _collection_key(tenant: str, name: str) -> str:
        return f"collection:{tenant}:{name}"

    @staticmethod
    def _document_key(tenant: str, name: str, doc_id: str) -> str:
        return f"document:{tenant}:{name}:{doc_id}"

    @staticmethod
    def _chunk_key(tenant: str, name: str, doc_id: str, digest: str, index: int) -> str:
        return f"chunk:{tenant}:{name}:{doc_id}:{digest}:{index}"

    @staticmethod
    def _scope(tenant: str, name: str, kind: str) -> str:
        return json.dumps([tenant, name, kind])

    @classmethod
    def _of(cls, tenant: str, name: str, kind: str) -> Where:
        """A collection's documents or chunks: one indexed field, not three conditions, because the engine checks
        a filter point by point in an exact search and in BM25's IDF pass (both much slower with three), and
        counts one indexed value from its index (`Store.tally`) instead of scanning."""
        return where(scope=cls._scope(tenant, name, kind))

    def _tally(self, tenant: str, name: str, kind: str) -> int:
        return self.store.tally(self.space, "scope", self._scope(tenant, name, kind))

    def _give_scopes(self) -> None:
        """Documents and chunks written before `scope` existed get it, once, by engine-side payload updates."""
        lacking = Where((MatchAny("kind", ("document", "chunk")), IsEmpty("scope")))
        if not self.store.scroll(self.space, lacking, limit=1, payload=False)[0]:
            return
        log.info("collections: adding the scope field to documents and chunks stored by an earlier build (once; "
                 "about a minute per million chunks)")
        for head in scroll_all(self.store, self.space, where(kind="collection"), payload=("tenant", "collection")):
            tenant, name = head.payload["tenant"], head.payload["collection"]
            for kind in ("document", "chunk"):
                self.store.set_where(self.space, where(tenant=tenant, collection=name, kind=kind).and_(
                    IsEmpty("scope")), {"scope": self._scope(tenant, name, kind)})

    # --- collections --------------------------------------------------------------------------------

    def create(self, tenant: str, name: str, description: str) -> None:
        """Idempotent; a second PUT updates the description (the record is written whole, not merged)."""
        existing = self.store.get(self.space, [self._collection_key(tenant, name)], payload=("created_at",))
        created = next(iter(existing.values())).payload.get("created_at") if existing else utc_stamp()
        self.store.upsert(self.space, [PointData(key=self._collection_key(tenant, name), payload={
            "kind": "collection", "tenant": tenant, "collection": name, "description": description,
            "created_at": created})])

    def _require(self, tenant: str, name: str) -> dict[str, Any]:
        found = self.store.get(self.space, [self._collection_key(tenant, name)])
        if not found:
            raise NotFound(f"unknown collection {name!r}")
        return next(iter(found.values())).payload

    def info(self, tenant: str, name: str) -> dict[str, Any]:
        head = self._require(tenant, name)
        return {"name": name, "description": head.get("description", ""),
                "documents": self._tally(tenant, name, "document"), "chunks": self._tally(tenant, name, "chunk")}

    def all(self, tenant: str) -> list[dict[str, Any]]:
        heads = scroll_all(self.store, self.space, where(tenant=tenant, kind="collection"), payload=("collection",))
        return [self.info(tenant, n) for n in sorted(h.payload["collection"] for h in heads)]

    def delete(self, tenant: str, name: str) -> None:
        self._require(tenant, name)
        self.store.delete(self.space, [self._collection_key(tenant, name)])  # unlisted first
        self.store.delete_where(self.space, where(tenant=tenant, collection=name))

    # --- documents ----------------------------------------------------------------------------------

    def documents(self, tenant: str, name: str, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """A page of the documents, in the store's stable order (by point id)."""
        self._require(tenant, name)
        page = list(scroll_all(self.store, self.space, self._of(tenant, name, "document"),
                               payload=("document_id", "hash", "chunks", "title", "url", "metadata"),
                               most=offset + limit))[offset:]
        return [{"id": p.payload["document_id"], "hash": p.payload["hash"], "chunks": p.payload["chunks"],
                 "title": p.payload.get("title"), "url": p.payload.get("url"),
                 "metadata": p.payload.get("metadata") or {}} for p in page]

    def hashes(self, tenant: str, name: str) -> dict[str, str]:
        """Every document's content hash, by id (incremental ingest skips what is unchanged)."""
        self._require(tenant, name)
        docs = scroll_all(self.store, self.space, self._of(tenant, name, "document"), payload=("document_id", "hash"))
        return {d.payload["document_id"]: d.payload["hash"] for d in docs}

    def add(self, tenant: str, name: str, documents: Sequence[NewDocument]) -> tuple[list[str], int]:
        """Add or replace by id; an unchanged document is skipped, a changed one re-chunked."""
        self._require(tenant, name)
        latest = {d.id: d for d in documents}  # a batch naming one id twice keeps the last
        keys = [self._document_key(tenant, name, i) for i in latest]
        current = {f.payload["document_id"]: f.payload["hash"]
                   for f in self.store.get(self.space, keys, payload=("document_id", "hash")).values()}
        changed = [(d, d.digest()) for d in latest.values() if current.get(d.id) != d.digest()]
        chunks: list[PointData] = []
        heads: list[PointData] = []
        for doc, digest in changed:
            doc_chunks = self._chunk_points(tenant, name, doc, digest)
            chunks += doc_chunks
            heads.append(PointData(key=self._document_key(tenant, name, doc.id), payload={
                "kind": "document", "tenant": tenant, "collection": name,
                "scope": self._scope(tenant, name, "document"), "document_id": doc.id, "hash": digest,
                "chunks": len(doc_chunks), "tokens": sum(p.payload["tokens"] for p in doc_chunks),
                "title": doc.title, "url": doc.url, "metadata": doc.metadata or {}, "added_at": utc_stamp()}))
        if chunks:  # one embedding batch for the whole request, not one per document
            vectors = self.vectors.passages([p.payload.pop("passage") for p in chunks])
            chunks = [PointData(key=p.key, payload=p.payload, sparse=p.sparse, dense={self.vectors.vector: v})
                      for p, v in zip(chunks, vectors, strict=True)]
        self._index_metadata(doc.metadata or {} for doc, _ in changed)
        self.store.upsert(self.space, chunks)
        self.store.upsert(self.space, heads)  # acknowledges the batch
        for doc, _ in changed:  # the replaced version's chunks go once the new ones are served
            if doc.id in current:
                self.store.delete_where(self.space, self._of(tenant, name, "chunk").and_(
                    Match("document_id", doc.id), Match("hash", current[doc.id])))
        return [d.id for d in documents], len(chunks)

    def _chunk_points(self, tenant: str, name: str, doc: NewDocument, digest: str) -> list[PointData]:
        view = build_view([Document(doc.text, doc.title, doc.url, doc.metadata or {})], doc.content_type)
        points = []
        for i, c in enumerate(chunk_view(view, self.tokenizer, self.chunk_tokens)):
            text = view.text[c.start : c.end]
            passage = f"{c.context}\n{text}" if c.context else text
            points.append(PointData(key=self._chunk_key(tenant, name, doc.id, digest, i), payload={
                "kind": "chunk", "tenant": tenant, "collection": name, "scope": self._scope(tenant, name, "chunk"),
                "document_id": doc.id, "hash": digest,
                "index": i, "start": c.start, "end": c.end, "tokens": c.tokens, "text": text, "context": c.context,
                "title": doc.title, "url": doc.url, "metadata": doc.metadata or {}, "passage": passage},
                sparse={BM25: sparse_document(passage)}))
        return points

    def _index_metadata(self, metadata: Iterable[Mapping[str, Any]]) -> None:
        """A payload index for each metadata field filtered on, typed by its first value seen here."""
        for entry in metadata:
            for key, value in entry.items():
                kind = index_kind(value)
                if kind is not None and f"metadata.{key}" not in self._indexed:
                    self.store.index(self.space, f"metadata.{key}", kind)
                    self._indexed.add(f"metadata.{key}")

    def remove(self, tenant: str, name: str, doc_id: str) -> None:
        self._require(tenant, name)
        key = self._document_key(tenant, name, doc_id)
        if not self.store.get(self.space, [key], payload=False):
            raise NotFound(f"unknown document {doc_id!r} in collection {name!r}")
        self.store.delete(self.space, [key])  # unlisted first
        self.store.delete_where(self.space, self._of(tenant, name, "chunk").and_(Match("document_id", doc_id)))

    # --- query --------------------------------------------------------------------------------------

    def query(self, tenant: str, name: str, query: str, k: int, max_tokens: int | None,
              filters: Mapping[str, Any], min_score: float | None = None) -> CollectionResult:
        self._require(tenant, name)
        corpus = self._of(tenant, name, "chunk")
        scope = corpus.and_(*self._filter(tenant, name, filters))
        found = self._served(tenant, name, self._candidates(query, scope, corpus))
        dense = np.array([d for _, d, _ in found], dtype=np.float64)
        lexical = np.array([s for _, _, s in found], dtype=np.float64)
        candidates = [Candidate(i, f.payload["tokens"], f.payload["text"]) for i, (f, _, _) in enumerate(found)]
        eligible = dense >= min_score if min_score is not None else None
        chosen = pack_to_budget(candidates, fuse(dense, lexical, self.dense_weight), k, max_tokens, eligible)
        keys = [self._chunk_key(tenant, name, p["document_id"], p["hash"], p["index"])
                for p in (found[i][0].payload for i in chosen)]
        details = self.store.get(self.space, keys) if keys else {}
        hits = [self._hit(details[key].payload, float(dense[i])) for key, i in zip(keys, chosen, strict=True)]
        total = self._tally(tenant, name, "chunk")
        usage = make_usage(input_tokens=sum(c.tokens for c in candidates), output_tokens=sum(h.tokens for h in hits),
                           chunks_total=total, chunks_returned=len(hits))
        return CollectionResult(snippets=hits, more=more_of(None, usage, None, collection=name), usage=usage)

    def _filter(self, tenant: str, name: str, filters: Mapping[str, Any]) -> list[Condition]:
        conditions = [translate_filter(key, condition) for key, condition in sorted(filters.items())]
        for key in sorted(filters):
            having = Where(self._of(tenant, name, "document").must, (IsEmpty(f"metadata.{key}"),))
            if not self.store.scroll(self.space, having, limit=1, payload=False)[0]:
                raise InvalidInput(f"filter: {key!r} is not a metadata key of any document in collection {name!r}")
        return conditions

    def _candidates(self, query: str, scope: Where, corpus: Where) -> list[tuple[Found, float, float]]:
        """Dense and BM25 candidates, each with both scores, in a fixed order: two engine calls.

        The first runs both searches under the filter. The second gives each candidate the score it lacks: BM25
        over the dense-only hits (the engine returns those sharing a query term; the others score 0) with IDF
        over the same collection, and the dense score of the BM25-only hits. Scores come from the engine, not
        from vectors sent back and scored here: turning 128 returned vectors into Python objects cost more
        than the second call.
        """
        terms = sparse_query(query)
        vector, q = self.vectors.vector, self.vectors.query(query)
        searches = [Search(using=vector, vector=q, limit=CANDIDATES, where=scope, payload=CANDIDATE_FIELDS)]
        if terms.indices:
            searches.append(Search(using=BM25, vector=terms, limit=CANDIDATES, where=scope, payload=CANDIDATE_FIELDS,
                                   idf_corpus=corpus))
        results = self.store.search(self.space, searches)
        dense = {f.id: f.score or 0.0 for f in results[0]}
        lexical = {f.id: f.score or 0.0 for f in (results[1] if len(results) > 1 else [])}
        found = {f.id: f for batch in results for f in batch}
        missing_lexical = tuple(i for i in dense if i not in lexical) if terms.indices else ()
        missing_dense = tuple(i for i in lexical if i not in dense)
        rescoring = [Search(using=BM25, vector=terms, limit=len(missing_lexical), payload=False, idf_corpus=corpus,
                            where=Where((HasIds(missing_lexical),)))] if missing_lexical else []
        if missing_dense:
            rescoring.append(Search(using=vector, vector=q, limit=len(missing_dense), payload=False,
                                    where=Where((HasIds(missing_dense),))))
        for search, scored in zip(rescoring, self.store.search(self.space, rescoring) if rescoring else [],
                                  strict=True):
            (lexical if search.using == BM25 else dense).update({f.id: f.score or 0.0 for f in scored})
        ordered = sorted(found.values(), key=lambda f: (f.payload["document_id"], f.payload["index"], f.id))
        return [(f, dense.get(f.id, 0.0), lexical.get(f.id, 0.0)) for f in ordered]

    def _served(self, tenant: str, name: str, found: list[tuple[Found, float, float]]
                ) -> list[tuple[Found, float, float]]:
        """Only chunks of the document version that is acknowledged (half-written or replaced ones wait)."""
        ids = sorted({f.payload["document_id"] for f, _, _ in found})
        heads = self.store.get(self.space, [self._document_key(tenant, name, i) for i in ids],
                               payload=("document_id", "hash"))
        current = {h.payload["document_id"]: h.payload["hash"] for h in heads.values()}
        return [c for c in found if current.get(c[0].payload["document_id"]) == c[0].payload["hash"]]

    @staticmethod
    def _hit(p: dict[str, Any], score: float) -> CollectionHit:
        return CollectionHit(document_id=p["document_id"], text=p["text"], score=round(score, 4), start=p["start"],
                             end=p["end"], tokens=p["tokens"], title=p["title"], url=p["url"], context=p["context"],
                             metadata=p["metadata"])
