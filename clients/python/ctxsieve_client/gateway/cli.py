"""`ctxsieve gateway --config FILE` (or `ctxsieve-gateway` from the light client package).

stdio by default; `--http` serves streamable HTTP at `/mcp`, bound to 127.0.0.1 unless `--host` says otherwise.
Over HTTP a request whose `Origin` or `Host` is not this server's is refused (DNS rebinding), and beyond
loopback every request needs `Authorization: Bearer <key>` (the `--api-key` / `CTXSIEVE_API_KEY` key, which is
also the key the gateway presents to the ctxsieve service).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import logging
import os
import sys
import warnings
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

from ..client import AsyncClient
from ..setup.state import is_loopback
from .config import ConfigError, load_config

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxsieve gateway", description="one MCP server in front of your MCP servers, "
                                "with ctxsieve between their outputs and the agent")
    add_arguments(p)
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, type=Path, help="the mcpServers JSON (Claude Desktop / Cursor / "
                   "Claude Code), with an optional top-level \"ctxsieve\" object")
    p.add_argument("--url", default=os.environ.get("CTXSIEVE_URL", "http://127.0.0.1:8000"),
                   help="the ctxsieve service (default: the local one, or CTXSIEVE_URL)")
    p.add_argument("--api-key", default=None, help="key for the service and for this gateway's HTTP endpoint "
                   "(default: CTXSIEVE_API_KEY)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    _quiet_logging()
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        sys.stderr.write(f"ctxsieve gateway: bad config: {exc}\n")
        return 2
    key = args.api_key or os.environ.get("CTXSIEVE_API_KEY") or None
    if args.http and not is_loopback(args.host) and not key:
        sys.stderr.write("ctxsieve gateway: --host beyond loopback needs a key (--api-key or CTXSIEVE_API_KEY)\n")
        return 2
    from .server import Gateway  # FastMCP loads only when a gateway runs

    def client(session: str | None, agent: str | None = None) -> AsyncClient:
        return AsyncClient(args.url, api_key=key, session_id=f"gw-{session}" if session else None, timeout=300,
                           agent=agent)

    gateway = Gateway(config, client)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(gateway, args, key))
    return 0


async def _serve(gateway: Any, args: argparse.Namespace, key: str | None) -> None:
    gateway.serving("http" if args.http else "stdio")
    await gateway.start()
    try:
        if not args.http:
            await gateway.mcp.run_stdio_async(show_banner=False)
            return
        import uvicorn

        app = guarded(gateway.mcp.http_app(path="/mcp"), args.host, key)
        sys.stderr.write(f"ctxsieve gateway: serving http://{args.host}:{args.port}/mcp\n")
        server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning"))
        async with anyio.create_task_group() as group:
            group.start_soon(_close_idle_clients, gateway)
            await server.serve()
            group.cancel_scope.cancel()
    finally:
        await gateway.close()


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


def _quiet_logging() -> None:
    """One line per call on stderr, as `ctxsieve gateway: ...`; the libraries' chatter kept to warnings."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ctxsieve gateway: %(message)s"))
    gateway_log = logging.getLogger("ctxsieve.gateway")
    gateway_log.handlers[:] = [handler]
    gateway_log.setLevel(logging.INFO)
    gateway_log.propagate = False
    # FastMCP's own log (a banner, start-up lines, a traceback per failed upstream call) is off: the gateway
    # says each failure once, in its own line, and the agent gets it as the call's error.
    os.environ.setdefault("FASTMCP_LOG_ENABLED", "false")
    os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
    for noisy in ("fastmcp", "mcp", "httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", message=r".*(deprecated|removed) as of 2026-07-28.*")  # old-era relays
