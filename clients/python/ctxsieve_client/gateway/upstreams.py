"""The user's MCP servers behind the gateway: one upstream session per server for each client connection.

FastMCP's proxy relays tools, resources, prompts, sampling, elicitation, roots, logging and progress; what is
ours here is the session strategy. Each client connection gets its own upstream clients (a stdio server is
started for it), so one client's roots, log level and subscriptions never reach another; they close with the
connection. A client whose server died is dropped, so the next call starts the server again. A stdio server's
stderr goes to a log file of its own, whose tail names what went wrong.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from fastmcp.client.transports import ClientTransport, SSETransport, StdioTransport, StreamableHttpTransport
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.proxy import ProxyClient, ProxyProvider, StatefulProxyClient

from .config import Upstream

log = logging.getLogger("ctxsieve.gateway")
STDERR_TAIL = 1500  # characters of a server's stderr quoted in an error


class UpstreamServer:
    """One configured server: its transport recipe, its per-connection clients and its stderr log."""

    def __init__(self, upstream: Upstream, logs: Path,
                 on_message: Callable[[Any, Any], Awaitable[None]] | None = None) -> None:
        self.upstream = upstream
        self.name = upstream.name
        self.log_path = logs / f"{upstream.name}.stderr.log"
        self._on_message = on_message
        self._clients: dict[Any, ProxyClient[Any]] = {}
        self.provider = ProxyProvider(self.client)  # a call resolves its tool from the last listing

    def transport(self) -> ClientTransport:
        u = self.upstream
        if u.transport == "stdio":
            assert u.command is not None
            return StdioTransport(u.command, list(u.args), env=dict(u.env) or None, cwd=u.cwd, keep_alive=False,
                                  log_file=self.log_path)
        assert u.url is not None
        if u.transport == "sse":
            return SSETransport(u.url, headers=dict(u.headers) or None)
        return StreamableHttpTransport(u.url, headers=dict(u.headers) or None)

    def new_client(self) -> ProxyClient[Any]:
        made: list[ProxyClient[Any]] = []

        async def on_message(message: Any) -> None:  # the handler learns which client heard the message
            if self._on_message is not None and made:
                await self._on_message(made[0], message)

        made.append(_Persistent(self.transport(), timeout=self.upstream.options.timeout_s, message_handler=on_message))
        return made[0]

    def client(self) -> ProxyClient[Any]:
        """The client of the current connection (made on its first use, closed when the connection ends)."""
        connection = _connection()
        found = self._clients.get(connection)
        if found is not None:
            return found
        made = self.new_client()
        self._clients[connection] = made
        if connection is not None:
            connection.exit_stack.push_async_callback(self._close, connection)
        return made

    async def forget_current(self) -> None:
        """After a failure: the next call makes a new client (and so starts a stdio server again)."""
        await self._close(_connection())

    async def _close(self, connection: Any) -> None:
        client = self._clients.pop(connection, None)
        if client is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await client._disconnect(force=True)

    async def close(self) -> None:
        for connection in list(self._clients):
            await self._close(connection)

    async def list_tool_definitions(self) -> list[dict[str, Any]]:
        """The server's tools in MCP format, from a session of its own (start-up and list changes)."""
        client = ProxyClient(self.transport(), timeout=self.upstream.options.timeout_s)
        with anyio.fail_after(self.upstream.options.timeout_s):
            async with client:
                tools = await client.list_tools()
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]

    def stderr_tail(self) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_TAIL:].strip()


class _Persistent(StatefulProxyClient[Any]):
    """Kept open across calls of one connection (its `async with` per call does not disconnect it)."""


def _connection() -> Any:
    """The client connection the current request belongs to (None outside a request)."""
    try:
        session = get_context().session
    except RuntimeError:
        return None
    return getattr(session, "_connection", None)


def logs_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="ctxsieve-gateway-"))
