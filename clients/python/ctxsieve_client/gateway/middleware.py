"""Where the gateway sits in FastMCP: the middleware around every request, listing and upstream call (`Sieve`),
and the transform that lists a server's tools under their exposed names (`Renamer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as mt
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.transforms import GetToolNext, Transform
from fastmcp.tools.base import Tool, ToolResult
from fastmcp.utilities.versions import VersionSpec

from ..names import OWN_TOOLS
from .host import Host


class Sieve(Middleware):
    """Around every request (its client counted as being served), every listing (`Host.listed`) and every
    upstream call (`Host.call`); a call of an own tool goes straight to it."""

    def __init__(self, gateway: Host) -> None:
        self.gateway = gateway

    async def on_request(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        with self.gateway.request():
            return await call_next(context)

    async def on_list_tools(self, context: MiddlewareContext[mt.ListToolsRequest],
                            call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]]) -> Sequence[Tool]:
        await self.gateway.retry_failed()
        return self.gateway.listed(await call_next(context), self.gateway.session(context.fastmcp_context))

    async def on_call_tool(self, context: MiddlewareContext[mt.CallToolRequestParams],
                           call_next: CallNext[mt.CallToolRequestParams, ToolResult]) -> ToolResult:
        if context.message.name in OWN_TOOLS:
            return await call_next(context)
        return await self.gateway.call(context, call_next)


class Renamer(Transform):
    """A server's tools under their exposed names (`server__tool` where a name is shared); each listing that
    passes through here is what the catalog learns the server's tools from."""

    def __init__(self, gateway: Host, server: str) -> None:
        self.gateway = gateway
        self.catalog = gateway.catalog
        self.server = server

    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        await self.gateway.learn(self.server, [
            t.to_mcp_tool().model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
        return [t.model_copy(update={"name": self.catalog.exposed(self.server, t.name)}) for t in tools]

    async def get_tool(self, name: str, call_next: GetToolNext, *, version: VersionSpec | None = None
                       ) -> Tool | None:
        upstream = self.catalog.upstream_of(self.server, name)
        if upstream is None:
            return None if name in self.catalog.tools else await call_next(name, version=version)
        tool = await call_next(upstream, version=version)
        return tool.model_copy(update={"name": name}) if tool is not None else None
