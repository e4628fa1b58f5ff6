"""`ctxsieve gateway` end to end: a real MCP client session (the MCP SDK) over stdio, in front of real third-party
servers (npm's @modelcontextprotocol/server-filesystem, PyPI's mcp-server-git) and the tests' own fault server,
reaching the real service (with the stand-in model: ranking quality is not what these tests are about)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.gateway_stops import NEXT_START, STOPS, stopped_gateway

ROOT = Path(__file__).resolve().parents[3]
NODE_BIN = ROOT / "tests" / "mcp" / "node_modules" / ".bin"
FAULTS = ROOT / "tests" / "mcp" / "fault_server.py"
BIN = Path(sys.executable).parent
BIG = "\n\n".join(f"## Section {s}\n\n" + "\n\n".join(
    f"Entry {s}.{p}: the pump at station {s} moved {p * 13} litres while valve {p % 9} stayed shut." for p in range(60))
    for s in range(30))


def filesystem_server(root: Path) -> dict[str, Any]:
    command = NODE_BIN / "mcp-server-filesystem"
    assert command.exists(), "run `make test` (it installs tests/mcp's npm packages) or `npm ci --prefix tests/mcp`"
    return {"command": str(command), "args": [str(root)]}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files")
    (root / "big.md").write_text(BIG, encoding="utf-8")
    (root / "small.txt").write_text("just a line\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    git = ["git", "-C", str(root), "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(120):
        (root / "notes.txt").write_text(f"note {i}\n")
        subprocess.run([*git, "add", "notes.txt"], check=True)
        subject = "Fix the flaky pump calibration test" if i == 77 else f"Update note {i} for station {i % 9}"
        subprocess.run([*git, "commit", "-q", "-m", subject, "-m", f"Details of change {i}: " + "word " * 40],
                       check=True)
    return root


def write_config(path: Path, servers: dict[str, Any], **options: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, "ctxsieve": options}), encoding="utf-8")
    return path


@asynccontextmanager
async def gateway(config: Path, url: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=str(BIN / "ctxsieve"), args=["gateway", "--config", str(config),
                                                                       "--url", url], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(config: Path, url: str, steps: Callable[[ClientSession], Awaitable[Any]], env: dict[str, str] | None = None
        ) -> Any:
    async def main() -> Any:
        async with gateway(config, url, env) as session:
            return await steps(session)
    return asyncio.run(main())


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory, files: Path, repo: Path) -> Path:
    folder = tmp_path_factory.mktemp("config")
    faults = {"command": sys.executable, "args": [str(FAULTS)], "ctxsieve": {"timeout_s": 5}}
    git = {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(repo)]}
    return write_config(folder / "servers.json", {"fs": filesystem_server(files), "git": git, "faults": faults},
                        tool_search="off")


def test_every_tool_is_listed_with_intent_and_without_output_schema(standard: Path, stub_url: str) -> None:
    tools = run(standard, stub_url, lambda s: s.list_tools()).tools
    names = {t.name for t in tools}
    own = {"filter_ref", "fetch_ref", "search_code"}
    assert {"read_text_file", "list_directory", "git_log", "git_status", "crash"} | own <= names, "every ref tool"
    assert {"fs__read_file", "faults__read_file"} <= names and "read_file" not in names, "a shared name is prefixed"
    assert not {"find_tools", "call_tool"} & names, "tool search is off"
    upstream = [t for t in tools if t.name not in own]
    assert all("intent" in t.input_schema["properties"] for t in upstream)
    assert all(t.output_schema is None for t in tools), "server-filesystem declares some: never advertised"


def test_a_large_file_comes_back_cut_to_the_intent_and_whole_by_ref(standard: Path, stub_url: str,
                                                                     files: Path) -> None:
    async def steps(s: ClientSession) -> tuple[Any, Any, str]:
        cut = await s.call_tool("read_text_file", {"path": str(files / "big.md"),
                                                   "intent": "how many litres did station 17 move in entry 17.42"})
        ref = text(cut).rsplit("[ctxsieve ", 1)[1].split(":", 1)[0]
        return cut, await read_whole(s, ref), ref

    cut, whole, ref = run(standard, stub_url, steps)
    shown = text(cut)
    assert not cut.is_error and cut.structured_content is None, "a filtered result carries no structured copy"
    assert "Entry 17.42:" in shown and len(shown) < len(BIG) / 5
    assert f'filter_ref(ref="{ref}", query="...")' in shown and f'fetch_ref(ref="{ref}")' in shown
    assert f're-run: read_text_file(path="{files / "big.md"}")' in shown
    assert "/v1/" not in shown, "the tools style: the model is told what it can call"
    assert whole.rstrip("\n").split("\n") == BIG.rstrip("\n").split("\n"), "stored whole: fetch_ref gives it back"


async def read_whole(s: ClientSession, ref: str) -> str:
    """A ref read through fetch_ref as the model would: a whole fetch larger than an MCP result shows comes in
    pages of whole lines, each naming the call for the next lines (Claude Code would save a larger one to a file)."""
    pages: list[str] = []
    asked: dict[str, str] = {"ref": ref}
    while True:
        page = text(await s.call_tool("fetch_ref", asked))
        if not page.startswith("ctxsieve: lines "):
            return "\n".join([*pages, page])
        body, note = page.split("\n", 1)[1].rsplit("\n", 1)
        pages.append(body)
        first, last = re.search(r"\[lines (\d+)-(\d+) not shown", note).groups()  # type: ignore[union-attr]
        assert f'fetch_ref(ref="{ref}", lines="{first}-' in note, note
        asked = {"ref": ref, "lines": f"{first}-{last}"}


def test_without_intent_a_large_output_is_an_outline(standard: Path, stub_url: str, files: Path) -> None:
    result = run(standard, stub_url, lambda s: s.call_tool("read_text_file", {"path": str(files / "big.md")}))
    shown = text(result)
    assert shown.startswith("Outline") and "[Section 29]" in shown and "a part: fetch_ref(" in shown
    assert len(shown) < len(BIG) / 5


def test_small_outputs_errors_and_images_pass_through(standard: Path, stub_url: str, files: Path) -> None:
    async def steps(s: ClientSession) -> list[Any]:
        return [await s.call_tool("read_text_file", {"path": str(files / "small.txt")}),
                await s.call_tool("read_text_file", {"path": "/etc/passwd"}),
                await s.call_tool("fail", {}),
                await s.call_tool("picture", {}),
                await s.call_tool("rows", {"count": 3}),
                await s.call_tool("rows", {"count": 3000})]

    small, outside, fail, picture, few, many = run(standard, stub_url, steps)
    assert text(small) == "just a line\n" and small.structured_content == {"content": "just a line\n"}
    assert outside.is_error and "outside allowed directories" in text(outside)
    assert fail.is_error and text(fail).count("frame ") == 400 and "disk on fire" in text(fail), "verbatim"
    assert [b.type for b in picture.content] == ["text", "image"] and picture.content[1].mime_type == "image/png"
    assert few.structured_content == {"rows": [f"record {i}: sensor {i % 7} read {i * 3} kPa at station {i % 11}"
                                               for i in range(3)]}
    assert many.structured_content is None and "[ctxsieve src_" in text(many)


def test_git_output_is_cut_to_what_the_intent_asks(standard: Path, stub_url: str, repo: Path) -> None:
    result = run(standard, stub_url, lambda s: s.call_tool("git_log", {
        "repo_path": str(repo), "max_count": 120, "intent": "which commit fixed the flaky pump calibration test"}))
    shown = text(result)
    assert "Fix the flaky pump calibration test" in shown and "[ctxsieve src_" in shown
    assert shown.count("Commit: ") < 60


def test_the_call_is_stored_with_secrets_masked_and_the_session_reported(standard: Path, stub_url: str) -> None:
    result = run(standard, stub_url, lambda s: s.call_tool("lookup", {"api_token": "s3cr3t-value", "station": 4}))
    shown = text(result)
    assert "s3cr3t-value" not in shown and 'api_token="***"' in shown
    ref = shown.rsplit("[ctxsieve ", 1)[1].split(":", 1)[0]
    stored = httpx.get(f"{stub_url}/v1/refs/{ref}").json()
    assert stored["source"] == {"tool": "lookup", "args": {"api_token": "***", "station": 4}}
    sessions = httpx.get(f"{stub_url}/v1/sessions").json()["sessions"]
    ours = [s for s in sessions if s["session"].startswith("gw-")]
    assert ours, "each client session is a ctxsieve session"
    assert "mcp" in {s["agent"] for s in ours}, "its agent is the client's own name (the SDK's clientInfo)"


def test_faults_are_said_and_the_other_servers_keep_working(tmp_path: Path, files: Path, stub_url: str) -> None:
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('cannot open the database "
                                                        "at /nope\\n'); sys.exit(3)"]}
    # its calls get 5 s (a restarted server's start is inside a call's time); the start waits for its tools
    faults = {"command": sys.executable, "args": [str(FAULTS)], "ctxsieve": {"timeout_s": 5, "start_timeout_s": 120}}
    config = write_config(tmp_path / "faulty.json", {"fs": filesystem_server(files), "faults": faults,
                                                      "broken": broken}, tool_search="off")

    async def steps(s: ClientSession) -> list[Any]:
        out = [await s.call_tool("hang", {"seconds": 30}), await s.call_tool("crash", {}),
               await s.call_tool("rows", {"count": 2}), await s.call_tool("list_allowed_directories", {}),
               await s.call_tool("call_tool", {"name": "nothing"}), await s.call_tool("grow", {})]
        out.append(await s.list_tools())
        out.append(await s.call_tool("added", {}))
        return out

    hang, crash, again, other, unknown, _, listed, added = run(config, stub_url, steps)
    assert hang.is_error and "faults: hang did not answer within 5 s" in text(hang)
    assert crash.is_error and "server 'faults' failed" in text(crash) and "crashing on purpose" in text(crash)
    assert not again.is_error and "record 1" in text(again), "a crashed server is started again on its next call"
    assert not other.is_error and str(files) in text(other)
    assert unknown.is_error and "server 'broken' failed" in text(unknown) and "cannot open the database" in text(
        unknown)
    assert "added" in {t.name for t in listed.tools} and text(added) == "added works", "list_changed followed"


HOLD_LOCK = ("import fcntl, sys, time\nf = open(sys.argv[1], 'ab')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
             "print('held', flush=True)\ntime.sleep(120)\n")


@contextmanager
def held_by_another_process(lock: Path) -> Iterator[None]:
    """`lock` flocked by another process (a gateway still serving, as another process sees it) while inside."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def log_folder(parent: Path, name: str, lock: bool = True) -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "fs.stderr.log").write_text("Secure MCP Filesystem Server running on stdio\n", encoding="utf-8")
    if lock:
        (folder / ".lock").touch()
    return folder


def test_a_gateway_removes_its_servers_logs_and_those_of_gateways_killed_before(tmp_path: Path, files: Path,
                                                                                 stub_url: str) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    killed = log_folder(temp, "ctxsieve-gateway-4242-k1ll3dxx")  # SIGKILLed (doctor's check kills its own): unlocked
    running = log_folder(temp, "ctxsieve-gateway-4343-l1v3l1v3")  # still serving, its lock held
    config = write_config(tmp_path / "fs.json", {"fs": filesystem_server(files)}, tool_search="off")

    recorded: list[str] = []

    async def steps(s: ClientSession) -> list[str]:
        await s.call_tool("list_allowed_directories", {})
        for record in temp.glob("ctxsieve-gateway-*/servers"):
            recorded.extend(line for line in record.read_text().split("\n") if line)
        return sorted(str(p.relative_to(temp)) for p in temp.rglob("*") if p.parent.name != running.name)

    with held_by_another_process(running / ".lock"):
        during = run(config, stub_url, steps, env={**os.environ, "TMPDIR": str(temp)})
    own = [p for p in during if p != running.name]
    assert len(own) == 4 and re.fullmatch(r"ctxsieve-gateway-\d+-[a-z0-9_]{8}", own[0]), during
    assert own[1:] == [f"{own[0]}/.lock", f"{own[0]}/fs.stderr.log", f"{own[0]}/servers"], \
        "its server's stderr is logged while it serves, and the servers it runs are recorded"
    gateway, *servers = recorded
    assert re.fullmatch(r"\d+ \d+ [0-9a-f-]+ pid:\[\d+\]", gateway), "the gateway, its boot and namespace first"
    assert servers and all(re.fullmatch(r"\d+ \d+", line) for line in servers), "each server: its id, its start"
    assert killed.name not in during, "the killed gateway's folder went at the start"
    left = sorted(p.name for p in temp.iterdir())
    assert left == [running.name], "its own folder is gone when it stops"


@pytest.mark.parametrize("stop", sorted(STOPS))
def test_an_agent_stopping_the_gateway_stops_its_servers(tmp_path: Path, stub_url: str, stop: str) -> None:
    """The SDK starts each stdio server in a session of its own, beyond the agent's signals: a gateway that died
    of the agent's signal would leave a server that outlives its stdin running for good (killed outright, `kill-9`,
    until the next gateway's start ends what it recorded: where /proc tells start times)."""
    if stop in NEXT_START and not Path("/proc/self/stat").exists():
        pytest.skip("a killed gateway's servers are ended from a record of /proc start times")
    stopped = stopped_gateway(tmp_path, stop, stub_url)
    assert not stopped.left, "neither the gateway nor a server it started outlives its stop"
    # it ends by the agent's first signal, or (a machine too busy to close in the agent's half second) its waiting
    # parent takes the agent's SIGKILL while the gateway goes on closing
    assert stopped.status in (STOPS[stop][1], -signal.SIGKILL), stopped.status
    assert stopped.logs == [], "its log folder went with it"


def test_a_client_gone_at_once_leaves_no_server_behind(tmp_path: Path, stub_url: str) -> None:
    """Stdin closed right after the handshake: the gateway's own listing session of a server that outlives its stdin
    is still closing (the SDK's 4 s), and the gateway waits for it rather than leaving it running."""
    stopped = stopped_gateway(tmp_path, "stdin-closed", stub_url, calls=False)
    assert stopped.status == 0 and not stopped.left and stopped.logs == [], stopped


def test_only_folders_of_gateways_gone_are_removed(tmp_path: Path) -> None:
    from ctxsieve_client.gateway.upstreams import LogsFolder, remove_orphans

    gone = log_folder(tmp_path, "ctxsieve-gateway-4242-g0neg0ne")
    alive = log_folder(tmp_path, "ctxsieve-gateway-4343-l1v3l1v3")
    huge = log_folder(tmp_path, "ctxsieve-gateway-99999999999999999999-hug3hug3")  # a process id no system gives
    saved = log_folder(tmp_path, "ctxsieve-gateway-4242-abc-my-saved-logs")  # not a name a gateway makes
    old = log_folder(tmp_path, "ctxsieve-gateway-0ld0ld0l", lock=False)  # named before the locks
    fresh = log_folder(tmp_path, "ctxsieve-gateway-fr3shfr3", lock=False)
    two_days_ago = time.time() - 2 * 86_400
    for path in (old / "fs.stderr.log", old):
        os.utime(path, (two_days_ago, two_days_ago))
    (tmp_path / "ctxsieve-gateway-l1nkl1nk").symlink_to(alive)
    with held_by_another_process(alive / ".lock"):
        removed = remove_orphans(tmp_path)
        mine = LogsFolder.make(tmp_path)
        assert remove_orphans(tmp_path) == [], "a running gateway's folder (this one's too) is kept"
    assert sorted(removed) == sorted([gone, huge, old])
    assert {p.name for p in tmp_path.iterdir()} == {alive.name, saved.name, fresh.name, "ctxsieve-gateway-l1nkl1nk",
                                                    mine.path.name}
    mine.remove()
    assert not mine.path.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="start times are read from /proc")
def test_a_dead_gateways_record_ends_only_the_servers_still_running_as_recorded(tmp_path: Path) -> None:
    """A recorded process id is killed only while it names the process recorded (the same start time: an id given
    to another process since has another), only once the gateway that wrote the record is gone, and only in the
    boot and process namespace it was written in."""
    from ctxsieve_client.gateway.upstreams import (
        SERVERS,
        _boot_and_namespace,
        _started,
        _stat_fields,
        end_recorded_servers,
    )

    ended = subprocess.Popen(["true"])
    ended.wait()
    here = _boot_and_namespace()
    recorded, reused = (subprocess.Popen(["sleep", "60"], start_new_session=True) for _ in range(2))

    def record(gateway: str) -> Path:
        (tmp_path / SERVERS).write_text(f"{gateway}\n{recorded.pid} {_started(recorded.pid)}\n"
                                        f"{reused.pid} {int(_started(reused.pid) or 0) - 1}\nnot a line\n")
        return tmp_path

    try:
        assert end_recorded_servers(record(f"{os.getpid()} {_started(os.getpid())} {here}")) == [], "its gateway runs"
        assert end_recorded_servers(record(f"{ended.pid} 1 another-boot {here.split()[-1]}")) == []
        assert end_recorded_servers(record(f"{ended.pid} 1 {here.split()[0]} pid:[1]")) == [], "another namespace"
        assert recorded.poll() is None and reused.poll() is None
        zombie = subprocess.Popen(["true"])  # a killed gateway not reaped yet: dead, though /proc still shows it
        deadline = time.monotonic() + 5
        while _stat_fields(zombie.pid)[:1] != ["Z"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert end_recorded_servers(record(f"{zombie.pid} {_stat_fields(zombie.pid)[19]} {here}")) == [recorded.pid]
        zombie.wait()
        assert recorded.wait(5) == -signal.SIGKILL and reused.poll() is None
        assert end_recorded_servers(tmp_path / "nothing") == []
    finally:
        for process in (recorded, reused):
            process.kill()
            process.wait()


def test_when_the_service_is_down_the_output_still_reaches_the_agent(tmp_path: Path, files: Path) -> None:
    config = write_config(tmp_path / "fs.json", {"fs": filesystem_server(files)})
    result = run(config, "http://127.0.0.1:9", lambda s: s.call_tool("read_text_file", {
        "path": str(files / "big.md"), "intent": "station 3"}))
    first, *rest = text(result).split("\n", 1)
    assert first.startswith("[ctxsieve: this output is unfiltered") and rest == [BIG]
    assert not result.is_error


QUERY = "the commit logs of this repository"
UNRELATED = "zebra quantum fiddle"  # shares no word with any tool: only recorded use can point anywhere


def top_tool(url: str, query: str) -> str:
    answer = httpx.post(f"{url}/v1/tools/select", json={"query": query, "toolsets": ["gateway.fs", "gateway.git"],
                                                       "k": 1}).json()
    return str(answer["selected"][0]["name"])


def test_tool_search_lists_few_tools_finds_the_rest_and_learns(tmp_path: Path, files: Path, repo: Path,
                                                                 stub_url: str) -> None:
    git = {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(repo)]}
    config = write_config(tmp_path / "search.json", {"fs": filesystem_server(files), "git": git},
                          tool_search="auto", tool_search_threshold=10, always=["list_allowed_directories"])

    async def steps(s: ClientSession) -> list[Any]:
        listed = await s.list_tools()
        before = top_tool(stub_url, UNRELATED)
        via = await s.call_tool("call_tool", {"name": "list_directory", "arguments": {"path": str(files)}})
        return [listed, before, via,
                await s.call_tool("find_tools", {"query": QUERY, "k": 3}),
                await s.call_tool("find_tools", {"query": UNRELATED, "k": 50}),
                await s.call_tool("git_log", {"repo_path": str(repo), "max_count": 2})]

    listed, before, via, found, nothing_fits, hidden = run(config, stub_url, steps)
    assert {t.name for t in listed.tools} == {"find_tools", "call_tool", "filter_ref", "fetch_ref", "search_code",
                                              "list_allowed_directories"}
    answer = json.loads(text(found))
    assert "git_log" in [t["name"] for t in answer["tools"]] and len(answer["tools"]) == 3
    assert all("intent" in t["inputSchema"]["properties"] and "outputSchema" not in t for t in answer["tools"])
    vague = json.loads(text(nothing_fits))
    assert len(vague["tools"]) == 26 and "none of these fits well" in vague["note"], "never nothing, and says so"
    assert not hidden.is_error and "Commit" in text(hidden), "a found tool is called by its own name"
    assert "small.txt" in text(via), "call_tool reaches any upstream tool"
    toolsets = {t["toolset"] for t in httpx.get(f"{stub_url}/v1/toolsets").json()["toolsets"]}
    assert {"gateway.fs", "gateway.git"} <= toolsets
    # git_log was found for UNRELATED and then called in the same session: that use was recorded.
    assert before != "git_log" and top_tool(stub_url, UNRELATED) == "git_log"


def test_a_bad_config_stops_the_gateway_naming_the_key(tmp_path: Path) -> None:
    config = write_config(tmp_path / "bad.json", {"fs": {"command": "x"}}, max_token=5)
    done = subprocess.run([str(BIN / "ctxsieve"), "gateway", "--config", str(config)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "ctxsieve.max_token: unknown setting" in done.stderr
    beyond = subprocess.run([str(BIN / "ctxsieve-gateway"), "--config", str(write_config(
        tmp_path / "ok.json", {"fs": {"command": "x"}})), "--http", "--host", "0.0.0.0"], capture_output=True,
        text=True, timeout=60, env={"PATH": str(BIN)})
    assert beyond.returncode == 2 and "needs a key" in beyond.stderr


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def gateway_over_http(command: list[str]) -> Iterator[str]:
    """A gateway command served with `--http` on a free loopback port: its /mcp URL while the block runs."""
    port = free_port()
    process = subprocess.Popen([*command, "--http", "--port", str(port)], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_gateway(tmp_path: Path, files: Path, stub_url: str) -> Iterator[tuple[str, str]]:
    """`ctxsieve gateway --http` with a key, on loopback; yields its URL and the key."""
    key = "gw-key-1"
    config = write_config(tmp_path / "http.json", {"fs": filesystem_server(files)})
    with gateway_over_http([str(BIN / "ctxsieve"), "gateway", "--config", str(config), "--url", stub_url,
                            "--api-key", key]) as url:
        yield url, key


def test_streamable_http_serves_mcp_and_refuses_strangers(http_gateway: tuple[str, str], files: Path) -> None:
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    url, key = http_gateway

    async def main() -> tuple[set[str], str]:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http, \
                streamable_http_client(url, http_client=http) as (read, write, *_), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            result = await session.call_tool("read_text_file", {
                "path": str(files / "big.md"), "intent": "how many litres did station 17 move in entry 17.42"})
            return names, text(result)

    names, shown = asyncio.run(main())
    assert "read_text_file" in names and "Entry 17.42:" in shown and "[ctxsieve src_" in shown
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert httpx.post(url, json=body).status_code == 401, "no key"
    assert httpx.post(url, json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
    rebinding = httpx.post(url, json=body, headers={"Authorization": f"Bearer {key}",
                                                    "Origin": "http://evil.example"})
    assert rebinding.status_code == 403 and "Origin" in rebinding.json()["error"]["message"]
    assert httpx.post(url, json=body, headers={"Authorization": f"Bearer {key}",
                                               "Host": "evil.example"}).status_code == 403


def test_the_mcp_inspector_cli_calls_through_the_gateway(tmp_path: Path, files: Path, stub_url: str) -> None:
    """One run with the MCP Inspector's own CLI (npm), as a user would try the gateway."""
    config = write_config(tmp_path / "inspector.json", {"fs": filesystem_server(files)})
    done = subprocess.run(
        [str(NODE_BIN / "mcp-inspector"), "--cli", "--method", "tools/call", "--tool-name", "read_text_file",
         "--tool-arg", f"path={files / 'big.md'}", "intent=how many litres did station 17 move in entry 17.42",
         "--", str(BIN / "ctxsieve"), "gateway", "--config", str(config), "--url", stub_url],
        capture_output=True, text=True, timeout=120, env={**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "c.json")})
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    shown = answer["content"][0]["text"]
    assert answer["isError"] is False and "Entry 17.42:" in shown and 'filter_ref(ref="src_' in shown


ENV_SERVER = ("import os\nfrom fastmcp import FastMCP\nserver = FastMCP('env')\n"
              "@server.tool(description='A variable of its environment.')\n"
              "def variable(name: str) -> str:\n    return os.environ.get(name, '<unset>')\n"
              "server.run(show_banner=False)\n")


@pytest.mark.parametrize(("inherit", "seen"), [(False, "<unset>"), (True, "from-the-agent")])
def test_inherit_env_passes_the_gateways_environment_to_its_servers(tmp_path: Path, stub_url: str, inherit: bool,
                                                                     seen: str) -> None:
    config = write_config(tmp_path / "env.json", {"env": {"command": sys.executable, "args": ["-c", ENV_SERVER]}},
                          inherit_env=inherit, tool_search="off")
    params = StdioServerParameters(command=str(BIN / "ctxsieve"), args=["gateway", "--config", str(config), "--url",
                                   stub_url], env={**os.environ, "CTXSIEVE_TEST_AGENT_VAR": "from-the-agent"})

    async def main() -> Any:  # the gateway started as an agent starts it: with the agent's environment
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("variable", {"name": "CTXSIEVE_TEST_AGENT_VAR"})

    result = asyncio.run(main())
    assert not result.is_error and text(result) == seen
