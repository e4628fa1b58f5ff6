"""`ctxsieve-mcp` (and `ctxsieve mcp`): its flags, parsed without importing the MCP SDK, which only serving needs."""

from __future__ import annotations

import argparse
import os


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", default=os.environ.get("CTXSIEVE_URL", "http://127.0.0.1:8000"),
                   help="the running ctxsieve service")
    p.add_argument("--api-key", default=os.environ.get("CTXSIEVE_API_KEY"))
    p.add_argument("--session-id", default=None, help="group this MCP client's reads into one ctxsieve session")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--check", action="store_true", help="only check that it can serve (the MCP SDK is installed)")


def run(args: argparse.Namespace) -> int:
    try:
        from .mcp_server import run as serve
    except ImportError as exc:  # the light client without its [mcp] extra
        raise SystemExit(f"ctxsieve-mcp: {exc}; install 'ctxsieve-client[mcp]'") from exc
    if args.check:
        return 0

    serve(args.url, args.api_key, args.session_id, args.http, args.host, args.port)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ctxsieve-mcp", description="ctxsieve's tools for any MCP client")
    add_arguments(p)
    return run(p.parse_args(argv))
