"""The placeholder: one line an agent keeps instead of what was held back, built from the facts of a response's
`more` (what was shown, the ref, the call that produced it) and the words of the reader. Pure and standard-library
only: the service writes its `placeholder` field with it (ctxsieve.indexes.more) and the surfaces write theirs.

- `http` names the routes of API.md; `tools` names ctxsieve's tool calls (`filter_ref(...)`, `fetch_ref(...)`,
  `query_collection(...)`), each as the surface offers it to its model (`Namer`: Claude Code's
  `mcp__ctxsieve__fetch_ref`, a proxied client's prefix).
- Every omission says how to recover it; the same facts and words give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

Style = Literal["http", "tools"]
Namer = Callable[[str], str]  # ctxsieve's tool name -> the name the model is offered it by


def as_is(name: str) -> str:
    return name


def prefixed(prefix: str) -> Namer:
    """The tools of an MCP server as its client names them (`mcp__ctxsieve__` + name)."""
    return lambda name: prefix + name


class Call(Protocol):
    @property
    def tool(self) -> str: ...
    @property
    def args(self) -> Mapping[str, Any]: ...


class Facts(Protocol):
    """A response's `more` (the service's `indexes.more.More`, the client's `models.More`)."""

    @property
    def ref(self) -> str | None: ...
    @property
    def chunks_shown(self) -> int: ...
    @property
    def chunks_total(self) -> int: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def rerun(self) -> Call | None: ...
    @property
    def shown(self) -> str: ...
    @property
    def min_score(self) -> float | None: ...
    @property
    def pages(self) -> int | None: ...
    @property
    def collection(self) -> str | None: ...
    @property
    def lines(self) -> int | None: ...


def format_call(tool: str, args: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{tool}({inner})"


def placeholder_line(more: Facts, style: Style, name: Namer = as_is) -> str:
    if more.collection is not None:
        return _collection_line(more, more.collection, style, name)
    if more.pages is not None:
        return _search_line(more, more.pages, style, name)
    parts = [f"[ctxsieve {more.ref or ''}: {head(more)}", *ref_ways(more, style, name)]
    if more.rerun is not None:
        parts.append(f"re-run: {format_call(more.rerun.tool, more.rerun.args)}")
    return "; ".join(parts) + "]"


def head(more: Facts) -> str:
    """What was shown of how much."""
    counts = f"{more.chunks_shown} of {more.chunks_total} chunks shown, {more.input_tokens} -> " \
             f"{more.output_tokens} tokens"
    if more.shown == "whole":
        return f"whole output shown, {more.input_tokens} tokens"
    if more.shown == "cleared":
        return f"tool output cleared from the context, {more.input_tokens} tokens kept whole"
    if more.shown == "outline":
        return "outline: first lines of " + counts
    if more.shown == "none":
        return f"no chunk of {more.chunks_total} reached min_score {more.min_score}, {more.input_tokens} tokens held"
    return counts


def ref_ways(more: Facts, style: Style, name: Namer = as_is, lines: str | None = None, whole: str = "whole"
             ) -> list[str]:
    """Each way to the rest through the ref: an outline's part by its number, more for a new query, lines by
    number (`lines`: what they are, by default a source file's lines when some of it was shown), the whole."""
    ref = more.ref or ""
    fetch, refilter = name("fetch_ref"), name("filter_ref")
    if lines is None and more.lines is not None and more.shown == "some":
        lines = f"lines A-B of {more.lines}"
    if style == "tools":
        ways = [f"more: {format_call(refilter, {'ref': ref, 'query': '...'})}"]
        part = f"a part: {fetch}(ref={json.dumps(ref)}, chunk=N, window=1)"  # N: an outline entry's number
        by_lines = f"{fetch}(ref={json.dumps(ref)}, lines=\"A-B\")"
        ways.append(f"{whole}: {format_call(fetch, {'ref': ref})}")
    else:
        ways = [f"more: POST /v1/refs/{ref}/filter", f"{whole}: GET /v1/refs/{ref}"]
        part = f"a part: GET /v1/refs/{ref}?chunk=N&window=1"
        by_lines = f"GET /v1/refs/{ref}?lines=A-B"
    if more.shown == "outline":  # the outline's entries are numbered #N: the agent asks for the parts it wants
        ways.insert(0, part)
    if lines is not None:  # code: another definition or any lines, by number
        ways.insert(len(ways) - 1, f"{lines}: {by_lines}")
    return ways


def _search_line(more: Facts, pages: int, style: Style, name: Namer) -> str:
    rerun = format_call(more.rerun.tool, more.rerun.args) if more.rerun else "the search"
    if pages == 0:
        return f"[ctxsieve search: no results; re-run: {rerun}]"
    if style == "tools":
        ways = (f"more: {format_call(name('filter_ref'), {'ref': '<result ref>', 'query': '...'})}; "
                f"whole page: {format_call(name('fetch_ref'), {'ref': '<result ref>'})}")
    else:
        ways = "more: POST /v1/refs/<result ref>/filter; whole page: GET /v1/refs/<result ref>"
    return (f"[ctxsieve search: {more.chunks_shown} of {more.chunks_total} chunks from {pages} pages shown, "
            f"{more.input_tokens} -> {more.output_tokens} tokens; {ways}; re-run: {rerun}]")


def _collection_line(more: Facts, collection: str, style: Style, name: Namer) -> str:
    call = format_call(name("query_collection"), {"collection": collection, "query": "..."})
    way = call if style == "tools" else f"POST /v1/collections/{collection}/query"
    return (f"[ctxsieve collection {collection}: {more.chunks_shown} of {more.chunks_total} chunks shown, "
            f"{more.output_tokens} tokens; more: {way} with another query, k or max_tokens]")
