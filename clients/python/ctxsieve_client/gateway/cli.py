"""`ctxsieve gateway --config FILE` (or `ctxsieve-gateway` from the light client package): its flags, and over
stdio the process the agent starts, which only waits for the gateway (`_keep`). stdio by default; `--http` serves
streamable HTTP at `/mcp`, bound to 127.0.0.1 unless `--host` says otherwise (serving.py).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

from ..processes import STOP_SIGNALS, end_by, waited
from ..setup.state import is_loopback
from .config import ConfigError, load_config

KEPT = "CTXSIEVE_GATEWAY_KEPT"  # set in the gateway a waiting parent started (`_keep`)


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
    if not args.http and os.environ.get(KEPT) != "1":
        return _keep(args, key)
    from .serving import serve  # FastMCP, anyio and httpx load only in the process that serves

    return serve(config, args, key)


def _keep(args: argparse.Namespace, key: str | None) -> int:
    """Over stdio the agent's own child is a parent that only waits: the gateway runs as its child, in its
    process group, with its stdio, and the parent ends as the gateway ended.

    Codex stops a server by SIGTERM to its process group and kills its own child at once as it lets it go: the
    gateway would have no time to close the servers it started, beyond the agent's reach. The parent takes that
    kill; the gateway gets the group's signal and the ones the parent passes on (Claude Code's go to its child
    alone), closes the servers and ends. The parent holds no more than this module (the gateway is started
    afresh, not forked: a fork of a process that loaded the system's libraries is unsafe on macOS)."""
    env = {**os.environ, KEPT: "1", **({"CTXSIEVE_API_KEY": key} if key else {})}
    gateway = subprocess.Popen([sys.executable, "-m", "ctxsieve_client.gateway.cli", "--config", str(args.config),
                                "--url", args.url], env=env)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the gateway's stdio alone: the agent sees the end of it when the gateway ends
        os.dup2(devnull, fd)
    code = waited(gateway, passed=STOP_SIGNALS)
    if code < 0:
        end_by(-code)
    return code


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


if __name__ == "__main__":
    sys.exit(main())
