"""Static collections: reference material (glossaries, specs, style guides) indexed ahead of time.

Everything is a point in the store: one per collection, one per document (its content hash: the record
that acknowledges it) and one per chunk (text, offsets, metadata, a dense vector and a BM25 sparse vector).
A query is run by the engine: a dense and a BM25 search under the metadata filter; the project's fusion
and packing then work on the few candidates returned. Nothing of a collection is copied into memory.

Writes store a document's chunks first and its document point last; a query serves a chunk only when its
document point names the chunk's hash, so a half-written or replaced document is never served.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ctxsieve.ingest.chunking import chunk_view
from ctxsieve.ingest.normalize import Document, build_view
from ctxsieve.ingest.tokens import Tokenizer

from ..errors import InvalidInput, NotFound
from ..lexical import sparse_document, sparse_query
from ..more import More, more_of
from ..ranking import Candidate, fuse, pack_to_budget
from ..sources import utc_stamp
from ..store import (
    Condition,
    Found,
    HasIds,
    IsEmpty,
    Match,
    MatchAny,
    PointData,
    Search,
    SpaceSpec,
    Store,
    Where,
    layout,
    scroll_all,
    where,
)
from ..usage import Usage, make_usage
from ..vectors import EmbeddingCache
from .filters import index_kind, translate_filter
from .records import (
    BM25,
    CANDIDATE_FIELDS,
    LISTING_FIELDS,
    ChunkRecord,
    CollectionHead,
    DocumentRecord,
    Kind,
    NewDocument,
    of,
    scope,
)

log = logging.getLogger("ctxsieve")
# Candidates each engine search returns: enough for k up to 50 and a budget of a few thousand tokens.
CANDIDATES = 64


@dataclass(frozen=True, kw_only=True)
class QueryParams:
    """A collection query beyond its text: the budget, the score floor and the metadata filter."""

    k: int = 5
    max_tokens: int | None = None
    min_score: float | None = None
    filter: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CollectionInfo:
    name: str
    description: str
    documents: int
    chunks: int


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

    # --- counts and the scope field --------------------------------------------------------------------

    def _tally(self, tenant: str, name: str, kind: Kind) -> int:
        return self.store.tally(self.space, "scope", scope(tenant, name, kind))

    def _give_scopes(self) -> None:
        """Documents and chunks written before `scope` existed get it, once, by engine-side payload updates."""
        lacking = Where((MatchAny("kind", ("document", "chunk")), IsEmpty("scope")))
        if not self.store.scroll(self.space, lacking, limit=1, payload=False)[0]:
            return
        log.info("collections: adding the scope field to documents and chunks stored by an earlier build (once; "
                 "about a minute per million chunks)")
        for head in scroll_all(self.store, self.space, where(kind="collection"), payload=("tenant", "collection")):
            tenant, name = head.payload["tenant"], head.payload["collection"]
            kinds: tuple[Kind, ...] = ("document", "chunk")
            for kind in kinds:
                self.store.set_where(self.space, where(tenant=tenant, collection=name, kind=kind).and_(
                    IsEmpty("scope")), {"scope": scope(tenant, name, kind)})

    # --- collections --------------------------------------------------------------------------------

    def create(self, tenant: str, name: str, description: str) -> None:
        """Idempotent; a second PUT updates the description (the record is written whole, not merged)."""
        existing = self.store.get(self.space, [CollectionHead.key(tenant, name)], payload=("created_at",))
        created = str(next(iter(existing.values())).payload.get("created_at", "")) if existing else utc_stamp()
        head = CollectionHead(tenant=tenant, name=name, description=description, created_at=created)
        self.store.upsert(self.space, [head.point()])

    def _require(self, tenant: str, name: str) -> CollectionHead:
        found = self.store.get(self.space, [CollectionHead.key(tenant, name)])
        if not found:
            raise NotFound(f"unknown collection {name!r}")
        return CollectionHead.of(next(iter(found.values())))

    def info(self, tenant: str, name: str) -> CollectionInfo:
        head = self._require(tenant, name)
        return CollectionInfo(name=name, description=head.description, documents=self._tally(tenant, name, "document"),
                              chunks=self._tally(tenant, name, "chunk"))

    def all(self, tenant: str) -> list[CollectionInfo]:
        heads = scroll_all(self.store, self.space, where(tenant=tenant, kind="collection"), payload=("collection",))
        return [self.info(tenant, n) for n in sorted(h.payload["collection"] for h in heads)]

    def delete(self, tenant: str, name: str) -> None:
        self._require(tenant, name)
        self.store.delete(self.space, [CollectionHead.key(tenant, name)])  # unlisted first
        self.store.delete_where(self.space, where(tenant=tenant, collection=name))

    # --- documents ----------------------------------------------------------------------------------

    def documents(self, tenant: str, name: str, offset: int = 0, limit: int = 100) -> list[DocumentRecord]:
        """A page of the documents, in the store's stable order (by point id)."""
        self._require(tenant, name)
        page = list(scroll_all(self.store, self.space, of(tenant, name, "document"), payload=LISTING_FIELDS,
                               most=offset + limit))[offset:]
        return [DocumentRecord.of(p) for p in page]

    def hashes(self, tenant: str, name: str) -> dict[str, str]:
        """Every document's content hash, by id (incremental ingest skips what is unchanged)."""
        self._require(tenant, name)
        docs = scroll_all(self.store, self.space, of(tenant, name, "document"), payload=("document_id", "hash"))
        return {d.payload["document_id"]: d.payload["hash"] for d in docs}

    def add(self, tenant: str, name: str, documents: Sequence[NewDocument]) -> tuple[list[str], int]:
        """Add or replace by id; an unchanged document is skipped, a changed one re-chunked."""
        self._require(tenant, name)
        latest = {d.id: d for d in documents}  # a batch naming one id twice keeps the last
        keys = [DocumentRecord.key(tenant, name, i) for i in latest]
        current = {f.payload["document_id"]: f.payload["hash"]
                   for f in self.store.get(self.space, keys, payload=("document_id", "hash")).values()}
        changed = [(d, d.digest()) for d in latest.values() if current.get(d.id) != d.digest()]
        chunks: list[ChunkRecord] = []
        heads: list[PointData] = []
        for doc, digest in changed:
            doc_chunks = self._chunk_records(tenant, name, doc, digest)
            chunks += doc_chunks
            heads.append(DocumentRecord(
                tenant=tenant, collection=name, id=doc.id, hash=digest, chunks=len(doc_chunks),
                tokens=sum(c.tokens for c in doc_chunks), title=doc.title, url=doc.url, metadata=doc.metadata or {},
                added_at=utc_stamp()).point())
        # One embedding batch for the whole request, not one per document.
        vectors = self.vectors.passages([c.passage for c in chunks]) if chunks else ()
        points = [c.point(self.vectors.vector, v, sparse_document(c.passage))
                  for c, v in zip(chunks, vectors, strict=True)]
        self._index_metadata(doc.metadata or {} for doc, _ in changed)
        self.store.upsert(self.space, points)
        self.store.upsert(self.space, heads)  # acknowledges the batch
        for doc, _ in changed:  # the replaced version's chunks go once the new ones are served
            if doc.id in current:
                self.store.delete_where(self.space, of(tenant, name, "chunk").and_(
                    Match("document_id", doc.id), Match("hash", current[doc.id])))
        return [d.id for d in documents], len(chunks)

    def _chunk_records(self, tenant: str, name: str, doc: NewDocument, digest: str) -> list[ChunkRecord]:
        view = build_view([Document(doc.text, doc.title, doc.url, doc.metadata or {})], doc.content_type)
        return [ChunkRecord(tenant=tenant, collection=name, document_id=doc.id, hash=digest, index=i, start=c.start,
                            end=c.end, tokens=c.tokens, text=view.text[c.start : c.end], context=c.context,
                            title=doc.title, url=doc.url, metadata=doc.metadata or {})
                for i, c in enumerate(chunk_view(view, self.tokenizer, self.chunk_tokens))]

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
        key = DocumentRecord.key(tenant, name, doc_id)
        if not self.store.get(self.space, [key], payload=False):
            raise NotFound(f"unknown document {doc_id!r} in collection {name!r}")
        self.store.delete(self.space, [key])  # unlisted first
        self.store.delete_where(self.space, of(tenant, name, "chunk").and_(Match("document_id", doc_id)))

    # --- query --------------------------------------------------------------------------------------

    def query(self, tenant: str, name: str, query: str, params: QueryParams) -> CollectionResult:
        self._require(tenant, name)
        corpus = of(tenant, name, "chunk")
        scoped = corpus.and_(*self._filter(tenant, name, params.filter))
        found = self._served(tenant, name, self._candidates(query, scoped, corpus))
        dense = np.array([d for _, d, _ in found], dtype=np.float64)
        lexical = np.array([s for _, _, s in found], dtype=np.float64)
        candidates = [Candidate(i, f.payload["tokens"], f.payload["text"]) for i, (f, _, _) in enumerate(found)]
        eligible = dense >= params.min_score if params.min_score is not None else None
        chosen = pack_to_budget(candidates, fuse(dense, lexical, self.dense_weight), params.k, params.max_tokens,
                                eligible)
        keys = [ChunkRecord.key(tenant, name, p["document_id"], p["hash"], p["index"])
                for p in (found[i][0].payload for i in chosen)]
        details = self.store.get(self.space, keys) if keys else {}
        hits = [self._hit(ChunkRecord.of(details[key]), float(dense[i])) for key, i in zip(keys, chosen, strict=True)]
        total = self._tally(tenant, name, "chunk")
        usage = make_usage(input_tokens=sum(c.tokens for c in candidates), output_tokens=sum(h.tokens for h in hits),
                           chunks_total=total, chunks_returned=len(hits))
        return CollectionResult(snippets=hits, more=more_of(None, usage, None, collection=name), usage=usage)

    def _filter(self, tenant: str, name: str, filters: Mapping[str, Any]) -> list[Condition]:
        conditions = [translate_filter(key, condition) for key, condition in sorted(filters.items())]
        for key in sorted(filters):
            having = Where(of(tenant, name, "document").must, (IsEmpty(f"metadata.{key}"),))
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
        heads = self.store.get(self.space, [DocumentRecord.key(tenant, name, i) for i in ids],
                               payload=("document_id", "hash"))
        current = {h.payload["document_id"]: h.payload["hash"] for h in heads.values()}
        return [c for c in found if current.get(c[0].payload["document_id"]) == c[0].payload["hash"]]

    @staticmethod
    def _hit(chunk: ChunkRecord, score: float) -> CollectionHit:
        return CollectionHit(document_id=chunk.document_id, text=chunk.text, score=round(score, 4), start=chunk.start,
                             end=chunk.end, tokens=chunk.tokens, title=chunk.title, url=chunk.url,
                             context=chunk.context, metadata=chunk.metadata)
