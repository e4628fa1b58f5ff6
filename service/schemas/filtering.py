"""Filtering tool output, refs, and the wrapped tools (search, read)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .common import (
    MAX_DOCUMENTS,
    MAX_K,
    MAX_TOKENS,
    ContentTypeIn,
    DocumentIn,
    MoreOut,
    Placeholder,
    Query,
    SnippetOut,
    SourceSpec,
    Strict,
    Text,
    UsageOut,
)

K_LEFT_OUT = "chunks at most; left out: 5, or for a kind read by lines (code, log, diff, grep) what its budget holds"


class FilterOptions(Strict):
    query: Query | None = Field(None, description="what the agent needs from this output now")
    k: int | None = Field(None, ge=1, le=MAX_K, description=K_LEFT_OUT)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0, description="minimum cosine similarity")
    order: Literal["document", "score"] = "document"
    mode: Literal["fast", "accurate", "outline"] = Field(
        "fast", description="outline: no query needed; each chunk's first line and what it is part of, within "
                            "max_tokens (default 800), numbered so a part can be fetched by chunk")
    is_error: bool = False
    placeholder: Placeholder = "http"


class FilterRequest(FilterOptions):
    content: Text | None = None
    documents: Annotated[list[DocumentIn], Field(min_length=1, max_length=MAX_DOCUMENTS)] | None = None
    content_type: ContentTypeIn = "auto"
    source: SourceSpec | None = None


class RefilterRequest(FilterOptions):
    pass


class MapLineOut(BaseModel):
    line: int = Field(description="1-based line of the file")
    text: str = Field(description="that line as it is (a definition's def/class line)")


class ViewOut(BaseModel):
    """How the kind's snippets are shown to an agent: what a surface needs of the kind, not its name."""

    by_lines: bool = Field(description="snippets are whole lines of the view, each shown under its line range "
                                       "(`── lines A-B · what it is part of ──`)")
    headed: bool = Field(description="with by_lines: every snippet is headed; false: its lines name their own file "
                                     "and line (grep's path:N:), so only a snippet with a context is")
    numbered: bool = Field(description="the view's line N is the source's own line N (false: a rendering of it, "
                                       "as JSON and HTML are)")
class FailureOut(BaseModel):
    test: str = Field(description="the failing test's id (pytest's node id), or empty (a compiler error, a traceback)")
    where: str = Field(description="path:line it failed at, or empty")
    message: str = Field(description="the assertion or error line, verbatim")
    line_start: int = Field(description="1-based first line of the log the failure spans")
    line_end: int


class VerdictOut(BaseModel):
    failures: list[FailureOut] = Field(description="each failure, in the log's order")
    outcome: list[tuple[int, str]] = Field(description="the run's result lines as [line, text] (pytest's "
                                           "`4 failed, 900 passed in 1.2s`)")
    listing: tuple[int, int] | None = Field(None, description="[first, last] lines listing each failure on one "
                                            "(pytest's short test summary), if the log has them")


class FilterResponse(BaseModel):
    ref: str
    snippets: list[SnippetOut]
    placeholder: str
    more: MoreOut
    usage: UsageOut
    passthrough: bool
    content_type: str | None = Field(None, description="the kind the service read the output as (code, json, ...)")
    map: list[MapLineOut] | None = Field(None, description="code: the file's definition lines around what is shown")
    view: ViewOut | None = Field(None, description="how the kind's snippets are shown")
    verdict: VerdictOut | None = Field(None, description="a test or build log cut: each of its failures and its "
                                       "result, whatever the budget showed of their tracebacks")


class SourceOut(BaseModel):
    tool: str
    args: dict[str, Any]
    # the source as the caller sent it: no `cwd` where none was sent
    cwd: str | None = Field(None, exclude_if=lambda cwd: cwd is None,
                            description="the folder the tool ran in; absent when the caller did not say")


class RefResponse(BaseModel):
    ref: str
    text: str = Field(description="the source as sent; with start/end or chunk: that slice of the view")
    documents: list[dict[str, Any]] | None
    source: SourceOut | None
    content_type: str
    tokens: int
    chunks: int
    created_at: str
    view: str | None = Field(None, description="the text chunk offsets point into, when it differs from text")
    start: int | None = None
    end: int | None = None
    line_start: int | None = Field(None, description="with a part asked for: its first 1-based line of the view")
    line_end: int | None = None


# --- wrapped tools ----------------------------------------------------------------------------------

Domain = Annotated[str, Field(min_length=1, max_length=253)]


class SearchRequest(Strict):
    query: Query
    task: Query | None = Field(None, description="what to rank by (default: the query)")
    k: int = Field(5, ge=1, le=MAX_K)
    max_tokens: int | None = Field(1200, ge=1, le=MAX_TOKENS)
    max_results: int = Field(5, ge=1, le=20)
    search_depth: Literal["basic", "advanced"] = "basic"
    topic: Literal["general", "news"] = "general"
    time_range: Literal["day", "week", "month", "year"] | None = None
    include_domains: Annotated[list[Domain], Field(max_length=50)] = Field(default_factory=list)
    exclude_domains: Annotated[list[Domain], Field(max_length=50)] = Field(default_factory=list)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    mode: Literal["fast", "accurate"] = "fast"
    placeholder: Placeholder = "http"


class SearchResultOut(BaseModel):
    url: str
    title: str
    ref: str
    score: float | None = None
    snippets: list[SnippetOut]


class SearchResponse(BaseModel):
    results: list[SearchResultOut]
    placeholder: str
    more: MoreOut
    usage: UsageOut


class ReadRequest(Strict):
    path: Annotated[str, Field(min_length=1, max_length=4096)]
    query: Query
    k: int | None = Field(None, ge=1, le=MAX_K, description=K_LEFT_OUT)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    order: Literal["document", "score"] = "document"
    mode: Literal["fast", "accurate"] = "fast"
    placeholder: Placeholder = "http"


class ReadResponse(FilterResponse):
    path: str
    size: int
    mtime: float
