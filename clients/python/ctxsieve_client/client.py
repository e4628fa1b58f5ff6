"""`Client`: every API call (API.md) as a typed method, each sending what `Requests` builds (calls.py) and
raising `CtxsieveError` (errors.py) on a non-2xx answer; `AsyncClient` (async_client.py) has the same calls,
awaitable.

Results are the dataclasses of `ctxsieve_client.models`; unknown response fields land in their `extra`. What
this module held before those had modules of their own (the calls and their options, the error, `AsyncClient`)
is still importable from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import httpx

from .async_client import AsyncClient
from .calls import (
    FEEDBACK_BATCH,
    JSON,
    Call,
    CodeSearchOptions,
    CompactOptions,
    ContentType,
    FilterOptions,
    HookOptions,
    M,
    Mode,
    Order,
    Placeholder,
    QueryOptions,
    ReadOptions,
    RefilterOptions,
    RefPart,
    Requests,
    SearchOptions,
    SelectOptions,
    ToolFormat,
)
from .errors import CtxsieveError
from .models import (
    CodeSearchResult,
    CollectionInfo,
    CollectionResult,
    Compaction,
    DocumentPage,
    DocumentsAdded,
    FileOrder,
    FilterResult,
    RefContent,
    RepoInfo,
    RepoList,
    SearchResult,
    Selection,
    SessionReport,
    ToolsetDetail,
    ToolsetInfo,
)
from .sending import client_headers, read_answer, session_header, verify_tls

__all__ = ["FEEDBACK_BATCH", "JSON", "AsyncClient", "Call", "Client", "CompactOptions", "ContentType", "CtxsieveError",
           "FilterOptions", "HookOptions", "Mode", "Order", "Placeholder", "QueryOptions", "ReadOptions",
           "RefPart", "RefilterOptions", "Requests", "SearchOptions", "SelectOptions", "ToolFormat"]


class Client:
    """`Client("http://127.0.0.1:8000", api_key=None, session_id=None)`: the API as typed methods (`agent`: the
    agent its session's reads come from, as `ctxsieve stats` groups them)."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.BaseTransport | None = None, agent: str | None = None
                 ) -> None:
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=client_headers(api_key, session_id, agent),
                                  timeout=timeout, transport=transport, verify=verify_tls(base_url))

    def send(self, call: Call[M]) -> M:
        """Send one request built by `Requests`; raises `CtxsieveError` on a non-2xx answer."""
        response = self._http.request(call.method, call.path, params=call.params, json=call.body,
                                      headers=session_header(call))
        return read_answer(response, call)

    def filter(self, query: str | None, content: str | None = None, **options: Unpack[FilterOptions]
               ) -> FilterResult:
        """Store tool output whole under a ref; get the snippets relevant to `query` (see `Requests.filter`)."""
        return self.send(Requests.filter(query, content, **options))

    def refilter(self, ref: str, query: str | None, **options: Unpack[RefilterOptions]) -> FilterResult:
        """Filter a stored source again with a new query (nothing already embedded is embedded again)."""
        return self.send(Requests.refilter(ref, query, **options))

    def fetch_ref(self, ref: str, **part: Unpack[RefPart]) -> RefContent:
        """The stored source whole, or `start`/`end` (characters of its view), `chunk` and `window`, or `lines`
        ("A-B", 1-based lines of its view)."""
        return self.send(Requests.fetch_ref(ref, **part))

    def delete_ref(self, ref: str) -> None:
        """Forget a source (its text, its chunks, and the chunk vectors no other source uses)."""
        self.send(Requests.delete_ref(ref))

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """A web search (Tavily) whose pages are stored as sources; only the relevant snippets come back."""
        return self.send(Requests.search(query, **options))

    def read(self, path: str, query: str, **options: Unpack[ReadOptions]) -> FilterResult:
        """A file under the service's read roots, filtered against `query`."""
        return self.send(Requests.read(path, query, **options))

    def register_toolset(self, name: str, tools: Sequence[JSON]) -> ToolsetInfo:
        """Register (or replace) a toolset of OpenAI, Anthropic or MCP tool definitions."""
        return self.send(Requests.register_toolset(name, tools))

    def toolset(self, name: str, format: ToolFormat = "openai") -> ToolsetDetail:  # noqa: A002
        """A registered toolset and its definitions in `format`."""
        return self.send(Requests.toolset(name, format))

    def delete_toolset(self, name: str) -> None:
        """Forget a toolset (its tools and recorded uses)."""
        self.send(Requests.delete_toolset(name))

    def select_tools(self, query: str, toolsets: Sequence[str], **options: Unpack[SelectOptions]) -> Selection:
        """The few tools of the named toolsets that fit `query`, in the format asked for."""
        return self.send(Requests.select_tools(query, toolsets, **options))

    def tools_feedback(self, query: str, used: Sequence[str], toolsets: Sequence[str]) -> int:
        """Record that these tools were used for this query; later selections learn from it."""
        return int(self.send(Requests.tools_feedback(query, used, toolsets))["recorded"])

    def import_feedback(self, uses: Sequence[tuple[str, Sequence[str]]], toolsets: Sequence[str]) -> int:
        """Seed toolsets from logs: many (query, tools used) pairs, sent in batches; returns how many
        (toolset, tool, query) records were written. A batch with an unknown tool is rejected whole."""
        return sum(int(self.send(call)["recorded"]) for call in Requests.import_feedback(uses, toolsets))

    def create_collection(self, name: str, description: str = "") -> CollectionInfo:
        """Create a collection (idempotent; a second call updates the description)."""
        return self.send(Requests.create_collection(name, description))

    def collection(self, name: str) -> CollectionInfo:
        """A collection's description and counts."""
        return self.send(Requests.collection(name))

    def add_documents(self, name: str, documents: Sequence[JSON]) -> DocumentsAdded:
        """Add or replace documents by id; unchanged ones are not embedded again."""
        return self.send(Requests.add_documents(name, documents))

    def list_documents(self, name: str, offset: int = 0, limit: int = 100) -> DocumentPage:
        """One page of a collection's documents; `next_offset` is None on the last page."""
        return self.send(Requests.list_documents(name, offset, limit))

    def delete_document(self, name: str, doc_id: str) -> None:
        """Remove one document (and its chunks) from a collection."""
        self.send(Requests.delete_document(name, doc_id))

    def query_collection(self, name: str, query: str, **options: Unpack[QueryOptions]) -> CollectionResult:
        """The chunks of a collection most relevant to `query`, within `k` and `max_tokens`, under `filter`."""
        return self.send(Requests.query_collection(name, query, **options))

    def index_repo(self, name: str, path: str) -> RepoInfo:
        """Register a folder (inside the service's read roots) as repository `name`; indexed in the background."""
        return self.send(Requests.index_repo(name, path))

    def sync_repo(self, name: str) -> RepoInfo:
        """Bring repository `name` up to date with its files on disk (in the background)."""
        return self.send(Requests.sync_repo(name))

    def repo(self, name: str) -> RepoInfo:
        """A repository's files, definitions and state (indexing, lexical, ready)."""
        return self.send(Requests.repo(name))

    def repos(self) -> RepoList:
        return self.send(Requests.repos())

    def delete_repo(self, name: str) -> None:
        self.send(Requests.delete_repo(name))

    def search_code(self, name: str, query: str, **options: Unpack[CodeSearchOptions]) -> CodeSearchResult:
        """Definitions of repository `name` best first for `query`, their lines within `max_tokens` over all."""
        return self.send(Requests.search_code(name, query, **options))

    def rank_files(self, query: str, paths: Sequence[str], base: str | None = None) -> FileOrder:
        """`paths` (a Glob's or a grep's files; relative ones from `base`, else from the repository's folder) in
        the order the indexed repository holding them ranks them for `query`; unchanged when none holds them."""
        return self.send(Requests.rank_files(query, paths, base))

    def compact(self, messages: Sequence[JSON], **options: Unpack[CompactOptions]) -> Compaction:
        """The history to send: the oldest tool results replaced by placeholders (each stored: its ref gives it
        back), in steps of at least `clear_at_least` tokens so the prompt cache keeps hitting between them."""
        return self.send(Requests.compact(messages, **options))

    def claude_code_hook(self, payload: JSON, **options: Unpack[HookOptions]) -> JSON:
        """Claude Code's PostToolUse hook answered by the service: the JSON the command hook would print, or {}."""
        return self.send(Requests.claude_code_hook(payload, **options))

    def session(self, session_id: str) -> SessionReport:
        """One agent session's reads, token curve and repeated-read rate."""
        return self.send(Requests.session(session_id))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
