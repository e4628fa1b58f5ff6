"""Request and response models: the limits live here, and `/openapi.json` is built from them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ctxsieve.ingest.normalize import MAX_JSON_DEPTH, json_depth

NAME_PATTERN = r"^[A-Za-z0-9_.\-]+$"  # toolset and collection names: safe in a URL path and as a key
MAX_TEXT_CHARS = 8_000_000
MAX_DOCUMENTS = 1_000
MAX_K = 50
MAX_TOKENS = 32_000


def _valid_unicode(value: str) -> str:
    """Lone surrogates (legal in JSON escapes, not in UTF-8) cannot be stored or counted."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text contains a lone surrogate; send valid Unicode") from exc
    return value


Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(_valid_unicode)]
ShortText = Annotated[str, Field(max_length=2_000), AfterValidator(_valid_unicode)]
Query = Annotated[str, Field(min_length=1, max_length=4_000), AfterValidator(_valid_unicode)]
ContentTypeIn = Literal["auto", "text", "markdown", "html", "json", "code"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Placeholder = Annotated[Literal["http", "tools"], Field(
    description="whose words the placeholder speaks: `http` names the routes, `tools` the tool calls "
                "(filter_ref, fetch_ref, query_collection) that ctxsieve's MCP surfaces, middleware and hook give")]


def _shallow(value: Any) -> Any:
    """Arguments and metadata are echoed back and stored: refuse nesting no tool call needs."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return value


Shallow = AfterValidator(_shallow)


class DocumentIn(Strict):
    text: Text
    title: ShortText | None = None
    url: ShortText | None = None
    metadata: Annotated[dict[str, Any], Shallow] = Field(default_factory=dict)


class SourceSpec(Strict):
    tool: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_valid_unicode)]
    args: Annotated[dict[str, Any], Shallow] = Field(default_factory=dict)


class FilterOptions(Strict):
    query: Query | None = Field(None, description="what the agent needs from this output now")
    k: int = Field(5, ge=1, le=MAX_K)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0, description="minimum cosine similarity")
    order: Literal["document", "score"] = "document"
    mode: Literal["fast", "accurate"] = "fast"
    is_error: bool = False
    placeholder: Placeholder = "http"


class FilterRequest(FilterOptions):
    content: Text | None = None
    documents: Annotated[list[DocumentIn], Field(min_length=1, max_length=MAX_DOCUMENTS)] | None = None
    content_type: ContentTypeIn = "auto"
    source: SourceSpec | None = None


class RefilterRequest(FilterOptions):
    pass


class SnippetOut(BaseModel):
    id: str
    text: str
    score: float | None
    start: int
    end: int
    tokens: int
    document: int
    title: str | None = None
    url: str | None = None
    context: str = ""


class UsageOut(BaseModel):
    input_tokens: int
    output_tokens: int
    saved_ratio: float
    chunks_total: int
    chunks_returned: int


class RerunOut(BaseModel):
    tool: str
    args: dict[str, Any]


class MoreOut(BaseModel):
    """The placeholder's facts as a structure: what was held back and how to get it."""

    ref: str | None = Field(description="the source (null for a search, one ref per page, or a collection)")
    chunks_shown: int
    chunks_total: int
    input_tokens: int
    output_tokens: int
    rerun: RerunOut | None = Field(description="the call that produced the output, to get it again from its origin")
    shown: Literal["some", "whole", "none"] = Field(description="none: no chunk reached min_score")
    min_score: float | None = None
    pages: int | None = None
    collection: str | None = None


class FilterResponse(BaseModel):
    ref: str
    snippets: list[SnippetOut]
    placeholder: str
    more: MoreOut
    usage: UsageOut
    passthrough: bool


class SourceOut(BaseModel):
    tool: str
    args: dict[str, Any]


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


class Health(BaseModel):
    status: str


class Ready(BaseModel):
    ready: bool
    model: bool
    store: bool
    detail: str | None = None


class ErrorBody(BaseModel):
    type: str
    message: str
    request_id: str


class ErrorResponse(BaseModel):
    error: ErrorBody


# --- tools ------------------------------------------------------------------------------------------

ToolFormat = Literal["openai", "anthropic", "mcp"]
MAX_TOOLS = 10_000


class ToolsetPut(Strict):
    tools: Annotated[list[dict[str, Any]], Field(max_length=MAX_TOOLS), Shallow]


class ToolsetInfo(BaseModel):
    toolset: str
    count: int
    tokens: int = Field(description="tiktoken tokens of all definitions, OpenAI format, compact JSON")


class ToolsetDetail(ToolsetInfo):
    tools: list[dict[str, Any]]


class ToolsetList(BaseModel):
    toolsets: list[ToolsetInfo]


class Deleted(BaseModel):
    deleted: str


ToolsetName = Annotated[str, Field(min_length=1, max_length=64, pattern=NAME_PATTERN)]


class SelectRequest(Strict):
    query: Query
    toolsets: Annotated[list[ToolsetName], Field(min_length=1, max_length=100)]
    k: int = Field(5, ge=1, le=128)
    always: Annotated[list[str], Field(max_length=128)] = Field(default_factory=list)
    format: ToolFormat = "openai"
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    abstain: bool = Field(False, description="answer with only the `always` tools when no tool fits")


class SelectedOut(BaseModel):
    name: str
    toolset: str
    score: float


class SelectUsage(BaseModel):
    tokens_all: int
    tokens_selected: int
    saved_ratio: float


class SelectResponse(BaseModel):
    tools: list[dict[str, Any]]
    selected: list[SelectedOut]
    usage: SelectUsage
    abstained: bool = False
    reason: str | None = Field(None, description="why no tool fits, when abstained")


Used = Annotated[list[str], Field(min_length=1, max_length=64)]
MAX_USES = 1000  # per bulk request (one batch of query embeddings); the client sends larger logs in parts


class RecordedUse(Strict):
    query: Query
    used: Used


class FeedbackRequest(Strict):
    """One use (`query` + `used`) or many (`uses`, e.g. imported from logs), for the named toolsets."""

    query: Query | None = None
    used: Used | None = None
    uses: Annotated[list[RecordedUse], Field(min_length=1, max_length=MAX_USES)] | None = None
    toolsets: Annotated[list[ToolsetName], Field(min_length=1, max_length=100)]

    @model_validator(mode="after")
    def _one_form(self) -> FeedbackRequest:
        single = self.query is not None or self.used is not None
        if single == (self.uses is not None) or (single and (self.query is None or self.used is None)):
            raise ValueError("send either `query` with `used`, or `uses`: a list of {query, used}")
        return self

    def records(self) -> list[tuple[str, list[str]]]:
        if self.uses is not None:
            return [(u.query, u.used) for u in self.uses]
        assert self.query is not None and self.used is not None
        return [(self.query, self.used)]


class FeedbackResponse(BaseModel):
    recorded: int


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
    k: int = Field(5, ge=1, le=MAX_K)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    order: Literal["document", "score"] = "document"
    mode: Literal["fast", "accurate"] = "fast"
    placeholder: Placeholder = "http"


class ReadResponse(FilterResponse):
    path: str
    size: int
    mtime: float


# --- collections ------------------------------------------------------------------------------------



class CollectionPut(Strict):
    description: Annotated[str, Field(max_length=2_000)] = ""


class CollectionDocument(Strict):
    id: Annotated[str, Field(min_length=1, max_length=512), AfterValidator(_valid_unicode)]
    text: Text
    title: ShortText | None = None
    url: ShortText | None = None
    metadata: Annotated[dict[str, Any], Shallow] = Field(default_factory=dict)
    content_type: ContentTypeIn = "auto"


class DocumentsPost(Strict):
    documents: Annotated[list[CollectionDocument], Field(min_length=1, max_length=MAX_DOCUMENTS)]


class DocumentsAdded(BaseModel):
    ids: list[str]
    chunks: int


class CollectionInfo(BaseModel):
    name: str
    description: str
    documents: int
    chunks: int


class DocumentEntry(BaseModel):
    id: str
    hash: str = Field(description="content hash: unchanged documents are skipped on re-ingest")
    chunks: int
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentList(BaseModel):
    documents: list[DocumentEntry]
    offset: int = Field(0, description="where this page starts")
    next_offset: int | None = Field(None, description="pass as ?offset= for the next page; null on the last")


class CollectionList(BaseModel):
    collections: list[CollectionInfo]


class CollectionQuery(Strict):
    query: Query
    k: int = Field(5, ge=1, le=MAX_K)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    filter: Annotated[dict[str, Any], Shallow] = Field(
        default_factory=dict, max_length=32,
        description="metadata key -> condition, all must hold: a value (equal), {\"any\": [..]}, "
                    "{\"gte\"|\"gt\"|\"lte\"|\"lt\": number or ISO date}, {\"not\": condition}")
    placeholder: Placeholder = "http"


class CollectionSnippet(SnippetOut):
    document_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class CollectionQueryResponse(BaseModel):
    snippets: list[CollectionSnippet]
    placeholder: str
    more: MoreOut
    usage: UsageOut
    passthrough: bool = False


# --- sessions ---------------------------------------------------------------------------------------

class SessionRequest(BaseModel):
    route: str
    ref: str | None
    refs: list[str] = Field(default_factory=list)
    input_tokens: int
    output_tokens: int
    repeated: bool
    at: str
    shown: list[tuple[str, int, int]] = Field(default_factory=list, description="(ref, start, end) of each "
                                                                                 "snippet, offsets into the view")


class SessionResponse(BaseModel):
    session: str
    requests: list[SessionRequest]
    repeated_read_rate: float
    warning: str | None


class SessionSummary(BaseModel):
    session: str
    requests: int
    updated: float


class SessionList(BaseModel):
    sessions: list[SessionSummary]
