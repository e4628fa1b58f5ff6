"""Typed results of the ctxsieve API (API.md). Every model keeps fields it does not know in `extra`, so a newer
service never breaks an older client: the contract only ever adds fields."""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar

from .rendering import View

T = TypeVar("T", bound="Model")


@dataclass(kw_only=True)
class Model:
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        """Build from a decoded JSON object: known fields typed (nested models too), the rest in `extra`."""
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        hints = _hints(typing.cast(type, cls))
        known = {k: _convert(hints[k], v) for k, v in data.items() if k in hints and k != "extra"}
        return cls(**known, extra={k: v for k, v in data.items() if k not in hints})


@cache
def _hints(cls: type) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in typing.get_type_hints(cls).items() if k in names}


def _convert(hint: Any, value: Any) -> Any:
    """Nested models (possibly in a list or optional) are built; anything else is kept as decoded."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        lists = [a for a in typing.get_args(hint) if typing.get_origin(a) is list]
        if lists and isinstance(value, list):  # an optional list of models
            return _convert(lists[0], value)
        models = [a for a in typing.get_args(hint) if isinstance(a, type) and dataclasses.is_dataclass(a)]
        return _convert(models[0], value) if models and isinstance(value, dict) else value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(hint)
        return [_convert(item, v) for v in value]
    if isinstance(hint, type) and issubclass(hint, Model):
        return hint.from_json(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, dict):  # a plain fact (View)
        return hint(**{f.name: value[f.name] for f in dataclasses.fields(hint) if f.name in value})
    return value


# --- filtering -------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Snippet(Model):
    """A chunk returned for a query: `text` is `view[start:end]` of the source named by `id`."""

    id: str
    text: str
    score: float | None = None
    start: int = 0
    end: int = 0
    tokens: int = 0
    document: int = 0
    title: str | None = None
    url: str | None = None
    context: str = ""
    line_start: int | None = None  # 1-based lines of the view (real file lines for a file)
    line_end: int | None = None
    document_id: str | None = None  # collection snippets
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Usage(Model):
    input_tokens: int
    output_tokens: int
    saved_ratio: float
    chunks_total: int = 0
    chunks_returned: int = 0


@dataclass(kw_only=True)
class Rerun(Model):
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class More(Model):
    """The placeholder's facts: what was held back, and the call that produced it (`rerun`)."""

    ref: str | None
    chunks_shown: int
    chunks_total: int
    input_tokens: int
    output_tokens: int
    rerun: Rerun | None = None
    shown: str = "some"  # "whole", or "none" when nothing reached min_score
    min_score: float | None = None
    pages: int | None = None
    collection: str | None = None
    lines: int | None = None  # source code: the file's lines


@dataclass(kw_only=True)
class MapLine(Model):
    """A line of a code file's map: a definition's `def`/`class` line and its number."""

    line: int
    text: str


@dataclass(kw_only=True)
class Failure(Model):
    """One failure of a test or build log, as the service's log kind reads it."""

    test: str  # the failing test's id (pytest's node id), or "" (a compiler error, a traceback)
    where: str  # `path:line` it failed at, or ""
    message: str  # the assertion or error line, verbatim
    line_start: int  # the 1-based lines of the log it spans
    line_end: int


@dataclass(kw_only=True)
class Verdict(Model):
    """A log's failures, its result lines (`[line, text]`) and the lines listing each failure on one."""

    failures: list[Failure] = field(default_factory=list)
    outcome: list[list[Any]] = field(default_factory=list)
    listing: list[int] | None = None


@dataclass(kw_only=True)
class FilterResult(Model):
    """What `/v1/filter`, a re-filter and `/v1/read` answer: snippets, the ref and the one-line placeholder."""

    ref: str
    snippets: list[Snippet]
    placeholder: str
    usage: Usage
    more: More | None = None  # None from a service older than the `more` field
    passthrough: bool = False
    content_type: str | None = None  # the kind the service read it as (code: snippets are whole numbered lines)
    map: list[MapLine] | None = None  # code: the file's definition lines around what is shown
    view: View | None = None  # how its kind's snippets are shown (None from a service older than the field)
    verdict: Verdict | None = None  # a log's cut: each of its failures and its result (tracebacks as budget held)
    path: str | None = None  # /v1/read
    size: int | None = None
    mtime: float | None = None


@dataclass(kw_only=True)
class SourceCall(Model):
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    cwd: str | None = None  # the folder the tool ran in, when the caller said


@dataclass(kw_only=True)
class RefContent(Model):
    """A stored source, whole or a part of it (`start`/`end` set when a range or chunk window was asked)."""

    ref: str
    text: str
    content_type: str
    tokens: int
    chunks: int
    created_at: str
    documents: list[dict[str, Any]] | None = None
    source: SourceCall | None = None
    view: str | None = None
    start: int | None = None
    end: int | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass(kw_only=True)
class SearchPage(Model):
    url: str
    title: str
    ref: str
    snippets: list[Snippet]
    score: float | None = None


@dataclass(kw_only=True)
class SearchResult(Model):
    results: list[SearchPage]
    placeholder: str
    usage: Usage
    more: More | None = None


# --- tools -----------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class ToolsetInfo(Model):
    toolset: str
    count: int
    tokens: int


@dataclass(kw_only=True)
class ToolsetDetail(ToolsetInfo):
    """A registered toolset with its definitions in the format asked for."""

    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(kw_only=True)
class Selected(Model):
    name: str
    toolset: str
    score: float


@dataclass(kw_only=True)
class ToolUsage(Model):
    tokens_all: int
    tokens_selected: int
    saved_ratio: float


@dataclass(kw_only=True)
class Selection(Model):
    """`tools` are the definitions in the format asked for, ready to send to the model."""

    tools: list[dict[str, Any]]
    selected: list[Selected]
    usage: ToolUsage
    abstained: bool = False
    reason: str | None = None


# --- collections -----------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class CollectionInfo(Model):
    name: str
    description: str
    documents: int
    chunks: int


@dataclass(kw_only=True)
class DocumentsAdded(Model):
    ids: list[str]
    chunks: int


@dataclass(kw_only=True)
class DocumentEntry(Model):
    id: str
    hash: str
    chunks: int
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class DocumentPage(Model):
    documents: list[DocumentEntry]
    offset: int = 0
    next_offset: int | None = None


@dataclass(kw_only=True)
class CollectionResult(Model):
    snippets: list[Snippet]
    placeholder: str
    usage: Usage
    more: More | None = None
    passthrough: bool = False


# --- sessions --------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class SessionRead(Model):
    route: str
    input_tokens: int
    output_tokens: int
    repeated: bool
    at: str
    ref: str | None = None
    refs: list[str] = field(default_factory=list)
    shown: list[list[Any]] = field(default_factory=list)  # (ref, start, end) of each snippet shown


@dataclass(kw_only=True)
class SessionReport(Model):
    session: str
    requests: list[SessionRead]
    repeated_read_rate: float
    warning: str | None = None
    compactions: int = 0
    cleared_results: int = 0
    cleared_refetched: int = 0
    agent: str | None = None  # the agent its latest read named (X-Agent)


# --- compaction ------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Cleared(Model):
    message: int
    ref: str
    tokens: int
    block: int | None = None
    tool: str | None = None
    input: bool = False


@dataclass(kw_only=True)
class CompactUsage(Model):
    input_tokens: int
    output_tokens: int
    saved_ratio: float


@dataclass(kw_only=True)
class Tuned(Model):
    keep_tool_results: int
    trigger_tokens: int
    reason: str


@dataclass(kw_only=True)
class Compaction(Model):
    """The messages to send (the same format), what was cleared and under which ref, and whether the session's
    thrash signal tuned the options."""

    messages: list[dict[str, Any]]
    compacted: bool
    cleared: list[Cleared]
    usage: CompactUsage
    tuned: Tuned | None = None
    format: str = "openai"


# --- repositories (code search) ----------------------------------------------------------------------------


@dataclass(kw_only=True)
class RepoProgress(Model):
    done: int
    total: int
    dropped: int = 0  # files the sync (under way, else the last) dropped: gone from the folder
    vectors_left: int | None = None  # definitions still without a vector (the repository is `lexical` until none)
    read_paths: list[str] = field(default_factory=list)  # the first five of the files it reads, in path order
    dropped_paths: list[str] = field(default_factory=list)  # the first five of the files it dropped


@dataclass(kw_only=True)
class RepoInfo(Model):
    name: str
    path: str
    files: int
    definitions: int
    state: str  # indexing | lexical | ready
    head: str | None = None
    indexed_at: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    progress: RepoProgress | None = None
    error: str | None = None
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)  # the first five of each why
    vectors_off: bool = False  # the service makes no vectors: `lexical` is the state it stays in


@dataclass(kw_only=True)
class RepoList(Model):
    repos: list[RepoInfo]


@dataclass(kw_only=True)
class FileOrder(Model):
    repo: str | None  # the repository that ranked the paths; None when none holds them (their order unchanged)
    paths: list[str]  # every path sent, the ranked ones first, best first
    ranked: int  # how many lead `paths` by the repository's ranking


@dataclass(kw_only=True)
class CodeHit(Model):
    path: str
    name: str
    kind: str
    start_line: int
    end_line: int
    score: float
    text: str
    shown_end_line: int = 0
    shown_start_line: int = 0  # the first line in `text` (a service before it: start_line)
    matched_lines: list[int] = field(default_factory=list)  # lines not shown where the query's words are most
    within: str = ""  # a Rust trait impl's method: the impl's header (`impl fmt::Display for PathError`)

    @property
    def whole(self) -> bool:
        return self.shown_start_line <= self.start_line and self.shown_end_line >= self.end_line


@dataclass(kw_only=True)
class CodeSearchResult(Model):
    repo: str
    results: list[CodeHit]
    usage: Usage
    state: str
    undefined: list[str] = field(default_factory=list)  # names alone asked for that no definition has
    missing: list[str] = field(default_factory=list)  # files or places asked for alone the repository has nothing at
    elsewhere: list[str] = field(default_factory=list)  # a trace's frames whose line is not in the definition they name
    by_meaning: bool = False  # no definition has a word or name of the query: the nearest by meaning alone
    vectors_off: bool = False  # the service makes no vectors: state `lexical` is how it always ranks
    foreign_words: bool = False  # words in Chinese, Japanese or Korean no definition holds: read by meaning (ready)
    outside_path: list[str] = field(default_factory=list)  # of `undefined`, names defined outside the `path` asked
    listing: bool = False  # a query of file paths alone: their definitions in the files' order, not ranked
    between: list[str] = field(default_factory=list)  # places asked for alone whose line is in no definition
    absent: list[str] = field(default_factory=list)  # words of a short search no definition holds in any form
