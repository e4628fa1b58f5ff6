"""`ctxsieve hook claude-code` (or `ctxsieve-hook claude-code` from the light client package).

Without `--install`: one PostToolUse call (JSON on stdin, the answer on stdout). It never blocks or breaks the
agent: any failure, or a service slower than `--timeout`, leaves the output unchanged and exits 0, saying why on
stderr. `--install [--project]` writes the hook into Claude Code's user (~/.claude/settings.json) or project
(.claude/settings.json) settings, keeping what is there, and registers `ctxsieve-mcp` as the MCP server
`ctxsieve` (~/.claude.json, or the project's .mcp.json), so the model has `mcp__ctxsieve__filter_ref` and
`mcp__ctxsieve__fetch_ref` to get back what was cut. It writes the executables' absolute paths (beside this
interpreter, else found on PATH), since Claude Code runs them with its own PATH, and runs each command it writes
with `--help` (the MCP server with `--check`: it needs the MCP SDK) before writing anything. With `--http` the hook
it writes is Claude Code's `type: "http"` hook (Claude Code 2.1.63 and later), posting each call to the service's
`/v1/hooks/claude-code` instead of starting a process: the key goes in a header from `CTXSIEVE_API_KEY` (listed
in `allowedEnvVars`, so it is never written into the settings).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..client import Client
from .claude_code import AGENT, HookOptions, handle, session_of
from .whole import capture_script


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runtime", choices=["claude-code"], help="the agent runtime whose hook protocol to speak")
    p.add_argument("--url", default=os.environ.get("CTXSIEVE_URL", "http://127.0.0.1:8000"))
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
    p = argparse.ArgumentParser(prog="ctxsieve-hook")
    add_arguments(p)
    return run(p.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    if args.install:
        for path, what in install(args, Path.cwd(), Path.home()):
            sys.stdout.write(f"wrote {path}: {what}\n")
        return 0
    _without_async_backends()
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        key = args.api_key or os.environ.get("CTXSIEVE_API_KEY") or None
        with Client(args.url, api_key=key, session_id=session_of(payload), timeout=args.timeout,
                    agent=AGENT) as client:
            answer = handle(payload, client, HookOptions(passthrough_tokens=args.passthrough_tokens,
                                                         max_tokens=args.max_tokens))
    except Exception as exc:  # never break the agent: its tool's own output goes on
        sys.stderr.write(f"ctxsieve hook: output left unchanged: {type(exc).__name__}: {exc}\n")
        return 0
    if answer is not None:
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")))  # the http hook's bytes
    return 0


def _without_async_backends() -> None:
    """The hook process sends one request with httpx's sync client: httpcore would import trio and anyio (about 90 ms
    of a process Claude Code starts per call) only to look for async backends. Left as they are if already imported."""
    for name in ("trio", "anyio"):
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]  # None: `import` raises ImportError


HOOK_COMMAND = "ctxsieve-hook"  # the light entry point (both installs have it): it starts in half the time
SERVER_COMMAND = "ctxsieve-mcp"  # the MCP server (ctxsieve_client.mcp_server: the [mcp] extra, or the full package)


HOOK_PATH = "/v1/hooks/claude-code"
EVENTS = ("PostToolUse", "PostToolUseFailure")  # a failing command fires the second, not the first
PREFIX_VARIABLE = "CLAUDE_CODE_SHELL_PREFIX"
CAPTURE_NAME = "claude-code-capture.sh"


@dataclass(frozen=True)
class Planned:
    """What an install writes, in order (the capture script first), and one line per thing it sets."""

    files: list[tuple[Path, bytes]]
    said: list[tuple[Path, str]]


def install(args: argparse.Namespace, cwd: Path, home: Path) -> list[tuple[Path, str]]:
    """Write the hook and the MCP server; each command is run once first (nothing is written if one fails)."""
    planned = plan_install(args, cwd, home)
    for path, content in planned.files:
        write_bytes(path, content)
        if path.name == CAPTURE_NAME:
            path.chmod(0o755)
            check_prefix(path)
    return planned.said


def plan_install(args: argparse.Namespace, cwd: Path, home: Path) -> Planned:
    """The files an install would write, computed from the ones there; each command it writes is run first."""
    settings = (cwd / ".claude" / "settings.json") if args.project else (home / ".claude" / "settings.json")
    servers = (cwd / ".mcp.json") if args.project else (home / ".claude.json")
    hook = _hook(args)
    server = [executable(SERVER_COMMAND), "--url", args.url]
    if hook["type"] == "command":
        check_runs(shlex.split(hook["command"]))
    check_runs(server, "--check")
    data = _read(settings)
    for event in EVENTS:
        entries = data.setdefault("hooks", {}).setdefault(event, [])
        entries[:] = [e for e in ({**e, "hooks": [h for h in e.get("hooks", []) if not is_ours(h)]}
                                  for e in entries) if e["hooks"]]  # a ctxsieve hook (either kind) is replaced
        entries.append({"matcher": "*", "hooks": [hook]})
    script, prefix = _capture_prefix(data, home)
    mcp = _read(servers)
    mcp.setdefault("mcpServers", {})["ctxsieve"] = {"type": "stdio", "command": server[0], "args": server[1:]}
    copied = [(script, capture_script().read_bytes())] if script is not None else []
    said = hook.get("command") or f"http hook to {hook['url']}"
    return Planned(copied + [(settings, dumps(data)), (servers, dumps(mcp))],
                   [(settings, f"{' and '.join(EVENTS)} {said}"), (settings, prefix),
                    (servers, f"MCP server ctxsieve: {shlex.join(server)}")])


def _capture_prefix(data: dict[str, Any], home: Path) -> tuple[Path | None, str]:
    """Claude Code's CLAUDE_CODE_SHELL_PREFIX set to ctxsieve's capture script (copied where it outlives this
    package's folder), so the hooks get a failing or large command's whole output; one the user set is kept."""
    env = data.setdefault("env", {})
    current = env.get(PREFIX_VARIABLE)
    if current and Path(str(current)).name != CAPTURE_NAME:
        return None, f"{PREFIX_VARIABLE} left as {current} (yours): failing commands' whole outputs are not captured"
    target = capture_target(home)
    env[PREFIX_VARIABLE] = str(target)
    return target, f"env {PREFIX_VARIABLE}={target} (each Bash command's whole output saved for the hooks)"


def capture_target(home: Path) -> Path:
    """Where the capture script is copied: outside this package's folder, which an upgrade replaces."""
    return home / ".local" / "share" / "ctxsieve" / CAPTURE_NAME


def check_prefix(prefix: Path) -> None:
    """The prefix runs a command as Claude Code hands it (one argument), with its output and exit status."""
    done = subprocess.run([str(prefix), "echo ctxsieve-prefix-ok; exit 3"], capture_output=True, text=True,
                          timeout=30)
    if done.returncode != 3 or "ctxsieve-prefix-ok" not in done.stdout:
        raise SystemExit(f"ctxsieve-hook --install: {prefix} does not run commands as written ({done.returncode}: "
                         f"{done.stderr.strip()[-200:]}); nothing written")


def executable(name: str) -> str:
    """`name`'s absolute path: the one beside this interpreter (the install running), else the one on PATH. Claude
    Code runs the command with its own PATH, where a bare name fails (`/bin/sh: ctxsieve-hook: not found`)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        why = (" (ctxsieve-mcp, which gives the model mcp__ctxsieve__fetch_ref, comes with "
               "'ctxsieve-client[mcp]' and with ctxsieve)") if name == SERVER_COMMAND else ""
        raise SystemExit(f"ctxsieve-hook --install: no {name} beside {sys.executable} nor on PATH{why}; "
                         "nothing written")
    return str(Path(found).absolute())


def check_runs(command: list[str], probe: str = "--help") -> None:
    """The command as written, with --help: one that cannot start would fail every call, silently, in Claude Code."""
    try:
        done = subprocess.run([*command, probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SystemExit(f"ctxsieve-hook --install: {shlex.join(command)} does not run: {exc}; nothing written"
                         ) from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise SystemExit(f"ctxsieve-hook --install: {shlex.join(command)} {probe} exited {done.returncode}: {last}; "
                         "nothing written")


def _hook(args: argparse.Namespace) -> dict[str, Any]:
    if not args.http:
        command = shlex.join([executable(HOOK_COMMAND), "claude-code", "--url", args.url])
        return {"type": "command", "command": command, "timeout": 30}
    return {"type": "http", "url": args.url.rstrip("/") + HOOK_PATH, "timeout": 30,
            "headers": {"Authorization": "Bearer ${CTXSIEVE_API_KEY}"}, "allowedEnvVars": ["CTXSIEVE_API_KEY"]}


def is_ours(hook: Any) -> bool:
    """A ctxsieve hook written by any install: the command by bare name or by path, or the http hook."""
    if not isinstance(hook, dict):
        return False
    try:
        words = shlex.split(str(hook.get("command", "")))
    except ValueError:  # not a command line this install wrote
        words = []
    ours = len(words) > 1 and Path(words[0]).name == HOOK_COMMAND and words[1] == "claude-code"
    return ours or str(hook.get("url", "")).endswith(HOOK_PATH)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(f"{path} is not a JSON object; not changed")
    return data


def dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_bytes(path: Path, content: bytes) -> None:
    """Whole or not at all: a partial file beside it, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".ctxsieve-partial")
    partial.write_bytes(content)
    partial.replace(path)
