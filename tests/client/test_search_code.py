"""`search_code` as a user's agent calls it, judged by what the model is sent: the real Claude Code CLI and the real
Codex CLI, each with `ctxsieve mcp` and `ctxsieve gateway` as MCP servers started in a small git repository (the
service, with the stand-in model, may read its folder), against a scripted provider on loopback that records every
request. One CLI session makes every call: a search whose best definition is whole, one whose definition is cut by
the budget, and one naming a repository that is not indexed. The answers must name each definition's path and
qualified name with its true lines (checked against the file), say how to read the lines a cut left out, and bring
the service's 404 (naming `ctxsieve index`) to the model as a tool error. The MCP SDK's own `Client` checks the
same over both protocol eras."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.client.code_repository import NAME, check_hit, definition, hits_of, make_repository
from tests.client.gateway.test_codex_gateway import CODEX
from tests.client.gateway.test_gateway_eras import STATEFUL
from tests.client.hooks.test_claude_code_hook import CLAUDE
from tests.client.scripted_anthropic import ScriptedModel
from tests.client.scripted_openai import Call, ScriptedResponses
from tests.conftest import make_settings, serve_on_loopback, stub_models

BIN = Path(sys.executable).parent
WHOLE = "compute_invoice_total discount tax"  # best: billing/invoices.py compute_invoice_total, shown whole
CUT = "route_event"  # best: app/events.py route_event, far over the default budget
MISSING = {"query": "invoice", "repo": "no-such-repo"}
SMALL = {"query": WHOLE, "max_tokens": 200}  # the agent's own budget: fewer definitions, the rest counted


@dataclass(frozen=True)
class CodeService:
    url: str
    root: Path  # the repository (the agent's working folder)


@pytest.fixture(scope="module")
def code_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeService]:
    work = tmp_path_factory.mktemp("code-work")
    root = make_repository(work)
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("code-data"), read_roots=str(work)),
                                  stub_models())
    yield CodeService(url, root)
    stop()


def codex_config(api: str, entries: dict[str, dict[str, Any]]) -> str:
    """Codex's config.toml: its own provider at the scripted API, the servers approved."""
    lines = ['model = "gpt-6.1-sol"', f'openai_base_url = "{api}"', 'forced_login_method = "api"',
             'approval_policy = "never"', 'sandbox_mode = "read-only"']
    for name, entry in entries.items():
        env = ", ".join(f"{key} = {json.dumps(value)}" for key, value in entry["env"].items())
        lines += ["", f"[mcp_servers.{name}]", f"command = {json.dumps(entry['command'])}",
                  f"args = {json.dumps(entry['args'])}", f"env = {{{env}}}",
                  'default_tools_approval_mode = "approve"', "required = true"]
    return "\n".join(lines) + "\n"


def own_env() -> dict[str, str]:
    """What a console script started by an agent needs to import this checkout's code (a worktree's)."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}


def servers(service: CodeService, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """`ctxsieve mcp` as server "ctxsieve" and `ctxsieve gateway` (before the tests' small stateful server) as
    server "gw"."""
    gateway_config = tmp_path / "gateway.json"
    gateway_config.write_text(json.dumps({"mcpServers": {"st": {"command": sys.executable, "args": [str(STATEFUL)]}},
                                          "ctxsieve": {"tool_search": "off"}}))
    env = own_env()
    return {"ctxsieve": {"command": str(BIN / "ctxsieve"), "args": ["mcp", "--url", service.url], "env": env},
            "gw": {"command": str(BIN / "ctxsieve-gateway"), "args": ["--config", str(gateway_config), "--url",
                                                                        service.url], "env": env}}


def check_answers(root: Path, whole: str, cut: str) -> None:
    """The whole definition first with its true lines; the cut one with its true span and the line naming the rest."""
    found = hits_of(whole)
    assert found, whole
    check_hit(root, found[0], definition(root, "billing/invoices.py", "compute_invoice_total"))
    assert found[0].rest is None and found[0].rows[-1][0] == found[0].end, "shown whole"
    rate_for = next((h for h in found if h.name == "TaxTable.rate_for"), None)
    assert rate_for is not None, "a method under its qualified name"
    check_hit(root, rate_for, definition(root, "billing/tax.py", "TaxTable.rate_for"))
    closing = whole.rstrip().rsplit("\n", 1)[-1]
    assert closing.startswith("[ctxsieve search_code: ") and f"repository {NAME}, best first" in closing, closing
    assert closing.endswith(("best first]", "a name as the code writes it finds the most]")), "ready, or said lexical"
    shown = hits_of(cut)
    assert shown and shown[0].rest is not None, "cut by the budget"
    check_hit(root, shown[0], definition(root, "app/events.py", "route_event"))


def check_small(whole: str, small: str, count: Callable[[str], int]) -> None:
    """A small max_tokens shows fewer definitions, each still under its true lines, and says how many more it found;
    the whole answer as the model received it is within that budget (it bounded the code alone: the numbers and
    head lines came on top)."""
    assert count(small) <= SMALL["max_tokens"] and count(whole) <= 2000, (count(small), count(whole))
    assert 0 < len(hits_of(small)) < len(hits_of(whole)), small
    assert re.search(r"more found (is|are) not shown: a larger max_tokens or k shows more", small), small


def place_query(root: Path) -> tuple[dict[str, str], int]:
    """A place near route_event's end (`app/events.py:LINE`, as a compiler or a traceback writes it), and the line."""
    route = definition(root, "app/events.py", "route_event")
    return {"query": f"app/events.py:{route.end - 1}"}, route.end - 1


def check_place(root: Path, text: str, line: int) -> None:
    """A place the query points at is shown around its line, the true text at the true number, with the lines above
    it said not shown: a cut from the definition's first lines never reached the line asked for."""
    found = hits_of(text)
    assert found and found[0].name == "route_event", text
    file_lines = (root / "app/events.py").read_text(encoding="utf-8").split("\n")
    assert (line, file_lines[line - 1]) in found[0].rows, text
    first = found[0].rows[0][0]
    assert first > found[0].start and all(file_lines[n - 1] == t for n, t in found[0].rows), text
    assert f"⋮ lines {found[0].start}-{first - 1} not shown: read app/events.py lines {found[0].start}-{first - 1}" \
        in text, text


def check_missing(text: str) -> None:
    assert "404 not_found" in text and "'no-such-repo' is not indexed" in text, text
    assert "ctxsieve index PATH --name no-such-repo" in text, "the model is told how to index it"


# --- the MCP SDK's own client, both eras ---------------------------------------------------------------------


async def mcp_calls(service: CodeService, server: dict[str, Any], mode: str) -> list[tuple[bool, str]]:
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(service.root),
                                   env={**os.environ, **server["env"]})
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        names = {t.name for t in (await client.list_tools()).tools}
        assert "search_code" in names, names
        answers = [await client.call_tool("search_code", args)
                   for args in ({"query": WHOLE}, {"query": CUT}, MISSING, {"query": WHOLE},
                                {"query": WHOLE, "max_tokens": 200})]
    assert all(len(a.content) == 1 and a.structured_content is None for a in answers), "one text block each"
    texts = [(bool(a.is_error), a.content[0].text) for a in answers]  # type: ignore[union-attr]
    small, whole = texts.pop()[1], texts.pop()[1]  # once the repository is indexed: the same search, two budgets
    shown = [int(re.search(r"(\d+) definitions? of repository", text).group(1)) for text in (whole, small)]  # type: ignore[union-attr]
    assert 0 < shown[1] < shown[0] and "more found are not" not in whole, "a smaller budget shows fewer definitions"
    left = shown[0] - shown[1]
    said = f"; {left} more found {'is' if left == 1 else 'are'} not shown: a larger max_tokens or k shows more"
    assert said in small, small
    return texts


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("server", ["ctxsieve", "gw"])
def test_search_code_over_mcp(code_service: CodeService, tmp_path: Path, server: str, mode: str) -> None:
    (whole, cut, missing) = asyncio.run(mcp_calls(code_service, servers(code_service, tmp_path)[server], mode))
    assert not whole[0] and not cut[0] and missing[0], "only the unknown repository is a tool error"
    check_answers(code_service.root, whole[1], cut[1])
    check_missing(missing[1])


async def search_in(folder: Path, server: dict[str, Any]) -> tuple[bool, str]:
    """search_code through `ctxsieve mcp` working in `folder`."""
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(folder),
                                   env={**os.environ, **server["env"]})
    async with Client(params, mode="legacy") as client:
        answer = await client.call_tool("search_code", {"query": WHOLE})
    return bool(answer.is_error), answer.content[0].text  # type: ignore[union-attr]


def test_a_folder_the_service_cannot_use_is_a_tool_error_saying_why(code_service: CodeService,
                                                                    tmp_path: Path) -> None:
    """An agent working in a folder the service may not read is told which setting says what it may; one in another
    checkout of the same name is not shown that checkout's lines as its own."""
    server = servers(code_service, tmp_path)["ctxsieve"]
    asyncio.run(search_in(code_service.root, server))  # the repository is known
    is_error, text = asyncio.run(search_in(make_repository(tmp_path), server))
    assert is_error and "403 forbidden" in text and "outside the read roots (CTXSIEVE_READ_ROOTS" in text, text
    twin = make_repository(code_service.root.parent / "twin")
    is_error, text = asyncio.run(search_in(twin, server))
    assert is_error and "400" in text and f"is the folder {code_service.root}, not {twin}" in text, text
    assert "ctxsieve index" in text


def test_an_agent_in_a_folder_no_git_repository_holds_is_told_to_index_it(code_service: CodeService,
                                                                        tmp_path: Path) -> None:
    """An agent started in a plain folder (a home folder, say) inside the read roots: search_code does not index
    it unasked; the tool error the model gets names the command that would."""
    plain = code_service.root.parent / "plain-home"
    plain.mkdir()
    (plain / "notes.py").write_text("def compute_invoice_total():\n    return 0\n")
    is_error, text = asyncio.run(search_in(plain, servers(code_service, tmp_path)["ctxsieve"]))
    assert is_error and "'plain-home' is not indexed" in text and "ctxsieve index PATH --name plain-home" in text
    assert httpx.get(f"{code_service.url}/v1/repos/plain-home").status_code == 404, "nothing indexed unasked"


def test_a_k_or_budget_the_service_refuses_is_sent_as_given() -> None:
    """A trial's `search_code(k=0)` over MCP was answered with 10 definitions, where the CLI and HTTP refuse it: the
    tool sends what it is given, and the service's 422 says why; left out, the defaults."""
    from ctxsieve_client.code_search import search_request

    assert search_request({"query": "q", "repo": "r", "k": 0, "max_tokens": 0}).body == {
        "query": "q", "windows": True, "k": 0, "max_tokens": 0}
    assert search_request({"query": "q", "repo": "r"}).body == {"query": "q", "windows": True, "k": 10}


# --- the real Claude Code ----------------------------------------------------------------------------------------


def claude_results(request: dict[str, Any]) -> list[tuple[bool, str]]:
    """(is it an error, its text) of every tool_result the request carries, in order."""
    blocks = [b for m in request["messages"] if isinstance(m.get("content"), list) for b in m["content"]
              if isinstance(b, dict) and b.get("type") == "tool_result"]
    return [(bool(b.get("is_error")), b["content"] if isinstance(b["content"], str)
             else "".join(c.get("text", "") for c in b["content"])) for b in blocks]


def test_search_code_in_claude_code(code_service: CodeService, tmp_path: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    mcp_config = tmp_path / "mcp.json"
    mcp_config.write_text(json.dumps({"mcpServers": {name: {"type": "stdio", **entry} for name, entry
                                                     in servers(code_service, tmp_path).items()}}))
    tools = [f"mcp__{server}__search_code" for server in ("ctxsieve", "gw")]
    # Claude Code defers MCP tools behind its ToolSearch: the model loads both schemas first
    calls = [("ToolSearch", {"query": "select:" + ",".join(tools)})]
    place, line = place_query(code_service.root)
    calls += [(tool, args) for tool in tools for args in ({"query": WHOLE}, {"query": CUT}, MISSING, SMALL, place)]
    # ctxsieve's PostToolUse hook on every tool, as `ctxsieve hook install` writes it
    settings = tmp_path / "settings.json"
    hook = {"type": "command", "command": f"{BIN / 'ctxsieve-hook'} claude-code --url {code_service.url}"}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook]}]}}))
    model = ScriptedModel(calls=calls)
    api, server = model.serve()
    env = {"PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **own_env()}
    try:
        done = subprocess.run([str(CLAUDE), "-p", "Where is the invoice total computed?", "--mcp-config",
                               str(mcp_config), "--strict-mcp-config", "--allowedTools", ",".join(tools),
                               "--settings", str(settings), "--output-format", "json"],
                              cwd=code_service.root, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    assert set(tools) <= {t.get("name") for t in model.requests[-1].get("tools", [])}, "Claude Code's own names"
    for sent in (t for t in model.requests[-1]["tools"] if t.get("name") in tools):  # (two trials' services made no
        assert "by meaning once its vectors are made" in sent["description"], sent  # vectors, yet it said "by meaning")
        assert "a larger one is taken as 6000" in json.dumps(sent["input_schema"]), sent
    results = claude_results(model.requests[-1])[1:]  # after ToolSearch's
    assert len(results) == 10, results
    for whole, cut, missing, small, placed in (results[:5], results[5:]):
        assert not whole[0] and not cut[0] and missing[0], "only the unknown repository is a tool error"
        check_answers(code_service.root, whole[1], cut[1])
        check_missing(missing[1])
        check_small(whole[1], small[1], tokenizer.count)
        check_place(code_service.root, placed[1], line)


# --- the real Codex ----------------------------------------------------------------------------------------------


def codex_search(server: str, args: dict[str, str]) -> str:
    """Codex's `exec` JavaScript calling an MCP tool (its code mode's `tools.mcp__<server>__<tool>`), printing what
    the tool answered."""
    return f"const result = await tools.mcp__{server}__search_code({json.dumps(args)});\ntext(JSON.stringify(result));"


def codex_result(output: list[dict[str, str]]) -> tuple[bool, str]:
    """(is it an error, its text) of the MCP result the script printed, after Codex's own line about the run."""
    assert output[0]["text"].startswith("Script completed"), output
    printed = json.loads("".join(item["text"] for item in output[1:]))
    return bool(printed["isError"]), "".join(block["text"] for block in printed["content"])


def test_search_code_in_codex(code_service: CodeService, tmp_path: Path) -> None:
    assert CODEX.exists(), "run `make node` (it installs tests/mcp's npm packages)"
    calls: list[Call] = [("exec", codex_search(server, args)) for server in ("ctxsieve", "gw")
                         for args in ({"query": WHOLE}, {"query": CUT}, MISSING)]
    model = ScriptedResponses(calls=calls)
    api, server = model.serve()
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(codex_config(api, servers(code_service, tmp_path)))
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "OPENAI_API_KEY": "sk-test"}
    try:
        done = subprocess.run([str(CODEX), "exec", "Where is the invoice total computed?"], cwd=code_service.root,
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    results = [codex_result(o["output"]) for o in model.outputs(model.requests[-1])]
    assert len(results) == 6, results
    for whole, cut, missing in (results[:3], results[3:]):
        assert not whole[0] and not cut[0] and missing[0], "only the unknown repository is a tool error"
        check_answers(code_service.root, whole[1], cut[1])
        check_missing(missing[1])
