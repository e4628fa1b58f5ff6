"""The MCP gateway stopped as each agent stops a stdio server: how long it takes to end, and what it leaves running.

Usage: python -m bench.gateway_stops [--runs 5]

Behind the gateway: tests/mcp/lingering_server.py (stays after its stdin closes and ignores SIGTERM: only a SIGKILL
ends it) and npm's server-filesystem, each called once through the gateway, so that each has the gateway's own
listing session and the client's. Then the gateway is stopped as an agent stops a server (`STOPS`): Claude Code's
SIGINT, SIGTERM 100 ms later and SIGKILL 400 ms after that to its child; Codex's SIGTERM to the process group with
its child killed at once; a terminal's `kill`, then `kill -9` half a second later; the MCP way, stdin closed; killed
outright (`kill-9`: SIGKILL to the gateway's process group, no time to close), then the next gateway started and
stopped, whose start ends the servers its dead predecessor recorded (on Linux). For each: the seconds from the first
signal (or stdin's close) to the end of the gateway process itself (the agent's child is a parent that only waits
for it), how the agent's child ended, and the processes left running 10 s later (then killed). Also the seconds to
the answer of `initialize`, with the waiting parent and without it, taking turns (CTXSIEVE_GATEWAY_KEPT=1). No
ctxsieve service is needed: the gateway serves its servers' tools without tool search when the service cannot be
reached.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LINGERING = ROOT / "tests" / "mcp" / "lingering_server.py"
FILESYSTEM = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-filesystem"
GATEWAY = Path(sys.executable).parent / "ctxsieve-gateway"
NO_SERVICE = "http://127.0.0.1:9"  # nothing listens: the gateway says so once and serves on
HANDSHAKE = ("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "agent", "version": "1"}})


def as_claude_code(process: subprocess.Popen[bytes]) -> None:
    """Claude Code's cleanup of a server's process: SIGINT, SIGTERM 100 ms later, SIGKILL 400 ms after that, each to
    its own child alone (and only while it runs)."""
    for signum, wait in ((signal.SIGINT, 0.1), (signal.SIGTERM, 0.4), (signal.SIGKILL, 0.0)):
        if process.poll() is None:
            process.send_signal(signum)
        until(lambda: process.poll() is not None, wait)


def as_codex(process: subprocess.Popen[bytes]) -> None:
    """Codex's: SIGTERM to the server's process group, and its own child killed at once as it lets it go (the
    process must lead its group: started with start_new_session)."""
    os.killpg(process.pid, signal.SIGTERM)
    process.kill()


def as_kill(process: subprocess.Popen[bytes]) -> None:
    """A terminal's `kill`, then `kill -9` half a second later."""
    process.terminate()
    until(lambda: process.poll() is not None, 0.5)
    process.kill()


def as_killed(process: subprocess.Popen[bytes]) -> None:
    """Killed outright: SIGKILL to the agent's child and the gateway (their process group), no time to close."""
    os.killpg(process.pid, signal.SIGKILL)


def as_stdin_closed(process: subprocess.Popen[bytes]) -> None:
    """The MCP way: the client closes the server's stdin (and waits)."""
    assert process.stdin is not None
    process.stdin.close()
    until(lambda: process.poll() is not None, 60)


# each way an agent stops a server, and how the agent's child ends when the gateway ends in time
STOPS: dict[str, tuple[Callable[[subprocess.Popen[bytes]], None], int]] = {
    "claude-code": (as_claude_code, -signal.SIGINT), "codex": (as_codex, -signal.SIGKILL),
    "kill": (as_kill, -signal.SIGTERM), "stdin-closed": (as_stdin_closed, 0), "kill-9": (as_killed, -signal.SIGKILL)}
# stops that leave the servers to the next gateway's start, which ends those its dead predecessor recorded
NEXT_START = frozenset({"kill-9"})


def until(done: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.005)
    return done()


def children(pid: int) -> list[int]:
    return [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie (in a container whose init reaps no orphans)."""
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (ProcessLookupError, FileNotFoundError):
        return True


def json_rpc(process: subprocess.Popen[bytes], requests: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Each request's answer line, a session-era client's requests written to the process's stdin one by one."""
    assert process.stdin is not None and process.stdout is not None
    answers = []
    for number, (method, params) in enumerate(requests, start=1):
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode()
                            + b"\n")
        if method == "initialize":
            process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        process.stdin.flush()
        while f'"id":{number},' not in (line := process.stdout.readline().decode()):
            assert line, "the gateway ended"
        answers.append(line)
    return answers


def counted(command: list[str], log: Path) -> dict[str, Any]:
    """A server entry whose every start appends its process id to `log` before the server runs."""
    return {"command": "sh", "args": ["-c", 'echo $$ >> "$0"; exec "$@"', str(log), *command]}


def start(config: Path, env: dict[str, str], url: str = NO_SERVICE) -> subprocess.Popen[bytes]:
    """The gateway as an agent starts it (the leader of a process group of its own, as Codex starts a server)."""
    return subprocess.Popen([str(GATEWAY), "--config", str(config), "--url", url], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)


@dataclass(frozen=True)
class Stopped:
    seconds: float  # from the stop to the end of the gateway process itself
    status: int  # how the agent's child (the parent that waits for the gateway) ended
    left: list[int]  # the gateway's or its servers' processes still running 10 s later (killed since)
    logs: list[str]  # what is left in the folder the gateway kept its servers' logs in


def stopped_gateway(folder: Path, stop: str, url: str = NO_SERVICE, calls: bool = True) -> Stopped:
    """A gateway in front of the lingering server and server-filesystem, each called once through it (or, without
    `calls`, its client gone right after the handshake, the gateway's own listing sessions still closing), then
    stopped as `stop` (of STOPS) says."""
    temp, starts, config = folder / "tmp", folder / "starts", folder / "gateway.json"
    temp.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {
        "lingers": counted([sys.executable, str(LINGERING)], starts),
        "fs": counted([str(FILESYSTEM), str(folder)], starts)}, "ctxsieve": {"tool_search": "off"}}))
    parent = start(config, {**os.environ, "TMPDIR": str(temp)}, url)
    following: subprocess.Popen[bytes] | None = None
    try:
        asked = [("tools/call", {"name": "linger", "arguments": {}}),
                 ("tools/call", {"name": "list_allowed_directories", "arguments": {}})] if calls else []
        answers = json_rpc(parent, [HANDSHAKE, *asked])
        assert not calls or ("lingering in pid" in answers[1] and str(folder) in answers[2]), answers
        gateway = children(parent.pid)
        assert len(gateway) == 1, gateway  # the gateway itself, its parent only waiting for it
        how, _ = STOPS[stop]
        began = time.monotonic()
        how(parent)
        until(lambda: gone(gateway[0]), 60)
        seconds = time.monotonic() - began
        status = parent.wait()
        if stop in NEXT_START:
            following = start(config, {**os.environ, "TMPDIR": str(temp)}, url)
            json_rpc(following, [HANDSHAKE])
            as_stdin_closed(following)
    finally:
        for process in (parent, following):
            if process is not None:
                process.kill()
                process.wait()
    left = [pid for pid in [*gateway, *(int(p) for p in starts.read_text().split())] if outlives(pid)]
    return Stopped(seconds, status, left, sorted(p.name for p in temp.iterdir()))


def outlives(pid: int) -> bool:
    """Still running 10 s after (a server closes on the SDK's clock when its client closed stdin: 4 s at most);
    then killed, so that nothing is left behind."""
    if until(lambda: gone(pid), 10):
        return False
    os.kill(pid, signal.SIGKILL)
    return True


def first_answer(folder: Path, kept: bool) -> float:
    """Seconds from the gateway's start to its answer to `initialize`."""
    config = folder / "one.json"
    config.write_text(json.dumps({"mcpServers": {"fs": {"command": str(FILESYSTEM), "args": [str(folder)]}},
                                  "ctxsieve": {"tool_search": "off"}}))
    env = {**os.environ, "TMPDIR": str(folder), **({} if kept else {"CTXSIEVE_GATEWAY_KEPT": "1"})}
    began = time.monotonic()
    process = start(config, env)
    json_rpc(process, [HANDSHAKE])
    took = time.monotonic() - began
    as_stdin_closed(process)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not FILESYSTEM.exists():
        raise SystemExit("bench.gateway_stops: run `npm ci --prefix tests/mcp` (make test does) for server-filesystem")
    with tempfile.TemporaryDirectory(prefix="bench-gateway-stops-") as scratch:
        folder = Path(scratch)
        print(f"{'stop':<14} {'runs':>4}  {'gateway ended, s: median / max':<31} {'agent child':>11} {'left':>5}")
        for stop in STOPS:
            taken = [stopped_gateway(folder / f"{stop}-{run}", stop) for run in range(args.runs)]
            seconds = [t.seconds for t in taken]
            ended = f"{statistics.median(seconds):.2f} / {max(seconds):.2f}"
            print(f"{stop:<14} {args.runs:>4}  {ended:<31} {','.join(map(str, sorted({t.status for t in taken}))):>11} "
                  f"{sum(len(t.left) for t in taken):>5}", flush=True)
        answers: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.runs):  # taking turns, so that a busy moment weighs on both
            for kept in answers:
                answers[kept].append(first_answer(folder, kept))
        for kept, seconds in answers.items():
            print(f"initialize answered, {'with the waiting parent' if kept else 'without it':<24} median "
                  f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s", flush=True)

if __name__ == "__main__":
    main()
