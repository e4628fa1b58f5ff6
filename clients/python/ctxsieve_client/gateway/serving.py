"""The gateway serving, over stdio or streamable HTTP, until its client goes or a stop signal comes.

Over HTTP a request whose `Origin` or `Host` is not this server's is refused (DNS rebinding), and beyond loopback
every request needs `Authorization: Bearer <key>` (the `--api-key` / `CTXSIEVE_API_KEY` key, which is also the key
the gateway presents to the ctxsieve service).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from ..client import AsyncClient
from ..processes import STOP_SIGNALS, end_by
from ..setup.state import is_loopback
from .config import GatewayConfig
from .server import Gateway

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def serve(config: GatewayConfig, args: argparse.Namespace, key: str | None) -> int:
    def client(session: str | None, agent: str | None = None) -> AsyncClient:
        return AsyncClient(args.url, api_key=key, session_id=f"gw-{session}" if session else None, timeout=300,
                           agent=agent)

    gateway = Gateway(config, client)
    with contextlib.suppress(KeyboardInterrupt):
        stopped = asyncio.run(_serve(gateway, args, key))
        if stopped is not None:
            end_by(stopped)
    return 0


async def _serve(gateway: Any, args: argparse.Namespace, key: str | None) -> int | None:
    """Serve until the client goes (stdio's end) or a stop signal comes (`_Stop`); either way every upstream is
    closed before the gateway ends. Returns the signal that stopped uvicorn, if one did."""
    stop = _Stop(gateway, quick=not args.http)
    gateway.serving("http" if args.http else "stdio")
    stop.listen()
    try:
        await gateway.start()
        if not args.http:
            await gateway.mcp.run_stdio_async(show_banner=False)
            return None
        import uvicorn

        app = guarded(gateway.mcp.http_app(path="/mcp"), args.host, key)
        sys.stderr.write(f"ctxsieve gateway: serving http://{args.host}:{args.port}/mcp\n")
        server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning"))
        stop.server = server
        async with anyio.create_task_group() as group:
            group.start_soon(_close_idle_clients, gateway)
            await server.serve()
            group.cancel_scope.cancel()
        return stop.signal
    finally:
        if stop.ending is not None:  # a signal came (its end may race stdin's): that end, never cancelled
            with anyio.CancelScope(shield=True):
                await asyncio.shield(stop.ending)
        await stop.close()


class _Stop:
    """SIGINT, SIGTERM and SIGHUP end the gateway as its client's end would: its upstreams closed first.

    An agent stopping a stdio server does not wait long: Claude Code sends SIGINT, SIGTERM 100 ms later and
    SIGKILL 400 ms after that; Codex SIGTERMs its process group and kills its own child at once (which the waiting
    parent of cli.py's `_keep` takes). Python's defaults would end the gateway at once (SIGTERM) or leave it
    blocked reading stdin (SIGINT, and no cancellation ends that read), its upstream servers left running. So a signal
    closes the upstreams then and there, over stdio (`quick`) on the agent's clock (`close_quickly`), and ends the
    process by that signal; over HTTP, uvicorn's shutdown runs first and the SDK's own waits apply."""

    GRACE_S, TERM_S = 0.05, 0.2  # an upstream's stdin closed; SIGTERM to its group; SIGKILL: 0.25 s in all
    CLOSE_S = 0.3  # then any server still running is killed (`kill_leftover_servers`) and the gateway ends

    def __init__(self, gateway: Any, *, quick: bool) -> None:
        self.gateway = gateway
        self.quick = quick
        self.signal: int | None = None
        self.server: Any = None  # uvicorn's, while it serves: told to shut down rather than cancelled
        self._closing: asyncio.Future[None] | None = None
        self.ending: asyncio.Task[None] | None = None  # closing on a signal, then ending the process

    def listen(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, self.received, signum)

    def received(self, signum: int) -> None:
        if self.signal is not None:  # the agent's next signal while the upstreams close: they are closing
            return
        self.signal = signum
        if self.server is not None:
            self.server.should_exit = True
            return
        if self.quick:
            from .upstreams import close_quickly

            close_quickly(self.GRACE_S, self.TERM_S)
        self.ending = asyncio.get_running_loop().create_task(self._close_and_end(signum))

    async def close(self) -> None:
        """The end of serving: the gateway closed, shielded from the cancellation that may have ended it."""
        with anyio.CancelScope(shield=True):
            await asyncio.shield(self._closed())

    def _closed(self) -> asyncio.Future[None]:
        """The gateway's close, begun once, whoever asks first (a signal, or the end of serving)."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self.gateway.close())
        return self._closing

    async def _close_and_end(self, signum: int) -> None:
        from .upstreams import kill_leftover_servers

        try:
            with contextlib.suppress(Exception):  # the time is up (what still runs is killed), or a close failed
                await asyncio.wait_for(asyncio.shield(self._closed()), self.CLOSE_S if self.quick else None)
        finally:  # whatever happened, the servers, the log folder and the process end
            kill_leftover_servers()
            self.gateway.logs.remove()
            end_by(signum)


async def _close_idle_clients(gateway: Any) -> None:
    """2026-07-28 clients over HTTP never say they have gone: their upstream sessions close after client_idle_s."""
    every = min(60.0, gateway.options.client_idle_s / 4)
    while True:
        await anyio.sleep(every)
        await gateway.close_idle()


def guarded(app: ASGI, host: str, key: str | None) -> ASGI:
    """Refuse what DNS rebinding or a stranger would send: a foreign Origin or Host, or (beyond loopback, or
    whenever a key is set) a missing or wrong bearer key. The lifespan passes untouched."""
    hosts = {host, *LOOPBACK_NAMES} if is_loopback(host) else {host}
    any_host = host in ("0.0.0.0", "::")  # bound everywhere: the Host is whatever name reached it
    need_key = key is not None

    async def guard(scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
                    ) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = headers.get("origin")
        host_header = urlsplit(f"//{headers.get('host', '')}").hostname or ""
        allowed = hosts | {host_header} if any_host else hosts
        if host_header not in allowed or (origin and urlsplit(origin).hostname not in allowed):
            await _refuse(send, 403, "forbidden: the Origin or Host is not this gateway's")
            return
        given = headers.get("authorization", "")
        if need_key and not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
            await _refuse(send, 401, "unauthorized: send Authorization: Bearer <key>")
            return
        await app(scope, receive, send)

    return guard


async def _refuse(send: Callable[[Any], Awaitable[None]], status: int, message: str) -> None:
    body = f'{{"error": {{"type": "{message.split(":")[0]}", "message": "{message}"}}}}'.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
