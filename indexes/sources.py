"""Sources and refs: tool output stored whole under a deterministic ref, with its view and chunks."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ingest.chunking import Chunk, chunk_view, chunker_signature
from ingest.normalize import Document, Section, View, build_view
from ingest.tokens import Tokenizer

from .errors import InvalidRequest, NotFound
from .lru import Lru
from .store import SOURCES, QdrantStore

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

    def chunk_text(self, chunk: Chunk) -> str:
        return chunk.text(self.view.text)

    def nbytes(self) -> int:
        """About what it holds in memory: its texts, and ~200 bytes a chunk."""
        view = 0 if self.view.text is self.text else sys.getsizeof(self.view.text)
        documents = sum(sys.getsizeof(d.get("text", "")) for d in self.documents or [])
        return sys.getsizeof(self.text) + view + documents + 200 * len(self.chunks)

    def section(self, chunk: Chunk) -> Section:
        return self.view.sections[chunk.document]


def make_ref(tenant: str, inp: SourceInput) -> str:
    """Content-addressed: the same content for the same tenant gets the same ref, on any replica."""
    body: dict[str, Any] = {"tenant": tenant, "content_type": inp.content_type}
    if inp.from_content:
        body["content"] = inp.documents[0].text
    else:  # metadata (a search engine's score, say) describes the content but is not part of it
        body["documents"] = [{"text": d.text, "title": d.title, "url": d.url} for d in inp.documents]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"src_{digest[:20]}"


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class SourceStore:
    """Reads and writes sources in Qdrant (payload only), re-chunking when the chunker changed."""

    def __init__(self, store: QdrantStore, tokenizer: Tokenizer, chunk_tokens: int) -> None:
        self.store = store
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens
        self.signature = chunker_signature(tokenizer, chunk_tokens)
        store.ensure_collection(SOURCES)
        # Sources never change once stored, so recent ones are kept as objects: a re-filter then skips
        # reading and decoding a 40k-token payload (~15 ms) from the store.
        self._recent: Lru[str, Source] = Lru(64, RECENT_SOURCE_BYTES, Source.nbytes)

    def _remember(self, source: Source) -> Source:
        return self._recent.put(source.ref, source)

    def _recalled(self, tenant: str, ref: str) -> Source | None:
        source = self._recent.get(ref)
        return source if source is not None and source.tenant == tenant else None

    def get(self, tenant: str, ref: str) -> Source:
        if not ref.startswith("src_") or len(ref) > 64:
            raise NotFound(f"unknown ref {ref!r}")
        recalled = self._recalled(tenant, ref)
        if recalled is not None:
            return recalled
        payload = self.store.get_payloads(SOURCES, [ref]).get(ref)
        if payload is None or payload.get("tenant") != tenant:  # another tenant's ref is simply unknown
            raise NotFound(f"unknown ref {ref!r}")
        return self._remember(self._from_payload(payload))

    def put(self, tenant: str, inp: SourceInput) -> Source:
        """Store the input under its ref (idempotent: an existing source is returned unchanged)."""
        if not inp.documents:
            raise InvalidRequest("nothing to store: no content and no documents")
        ref = make_ref(tenant, inp)
        recalled = self._recalled(tenant, ref)
        if recalled is not None:
            return recalled
        existing = self.store.get_payloads(SOURCES, [ref]).get(ref)
        if existing is not None and existing.get("tenant") == tenant:
            return self._remember(self._from_payload(existing))
        view = build_view(inp.documents, inp.content_type)
        text = inp.documents[0].text if inp.from_content else view.text
        tokens = sum(self.tokenizer.count(d.text) for d in inp.documents)
        source = Source(
            ref=ref, tenant=tenant, text=text, view=view,
            documents=None if inp.from_content else [asdict(d) for d in inp.documents],
            tool=inp.tool, args=dict(inp.args), content_type=view.content_type,
            tokens=tokens,
            view_tokens=tokens if inp.from_content and view.text == text else self.tokenizer.count(view.text),
            created_at=_utc_now(), chunker=self.signature,
            chunks=chunk_view(view, self.tokenizer, self.chunk_tokens),
        )
        self.store.put_payload(SOURCES, ref, self._to_payload(source))
        return self._remember(source)

    def _to_payload(self, s: Source) -> dict[str, Any]:
        return {
            "ref": s.ref, "tenant": s.tenant, "text": s.text, "documents": s.documents,
            "view": None if s.view.text == s.text else s.view.text,
            "sections": [{k: v for k, v in asdict(x).items() if k != "leaves"} for x in s.view.sections],
            "tool": s.tool, "args": s.args, "content_type": s.content_type, "tokens": s.tokens,
            "view_tokens": s.view_tokens,
            "created_at": s.created_at, "chunker": s.chunker,
            "chunks": [[c.start, c.end, c.tokens, c.document, c.context] for c in s.chunks],
        }

    def _from_payload(self, p: dict[str, Any]) -> Source:
        view = View(p["view"] if p.get("view") is not None else p["text"], p["content_type"],
                    tuple(Section(**x) for x in p["sections"]))
        source = Source(
            ref=p["ref"], tenant=p["tenant"], text=p["text"], view=view, documents=p.get("documents"),
            tool=p.get("tool"), args=p.get("args") or {}, content_type=p["content_type"], tokens=p["tokens"],
            view_tokens=p.get("view_tokens", p["tokens"]),
            created_at=p["created_at"], chunker=p["chunker"],
            chunks=[Chunk(i, c[0], c[1], c[2], c[3], c[4]) for i, c in enumerate(p["chunks"])],
        )
        if source.chunker != self.signature:
            # Chunk settings changed since this source was stored: the input is whole, so re-derive.
            docs = source.documents or [{"text": source.text}]
            view = build_view([Document(**d) for d in docs], source.content_type if source.content_type
                              in ("text", "markdown", "html", "json", "code") else "auto")
            source.view = view
            source.chunks = chunk_view(view, self.tokenizer, self.chunk_tokens)
            source.chunker = self.signature
            self.store.put_payload(SOURCES, source.ref, self._to_payload(source))
        return source
