"""The commands install writes into the agents' configs, found and run before anything is written, and the one way
a file is written (whole or not at all)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HOOK_COMMAND = "ctxsieve-hook"  # the light entry point (both installs have it): it starts in half the time
SERVER_COMMAND = "ctxsieve-mcp"  # the MCP server (ctxsieve_client.mcp_server: the [mcp] extra, or the full package)


def executable(name: str) -> str:
    """`name`'s absolute path: the one beside this interpreter (the install running), else the one on PATH. An agent
    runs the command with its own PATH, where a bare name fails (`/bin/sh: ctxsieve-hook: not found`)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        why = (" (ctxsieve-mcp, which gives the model mcp__ctxsieve__fetch_ref, comes with "
               "'ctxsieve-client[mcp]' and with ctxsieve)") if name == SERVER_COMMAND else ""
        raise SystemExit(f"ctxsieve install: no {name} beside {sys.executable} nor on PATH{why}; nothing written")
    return str(Path(found).absolute())


def server_command(url: str) -> list[str]:
    """ctxsieve's MCP server as install writes it for every agent (by its absolute path)."""
    return [executable(SERVER_COMMAND), "--url", url]


def check_runs(command: list[str], probe: str = "--help") -> None:
    """The command as written, with --help: one that cannot start would fail every call, silently, in the agent."""
    try:
        done = subprocess.run([*command, probe], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SystemExit(f"ctxsieve install: {shlex.join(command)} does not run: {exc}; nothing written") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise SystemExit(f"ctxsieve install: {shlex.join(command)} {probe} exited {done.returncode}: {last}; "
                         "nothing written")


def dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_bytes(path: Path, content: bytes) -> None:
    """Whole or not at all: a partial file beside it, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".ctxsieve-partial")
    partial.write_bytes(content)
    partial.replace(path)
