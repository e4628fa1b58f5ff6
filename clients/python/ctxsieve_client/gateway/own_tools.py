"""The gateway's own tools: the ref tools (`filter_ref` and `fetch_ref`: a stored output again; `search_code`: the
repository around the gateway's working folder; each through the ctxsieve client of the caller's session), listed
whether tool search is on or off, and with it on, `find_tools` (tool search over every upstream's tools) and
`call_tool` (any upstream tool by name). A ctxsieve failure comes back as the tool's error, said with its cause.
"""

from __future__ import annotations

import inspect
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
from ..fitting import fit_answer, reading_of
from ..names import OWN_TOOLS
from ..ref_tools import REF_TOOLS, RefTool, as_function
from .host import Host

F = TypeVar("F", bound=Callable[..., Any])


def register(gateway: Host) -> None:
    """The own tools on the gateway's FastMCP server (which of them a listing shows: `Host.listed`)."""
    def tool(**kwargs: Any) -> Callable[[F], F]:  # text answers only: no structured copy of the same text
        return cast(Callable[[F], F], gateway.mcp.tool(output_schema=None, **kwargs))

    for ref_tool in REF_TOOLS:
        tool(name=ref_tool.name, description=ref_tool.description)(_ref_tool(gateway, ref_tool))

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
        if await gateway.known(name) is None:
            raise ToolError(f"unknown tool {name!r}" + gateway.failures())
        return await gateway.mcp.call_tool(name, arguments or {})


def _ref_tool(gateway: Host, ref_tool: RefTool) -> Callable[..., Any]:
    """A ref tool, answered with the ctxsieve client of the caller's session."""
    async def run(ctx: Context | None = None, **arguments: Any) -> str:
        answer = await _own(gateway, ctx, lambda c: c.send(ref_tool.call(arguments)))
        reading = reading_of(answer)  # a fetch over what an MCP result shows: the log's failures, to show first
        return fit_answer(answer, ref_tool.answer(answer),
                          await _own(gateway, ctx, lambda c: c.send(reading)) if reading is not None else None)

    return as_function(ref_tool, run, _CONTEXT)


_CONTEXT = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context | None)


async def _own(gateway: Host, ctx: Context | None, call: Callable[[AsyncClient], Any]) -> Any:
    """One call to ctxsieve with the client of the caller's session; its failure as the tool's error."""
    try:
        return await call(gateway.client(gateway.session(ctx)))
    except CtxsieveError as exc:
        raise ToolError(f"ctxsieve: {exc.status} {exc.type}: {exc.message}") from exc
    except (httpx.HTTPError, OSError) as exc:
        raise ToolError(f"the ctxsieve service did not answer ({type(exc).__name__}: {exc})") from exc
