"""`ctxsieve proxy` (or `ctxsieve-proxy` from the light client package, with its `proxy` extra).

Serves the model APIs on 127.0.0.1:8787 unless told otherwise; point a client at it with its base-URL setting
(`ANTHROPIC_BASE_URL=http://127.0.0.1:8787`, `OPENAI_BASE_URL=http://127.0.0.1:8787/v1`). The client's key goes
upstream with its request; the proxy keeps none and logs none. `--api-key` (or CTXSIEVE_API_KEY) is the key of the
ctxsieve service, not of the model API.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

from ..setup.state import is_loopback

if TYPE_CHECKING:
    from .server import ProxyApp


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8787)
    p.add_argument("--url", default=os.environ.get("CTXSIEVE_URL", "http://127.0.0.1:8000"),
                   help="the ctxsieve service (default: the local one, or CTXSIEVE_URL)")
    p.add_argument("--api-key", default=os.environ.get("CTXSIEVE_API_KEY"),
                   help="the ctxsieve service's key (default: CTXSIEVE_API_KEY); never the model API's")
    p.add_argument("--anthropic-upstream", default="https://api.anthropic.com",
                   help="Anthropic's API, as ANTHROPIC_BASE_URL takes it")
    p.add_argument("--openai-upstream", default="https://api.openai.com/v1",
                   help="an OpenAI-compatible API, as OPENAI_BASE_URL takes it (with its /v1)")
    p.add_argument("--passthrough-tokens", type=int, default=1000, help="a tool result this small is left alone")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="a cut's budget (default: a source file's share of itself, 1,500 for anything else)")
    p.add_argument("--trigger-tokens", type=int, default=100_000, help="compaction: clear old results above this")
    p.add_argument("--budget-s", type=float, default=10.0,
                   help="the service's time per request; a cut not ready by then goes upstream whole")
    p.add_argument("--agent", default=os.environ.get("CTXSIEVE_AGENT") or None,
                   help="the agent behind this proxy (codex, claude...), as `ctxsieve stats` groups its sessions "
                   "(default: CTXSIEVE_AGENT; `ctxsieve wrap` passes the agent it runs)")
    p.add_argument("--serve-tools", action="store_true",
                   help="offer the model filter_ref/fetch_ref and answer them here (for clients without MCP)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxsieve proxy", description="ctxsieve in front of the model API: point "
                                "your agent's base URL here")
    add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))


def build(args: argparse.Namespace) -> ProxyApp:
    from .projection import ProxyOptions  # here, not at import: `ctxsieve hook` parses this command's flags too
    from .server import ProxyApp, Upstreams

    options = ProxyOptions(passthrough_tokens=args.passthrough_tokens, max_tokens=args.max_tokens,
                           trigger_tokens=args.trigger_tokens, budget_s=args.budget_s)
    return ProxyApp(args.url, args.api_key, Upstreams(anthropic=args.anthropic_upstream,
                                                      openai=args.openai_upstream), options,
                    serve_tools=args.serve_tools, agent=args.agent)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        sys.stderr.write("ctxsieve proxy needs uvicorn: pip install 'ctxsieve-client[proxy]'\n")
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    log = logging.getLogger("ctxsieve.proxy")
    if not is_loopback(args.host):
        log.warning("ctxsieve proxy: listening on %s: anyone who reaches it can use it with their own key", args.host)
    log.info("ctxsieve proxy: http://%s:%s -> %s | %s, cutting through %s", args.host, args.port,
             args.anthropic_upstream, args.openai_upstream, args.url)
    uvicorn.run(build(args), host=args.host, port=args.port, log_level="warning", access_log=False,
                lifespan="on", ws="none")  # a WebSocket upgrade reaches the app, which answers 426 (Codex: HTTPS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
