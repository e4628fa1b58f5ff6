"""`ctxsieve hook claude-code` (or `ctxsieve-hook claude-code` from the light client package).

Without `--install`: one PostToolUse call (JSON on stdin, the answer on stdout). It never blocks or breaks the
agent: any failure, or a service slower than `--timeout`, leaves the output unchanged and exits 0, saying why on
stderr. `--install [--project] [--http]` writes Claude Code's part of `ctxsieve install` at once
(ctxsieve_client.setup.claude_code: the hook, the capture prefix and its folder, `ctxsieve-mcp` as the MCP server
`ctxsieve`), the command hook unless --http.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

# Modules httpx imports only for its own command line (click, rich, pygments), for async backends (trio, anyio) or for
# HTTP/2 (h2, installed beside qdrant-client, imported by httpcore whether used or not): about 120 ms of a process
# Claude Code starts per tool call, and never used by the hook's one sync HTTP/1.1 request.
UNUSED_BY_THE_HOOK = ("click", "rich", "pygments", "trio", "anyio", "h2")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runtime", choices=["claude-code"], help="the agent runtime whose hook protocol to speak")
    p.add_argument("--url", default=None, help="the service (default: CTXSIEVE_URL, else CTXSIEVE_PORT on this "
                   "machine, else the one installed, else http://127.0.0.1:8000)")
    p.add_argument("--api-key", default=None, help="default: CTXSIEVE_API_KEY")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for the service (default 20)")
    p.add_argument("--passthrough-tokens", type=int, default=1000)
    p.add_argument("--max-tokens", type=int, default=None, help="the budget of what the model sees of a large output "
                   "(default: a source file's share by the service's rule, 1500 for anything else)")
    p.add_argument("--install", action="store_true", help="write the hook and the MCP server into the settings")
    p.add_argument("--project", action="store_true", help="with --install: this project's files, not the user's")
    p.add_argument("--http", action="store_true", help="with --install: an http hook to the service's "
                   "/v1/hooks/claude-code (no process per call; Claude Code 2.1.63+)")


def main(argv: list[str] | None = None) -> int:
    _without(UNUSED_BY_THE_HOOK)  # this process is the hook's alone (`ctxsieve hook` calls run, not main)
    p = argparse.ArgumentParser(prog="ctxsieve-hook")
    add_arguments(p)
    return run(p.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    if args.install:
        from ..setup.claude_code import install_hook
        from ..setup.state import service_url

        return install_hook(service_url(args.url), args.http, args.project)
    _without(("trio", "anyio"))
    from ..client import Client  # here, not at the top: after the unused modules are made unimportable
    from .claude_code import AGENT, HookOptions, handle, session_of

    try:
        payload = json.loads(sys.stdin.read() or "{}")
        key = args.api_key or os.environ.get("CTXSIEVE_API_KEY") or None
        with Client(args.url or _url(), api_key=key, session_id=session_of(payload), timeout=args.timeout,
                    agent=AGENT) as client:
            answer = handle(payload, client, HookOptions(passthrough_tokens=args.passthrough_tokens,
                                                         max_tokens=args.max_tokens))
    except Exception as exc:  # never break the agent: its tool's own output goes on
        sys.stderr.write(f"ctxsieve hook: output left unchanged: {type(exc).__name__}: {exc}\n")
        return 0
    if answer is not None:
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))  # the http hook's bytes
    return 0


def _without(names: tuple[str, ...]) -> None:
    """Makes modules unimportable (None in sys.modules: `import` raises ImportError, which httpx and httpcore catch
    for these optional ones); left as they are if already imported."""
    for name in names:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def _url() -> str:
    from ..setup.state import service_url

    try:
        return service_url()
    except SystemExit as exc:  # settings that disagree: said, and the output goes on unchanged
        raise ValueError(str(exc)) from None
