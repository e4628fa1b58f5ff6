"""`Requests`: the shape of every API call (API.md) as a `Call`, the method, path, parameters and body both
clients send, and the model its answer is read into; with the option types the calls take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypedDict, TypeVar, Unpack
from urllib.parse import quote

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

JSON = dict[str, Any]
FEEDBACK_BATCH = 1000  # uses per request: the service's limit for one bulk feedback request
M = TypeVar("M")
ContentType = Literal["auto", "text", "markdown", "html", "json", "code", "log", "diff", "grep"]
Order = Literal["document", "score"]
Mode = Literal["fast", "accurate", "outline"]  # outline: filter and refilter only
ToolFormat = Literal["openai", "anthropic", "mcp"]
Placeholder = Literal["http", "tools"]  # the placeholder names HTTP routes, or the tool calls filter_ref/fetch_ref


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


class CodeSearchOptions(TypedDict, total=False):
    k: int
    max_tokens: int | None
    path: str | None  # a glob over the repository's relative paths, or a folder
    folder: str | None  # the repository's folder: registered and indexed on first use when the name is new
    windows: bool  # a hit may be shown around the line the query points at (this client's default: it reads them)


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
    def index_repo(name: str, path: str) -> Call[RepoInfo]:
        return Call("PUT", f"/v1/repos/{quote(name)}", RepoInfo, body={"path": path})

    @staticmethod
    def sync_repo(name: str) -> Call[RepoInfo]:
        return Call("POST", f"/v1/repos/{quote(name)}/sync", RepoInfo)

    @staticmethod
    def repo(name: str) -> Call[RepoInfo]:
        return Call("GET", f"/v1/repos/{quote(name)}", RepoInfo)

    @staticmethod
    def repos() -> Call[RepoList]:
        return Call("GET", "/v1/repos", RepoList)

    @staticmethod
    def delete_repo(name: str) -> Call[JSON]:
        return Call("DELETE", f"/v1/repos/{quote(name)}", dict)

    @staticmethod
    def search_code(name: str, query: str, **options: Unpack[CodeSearchOptions]) -> Call[CodeSearchResult]:
        # `windows` unless said otherwise: this client numbers a hit's text from its shown_start_line, so the
        # service may show a hit around the line a query points at
        return Call("POST", f"/v1/repos/{quote(name)}/search", CodeSearchResult,
                    body=_present(query=query, **{"windows": True, **options}))

    @staticmethod
    def rank_files(query: str, paths: Sequence[str], base: str | None = None) -> Call[FileOrder]:
        return Call("POST", "/v1/repos/rank-files", FileOrder, body=_present(query=query, paths=list(paths), base=base))

    @staticmethod
    def compact(messages: Sequence[JSON], **options: Unpack[CompactOptions]) -> Call[Compaction]:
        return Call("POST", "/v1/context/compact", Compaction, body=_present(messages=list(messages), **options))

    @staticmethod
    def claude_code_hook(payload: JSON, **options: Unpack[HookOptions]) -> Call[JSON]:
        return Call("POST", "/v1/hooks/claude-code", dict, params=_present(**options), body=payload)

    @staticmethod
    def session(session_id: str) -> Call[SessionReport]:
        return Call("GET", f"/v1/sessions/{quote(session_id)}", SessionReport)

