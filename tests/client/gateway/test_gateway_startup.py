"""The gateway's start-up: it serves the servers that answer within their own `start_timeout_s`, adds a late one
when it answers (tools/list_changed to the client), and never waits for the service (its toolsets are registered in
the background and fail open). A real MCP client session over stdio, as in test_gateway.py."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as mt
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.client.gateway.test_gateway import BIN, FAULTS, files, filesystem_server, text, write_config

__all__ = ["files"]  # the fixture, shared with test_gateway.py

HANGS = {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"],  # never answers initialize
         "ctxsieve": {"start_timeout_s": 0.5, "timeout_s": 1}}
LATE = {"command": "sh", "args": ["-c", f"sleep 4; exec {sys.executable} {FAULTS}"],  # answers after the start
        "ctxsieve": {"start_timeout_s": 0.5}}
LOGGED = "served without ctxsieve tool search"


async def _session(config: Path, url: str, log: Path, steps: Any) -> Any:
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=str(BIN / "ctxsieve"), args=["gateway", "--config", str(config),
                                                                       "--url", url])
    with log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            return await steps(session, changed)


def test_a_hanging_server_holds_up_no_other_and_a_late_one_is_added(tmp_path: Path, files: Path,
                                                                     stub_url: str) -> None:
    config = write_config(tmp_path / "slow.json", {"fs": filesystem_server(files), "hangs": HANGS, "late": LATE},
                          tool_search="off")

    async def steps(s: ClientSession, changed: asyncio.Event) -> tuple[set[str], Any, bool, set[str], Any]:
        first = {t.name for t in (await s.list_tools()).tools}
        early = await s.call_tool("rows", {"count": 2})  # before the late server has listed: the call waits
        await asyncio.wait_for(changed.wait(), 120)
        late = {t.name for t in (await s.list_tools()).tools}
        return first, early, changed.is_set(), late, await s.call_tool("no_such_tool", {})

    first, early, told, late, missing = asyncio.run(_session(config, stub_url, tmp_path / "gateway.log", steps))
    assert "read_text_file" in first and "rows" not in first, "served before the late server answered"
    assert not early.is_error and "record 1" in text(early), "a call to a starting server's tool waits for it"
    assert told and {"read_text_file", "rows"} <= late, "the late server's tools added, the client told"
    assert missing.is_error and "unknown tool 'no_such_tool'" in text(missing)
    assert "'hangs' has not listed its tools yet" in text(missing), "after its timeout_s, which server it may be"
    assert "serving without hangs, late" in (tmp_path / "gateway.log").read_text()


@contextmanager
def unanswering_service() -> Iterator[str]:
    """A service that takes the connection and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_service_down_or_slow_does_not_hold_up_serving(tmp_path: Path, files: Path) -> None:
    config = write_config(tmp_path / "fs.json", {"fs": filesystem_server(files)}, tool_search="off")
    log = tmp_path / "gateway.log"

    async def steps(s: ClientSession, _: asyncio.Event) -> tuple[set[str], Any, str]:
        listed = {t.name for t in (await s.list_tools()).tools}
        called = await s.call_tool("read_text_file", {"path": str(files / "small.txt")})
        before = log.read_text()  # what the gateway had said by the time it served
        for _ in range(300):  # the registration gives up after its own short timeout, in one line
            if LOGGED in log.read_text():
                break
            await asyncio.sleep(0.1)
        return listed, called, before

    for url in ("http://127.0.0.1:9", None):
        with unanswering_service() as slow:
            listed, called, before = asyncio.run(_session(config, url or slow, log, steps))
        assert "read_text_file" in listed and not called.is_error and text(called) == "just a line\n"
        said = [line for line in log.read_text().splitlines() if LOGGED in line]
        assert len(said) == 1 and said[0].startswith("ctxsieve gateway: fs's tools"), log.read_text()
        if url is None:
            assert LOGGED not in before, "served before the slow service's registration timed out"
            assert "no answer within 10 s" in said[0]
