"""Limits and the pieces every request and response model shares (text fields, snippets, usage, `more`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ctxsieve.ingest.kinds.json import MAX_JSON_DEPTH, json_depth
from ctxsieve_client import names
from ctxsieve_client.languages import is_absolute_folder

NAME_PATTERN = names.NAME_PATTERN  # toolset, collection and repository names: one URL path segment, and a key
MAX_NAME_CHARS = names.MAX_NAME_CHARS
MAX_TEXT_CHARS = 8_000_000
MAX_DOCUMENTS = 1_000
MAX_K = names.MAX_K
MAX_TOKENS = 32_000


def valid_unicode(value: str) -> str:
    """Lone surrogates (legal in JSON escapes, not in UTF-8) cannot be stored or counted."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text contains a lone surrogate; send valid Unicode") from exc
    return value


Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(valid_unicode)]
ShortText = Annotated[str, Field(max_length=2_000), AfterValidator(valid_unicode)]
Query = Annotated[str, Field(min_length=1, max_length=4_000), AfterValidator(valid_unicode)]


def not_blank(value: str) -> str:
    """A search of spaces alone asks for nothing: refused as an empty one is (it had answered "no definition
    matches")."""
    if not value.strip():
        raise ValueError("query is blank: send the words, names or places to search for")
    return value


SearchText = Annotated[Query, AfterValidator(not_blank)]
ContentTypeIn = Literal["auto", "text", "markdown", "html", "json", "code", "log", "diff", "grep"]


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


def no_nul(path: str) -> str:
    if "\0" in path:
        raise ValueError("a path holds no NUL character")
    return path


def absolute_folder(path: str) -> str:
    """Absolute as the client's system writes it (`is_absolute_folder`): a folder of another system is accepted and
    simply holds no indexed repository here."""
    if not is_absolute_folder(path):
        raise ValueError("must be an absolute folder (the one the tool ran in)")
    return path


# the folder a tool ran in: the relative paths of its output are read from it
Folder = Annotated[str, Field(min_length=1, max_length=4_096), AfterValidator(valid_unicode), AfterValidator(no_nul),
                   AfterValidator(absolute_folder)]


class SourceSpec(Strict):
    tool: Annotated[str, Field(min_length=1, max_length=200), AfterValidator(valid_unicode)]
    args: Annotated[dict[str, Any], Shallow] = Field(default_factory=dict)
    cwd: Folder | None = Field(None, description="the folder the tool ran in: a grep's relative paths are read from "
                                                 "it to find the indexed repository holding its files")


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
    line_start: int | None = Field(None, description="the first 1-based line of the view the snippet covers "
                                                     "(null for collection snippets)")
    line_end: int | None = Field(None, description="its last line")


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
    shown: Literal["some", "whole", "none", "outline", "cleared"] = Field(
        description="none: no chunk reached min_score; outline: each chunk's first line (mode outline)")
    min_score: float | None = None
    pages: int | None = None
    collection: str | None = None
    lines: int | None = Field(None, description="source code: the file's lines (ask for a part by line range)")


class Health(BaseModel):
    status: str
    instance: str | None = Field(None, description="the id `ctxsieve service start` gave this server (else null)")


class ServingStages(BaseModel):
    """Which stage serves. A first start serves at once on stand-ins and swaps in the final stages as the
    background preparation makes them; the same request gets the same answer within a stage."""

    dense: str = Field(description="what runs the dense model: onnx-fp32, openvino-bf16, onnx-int8, or torch (the "
                                   "stand-in until the ONNX export is made; the same vectors)")
    first_stage: Literal["static", "none"] = Field(description="fast mode's first stage: the static embedding with "
                                                               "BM25, or BM25 alone (until it is made)")
    pending: list[Literal["dense", "first_stage"]] = Field(description="what the background still prepares")
    background: Literal["done", "running", "failed"]
    background_seconds: float = Field(description="how long the background preparation has run (or ran)")
    detail: str | None = Field(None, description="why the background preparation failed")


class Ready(BaseModel):
    ready: bool
    model: bool
    store: bool
    detail: str | None = None
    stages: ServingStages | None = None


class ErrorBody(BaseModel):
    type: str
    message: str
    request_id: str


class ErrorResponse(BaseModel):
    error: ErrorBody


class Deleted(BaseModel):
    deleted: str
