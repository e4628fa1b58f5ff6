"""`Client` and `AsyncClient`: every API call as a typed method (API.md), sharing one request builder.

    CtxsieveError          a non-2xx answer: status, and the envelope's type, message and request_id
                           (retry_after on 429)

Results are the dataclasses of `ctxsieve_client.models`; unknown response fields land in their `extra`.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import httpx

from .models import (
    CollectionInfo,
    CollectionResult,
    Compaction,
    DocumentPage,
    DocumentsAdded,
    FilterResult,
    Model,
    RefContent,
    SearchResult,
    Selection,
    SessionReport,
    ToolsetDetail,
    ToolsetInfo,
)

JSON = dict[str, Any]
FEEDBACK_BATCH = 1000  # uses per request: the service's limit for one bulk feedback request
M = TypeVar("M")
ContentType = Literal["auto", "text", "markdown", "html", "json", "code", "log", "diff", "grep"]
Order = Literal["document", "score"]
Mode = Literal["fast", "accurate", "outline"]  # outline: filter and refilter only
ToolFormat = Literal["openai", "anthropic", "mcp"]
Placeholder = Literal["http", "tools"]  # the placeholder names HTTP routes, or the tool calls filter_ref/fetch_ref


class CtxsieveError(Exception):
    """A non-2xx answer: `status`, and the envelope's `type`, `message` and `request_id`."""

    def __init__(self, status: int, body: Any, retry_after: str | None = None) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.type: str = error.get("type", "http_error")
        self.message: str = error.get("message", str(body))
        self.request_id: str | None = error.get("request_id")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.type}: {self.message} (request {self.request_id})")


@dataclass(frozen=True)
class Call(Generic[M]):
    """One request and the model its answer is read into (None: no body, e.g. DELETE)."""

    method: str
    path: str
    result: type[M] | None
    params: JSON | None = None
    body: JSON | None = None
    session: str | None = None  # this call's X-Session-Id, over the client's own (one client serving many sessions)


def _present(**values: Any) -> JSON:
    """The body or query fields the caller set (None means "the service's default"); sequences as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if v is not None}


def _headers(api_key: str | None, session_id: str | None) -> dict[str, str]:
    headers = {}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    if session_id:
        headers["X-Session-Id"] = session_id
    return headers


def _session_header(call: Call[Any]) -> dict[str, str] | None:
    return {"X-Session-Id": call.session} if call.session else None


def _tls(base_url: str) -> bool:
    """Verify certificates for an https service; for plain http there is no TLS to set up (every request goes to
    a path under the base URL), and httpx builds its default SSL context eagerly, a large part of a short-lived
    process's start (the hook's: `python -m bench.frameworks` times it)."""
    return base_url.lower().startswith("https://")


def _read(response: httpx.Response, call: Call[M]) -> M:
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise CtxsieveError(response.status_code, body, response.headers.get("retry-after"))
    result: Any = body
    if call.result is None:
        result = None
    elif issubclass(call.result, Model):
        result = call.result.from_json(body)
    return typing.cast(M, result)


class FilterOptions(TypedDict, total=False):
    documents: Sequence[JSON]
    content_type: ContentType
    source: JSON
    k: int
    max_tokens: int | None
    min_score: float
    order: Order
    mode: Mode
    is_error: bool
    placeholder: Placeholder


class RefilterOptions(TypedDict, total=False):
    k: int
    max_tokens: int | None
    min_score: float
    order: Order
    mode: Mode
    is_error: bool
    placeholder: Placeholder


class RefPart(TypedDict, total=False):
    start: int | None
    end: int | None
    chunk: int | None
    window: int | None
    lines: str | None  # "A-B": those 1-based lines of the view


class SearchOptions(TypedDict, total=False):
    task: str
    k: int
    max_tokens: int | None
    max_results: int
    search_depth: Literal["basic", "advanced"]
    topic: Literal["general", "news"]
    time_range: str
    include_domains: Sequence[str]
    exclude_domains: Sequence[str]
    min_score: float
    mode: Mode
    placeholder: Placeholder


class ReadOptions(TypedDict, total=False):
    k: int
    max_tokens: int | None
    min_score: float
    order: Order
    mode: Mode
    placeholder: Placeholder


class SelectOptions(TypedDict, total=False):
    k: int
    always: Sequence[str]
    format: ToolFormat
    min_score: float
    max_tokens: int | None
    abstain: bool


class QueryOptions(TypedDict, total=False):
    k: int
    max_tokens: int | None
    min_score: float
    filter: JSON
    placeholder: Placeholder


class CompactOptions(TypedDict, total=False):
    format: Literal["auto", "openai", "anthropic", "responses"]
    trigger_tokens: int
    keep_tool_results: int
    clear_at_least: int
    exclude_tools: Sequence[str]
    clear_tool_inputs: bool
    placeholder: Placeholder


class HookOptions(TypedDict, total=False):
    passthrough_tokens: int
    max_tokens: int


class Requests:
    """The shape of every call; both clients send these. Keyword arguments are API.md's fields."""

    @staticmethod
    def filter(query: str | None, content: str | None = None, **options: Unpack[FilterOptions]
               ) -> Call[FilterResult]:
        return Call("POST", "/v1/filter", FilterResult, body=_present(query=query, content=content, **options))

    @staticmethod
    def refilter(ref: str, query: str | None, **options: Unpack[RefilterOptions]) -> Call[FilterResult]:
        return Call("POST", f"/v1/refs/{quote(ref)}/filter", FilterResult, body=_present(query=query, **options))

    @staticmethod
    def fetch_ref(ref: str, **part: Unpack[RefPart]) -> Call[RefContent]:
        return Call("GET", f"/v1/refs/{quote(ref)}", RefContent, params=_present(**part))

    @staticmethod
    def delete_ref(ref: str) -> Call[None]:
        return Call("DELETE", f"/v1/refs/{quote(ref)}", None)

    @staticmethod
    def search(query: str, **options: Unpack[SearchOptions]) -> Call[SearchResult]:
        return Call("POST", "/v1/search", SearchResult, body=_present(query=query, **options))

    @staticmethod
    def read(path: str, query: str, **options: Unpack[ReadOptions]) -> Call[FilterResult]:
        return Call("POST", "/v1/read", FilterResult, body=_present(path=path, query=query, **options))

    @staticmethod
    def register_toolset(name: str, tools: Sequence[JSON]) -> Call[ToolsetInfo]:
        return Call("PUT", f"/v1/toolsets/{quote(name)}", ToolsetInfo, body={"tools": list(tools)})

    @staticmethod
    def toolset(name: str, format: ToolFormat = "openai") -> Call[ToolsetDetail]:  # noqa: A002 - API.md's name
        return Call("GET", f"/v1/toolsets/{quote(name)}", ToolsetDetail, params={"format": format})

    @staticmethod
    def delete_toolset(name: str) -> Call[JSON]:
        return Call("DELETE", f"/v1/toolsets/{quote(name)}", dict)

    @staticmethod
    def select_tools(query: str, toolsets: Sequence[str], **options: Unpack[SelectOptions]) -> Call[Selection]:
        return Call("POST", "/v1/tools/select", Selection, body=_present(query=query, toolsets=toolsets, **options))

    @staticmethod
    def tools_feedback(query: str, used: Sequence[str], toolsets: Sequence[str]) -> Call[JSON]:
        return Call("POST", "/v1/tools/feedback", dict, body={"query": query, "used": list(used),
                                                              "toolsets": list(toolsets)})

    @staticmethod
    def import_feedback(uses: Sequence[tuple[str, Sequence[str]]], toolsets: Sequence[str]) -> list[Call[JSON]]:
        """Recorded uses as (query, tools used), in requests of at most FEEDBACK_BATCH uses."""
        records = [{"query": query, "used": list(used)} for query, used in uses]
        return [Call("POST", "/v1/tools/feedback", dict,
                     body={"uses": records[i : i + FEEDBACK_BATCH], "toolsets": list(toolsets)})
                for i in range(0, len(records), FEEDBACK_BATCH)]

    @staticmethod
    def create_collection(name: str, description: str = "") -> Call[CollectionInfo]:
        return Call("PUT", f"/v1/collections/{quote(name)}", CollectionInfo, body={"description": description})

    @staticmethod
    def collection(name: str) -> Call[CollectionInfo]:
        return Call("GET", f"/v1/collections/{quote(name)}", CollectionInfo)

    @staticmethod
    def add_documents(name: str, documents: Sequence[JSON]) -> Call[DocumentsAdded]:
        return Call("POST", f"/v1/collections/{quote(name)}/documents", DocumentsAdded,
                    body={"documents": list(documents)})

    @staticmethod
    def list_documents(name: str, offset: int = 0, limit: int = 100) -> Call[DocumentPage]:
        return Call("GET", f"/v1/collections/{quote(name)}/documents", DocumentPage,
                    params={"offset": offset, "limit": limit})

    @staticmethod
    def delete_document(name: str, doc_id: str) -> Call[JSON]:
        return Call("DELETE", f"/v1/collections/{quote(name)}/documents/{quote(doc_id, safe='/')}", dict)

    @staticmethod
    def query_collection(name: str, query: str, **options: Unpack[QueryOptions]) -> Call[CollectionResult]:
        return Call("POST", f"/v1/collections/{quote(name)}/query", CollectionResult,
                    body=_present(query=query, **options))

    @staticmethod
    def compact(messages: Sequence[JSON], **options: Unpack[CompactOptions]) -> Call[Compaction]:
        return Call("POST", "/v1/context/compact", Compaction, body=_present(messages=list(messages), **options))

    @staticmethod
    def claude_code_hook(payload: JSON, **options: Unpack[HookOptions]) -> Call[JSON]:
        return Call("POST", "/v1/hooks/claude-code", dict, params=_present(**options), body=payload)

    @staticmethod
    def session(session_id: str) -> Call[SessionReport]:
        return Call("GET", f"/v1/sessions/{quote(session_id)}", SessionReport)


class Client:
    """`Client("http://127.0.0.1:8000", api_key=None, session_id=None)`: the API as typed methods."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=_headers(api_key, session_id),
                                  timeout=timeout, transport=transport, verify=_tls(base_url))

    def send(self, call: Call[M]) -> M:
        """Send one request built by `Requests`; raises `CtxsieveError` on a non-2xx answer."""
        return _read(self._http.request(call.method, call.path, params=call.params, json=call.body,
                                        headers=_session_header(call)), call)

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


class AsyncClient:
    """The same calls as `Client`, awaitable."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=_headers(api_key, session_id),
                                       timeout=timeout, transport=transport, verify=_tls(base_url))

    async def send(self, call: Call[M]) -> M:
        """Send one request built by `Requests`; raises `CtxsieveError` on a non-2xx answer."""
        return _read(await self._http.request(call.method, call.path, params=call.params, json=call.body,
                                              headers=_session_header(call)), call)

    async def filter(self, query: str | None, content: str | None = None, **options: Unpack[FilterOptions]
                     ) -> FilterResult:
        """See `Client.filter`."""
        return await self.send(Requests.filter(query, content, **options))

    async def refilter(self, ref: str, query: str | None, **options: Unpack[RefilterOptions]) -> FilterResult:
        """See `Client.refilter`."""
        return await self.send(Requests.refilter(ref, query, **options))

    async def fetch_ref(self, ref: str, **part: Unpack[RefPart]) -> RefContent:
        """See `Client.fetch_ref`."""
        return await self.send(Requests.fetch_ref(ref, **part))

    async def delete_ref(self, ref: str) -> None:
        """See `Client.delete_ref`."""
        await self.send(Requests.delete_ref(ref))

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """See `Client.search`."""
        return await self.send(Requests.search(query, **options))

    async def read(self, path: str, query: str, **options: Unpack[ReadOptions]) -> FilterResult:
        """See `Client.read`."""
        return await self.send(Requests.read(path, query, **options))

    async def register_toolset(self, name: str, tools: Sequence[JSON]) -> ToolsetInfo:
        """See `Client.register_toolset`."""
        return await self.send(Requests.register_toolset(name, tools))

    async def toolset(self, name: str, format: ToolFormat = "openai") -> ToolsetDetail:  # noqa: A002
        """See `Client.toolset`."""
        return await self.send(Requests.toolset(name, format))

    async def delete_toolset(self, name: str) -> None:
        """See `Client.delete_toolset`."""
        await self.send(Requests.delete_toolset(name))

    async def select_tools(self, query: str, toolsets: Sequence[str], **options: Unpack[SelectOptions]) -> Selection:
        """See `Client.select_tools`."""
        return await self.send(Requests.select_tools(query, toolsets, **options))

    async def tools_feedback(self, query: str, used: Sequence[str], toolsets: Sequence[str]) -> int:
        """See `Client.tools_feedback`."""
        return int((await self.send(Requests.tools_feedback(query, used, toolsets)))["recorded"])

    async def import_feedback(self, uses: Sequence[tuple[str, Sequence[str]]], toolsets: Sequence[str]) -> int:
        """See `Client.import_feedback`."""
        return sum([int((await self.send(call))["recorded"]) for call in Requests.import_feedback(uses, toolsets)])

    async def create_collection(self, name: str, description: str = "") -> CollectionInfo:
        """See `Client.create_collection`."""
        return await self.send(Requests.create_collection(name, description))

    async def collection(self, name: str) -> CollectionInfo:
        """See `Client.collection`."""
        return await self.send(Requests.collection(name))

    async def add_documents(self, name: str, documents: Sequence[JSON]) -> DocumentsAdded:
        """See `Client.add_documents`."""
        return await self.send(Requests.add_documents(name, documents))

    async def list_documents(self, name: str, offset: int = 0, limit: int = 100) -> DocumentPage:
        """See `Client.list_documents`."""
        return await self.send(Requests.list_documents(name, offset, limit))

    async def delete_document(self, name: str, doc_id: str) -> None:
        """See `Client.delete_document`."""
        await self.send(Requests.delete_document(name, doc_id))

    async def query_collection(self, name: str, query: str, **options: Unpack[QueryOptions]) -> CollectionResult:
        """See `Client.query_collection`."""
        return await self.send(Requests.query_collection(name, query, **options))

    async def compact(self, messages: Sequence[JSON], **options: Unpack[CompactOptions]) -> Compaction:
        """See `Client.compact`."""
        return await self.send(Requests.compact(messages, **options))

    async def claude_code_hook(self, payload: JSON, **options: Unpack[HookOptions]) -> JSON:
        """See `Client.claude_code_hook`."""
        return await self.send(Requests.claude_code_hook(payload, **options))

    async def session(self, session_id: str) -> SessionReport:
        """See `Client.session`."""
        return await self.send(Requests.session(session_id))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
