"""Sources and refs: tool output stored whole under a deterministic ref, with its view and chunks."""

from __future__ import annotations

import calendar
import hashlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxsieve.ingest.chunking import Chunk, chunk_view, chunker_signature
from ctxsieve.ingest.kinds import CONTENT_TYPES
from ctxsieve.ingest.lines import LineIndex
from ctxsieve.ingest.normalize import Document, Section, View, build_view
from ctxsieve.ingest.tokens import Tokenizer
from ctxsieve_client.languages import source_path

from .errors import Gone, InvalidInput, InvalidRequest, NotFound
from .lru import Lru
from .store import HasIds, Match, PointData, Range, SpaceSpec, Store, Where, layout, point_id, scroll_all, where

# `vector_keys` (the chunk vectors a source uses) is deliberately not indexed: Edge keeps a mutable segment's
# indexes in RAM, which grew by hundreds of MB over many stored outputs (bench/README.md: Scale).
# It is read only to forget vectors.
SOURCES = SpaceSpec(name=layout.SOURCES, indexes={"tenant": "tenant", "state": "keyword", "created": "float"})

# Recent sources kept as objects (refs are immutable); the store has them all, this saves re-reading.
RECENT_SOURCE_BYTES = 64 << 20


@dataclass(frozen=True)
class SourceInput:
    """What a tool produced: one text (`content`) or a list of documents, and how it was produced."""

    documents: tuple[Document, ...]
    from_content: bool  # True when the caller sent `content`, False for `documents`
    content_type: str = "auto"
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    cwd: str | None = None  # the folder the tool ran in (a grep's relative paths are read from it)


@dataclass
class Source:
    ref: str
    tenant: str
    text: str  # what was sent (the documents' texts joined, for a documents input)
    view: View
    documents: list[dict[str, Any]] | None
    tool: str | None
    args: dict[str, Any]
    content_type: str
    tokens: int  # of what was sent
    view_tokens: int  # of the view: what "fits the budget" is measured on
    created_at: str
    chunker: str
    chunks: list[Chunk]
    cwd: str | None = None
    _lines: LineIndex | None = field(default=None, repr=False, compare=False)

    def chunk_text(self, chunk: Chunk) -> str:
        return chunk.text(self.view.text)

    def line_span(self, start: int, end: int) -> tuple[int, int]:
        """The 1-based lines of the view that the character span [start, end) covers."""
        if self._lines is None:
            self._lines = LineIndex(self.view.text)
        return self._lines.line_of(start), self._lines.line_of(max(start, end - 1))

    def lines_part(self, lines: str) -> tuple[int, int]:
        """The character span of `A-B` (or `A`), 1-based lines of the view, clamped to its length."""
        first, _, last = lines.partition("-")
        a, b = int(first), int(last or first)
        if a < 1 or b < a:
            raise InvalidInput(f"lines {lines!r}: give A-B with 1 <= A <= B")
        if self._lines is None:
            self._lines = LineIndex(self.view.text)
        return self._lines.span(a, b, len(self.view.text))

    def nbytes(self) -> int:
        """About what it holds in memory: its texts, and ~200 bytes a chunk."""
        view = 0 if self.view.text is self.text else sys.getsizeof(self.view.text)
        documents = sum(sys.getsizeof(d.get("text", "")) for d in self.documents or [])
        return sys.getsizeof(self.text) + view + documents + 200 * len(self.chunks)

    def section(self, chunk: Chunk) -> Section:
        return self.view.sections[chunk.document]

    def part(self, start: int | None = None, end: int | None = None, chunk: int | None = None, window: int = 0
             ) -> tuple[int, int]:
        """The view's span asked for: a character range, or chunk N with `window` neighbours each side."""
        if chunk is not None and (start is not None or end is not None):
            raise InvalidRequest("use either start/end or chunk/window, not both")
        if chunk is not None:
            if chunk >= len(self.chunks):
                raise InvalidInput(f"chunk {chunk} out of range: this source has {len(self.chunks)} chunks")
            first = self.chunks[max(0, chunk - window)]
            last = self.chunks[min(len(self.chunks) - 1, chunk + window)]
            return first.start, last.end
        lo, hi = start or 0, len(self.view.text) if end is None else end
        if lo > hi or hi > len(self.view.text):
            raise InvalidInput(f"range [{lo}, {hi}) is outside the view (length {len(self.view.text)})")
        return lo, hi

    def passage(self, chunk: Chunk) -> str:
        """What gets embedded: the chunk with what it is part of (title, headings, JSON record)."""
        text = self.chunk_text(chunk)
        return f"{chunk.context}\n{text}" if chunk.context else text

    # -- the stored record: one point per source, keyed by its ref; its layout is written here only --

    def point(self) -> PointData:
        return PointData(key=self.ref, payload={
            "ref": self.ref, "tenant": self.tenant, "state": "live", "text": self.text, "documents": self.documents,
            "view": None if self.view.text == self.text else self.view.text,
            "sections": [{k: v for k, v in asdict(x).items() if k != "leaves"} for x in self.view.sections],
            "tool": self.tool, "args": self.args, "cwd": self.cwd, "content_type": self.content_type,
            "tokens": self.tokens,
            "view_tokens": self.view_tokens, "created_at": self.created_at,
            "created": calendar.timegm(time.strptime(self.created_at, "%Y-%m-%dT%H:%M:%SZ")),
            "chunker": self.chunker, "chunks": [_chunk_row(c) for c in self.chunks],
            "vector_keys": sorted({passage_key(self.passage(c)) for c in self.chunks}),
        })

    @classmethod
    def of(cls, p: dict[str, Any]) -> Source:
        """A stored record as it was written (the store's chunker may differ: see SourceStore._current)."""
        view = View(p["view"] if p.get("view") is not None else p["text"], p["content_type"],
                    tuple(Section(**x) for x in p["sections"]))
        return cls(
            ref=p["ref"], tenant=p["tenant"], text=p["text"], view=view, documents=p.get("documents"),
            tool=p.get("tool"), args=p.get("args") or {}, content_type=p["content_type"], tokens=p["tokens"],
            view_tokens=p.get("view_tokens", p["tokens"]), created_at=p["created_at"], chunker=p["chunker"],
            chunks=[_chunk_of(i, row) for i, row in enumerate(p["chunks"])], cwd=p.get("cwd"),
        )


# A chunk is stored as a row (a source holds hundreds: field names in each would double its payload).
CHUNK_ROW = ("start", "end", "tokens", "document", "context", "role")


def _chunk_row(chunk: Chunk) -> list[Any]:
    return [getattr(chunk, name) for name in CHUNK_ROW]


def _chunk_of(index: int, row: list[Any]) -> Chunk:
    """A row as stored; one written before chunks had a role (5 columns) has none (its source is chunked again on
    reading: its chunker signature is older)."""
    columns = CHUNK_ROW if len(row) == len(CHUNK_ROW) else CHUNK_ROW[:-1]
    return Chunk(index=index, **dict(zip(columns, row, strict=True)))


def tombstone(ref: str, tenant: str, created: float) -> PointData:
    """What an expired source leaves: enough to answer 410 instead of 404 for a while."""
    return PointData(key=ref, payload={"ref": ref, "tenant": tenant, "state": "expired", "created": created})


def passage_key(passage: str) -> str:
    """Names a passage's vector in the chunk-vector cache (and, on a source, the vectors it uses)."""
    return hashlib.sha256(passage.encode("utf-8", "surrogatepass")).hexdigest()


def make_ref(tenant: str, inp: SourceInput) -> str:
    """Content-addressed: the same content for the same tenant gets the same ref, on any replica."""
    body: dict[str, Any] = {"tenant": tenant, "content_type": inp.content_type}
    if inp.from_content:
        body["content"] = inp.documents[0].text
    else:  # metadata (a search engine's score, say) describes the content but is not part of it
        body["documents"] = [{"text": d.text, "title": d.title, "url": d.url} for d in inp.documents]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"src_{digest[:20]}"


def utc_stamp(at: float | None = None) -> str:
    """The one timestamp format of every response (ISO 8601, UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if at is None else at))


# The few fields that say whether a ref may be served: read on every use, even of a source held in memory,
# so a ref deleted or expired through another replica is never served from this one's memory.
STATUS_FIELDS = ("tenant", "state", "created", "used")  # used: the last compaction that named it (touch)


class SourceStore:
    """Sources as one point each in the store (payload on disk), re-chunked when the chunker changed.

    A source lives until DELETE or until it is older than the retention; an expired one leaves a small
    tombstone (410 instead of 404) for as long again. Nothing is read-modified-written: a source is
    written once, and forgetting it overwrites or deletes its point.
    """

    def __init__(self, store: Store, tokenizer: Tokenizer, chunk_tokens: int, retention_days: float = 30.0,
                 code_chunk_tokens: int | None = None) -> None:
        self.store = store
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.code_chunk_tokens = code_chunk_tokens
        self.retention = retention_days * 86400  # 0: kept forever
        self.signature = chunker_signature(tokenizer, chunk_tokens, code_chunk_tokens)
        store.ensure(SOURCES)
        # Sources never change once stored, so recent ones are kept as objects: a re-filter then skips
        # reading and decoding a large payload from the store.
        self._recent: Lru[str, Source] = Lru(64, RECENT_SOURCE_BYTES, Source.nbytes)

    def _remember(self, source: Source) -> Source:
        return self._recent.put(source.ref, source)

    def _expired(self, created: float, now: float) -> bool:
        return self.retention > 0 and now - created > self.retention

    def _check(self, tenant: str, ref: str, status: dict[str, Any] | None) -> None:
        if status is None or status.get("tenant") != tenant:  # another tenant's ref is simply unknown
            raise NotFound(f"unknown ref {ref!r}")
        last = max(float(status.get("created", 0)), float(status.get("used") or 0))
        if status.get("state") == "expired" or self._expired(last, time.time()):
            days = f"{self.retention / 86400:g}"
            raise Gone(f"ref {ref!r} is past the retention period ({days} days); re-run the tool to get its output "
                       "again", setting="source_retention_days")

    def holds(self, tenant: str, ref: str) -> bool:
        """The ref is this tenant's and within retention: its status alone is read, not its text."""
        if not ref.startswith("src_") or len(ref) > 64:
            return False
        found = self.store.get(SOURCES.name, [ref], payload=STATUS_FIELDS).get(ref)
        try:
            self._check(tenant, ref, found.payload if found else None)
        except (NotFound, Gone):
            return False
        return True

    def get(self, tenant: str, ref: str) -> Source:
        if not ref.startswith("src_") or len(ref) > 64:
            raise NotFound(f"unknown ref {ref!r}")
        recalled = self._recent.get(ref)
        if recalled is not None:
            found = self.store.get(SOURCES.name, [ref], payload=STATUS_FIELDS).get(ref)
            self._check(tenant, ref, found.payload if found else None)
            return recalled
        found = self.store.get(SOURCES.name, [ref]).get(ref)
        self._check(tenant, ref, found.payload if found else None)
        assert found is not None
        return self._remember(self._current(Source.of(found.payload)))

    def put(self, tenant: str, inp: SourceInput) -> Source:
        """Store the input under its ref (idempotent: a live source is returned unchanged)."""
        if not inp.documents:
            raise InvalidRequest("nothing to store: no content and no documents")
        ref = make_ref(tenant, inp)
        try:
            return self.get(tenant, ref)
        except (NotFound, Gone):  # new, or expired: stored (again) below
            pass
        path = source_path(inp.args)
        view = build_view(inp.documents, inp.content_type, path)
        text = inp.documents[0].text if inp.from_content else view.text
        tokens = sum(self.tokenizer.count(d.text) for d in inp.documents)
        source = Source(
            ref=ref, tenant=tenant, text=text, view=view,
            documents=None if inp.from_content else [asdict(d) for d in inp.documents],
            tool=inp.tool, args=dict(inp.args), cwd=inp.cwd, content_type=view.content_type,
            tokens=tokens,
            view_tokens=tokens if inp.from_content and view.text == text else self.tokenizer.count(view.text),
            created_at=utc_stamp(), chunker=self.signature,
            chunks=chunk_view(view, self.tokenizer, self.chunk_tokens, path, self.code_chunk_tokens),
        )
        self.store.upsert(SOURCES.name, [source.point()])
        return self._remember(source)

    def restore(self, payload: dict[str, Any]) -> Source:
        """Write a source from a record of an earlier layout (migration): same ref, same created_at."""
        source = self._current(Source.of(payload))
        self.store.upsert(SOURCES.name, [source.point()])
        return source

    # --- lifecycle ----------------------------------------------------------------------------------

    def touch(self, refs: list[str], now: float | None = None) -> None:
        """A compacted history still names these refs: retention counts from now for them. One engine-side
        payload update over their points (nothing read, nothing rewritten whole)."""
        if refs:
            self.store.set_where(SOURCES.name, Where((HasIds(tuple(point_id(r) for r in refs)),)),
                                 {"used": time.time() if now is None else now})

    def delete(self, tenant: str, ref: str) -> list[str]:
        """Forget a source; returns the vector keys it used, for the caller to drop those no one else uses."""
        found = self.store.get(SOURCES.name, [ref], payload=(*STATUS_FIELDS, "vector_keys")).get(ref)
        if found is None or found.payload.get("tenant") != tenant or found.payload.get("state") == "expired":
            raise NotFound(f"unknown ref {ref!r}")
        self.store.delete(SOURCES.name, [ref])
        self._recent.pop(ref)
        return list(found.payload.get("vector_keys") or [])

    def still_used(self, keys: list[str]) -> set[str]:
        """Which of these vector keys a live source still uses: one pass over the live sources' key lists (a
        DELETE or a retention sweep, batched; never a request's hot path)."""
        wanted, used = set(keys), set()
        live = Where(must_not=(Match("state", "expired"),))
        for found in scroll_all(self.store, SOURCES.name, live, payload=("vector_keys",)):
            used.update(wanted.intersection(found.payload.get("vector_keys") or ()))
        return used

    def expire(self, now: float | None = None) -> list[str]:
        """Turn sources past retention into tombstones; drop tombstones older than twice the retention.
        Returns the vector keys the expired sources used."""
        if self.retention <= 0:
            return []
        now = time.time() if now is None else now
        old = Where((Range("created", lt=now - self.retention),),
                    (Match("state", "expired"), Range("used", gte=now - self.retention)))
        keys: list[str] = []
        tombstones = []
        for found in scroll_all(self.store, SOURCES.name, old, payload=("ref", "tenant", "created", "vector_keys")):
            keys += found.payload.get("vector_keys") or []
            tombstones.append(tombstone(found.payload["ref"], found.payload["tenant"], found.payload["created"]))
            self._recent.pop(found.payload["ref"])
        self.store.upsert(SOURCES.name, tombstones)
        forgotten = where(state="expired").and_(Range("created", lt=now - 2 * self.retention))
        self.store.delete_where(SOURCES.name, forgotten)
        return keys

    # --- the stored record, as this build chunks it -----------------------------------------------------

    def _current(self, source: Source) -> Source:
        if source.chunker != self.signature:
            # Chunk settings changed since this source was stored: the input is whole, so re-derive the
            # projection in memory (the stored record is never rewritten).
            docs = source.documents or [{"text": source.text}]
            kind = source.content_type if source.content_type in CONTENT_TYPES else "auto"
            view = build_view([Document(**d) for d in docs], kind, source_path(source.args))
            source.view = view
            source.chunks = chunk_view(view, self.tokenizer, self.chunk_tokens, source_path(source.args),
                                       self.code_chunk_tokens)
            source.chunker = self.signature
        return source
