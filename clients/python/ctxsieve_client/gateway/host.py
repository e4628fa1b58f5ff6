"""What the gateway's middleware (middleware.py) and its own tools (own_tools.py) use of the gateway, as a protocol:
they are written against it and `server.Gateway` implements it, so no module of the gateway imports back the one
that builds it (server.py imports them; they import only this)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Protocol

import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools.base import Tool, ToolResult

from ..client import AsyncClient
from .catalog import Catalog, Listed
from .config import Options


class Host(Protocol):
    options: Options
    catalog: Catalog
    mcp: FastMCP[Any]

    def request(self) -> contextlib.AbstractContextManager[None]: ...

    def session(self, ctx: Context | None) -> str | None: ...

    def client(self, session: str | None) -> AsyncClient: ...

    async def retry_failed(self) -> None: ...

    async def learn(self, name: str, definitions: list[dict[str, Any]]) -> None: ...

    def listed(self, tools: Sequence[Tool], session: str | None) -> list[Tool]: ...

    async def call(self, context: MiddlewareContext[mt.CallToolRequestParams],
                   call_next: CallNext[mt.CallToolRequestParams, ToolResult]) -> ToolResult: ...

    async def find(self, query: str, k: int, session: str | None) -> dict[str, Any]: ...

    def failures(self) -> str: ...

    async def known(self, name: str) -> Listed | None: ...
