"""The gateway's own tools: `filter_ref` and `fetch_ref` (a stored output again, through the ctxsieve client of
the caller's session), `find_tools` (tool search over every upstream's tools) and `call_tool` (any upstream tool
by name). A ctxsieve failure comes back as the tool's error, said with its cause.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

import httpx
import mcp_types as mt
from fastmcp import Context
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import ToolResult
from pydantic import Field

from ..client import AsyncClient, CtxsieveError
from ..names import OWN_TOOLS
from ..wrap import render_result
from .host import Host

F = TypeVar("F", bound=Callable[..., Any])


def register(gateway: Host) -> None:
    """The own tools on the gateway's FastMCP server (which of them a listing shows: `Host.listed`)."""
    def tool(**kwargs: Any) -> Callable[[F], F]:  # text answers only: no structured copy of the same text
        return cast(Callable[[F], F], gateway.mcp.tool(output_schema=None, **kwargs))

    @tool(name="filter_ref", description="Filter a stored output (by its ref) again with a new query.")
    async def filter_ref(ref: str, query: str, k: int = 5, max_tokens: int | None = None,
                         ctx: Context | None = None) -> str:
        result = await _own(gateway, ctx, lambda c: c.refilter(ref, query, k=k, max_tokens=max_tokens,
                                                               placeholder="tools"))
        return render_result(result)

    @tool(name="fetch_ref", description="Fetch a stored output whole, a character range (start, end), "
                                        "chunk N with `window` neighbours each side, or lines \"A-B\" (a file's "
                                        "own line numbers).")
    async def fetch_ref(ref: str, start: int | None = None, end: int | None = None, chunk: int | None = None,
                        window: int = 0, lines: str | None = None, ctx: Context | None = None) -> str:
        part = await _own(gateway, ctx, lambda c: c.fetch_ref(ref, start=start, end=end, chunk=chunk, lines=lines,
                                                              window=window if chunk is not None else None))
        return str(part.text)

    @tool(name="find_tools", description="Find the tools for a step among every tool of the connected "
                                         "servers; call a found tool by its name or through call_tool.")
    async def find_tools(query: str, k: Annotated[int, Field(ge=1, le=50)] | None = None,
                         ctx: Context | None = None) -> str:
        session = gateway.session(ctx)
        answer = await _own(gateway, ctx, lambda _: gateway.find(query, k or gateway.options.find_k, session))
        if gateway.options.notify_list_changed and ctx is not None and answer["tools"]:
            await ctx.send_notification(mt.ToolListChangedNotification())
        return json.dumps(answer, ensure_ascii=False)

    @tool(name="call_tool", description="Call any tool of the connected servers by name (see find_tools).")
    async def call_tool(name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        if name in OWN_TOOLS:
            raise ToolError(f"call {name} directly")
        if name not in gateway.catalog.tools:
            raise ToolError(f"unknown tool {name!r}" + gateway.failures())
        return await gateway.mcp.call_tool(name, arguments or {})


async def _own(gateway: Host, ctx: Context | None, call: Callable[[AsyncClient], Any]) -> Any:
    """One call to ctxsieve with the client of the caller's session; its failure as the tool's error."""
    try:
        return await call(gateway.client(gateway.session(ctx)))
    except CtxsieveError as exc:
        raise ToolError(f"ctxsieve: {exc.status} {exc.type}: {exc.message}") from exc
    except (httpx.HTTPError, OSError) as exc:
        raise ToolError(f"the ctxsieve service did not answer ({type(exc).__name__}: {exc})") from exc
