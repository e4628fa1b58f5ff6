"""How to get more of what a response left out: the facts as a structure, and the one-line placeholder that says
them in the words of the surface that asked.

The core knows what was shown and what was held back (a ref, its chunk and token counts, the call that produced
it); it does not know whether the reader can send HTTP requests or call tools. Each request names a style:
- `http`: the routes of API.md (`POST /v1/refs/{ref}/filter`, `GET /v1/refs/{ref}`);
- `tools`: the tool calls ctxsieve's MCP surfaces, middleware and hook give a model (`filter_ref(...)`,
  `fetch_ref(...)`, `query_collection(...)`), so a model is never told to use something it cannot call.
Rendering is a pure function of the facts and the style: the same request gives the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .usage import Usage

Style = Literal["http", "tools"]
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
        if self.collection is not None:
            return _collection_line(self, self.collection, style)
        if self.pages is not None:
            return _search_line(self, self.pages, style)
        return _ref_line(self, style)


def more_of(ref: str | None, usage: Usage, rerun: Rerun | None, *, shown: Shown = "some",
            min_score: float | None = None, pages: int | None = None, collection: str | None = None,
            lines: int | None = None) -> More:
    """The facts of a response's usage, as every route that holds something back reports them."""
    return More(ref=ref, chunks_shown=usage.chunks_returned, chunks_total=usage.chunks_total,
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, rerun=rerun, shown=shown,
                min_score=min_score if shown == "none" else None, pages=pages, collection=collection, lines=lines)


def format_call(tool: str, args: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{tool}({inner})"


def _ref_line(more: More, style: Style) -> str:
    """One line the agent can keep instead of the raw output; every omission says how to recover it."""
    ref = more.ref or ""
    if more.shown == "whole":
        head = f"whole output shown, {more.input_tokens} tokens"
    elif more.shown == "cleared":
        head = f"tool output cleared from the context, {more.input_tokens} tokens kept whole"
    elif more.shown == "outline":
        head = (f"outline: first lines of {more.chunks_shown} of {more.chunks_total} chunks shown, "
                f"{more.input_tokens} -> {more.output_tokens} tokens")
    elif more.shown == "none":
        head = f"no chunk of {more.chunks_total} reached min_score {more.min_score}, {more.input_tokens} tokens held"
    else:
        head = (f"{more.chunks_shown} of {more.chunks_total} chunks shown, "
                f"{more.input_tokens} -> {more.output_tokens} tokens")
    if style == "tools":
        ways = [f"more: {format_call('filter_ref', {'ref': ref, 'query': '...'})}",
                f"whole: {format_call('fetch_ref', {'ref': ref})}"]
        part = f"a part: fetch_ref(ref={json.dumps(ref)}, chunk=N, window=1)"  # N: an outline entry's number
    else:
        ways = [f"more: POST /v1/refs/{ref}/filter", f"whole: GET /v1/refs/{ref}"]
        part = f"a part: GET /v1/refs/{ref}?chunk=N&window=1"
    if more.shown == "outline":  # the outline's entries are numbered #N: the agent asks for the parts it wants
        ways.insert(0, part)
    if more.lines is not None and more.shown == "some":  # code: another definition or any lines, by number
        ways.insert(1, f"lines A-B of {more.lines}: " + (f"fetch_ref(ref={json.dumps(ref)}, lines=\"A-B\")"
                                                        if style == "tools" else f"GET /v1/refs/{ref}?lines=A-B"))
    parts = [f"[ctxsieve {ref}: {head}", *ways]
    if more.rerun is not None:
        parts.append(f"re-run: {format_call(more.rerun.tool, more.rerun.args)}")
    return "; ".join(parts) + "]"


def _search_line(more: More, pages: int, style: Style) -> str:
    rerun = format_call(more.rerun.tool, more.rerun.args) if more.rerun else "the search"
    if pages == 0:
        return f"[ctxsieve search: no results; re-run: {rerun}]"
    if style == "tools":
        ways = (f"more: {format_call('filter_ref', {'ref': '<result ref>', 'query': '...'})}; "
                f"whole page: {format_call('fetch_ref', {'ref': '<result ref>'})}")
    else:
        ways = "more: POST /v1/refs/<result ref>/filter; whole page: GET /v1/refs/<result ref>"
    return (f"[ctxsieve search: {more.chunks_shown} of {more.chunks_total} chunks from {pages} pages shown, "
            f"{more.input_tokens} -> {more.output_tokens} tokens; {ways}; re-run: {rerun}]")


def _collection_line(more: More, name: str, style: Style) -> str:
    call = format_call("query_collection", {"collection": name, "query": "..."})
    way = call if style == "tools" else f"POST /v1/collections/{name}/query"
    return (f"[ctxsieve collection {name}: {more.chunks_shown} of {more.chunks_total} chunks shown, "
            f"{more.output_tokens} tokens; more: {way} with another query, k or max_tokens]")
