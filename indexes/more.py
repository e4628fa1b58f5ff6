"""How to get more of what a response left out: the facts as a structure, and the one-line placeholder that says
them in the words of the surface that asked.

The core knows what was shown and what was held back (a ref, its chunk and token counts, the call that produced
it); it does not know whether the reader can send HTTP requests or call tools. Each request names a style:
- `http`: the routes of API.md (`POST /v1/refs/{ref}/filter`, `GET /v1/refs/{ref}`);
- `tools`: the tool calls ctxsieve's MCP surfaces, middleware and hook give a model (`filter_ref(...)`,
  `fetch_ref(...)`, `query_collection(...)`), so a model is never told to use something it cannot call.
Rendering is a pure function of the facts and the style, written once for the service and the surfaces
(ctxsieve_client.placeholder): the same request gives the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxsieve_client.placeholder import Style as Style
from ctxsieve_client.placeholder import placeholder_line

from .usage import Usage

STYLES: tuple[Style, ...] = ("http", "tools")
# none: no chunk reached min_score; outline: first lines; cleared: a compacted history's tool result
Shown = Literal["some", "whole", "none", "outline", "cleared"]
_LAST_PLACEHOLDER = re.compile(r"\[ctxsieve (src_[0-9a-f]{8,56}): [^\n]*\]\s*\Z")


def cut_from(text: str) -> str | None:
    """The ref a surface's cut names when the text is one (snippets, then a placeholder as its last line): the
    output the cut was taken from, stored whole under that ref."""
    found = _LAST_PLACEHOLDER.search(text[-4000:])
    return found.group(1) if found else None


@dataclass(frozen=True, kw_only=True)
class Rerun:
    """The call that produced an output: re-running it gets the output again from its origin."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class More:
    ref: str | None  # None: a search (one ref per page) or a collection query
    chunks_shown: int
    chunks_total: int
    input_tokens: int
    output_tokens: int
    rerun: Rerun | None = None
    shown: Shown = "some"
    min_score: float | None = None  # with shown "none": the threshold nothing reached
    pages: int | None = None  # a search: how many pages were stored
    collection: str | None = None  # a collection query: its name
    lines: int | None = None  # source code: the file's lines (a part is asked for by line range)

    def placeholder(self, style: Style) -> str:
        """The line in the style asked for, as every surface writes it (ctxsieve_client.placeholder)."""
        return placeholder_line(self, style)


def more_of(ref: str | None, usage: Usage, rerun: Rerun | None, *, shown: Shown = "some",
            min_score: float | None = None, pages: int | None = None, collection: str | None = None,
            lines: int | None = None) -> More:
    """The facts of a response's usage, as every route that holds something back reports them."""
    return More(ref=ref, chunks_shown=usage.chunks_returned, chunks_total=usage.chunks_total,
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, rerun=rerun, shown=shown,
                min_score=min_score if shown == "none" else None, pages=pages, collection=collection, lines=lines)
