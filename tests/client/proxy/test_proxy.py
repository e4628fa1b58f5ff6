"""`ctxsieve proxy` between the real Anthropic and OpenAI SDKs and a scripted provider on loopback (the model is
the one outside service): what the provider receives is the request with its large tool results cut (each naming
its ref), everything else as sent, and the same cut in every later request of the conversation."""

from __future__ import annotations

import copy
import json
import logging
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import uvicorn

from ctxsieve_client import Client
from ctxsieve_client.proxy.projection import ProxyOptions
from ctxsieve_client.proxy.server import ProxyApp, Upstreams
from tests.client.hooks.test_claude_code_hook import BIN, CLAUDE
from tests.client.scripted_anthropic import ScriptedModel, serve_on_loopback
from tests.client.scripted_openai import ScriptedChat, ScriptedResponses
from tests.service.test_api_code import TEXT as SOURCE

REQUEST = "Handler17.dispatch gives up too early; fix it"
LOG = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} synced shard {i}" if i != 431 else
                "2026-11-30 10:07:11 ERROR shard 431 checksum mismatch, archive rejected" for i in range(900))
TRACE = "Traceback (most recent call last):\n" + "\n".join(f'  File "/app/m{i}.py", line {i}, in f{i}\n    g{i}()'
                                                           for i in range(300)) + "\nValueError: bad shard"
TOOLS = [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object", "properties": {
    "file_path": {"type": "string"}}}, "cache_control": {"type": "ephemeral"}}]


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[uvicorn.Server] = []

    def start(app: Any) -> str:
        url, server = serve_on_loopback(app)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.should_exit = True


def proxy(serve: Any, service: str, anthropic_api: str = "http://127.0.0.1:9", openai_api: str = "http://127.0.0.1:9",
          **options: Any) -> str:
    serve_tools = options.pop("serve_tools", False)
    return str(serve(ProxyApp(service, None, Upstreams(anthropic=anthropic_api, openai=openai_api),
                              ProxyOptions(**options), serve_tools=serve_tools)))


def anthropic_history(reads: int, final_user: str | None = None) -> list[dict[str, Any]]:
    """A coding conversation: the request, then `reads` turns of thinking, words and a Read of a source file."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nToday is Tuesday.\n</system-reminder>"},
        {"type": "text", "text": REQUEST}]}]
    for t in range(reads):
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"I should read file {t}.", "signature": f"c2ln{t}=="},
            {"type": "text", "text": "Let me read the handlers."},
            {"type": "tool_use", "id": f"toolu_{t}", "name": "Read", "input": {"file_path": f"/repo/app/h{t}.py"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{t}", "content": SOURCE.replace("Handler", f"H{t}x")
             if t else SOURCE, "cache_control": {"type": "ephemeral"}}]})
    if final_user:
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Read it."}]})
        messages.append({"role": "user", "content": final_user})
    return messages


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def without_results(body: dict[str, Any]) -> dict[str, Any]:
    """The body with every tool result's content blanked: what must reach the provider as sent."""
    out = copy.deepcopy(body)
    for block in tool_results(out):
        block["content"] = None
    return out


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_sdk_a_large_read_is_cut_and_everything_else_arrives_as_sent(stub_url: str, serve: Any,
                                                                                stream: bool) -> None:
    model = ScriptedModel(calls=[])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app))
    sdk = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
    sent = {"model": "claude-test", "max_tokens": 100, "system": [{"type": "text", "text": "You code.",
                                                                   "cache_control": {"type": "ephemeral"}}],
            "tools": TOOLS, "messages": anthropic_history(1),
            "thinking": {"type": "enabled", "budget_tokens": 1024}}
    extra = {"ctxsieve_unknown_field": {"kept": [1, 2.5, "三"]}}
    if stream:
        with sdk.messages.stream(**sent, extra_body=extra) as events:  # type: ignore[arg-type]
            answer = events.get_final_message()
    else:
        answer = sdk.messages.create(**sent, extra_body=extra)  # type: ignore[arg-type]
    assert answer.content[0].type == "text" and answer.content[0].text == "Done."  # the answer as the model gave it
    received = model.requests[-1]
    (cut,) = tool_results(received)
    assert 'Read(file_path="/repo/app/h0.py", offset=A, limit=B-A+1)' in cut["content"], "the rest with its own Read"
    assert "fetch_ref" not in cut["content"] and "filter_ref" not in cut["content"], "a tool it is not offered"
    assert 'raise RuntimeError("handler 17 gave up after retries")' in cut["content"], "the named method is shown"
    assert len(cut["content"]) < len(SOURCE) / 2
    assert cut["cache_control"] == {"type": "ephemeral"}
    expected = without_results({**sent, **extra, "stream": True} if stream else {**sent, **extra})
    assert without_results(received) == expected, "system, tools, thinking and its signature, unknown fields"

    # the next turn: the first cut is byte-identical, the new read is cut too
    later = {**sent, "messages": anthropic_history(2, final_user="Now the second file.")}
    sdk.messages.create(**later)  # type: ignore[arg-type]
    again = tool_results(model.requests[-1])
    assert again[0]["content"] == cut["content"]
    assert 'Read(file_path="/repo/app/h1.py", offset=A' in again[1]["content"]


def test_small_results_errors_and_images_pass_and_an_unchanged_request_keeps_its_bytes(stub_url: str,
                                                                                       serve: Any) -> None:
    model = ScriptedModel(calls=[])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app))
    messages = anthropic_history(0)
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}},
        {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/a.png"}},
        {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "t4", "name": "Glob", "input": {"pattern": "**/*.py"}}]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": TRACE, "is_error": True},
        {"type": "tool_result", "tool_use_id": "t2", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 400}}]},
        {"type": "tool_result", "tool_use_id": "t3", "content": "a.py\nb.py\n"},
        # a list of files no indexed repository holds: asked about, and left as it came
        {"type": "tool_result", "tool_use_id": "t4", "content": "pkg/a.py\npkg/b.py\npkg/c.py"}]})
    body = json.dumps({"model": "m", "max_tokens": 10, "messages": messages}, indent=1).encode()
    answer = httpx.post(f"{url}/v1/messages", content=body, headers={"x-api-key": "sk-test",
                                                                      "anthropic-version": "2023-06-01"})
    assert answer.status_code == 200 and answer.headers["x-ctxsieve-session"].startswith("px-")
    assert model.raw[-1] == body, "nothing to cut: the very bytes the client sent"


def test_ctxsieves_own_tools_answers_pass_as_they_came(stub_url: str, serve: Any) -> None:
    """A ref tool's answer (here `ctxsieve mcp`'s search_code and fetch_ref, as Claude Code names them) is what the
    model asked for: cut again, it would lose the line naming the rest to read."""
    model = ScriptedModel(calls=[])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app))
    messages = anthropic_history(0)
    found = LOG + "\n\n[ctxsieve search_code: 4 definitions of repository app, best first]"
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "mcp__ctxsieve__search_code", "input": {"query": "checksum"}},
        {"type": "tool_use", "id": "t2", "name": "mcp__ctxsieve__fetch_ref", "input": {"ref": "src_0"}}]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": found},
                                                 {"type": "tool_result", "tool_use_id": "t2", "content": LOG}]})
    body = json.dumps({"model": "m", "max_tokens": 10, "messages": messages}).encode()
    answer = httpx.post(f"{url}/v1/messages", content=body, headers={"x-api-key": "sk-test",
                                                                      "anthropic-version": "2023-06-01"})
    assert answer.status_code == 200 and model.raw[-1] == body, "the very bytes the client sent"


def test_openai_chat_sdk_cuts_a_tool_message_and_leaves_an_error_text(stub_url: str, serve: Any) -> None:
    chat = ScriptedChat()
    api = f"{serve(chat.app)}/v1"
    url = proxy(serve, stub_url, openai_api=api)
    sdk = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    messages: list[Any] = [
        {"role": "system", "content": "You operate a fleet."},
        {"role": "user", "content": "Which shard failed to sync, 431?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"cmd": "cat sync.log"}'}},
            {"id": "c2", "type": "function", "function": {"name": "shell", "arguments": '{"cmd": "run"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": LOG},
        {"role": "tool", "tool_call_id": "c2", "content": TRACE}]
    for stream in (False, True):
        answer = sdk.chat.completions.create(model="gpt-test", messages=messages, stream=stream)
        text = "".join(c.choices[0].delta.content or "" for c in answer) if stream else \
            answer.choices[0].message.content  # type: ignore[union-attr]
        assert text == "Done."
        received = chat.requests[-1]["messages"]
        shown = received[3]["content"]
        assert "ERROR shard 431 checksum mismatch" in shown and "sed -n 'A,Bp' sync.log" in shown
        assert "fetch_ref" not in shown, "the request offers no tools: the rest from the file"
        assert len(received[3]["content"]) < len(LOG) / 3
        assert received[4]["content"] == TRACE, "an error text passes whole"
        assert received[:3] == messages[:3]
    assert chat.requests[0]["messages"][3] == chat.requests[1]["messages"][3]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_sdk_cuts_a_function_call_output(stub_url: str, serve: Any, stream: bool) -> None:
    model = ScriptedResponses(calls=[])
    api = f"{serve(model.app)}/v1"
    url = proxy(serve, stub_url, openai_api=api)
    sdk = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-test", max_retries=0)
    items: list[Any] = [
        {"role": "user", "content": "Which shard failed to sync, 431?"},
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd": "cat sync.log"}'},
        {"type": "function_call_output", "call_id": "c1",
         "output": LOG}]
    if stream:
        with sdk.responses.stream(model="gpt-test", input=items) as events:
            answer = events.get_final_response()
    else:
        answer = sdk.responses.create(model="gpt-test", input=items)
    assert answer.output_text == "Done."
    received = model.requests[-1]["input"]
    assert received[:2] == items[:2]
    shown = received[2]["output"]
    assert "ERROR shard 431 checksum mismatch" in shown and "sed -n 'A,Bp' sync.log" in shown


def test_codex_command_json_has_only_its_output_cut_and_a_failed_command_passes(stub_url: str, serve: Any) -> None:
    model = ScriptedResponses(calls=[])
    api, server = model.serve()
    try:
        url = proxy(serve, stub_url, openai_api=api)
        ran = {"chunk_id": "c5a4b9", "wall_time_seconds": 0.1, "exit_code": 0, "original_token_count": 9000,
               "output": LOG}
        failed = {**ran, "exit_code": 1}
        items: list[Any] = [{"role": "user", "content": "Which shard failed to sync, 431?"}]
        for n, result in enumerate((ran, failed)):
            items += [{"type": "custom_tool_call", "call_id": f"c{n}", "name": "exec",
                       "input": 'const r = await tools.exec_command({cmd: "cat sync.log"});\ntext(r);'},
                      {"type": "custom_tool_call_output", "call_id": f"c{n}", "output": [
                          {"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
                          {"type": "input_text", "text": json.dumps(result)}]}]
        assert httpx.post(f"{url}/v1/responses", json={"model": "m", "input": items, "stream": False},
                          headers={"authorization": "Bearer sk-test"}).status_code == 200
        received = model.requests[-1]["input"]
        shown = json.loads(received[2]["output"][1]["text"])
        assert {k: v for k, v in shown.items() if k != "output"} == {k: v for k, v in ran.items() if k != "output"}
        assert "ERROR shard 431 checksum mismatch" in shown["output"] and "sed -n 'A,Bp' sync.log" in shown["output"]
        assert received[2]["output"][0] == items[2]["output"][0]
        assert received[4] == items[4], "a command that failed reaches the model whole"
    finally:
        server.should_exit = True


def test_the_service_down_sends_the_request_as_it_came_and_says_why(serve: Any, caplog: Any) -> None:
    model = ScriptedModel(calls=[])
    url = proxy(serve, "http://127.0.0.1:9", anthropic_api=serve(model.app), budget_s=5.0)
    body = json.dumps({"model": "m", "max_tokens": 10, "messages": anthropic_history(1)}).encode()
    with caplog.at_level(logging.WARNING, logger="ctxsieve.proxy"):
        answer = httpx.post(f"{url}/v1/messages", content=body, headers={"x-api-key": "sk-test"})
    assert answer.status_code == 200
    assert model.raw[-1] == body
    assert any("Read result was not cut" in r.getMessage() and "sent upstream whole" in r.getMessage()
               for r in caplog.records)
    assert "sk-test" not in caplog.text


def test_an_upstream_error_reaches_the_client_as_the_upstream_sent_it(stub_url: str, serve: Any) -> None:
    from fastapi import FastAPI
    from fastapi.responses import Response

    api = FastAPI()
    error = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'

    @api.post("/v1/messages")
    async def overloaded() -> Response:
        return Response(error, status_code=529, headers={"retry-after": "7", "request-id": "req_1"},
                        media_type="application/json")

    url = proxy(serve, stub_url, anthropic_api=serve(api))
    answer = httpx.post(f"{url}/v1/messages", json={"model": "m", "max_tokens": 1, "messages": anthropic_history(1)})
    assert (answer.status_code, answer.content, answer.headers["retry-after"]) == (529, error, "7")
    for serve_tools in (False, True):  # (with --serve-tools the tool server asks the upstream itself)
        unreachable = httpx.post(f"{proxy(serve, stub_url, serve_tools=serve_tools)}/v1/messages",
                                 json={"model": "m", "messages": [], "tools": TOOLS})
        assert unreachable.status_code == 502 and unreachable.json()["error"]["type"] == "api_error"


REF_TOOLS = [{"name": name, "description": name, "input_schema": {"type": "object", "properties": {
    "ref": {"type": "string"}}}} for name in ("filter_ref", "fetch_ref")]


@pytest.mark.parametrize("offered", [[], REF_TOOLS])
def test_old_results_are_cleared_in_steps_and_a_cleared_cut_names_the_whole_output(stub_url: str, serve: Any,
                                                                                    offered: list[Any]) -> None:
    """A cleared result names the ref of the whole output, and calls ctxsieve's tools only when they are offered."""
    model = ScriptedModel(calls=[])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app), trigger_tokens=4000, keep_tool_results=1,
                clear_at_least=1000)
    sdk = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
    bodies = []
    for reads in (1, 5, 6):
        sdk.messages.create(model="m", max_tokens=10, messages=anthropic_history(reads),  # type: ignore[arg-type]
                            tools=offered)
        bodies.append(model.requests[-1])
    first_cut = tool_results(bodies[0])[0]["content"]
    ref = re.findall(r"\[ctxsieve (src_[0-9a-f]+): ", first_cut)[-1]
    cleared = tool_results(bodies[1])[0]["content"]
    assert cleared.startswith(f"[ctxsieve {ref}: tool output cleared"), "it names the file, not the cut"
    assert ('fetch_ref(ref="' in cleared) == bool(offered) and "re-run: Read(" in cleared
    latest = tool_results(bodies[1])[-1]["content"]
    assert latest != SOURCE and "[ctxsieve src_" in latest and ("fetch_ref(" in latest) == bool(offered)
    shared = [r["content"] for r in tool_results(bodies[1])[:4]]
    assert [r["content"] for r in tool_results(bodies[2])[:4]] == shared, "the prefix keeps its bytes"
    whole = Client(stub_url).fetch_ref(ref)
    assert whole.text == SOURCE


@pytest.mark.parametrize("stream", [False, True])
def test_serve_tools_answers_the_models_fetch_and_the_client_sees_one_answer(stub_url: str, serve: Any,
                                                                              stream: bool) -> None:
    ref = Client(stub_url).filter(REQUEST, SOURCE, source={"tool": "Read", "args": {"file_path": "/repo/app/h0.py"}},
                                  k=50, placeholder="tools").ref
    model = ScriptedModel(calls=[("Read", {}), ("fetch_ref", {"ref": ref, "lines": "1-3"})])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app), serve_tools=True)
    sdk = anthropic.Anthropic(base_url=url, api_key="sk-test", max_retries=0)
    sent = {"model": "m", "max_tokens": 10, "tools": TOOLS, "messages": anthropic_history(1)}
    if stream:
        with sdk.messages.stream(**sent) as events:  # type: ignore[arg-type]
            answer = events.get_final_message()
    else:
        answer = sdk.messages.create(**sent)  # type: ignore[arg-type]
    assert [b.type for b in answer.content] == ["text"] and answer.stop_reason == "end_turn"
    first, second = model.requests[-2:]
    assert [t["name"] for t in first["tools"]] == ["Read", "filter_ref", "fetch_ref", "search_code"]
    fetched = tool_results(second)[-1]
    assert fetched["content"] == "\n".join(SOURCE.split("\n")[:3])
    assert second["messages"][:-2] == first["messages"], "the model's call and its result after the conversation"


def test_real_claude_code_through_the_proxy_sees_a_cut_read_with_the_files_line_numbers(stub_url: str, serve: Any,
                                                                                          tmp_path: Path) -> None:
    """Claude Code itself (the CLI the Claude Agent SDK bundles) with ANTHROPIC_BASE_URL at the proxy and no hook,
    `ctxsieve mcp` as its MCP server: the scripted model reads a source file twice (two turns); what the model is
    sent is the cut with every shown line after its true number in Read's own form, the placeholder naming the
    MCP server's tools as Claude Code knows them, and the first cut unchanged in the later request."""
    source = tmp_path / "handlers.py"
    source.write_text(SOURCE)
    model = ScriptedModel(calls=[("Read", {"file_path": str(source)}), ("Read", {"file_path": str(source),
                                                                                  "offset": 30, "limit": 20})])
    url = proxy(serve, stub_url, anthropic_api=serve(model.app))
    mcp = {"mcpServers": {"ctxsieve": {"command": str(BIN / "ctxsieve"), "args": ["mcp", "--url", stub_url]}}}
    env = {"PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": url,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    done = subprocess.run([str(CLAUDE), "-p", f"Handler17.dispatch gives up too early; read {source}",
                           "--allowedTools", "Read", "--mcp-config", json.dumps(mcp), "--output-format", "json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["result"] == "Done."
    reads = [tool_results(r) for r in model.requests if tool_results(r)]
    first = reads[0][0]["content"]
    assert reads[-1][0]["content"] == first, "the first cut is the same in the later request"
    assert 'mcp__ctxsieve__fetch_ref(ref="src_' in first
    file_lines = SOURCE.split("\n")
    numbered = [re.match(r"^(\d+)\t(.*)$", row) for row in first.split("\n")]
    shown = [(int(m.group(1)), m.group(2)) for m in numbered if m]
    assert 20 <= len(shown) < len(file_lines) / 2, "a cut of the file"
    assert all(file_lines[n - 1] == text for n, text in shown), "every shown line after its true number"
    assert any('raise RuntimeError("handler 17 gave up after retries")' in text for _, text in shown)
    second = reads[-1][1]["content"]
    assert second.startswith("30\t") and "fetch_ref" not in second, "a small read (20 lines) passes as it is"


def run_codex(url: str, tmp_path: Path, prompt: str, model: str = "gpt-6.1-sol", config: tuple[str, ...] = (),
              home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`codex exec` (0.169) run in `tmp_path` with a model provider whose base_url is the proxy, as the README's setup
    writes it, and settings given as `-c key=value`. The model's name sets Codex's tools: an unknown one gets its
    `exec` (JavaScript calling `tools.exec_command`), `gpt-5-codex` an `exec_command` function. Its home is `home`,
    else a folder in `tmp_path`."""
    from tests.client.gateway.test_codex_gateway import CODEX

    home = home or tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text("\n".join([
        f'model = "{model}"', 'model_provider = "sieved"', 'approval_policy = "never"',
        'sandbox_mode = "read-only"', "", "[model_providers.sieved]", 'name = "OpenAI through ctxsieve"',
        f'base_url = "{url}/v1"', 'env_key = "OPENAI_API_KEY"', 'wire_api = "responses"', ""]))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "OPENAI_API_KEY": "sk-test"}
    settings = [word for setting in config for word in ("-c", setting)]
    return subprocess.run([str(CODEX), "exec", *settings, "--skip-git-repo-check", prompt], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_real_codex_through_the_proxy_has_a_large_shell_output_cut(stub_url: str, serve: Any, tmp_path: Path) -> None:
    """The Codex CLI (`codex exec`, 0.169) with a model provider whose base_url is the proxy: the scripted model
    runs `cat` on a large log and then on a small file through Codex's shell; the model is sent the log's cut
    (inside the command's JSON result, its other fields as they were), the small output whole, and the same cut
    in the later request."""
    log = "\n".join(LOG.split("\n")[:600])  # under Codex's own 10,000-token limit on a command's result
    (tmp_path / "sync.log").write_text(log)
    (tmp_path / "small.txt").write_text("just a few words\n")
    run = 'const r = await tools.exec_command({{cmd: "cat {}"}});\ntext(r);'
    model = ScriptedResponses(calls=[("exec", run.format("sync.log")), ("exec", run.format("small.txt"))])
    api, server = model.serve()
    url = proxy(serve, stub_url, openai_api=api)
    try:
        done = run_codex(url, tmp_path, "Which shard failed to sync, 431?")
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = [model.outputs(r) for r in model.requests]
    assert [len(o) for o in outputs] == [0, 1, 2]
    log_result = json.loads(outputs[1][0]["output"][-1]["text"])
    assert log_result["exit_code"] == 0 and "ERROR shard 431 checksum mismatch" in log_result["output"]
    assert "sed -n 'A,Bp' sync.log" in log_result["output"] and len(log_result["output"]) < len(log) / 3
    assert "fetch_ref" not in log_result["output"], "Codex offers its model no ctxsieve tool"
    assert outputs[2][0] == outputs[1][0], "the same cut in the later request"
    assert "just a few words" in json.dumps(outputs[2][1])


def test_real_codex_with_serve_tools_gets_the_fetch_answered_by_the_proxy(stub_url: str, serve: Any,
                                                                          tmp_path: Path) -> None:
    """Codex 0.169 offers a custom provider's model no MCP tools: with --serve-tools the proxy offers fetch_ref
    itself and answers the model's call of it, and Codex sees the model's last answer only."""
    log = "\n".join(LOG.split("\n")[:600])
    (tmp_path / "sync.log").write_text(log)
    ref = Client(stub_url).filter("x", log, placeholder="tools").ref  # the ref the proxy's cut will name
    run = 'const r = await tools.exec_command({cmd: "cat sync.log"});\ntext(r);'
    model = ScriptedResponses(calls=[("exec", run), ("fetch_ref", {"ref": ref, "lines": "431-433"})])
    api, server = model.serve()
    url = proxy(serve, stub_url, openai_api=api, serve_tools=True)
    try:
        done = run_codex(url, tmp_path, "Which shard failed to sync, 431?")
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Done." in done.stdout
    last = model.requests[-1]
    assert [t["name"] for t in last["tools"]] == ["filter_ref", "fetch_ref", "search_code"]
    fetched = model.outputs(last)[-1]
    assert fetched["type"] == "function_call_output" and fetched["output"] == "\n".join(log.split("\n")[430:433])
    assert len(model.requests) == 3, "the first turn, then the log's turn asked twice (the fetch answered between)"


def test_the_ctxsieve_proxy_command_serves_count_tokens_projected(stub_url: str, serve: Any) -> None:
    """`ctxsieve-proxy` as a user starts it: one line on stderr saying where it forwards, and
    /v1/messages/count_tokens counts the request the model would be sent (the cut)."""
    from tests.client.gateway.test_gateway import free_port

    model = ScriptedModel(calls=[])
    api = serve(model.app)
    port = free_port()
    process = subprocess.Popen([str(BIN / "ctxsieve-proxy"), "--port", str(port), "--url", stub_url,
                                "--anthropic-upstream", api], stderr=subprocess.PIPE, text=True)
    try:
        started = process.stderr.readline() if process.stderr else ""
        assert started.startswith(f"ctxsieve proxy: http://127.0.0.1:{port} -> {api}")
        body = {"model": "m", "messages": anthropic_history(1)}
        for _ in range(100):
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/v1/messages/count_tokens", json=body,
                                    headers={"x-api-key": "sk-test"})
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert answer.json() == {"input_tokens": 100}
        assert "[ctxsieve src_" in tool_results(model.counted[-1])[0]["content"]
    finally:
        process.terminate()
        process.wait(10)


def test_a_websocket_upgrade_is_answered_426_so_codex_takes_https_at_once() -> None:
    """Codex 0.169 asks for the Responses API over a WebSocket first and retries for about 5 s on any other answer."""
    import asyncio

    app = ProxyApp("http://127.0.0.1:9", None, Upstreams(anthropic="http://127.0.0.1:9", openai="http://127.0.0.1:9"),
                   ProxyOptions())

    async def upgrade() -> int:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            answer = await client.get("/v1/responses", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
        return answer.status_code

    assert asyncio.run(upgrade()) == 426
