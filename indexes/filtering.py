"""What a filter takes and returns: the request's parameters, the snippets shown, the file's map, the result."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Literal

from ctxsieve.ingest.kinds import Verdict
from ctxsieve_client.rendering import View, numbered_line

from .more import More
from .usage import Usage

Order = Literal["document", "score"]
# fast and accurate rank chunks against the query; outline needs none: each chunk's first line (indexes.outline)
Mode = Literal["fast", "accurate", "outline"]


@dataclass(frozen=True)
class FilterParams:
    query: str | None
    _: KW_ONLY
    k: int | None = None  # left out: the kind sets it (5 chunks; a kind read by lines, what its budget holds)
    max_tokens: int | None = None
    min_score: float | None = None
    order: Order = "document"
    mode: Mode = "fast"


@dataclass(frozen=True, kw_only=True)
class Snippet:
    id: str
    text: str
    score: float | None
    start: int
    end: int
    tokens: int
    document: int
    title: str | None
    url: str | None
    context: str
    line_start: int  # 1-based lines of the view the snippet covers
    line_end: int


@dataclass(frozen=True)
class MapLine:
    line: int  # 1-based
    text: str  # the line as it is in the file (a definition's `def`/`class` line)

    def shown(self) -> str:
        """As the surfaces print it (ctxsieve_client.rendering), which is what its tokens are counted on."""
        return numbered_line(self.line, self.text)


@dataclass(frozen=True, kw_only=True)
class FilterResult:
    ref: str
    snippets: list[Snippet]
    more: More  # what was held back and how to get it; each surface renders it as its placeholder
    usage: Usage
    passthrough: bool
    content_type: str | None = None  # the view's kind
    view: View | None = None  # how its kind's snippets are shown
    map: list[MapLine] | None = None  # code: the file's definitions around what is shown, with their lines
    verdict: Verdict | None = None  # a log: every failure and the result, so a surface lists each within its limit


@dataclass(frozen=True, kw_only=True)
class PageResult:
    url: str
    title: str
    ref: str
    snippets: list[Snippet]
    score: float | None


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    results: list[PageResult]
    more: More
    usage: Usage
