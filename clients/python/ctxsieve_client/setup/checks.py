"""doctor's rows, and the checks every agent's rows are made of: its command answers --version, an MCP server
(ctxsieve's, or the gateway in front of the agent's own) starts and lists its tools."""

from __future__ import annotations

import contextlib
import json
import queue
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..names import OWN_TOOLS
from . import gateway_entry
from .changes import read

QUOTED_STDERR = 3000  # characters of a server's stderr a failing row quotes: the gateway's line per failed server


@dataclass(frozen=True)
class Row:
    part: str
    state: str  # ok, warn or FAIL
    detail: str
    fix: str = ""


Check = Callable[[], list[Row]]


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read(path) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def executable_row(name: str, commands: tuple[str, ...]) -> list[Row]:
    """The agent's command, found as install finds it, answers --version."""
    found = next((w for w in map(shutil.which, commands) if w), None)
    part = f"{name}: {Path(found).name if found else 'command'}"
    if found is None:
        return [Row(part, "warn", "not on PATH: its config is wired for when it is")]
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Row(part, "FAIL", f"{found} --version: {exc}", "reinstall it")]
    if done.returncode != 0:
        return [Row(part, "FAIL", f"{found} --version exited {done.returncode}", "reinstall it")]
    version = (done.stdout.strip().splitlines() or ["?"])[-1]
    return [Row(part, "ok", f"{version} at {found}")]


def gateway_row(agent: str, path: Path, words: list[str] | None, env: dict[str, Any]) -> list[Row]:
    """The gateway's entry starts and lists the tools of the servers behind it (not only its own)."""
    part = f"{agent}: gateway"
    held = sorted(gateway_entry.moved_names(agent) or [])
    if not words:
        return [Row(part, "FAIL", f"{path}: its {gateway_entry.NAME} entry has no command", "ctxsieve install")]
    listing = _listed(tuple(words), gateway_entry.environment(env)).result()
    if listing.failure:
        return [Row(part, "FAIL", f"{shlex.join(words)} ({path}): {listing.failure}{listing.said('gateway')}",
                    "ctxsieve install (it writes the command found now)")]
    theirs = [n for n in listing.names if n not in OWN_TOOLS]  # find_tools, call_tool: listed with nothing behind
    if held and not theirs:
        return [Row(part, "FAIL", f"{shlex.join(words)} lists only its own tools: none of {', '.join(held)} "
                    f"started behind it{listing.said('gateway')}",
                    f"run the server's command by hand; `ctxsieve uninstall --agent {agent}` puts them back")]
    return [Row(part, "ok", f"{gateway_entry.NAME} in front of {', '.join(held) or 'no server'} ({path}) lists "
                f"{len(listing.names)} tools: {', '.join(sorted(listing.names))}")]


def mcp_row(part: str, path: Path, entry: dict[str, Any]) -> list[Row]:
    command = [str(entry.get("command")), *map(str, entry.get("args", []))]
    listing = _listed(tuple(command), None).result()
    if listing.failure:
        return [Row(part, "FAIL", f"{shlex.join(command)} ({path}): {listing.failure}{listing.said('server')}",
                    "ctxsieve install (it writes the command found now)")]
    names = listing.names
    if "fetch_ref" not in names:
        return [Row(part, "FAIL", f"{shlex.join(command)}: lists {', '.join(names)}, no fetch_ref", "ctxsieve install")]
    return [Row(part, "ok", f"{shlex.join(command)} ({path}) lists {len(names)} tools: {', '.join(sorted(names))}")]


@dataclass(frozen=True)
class Listing:
    """What an MCP server over stdio listed: its tools' names, or why not (`failure`), and the end of its stderr."""

    names: list[str]
    failure: str
    stderr: str

    def said(self, who: str) -> str:
        """For a row that fails: what the server wrote on stderr (the gateway's: each of its servers' failures)."""
        return f"; the {who} said:\n{self.stderr}" if self.stderr else f" (the {who} said nothing on stderr)"


_LISTINGS: dict[tuple[str, ...], Future[Listing]] = {}
_LISTING = threading.Lock()


def _listed(command: tuple[str, ...], env: dict[str, str] | None) -> Future[Listing]:
    """One listing per distinct command (every agent runs the same `ctxsieve mcp`)."""
    with _LISTING:
        if command not in _LISTINGS:
            _LISTINGS[command] = Future()
            first = True
        else:
            first = False
    future = _LISTINGS[command]
    if first:
        with tempfile.TemporaryFile() as stderr:
            names, failure = [], ""
            try:
                names = tools(list(command), env=env, stderr=stderr)
            except Exception as exc:  # noqa: BLE001 - any failure to list is the row's to say (and never leaves the
                failure = f"{type(exc).__name__}: {exc}"  # other rows waiting on this listing)
            stderr.seek(0)
            said = stderr.read().decode("utf-8", "replace")[-QUOTED_STDERR:].strip()
            future.set_result(Listing(names, failure, said))
    return future


HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ctxsieve-doctor", "version": "1"}}
STOP_S = 3.0  # a server's time to stop on its own once its stdin closes (a gateway removes its log folder)


def tools(command: list[str], timeout: float = 60.0, env: dict[str, str] | None = None,
          stderr: IO[bytes] | None = None) -> list[str]:
    """The tools an MCP server over stdio lists, asked as a client asks (initialize, initialized, tools/list) in
    JSON-RPC lines: without the MCP SDK, whose import alone takes a second. Its stderr goes to `stderr` (else
    nowhere). EOFError when it exits without answering."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL if stderr is None else stderr, env=env)
    assert server.stdin is not None and server.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_pump, args=(server.stdout, lines), daemon=True).start()
    try:
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        server.stdin.flush()
        return _tool_names(lines, time.monotonic() + timeout, server)
    finally:
        _stop(server)


def _status(server: subprocess.Popen[bytes]) -> str:
    try:
        return f"exit status {server.wait(timeout=STOP_S)}"
    except subprocess.TimeoutExpired:
        return "still running"


def _stop(server: subprocess.Popen[bytes]) -> None:
    """As a client leaving stops a server (its stdin closed), then killed if it has not stopped by STOP_S."""
    with contextlib.suppress(OSError):
        assert server.stdin is not None
        server.stdin.close()
    try:
        server.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _pump(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")  # its stdout closed: it has exited


def _tool_names(lines: queue.Queue[bytes], deadline: float, server: subprocess.Popen[bytes]) -> list[str]:
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            raise TimeoutError("no tools/list answer") from None
        if not line:
            raise EOFError(f"it closed its output before answering tools/list ({_status(server)})")
        answer = json.loads(line) if line.strip().startswith(b"{") else {}
        if answer.get("id") == 2:
            if "error" in answer:
                raise ValueError(f"tools/list: {answer['error']}")
            return [str(t.get("name")) for t in answer.get("result", {}).get("tools", [])]


