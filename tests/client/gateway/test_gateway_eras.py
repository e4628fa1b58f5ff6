"""The gateway with clients of both protocol eras: the MCP SDK's own `Client` in modes "legacy" (the initialize
handshake) and "auto" (the default: `server/discover`, then 2026-07-28), over stdio and streamable HTTP, in front of
the tests' stateful server and npm's server-filesystem. Each test counts how often an upstream was started (each
start appends a line to a log) and checks that a server keeping state between calls keeps it."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as mt
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.gateway_stops import counted
from tests.client.gateway.test_gateway import BIN, filesystem_server, gateway_over_http, text

STATEFUL = Path(__file__).resolve().parents[2] / "mcp" / "stateful_server.py"
CONFORMANCE = STATEFUL.with_name("conformance_server.py")
MODERN = "2026-07-28"


def starts(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


@pytest.fixture
def servers(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The gateway's config over the stateful server and server-filesystem, and each one's start log."""
    files = tmp_path / "files"
    files.mkdir()
    (files / "small.txt").write_text("just a line\n", encoding="utf-8")
    fs = filesystem_server(files)
    stateful_log, fs_log = tmp_path / "stateful.starts", tmp_path / "fs.starts"
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": {
        "st": counted([sys.executable, str(STATEFUL)], stateful_log),
        "fs": counted([fs["command"], *fs["args"]], fs_log)}, "ctxsieve": {"tool_search": "off", "client_idle_s": 2}}))
    return config, stateful_log, fs_log


@pytest.fixture
def http_gateway(servers: tuple[Path, Path, Path], stub_url: str, request: pytest.FixtureRequest) -> str:
    return serve_http(servers[0], stub_url, request)


async def answer_colour(_context: Any, _params: Any) -> mt.ElicitResult:
    return mt.ElicitResult(action="accept", content={"colour": "teal", "value": "teal"})


async def answer_roots(_context: Any) -> mt.ListRootsResult:
    return mt.ListRootsResult(roots=[mt.Root(uri="file:///work/app", name="app")])


def server_of(target: str | Path, url: str) -> Any:
    """What a `Client` connects to: `target` is the HTTP gateway's URL, or the config to start a stdio gateway on."""
    return target if isinstance(target, str) else StdioServerParameters(
        command=str(BIN / "ctxsieve-gateway"), args=["--config", str(target), "--url", url])


@asynccontextmanager
async def connect(target: str | Path, mode: str, url: str, name: str = "tests") -> AsyncIterator[Client]:
    """A client of the given era that answers elicitations and roots requests."""
    info = mt.Implementation(name=name, version="1")
    async with Client(server_of(target, url), mode=mode, elicitation_callback=answer_colour,
                      list_roots_callback=answer_roots, client_info=info) as client:
        yield client


async def session_of_calls(client: Client, files: Path) -> tuple[list[str], list[str], str]:
    await client.list_tools()
    ticks = [text(await client.call_tool("tick", {})) for _ in range(5)]
    reads = [text(await client.call_tool("read_text_file", {"path": str(files / "small.txt")})) for _ in range(5)]
    colour = text(await client.call_tool("colour", {}))
    return ticks, reads, colour


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_an_upstream_starts_once_per_client_and_keeps_its_state(
        transport: str, mode: str, servers: tuple[Path, Path, Path], stub_url: str, request: pytest.FixtureRequest
        ) -> None:
    config, stateful_log, fs_log = servers
    target: str | Path = request.getfixturevalue("http_gateway") if transport == "http" else config

    async def main() -> tuple[str, tuple[list[str], list[str], str]]:
        async with connect(target, mode, stub_url) as client:
            return client.protocol_version, await session_of_calls(client, config.parent / "files")

    version, (ticks, reads, colour) = asyncio.run(main())
    assert (version == MODERN) == (mode == "auto"), version
    pid = ticks[0].rsplit(" ", 1)[1]
    assert ticks == [f"call {n} in pid {pid}" for n in range(1, 6)], "one upstream process kept its count"
    assert reads == ["just a line\n"] * 5
    era = "input-required round" if mode == "auto" else "elicitation request"
    assert colour == f"colour teal ({era})", "the upstream's question reached the client and its answer came back"
    assert starts(stateful_log) == 2 and starts(fs_log) == 2, "once for the gateway's own listing, once for the client"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_old_servers_questions_reach_a_2026_client_as_input_required_rounds(
        transport: str, tmp_path: Path, stub_url: str, request: pytest.FixtureRequest) -> None:
    """A server that speaks only the session era asks by elicitation and roots requests, which a 2026-07-28 client
    cannot be sent: the gateway asks it in input-required rounds and takes the answers back."""
    log = tmp_path / "old.starts"
    config = tmp_path / "old.json"
    config.write_text(json.dumps({"mcpServers": {"old": counted([sys.executable, str(STATEFUL), "--handshake-only"],
                                                                log)}, "ctxsieve": {"tool_search": "off"}}))
    target: str | Path = serve_http(config, stub_url, request) if transport == "http" else config

    async def main() -> tuple[str, list[str]]:
        async with connect(target, "auto", stub_url) as client:
            answers = [text(await client.call_tool(name, {})) for name in ("tick", "colour", "roots", "tick")]
            return client.protocol_version, answers

    version, answers = asyncio.run(main())
    assert version == MODERN
    assert answers[1] == "colour teal (elicitation request)" and answers[2] == "roots file:///work/app"
    assert answers[3].startswith("call 2 "), "the same old server answered before and after its questions"
    assert starts(log) == 2


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_without_roots_reads_where_server_filesystem_was_started(
        transport: str, mode: str, servers: tuple[Path, Path, Path], stub_url: str, request: pytest.FixtureRequest
        ) -> None:
    """The SDK's `Client` as it comes declares no roots. server-filesystem asks for roots only when its client
    declares them, else keeps the folders on its command line: its session through the gateway must not declare
    them either (a 2026-07-28 client's first call used to fail with "List roots not supported")."""
    config = servers[0]
    files = config.parent / "files"
    target: str | Path = request.getfixturevalue("http_gateway") if transport == "http" else config

    async def main() -> tuple[str, list[str]]:
        async with Client(server_of(target, stub_url), mode=mode) as client:
            first = await client.call_tool("read_text_file", {"path": str(files / "small.txt")})  # no listing first
            await client.list_tools()
            rest = [await client.call_tool(name, {"path": str(files)})
                    for name in ("list_directory", "list_allowed_directories")]
            return client.protocol_version, [text(result) for result in (first, *rest)]

    version, (read, listed, allowed) = asyncio.run(main())
    assert (version == MODERN) == (mode == "auto"), version
    assert read == "just a line\n" and "[FILE] small.txt" in listed
    assert allowed.splitlines()[1:] == [str(files.resolve())], "the folder it was started on"


async def allowed_once_settled(client: Client, folder: Path) -> str:
    """server-filesystem's allowed directories once they name `folder` (it applies roots as they arrive)."""
    for _ in range(50):
        allowed = text(await client.call_tool("list_allowed_directories", {}))
        if str(folder) in allowed:
            break
        await anyio.sleep(0.1)
    return allowed


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_that_declares_roots_is_asked_and_server_filesystem_uses_them(
        transport: str, mode: str, servers: tuple[Path, Path, Path], stub_url: str, request: pytest.FixtureRequest,
        tmp_path: Path) -> None:
    """server-filesystem asks for roots as soon as its session is up (during the client's listing): a session-era
    client is asked at once; a 2026-07-28 client, in its next call's input-required round."""
    target: str | Path = request.getfixturevalue("http_gateway") if transport == "http" else servers[0]
    mine = (tmp_path / "mine").resolve()
    mine.mkdir()
    (mine / "notes.txt").write_text("from the client's own root\n", encoding="utf-8")
    asked: list[str] = []

    async def my_roots(_context: Any) -> mt.ListRootsResult:
        asked.append("roots")
        return mt.ListRootsResult(roots=[mt.Root(uri=mine.as_uri(), name="mine")])

    async def main() -> tuple[str, str]:
        async with Client(server_of(target, stub_url), mode=mode, list_roots_callback=my_roots) as client:
            await client.list_tools()
            allowed = await allowed_once_settled(client, mine)
            return allowed, text(await client.call_tool("read_text_file", {"path": str(mine / "notes.txt")}))

    allowed, read = asyncio.run(main())
    assert asked == ["roots"], "asked once, by the client's own session"
    assert allowed.splitlines()[1:] == [str(mine)] and read == "from the client's own root\n"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_server_that_asks_what_the_client_did_not_declare_is_refused_and_goes_on(
        mode: str, tmp_path: Path, stub_url: str) -> None:
    """An old server that asks whoever calls (roots, elicitation) gets the refusal a session without the capability
    gives, in either era; its own answer to the call reaches the client, and the next call is served as before."""
    config = tmp_path / "old.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"command": sys.executable,
                                                         "args": [str(STATEFUL), "--handshake-only"]}},
                                  "ctxsieve": {"tool_search": "off"}}))

    async def main() -> list[Any]:
        async with Client(server_of(config, stub_url), mode=mode) as client:
            return [await client.call_tool(name, {}) for name in ("tick", "roots", "colour", "tick")]

    tick, roots, colour, again = asyncio.run(main())
    assert roots.is_error and "List roots not supported" in text(roots)
    assert colour.is_error and "Elicitation not supported" in text(colour)
    assert text(tick).startswith("call 1 ") and text(again).startswith("call 2 ")


def test_a_2026_client_listens_to_an_old_servers_resource_through_the_gateway(tmp_path: Path, stub_url: str) -> None:
    """`subscriptions/listen` in place of resources/subscribe: the gateway subscribes at the owner (a session-era
    server) and its updates reach the client's listen stream."""
    from mcp.shared.subscriptions import ResourceUpdated

    config = tmp_path / "old.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"command": sys.executable,
                                                         "args": [str(STATEFUL), "--handshake-only"]}},
                                  "ctxsieve": {"tool_search": "off"}}))

    async def main() -> tuple[Any, str]:
        async with connect(config, "auto", stub_url) as client, \
                client.listen(resource_subscriptions=["state://count"]) as stream:
            await client.call_tool("tick", {})
            with anyio.fail_after(20):
                event = await stream.__anext__()
            read = await client.read_resource("state://count")
            return event, read.contents[0].text

    event, count = asyncio.run(main())
    assert event == ResourceUpdated(uri="state://count") and count == "1"


def serve_http(config: Path, url: str, request: pytest.FixtureRequest) -> str:
    """`ctxsieve-gateway --http` on a free port for this test (stopped after it); its /mcp URL."""
    held = ExitStack()
    request.addfinalizer(held.close)
    return held.enter_context(gateway_over_http([str(BIN / "ctxsieve-gateway"), "--config", str(config), "--url",
                                                 url]))


def test_modern_http_clients_are_told_apart_and_their_upstreams_close_when_idle(
        http_gateway: str, servers: tuple[Path, Path, Path], stub_url: str) -> None:
    _, stateful_log, _ = servers

    async def calls(name: str, n: int) -> list[str]:
        async with connect(http_gateway, "auto", stub_url, name=name) as client:
            return [text(await client.call_tool("tick", {})) for _ in range(n)]

    first = asyncio.run(calls("editor-a", 2))
    again = asyncio.run(calls("editor-a", 1))  # the same client (credential and clientInfo): the same session
    other = asyncio.run(calls("editor-b", 1))
    assert [t.split(" in ")[0] for t in [*first, *again]] == ["call 1", "call 2", "call 3"]
    assert other[0].startswith("call 1 ") and other[0].split()[-1] != first[0].split()[-1], "kept apart"
    time.sleep(3.5)  # client_idle_s is 2: both clients' upstream sessions are closed
    later = asyncio.run(calls("editor-a", 1))
    assert later[0].startswith("call 1 "), "a new session for a client that had gone"
    assert starts(stateful_log) == 1 + 3


def test_a_modern_http_clients_slow_upstream_is_not_closed_as_idle_while_it_serves(
        tmp_path: Path, stub_url: str, request: pytest.FixtureRequest) -> None:
    """A server slower to start than client_idle_s: the client's request is being served, so its session is not
    idle (it was closed under the call, which failed, and the next call started the server again)."""
    log = tmp_path / "slow.starts"
    slow = counted(["sh", "-c", 'sleep 2; exec "$@"', "slow", sys.executable, str(STATEFUL)], log)
    config = tmp_path / "slow.json"
    config.write_text(json.dumps({"mcpServers": {"st": slow}, "ctxsieve": {"tool_search": "off", "client_idle_s": 1}}))

    async def main() -> list[str]:
        async with connect(serve_http(config, stub_url, request), "auto", stub_url) as client:
            return [text(await client.call_tool("tick", {})) for _ in range(2)]

    first, second = asyncio.run(main())
    assert first.startswith("call 1 ") and second.startswith("call 2 "), (first, second)
    assert starts(log) == 2, "once for the gateway's own listing, once for the client"


def test_a_2026_http_calls_mcp_param_header_is_checked_against_the_listed_schema(
        tmp_path: Path, stub_url: str, request: pytest.FixtureRequest) -> None:
    """2026-07-28 mirrors an argument annotated `x-mcp-header` into an `Mcp-Param-*` header that the server checks
    against the body; the gateway checks it against the schema it lists for the tool (without a tools/list,
    every upstream's included, before each call)."""
    config = tmp_path / "st.json"
    config.write_text(json.dumps({"mcpServers": {"st": {"command": sys.executable, "args": [str(STATEFUL)]}},
                                  "ctxsieve": {"tool_search": "off"}}))
    url = serve_http(config, stub_url, request)

    async def main() -> str:
        async with Client(url) as client:  # it sends the header once it has listed the tool
            await client.list_tools()
            return text(await client.call_tool("route", {"region": "eu-west"}))

    assert asyncio.run(main()) == "routed to eu-west"
    meta = {mt.PROTOCOL_VERSION_META_KEY: MODERN, mt.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
            mt.CLIENT_CAPABILITIES_META_KEY: {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "route", "arguments": {"region": "eu-west"}, "_meta": meta}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "route",
               "Accept": "application/json, text/event-stream"}
    wrong = httpx.post(url, json=body, headers={**headers, "Mcp-Param-Region": "us-east"})
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == mt.HEADER_MISMATCH
    assert httpx.post(url, json=body, headers={**headers, "Mcp-Param-Region": "eu-west"}).status_code == 200


def test_auto_tool_search_leaves_claude_code_its_own(tmp_path: Path, stub_url: str) -> None:
    """Claude Code defers MCP tools behind its ToolSearch: under `auto` it gets every tool (by clientInfo name),
    any other client past the threshold gets find_tools and call_tool."""
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"mcpServers": {"st": {"command": sys.executable, "args": [str(STATEFUL)]}},
                                  "ctxsieve": {"tool_search": "auto", "tool_search_threshold": 1}}))

    async def listed(name: str) -> set[str]:
        async with connect(config, "auto", stub_url, name=name) as client:
            return {t.name for t in (await client.list_tools()).tools}

    assert {"tick", "colour"} <= asyncio.run(listed("claude-code"))
    other = asyncio.run(listed("some-agent"))
    assert {"find_tools", "call_tool"} <= other and "tick" not in other


@pytest.mark.parametrize("level", ["debug", None])
def test_a_2026_clients_log_level_travels_with_each_request(tmp_path: Path, stub_url: str, level: str | None) -> None:
    """2026-07-28 makes logs a per-request opt-in (`_meta` logLevel): the gateway forwards it, and invents none."""
    config = tmp_path / "conf.json"
    config.write_text(json.dumps({"mcpServers": {"conf": {"command": sys.executable, "args": [str(CONFORMANCE)]}},
                                  "ctxsieve": {"tool_search": "off"}}))
    heard: list[Any] = []

    async def on_log(params: Any) -> None:
        heard.append(params.data)

    async def main() -> str:
        server = StdioServerParameters(command=str(BIN / "ctxsieve-gateway"),
                                       args=["--config", str(config), "--url", stub_url])
        async with Client(server, logging_callback=on_log, log_level=level) as client:
            return text(await client.call_tool("test_tool_with_logging", {}))

    assert asyncio.run(main()) == "Tool with logging executed successfully"
    assert len(heard) == (3 if level else 0), heard
