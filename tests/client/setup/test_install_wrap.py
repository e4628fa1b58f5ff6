"""`ctxsieve wrap AGENT ...` as a user runs it: the real Codex and Claude Code CLIs (and plain commands) with their
model API behind a proxy of the run's own, judged by what the scripted upstream (the agent's own base URL) is sent;
the service on loopback is the real app with the stand-in model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from tests.client.installing import LOG, Machine
from tests.client.scripted_anthropic import ScriptedModel, serve_on_loopback
from tests.client.scripted_openai import ScriptedResponses
from tests.client.setup.test_install_agents import machine

__all__ = ["machine"]  # the Claude Code and Codex machine of the install tests

CAT = 'const r = await tools.exec_command({cmd: "cat sync.log"});\ntext(r);'


def test_wrap_passes_stdin_stdout_stderr_and_the_exit_status(machine: Machine) -> None:
    done = machine.run("wrap", "sh", "-c", 'cat; echo "$ANTHROPIC_BASE_URL|$OPENAI_BASE_URL"; echo oops >&2; exit 7',
                       stdin="hello\n")
    assert done.returncode == 7, done.stderr
    proxy = re.fullmatch(r"hello\n(http://127\.0\.0\.1:\d+)\|\1/v1\n", done.stdout)
    assert proxy is not None, done.stdout
    assert done.stderr.endswith("oops\n") and f"ctxsieve wrap: sh through {proxy.group(1)}" in done.stderr
    assert machine.run("wrap", "sh", "-c", "kill -TERM $$").returncode == 128 + 15
    missing = machine.run("wrap", "no-such-agent")
    assert missing.returncode == 127 and "no-such-agent: not found on PATH" in missing.stderr


def codex_config(machine: Machine, upstream: str) -> Path:
    """The user's own Codex config: its own provider at `upstream` (as Codex reads a base URL), an API key login."""
    config = machine.home / ".codex" / "config.toml"
    config.write_text(f'openai_base_url = "{upstream}"\nforced_login_method = "api"\n' + config.read_text())
    return config


def test_wrap_codex_exec_sends_the_model_a_large_cats_cut(machine: Machine) -> None:
    """Codex 0.169 ignores OPENAI_BASE_URL: wrap gives it `-c openai_base_url=` at the proxy, whose upstream is the
    one Codex's config named. The model is sent the cut; Codex's config is not touched; Codex's WebSocket attempt is
    turned to HTTPS at once."""
    (machine.home / "sync.log").write_text(LOG)
    model = ScriptedResponses(calls=[("exec", CAT)])
    api, server = model.serve()
    config = codex_config(machine, api)
    before = config.read_bytes()
    try:
        done = machine.run("wrap", "codex", "exec", "--skip-git-repo-check", "Which shard failed to sync, 431?",
                           OPENAI_API_KEY="sk-test")
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = [model.outputs(r) for r in model.requests]
    assert [len(o) for o in outputs] == [0, 1], "the requests reached the upstream Codex's config names"
    result = json.loads(outputs[1][0]["output"][-1]["text"])
    assert "ERROR shard 431 checksum mismatch" in result["output"] and len(result["output"]) < len(LOG) / 3
    assert "sed -n" in result["output"], "the placeholder names the model's own way to the rest"
    assert config.read_bytes() == before and "Reconnecting" not in done.stderr, "no WebSocket retries"


def test_codexs_exit_status_comes_back_through_wrap(machine: Machine) -> None:
    refusing = FastAPI()

    @refusing.post("/v1/responses")
    async def refuse() -> JSONResponse:
        return JSONResponse({"error": {"message": "no such model", "type": "invalid_request_error",
                                       "code": "model_not_found"}}, status_code=400)

    api, server = serve_on_loopback(refusing)
    codex_config(machine, f"{api}/v1")
    try:
        done = machine.run("wrap", "codex", "exec", "--skip-git-repo-check", "hi", OPENAI_API_KEY="sk-test")
    finally:
        server.should_exit = True
    assert done.returncode == 1 and "no such model" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("where", ["environment", "settings"])
def test_wrap_claude_p_sends_the_model_a_large_reads_cut(machine: Machine, where: str) -> None:
    """Claude Code with no hook installed, its ANTHROPIC_BASE_URL (the scripted API: in its environment, or in its
    settings' env, which Claude Code puts over the environment) kept as the proxy's upstream."""
    from tests.client.coding_scenarios import tool_results

    log = machine.home / "sync.log"
    log.write_text(LOG * 3)
    model = ScriptedModel(str(log))
    api, server = model.serve()
    env = {"ANTHROPIC_BASE_URL": api} if where == "environment" else {}
    if where == "settings":
        (machine.home / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": api}}))
    try:
        done = machine.run("wrap", "claude", "-p", f"Read {log} and find the checksum mismatch", "--allowedTools",
                           "Read", "--output-format", "json", ANTHROPIC_API_KEY="sk-test", DISABLE_TELEMETRY="1",
                           CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", **env)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["result"] == "Done.", "Claude Code's stdout passed through"
    seen = tool_results(model.requests)["toolu_00"]
    assert "[ctxsieve src_" in seen and "checksum mismatch" in seen and len(seen) < len(LOG * 3) / 4


def test_wrapped_agents_work_with_no_service_to_reach(machine: Machine) -> None:
    """A service URL that is not this machine's is not started; the proxy fails open and the model gets the whole
    output."""
    (machine.home / "sync.log").write_text(LOG)
    model = ScriptedResponses(calls=[("exec", CAT)])
    api, server = model.serve()
    codex_config(machine, api)
    try:
        done = machine.run("wrap", "codex", "exec", "--skip-git-repo-check", "Which shard failed?",
                           OPENAI_API_KEY="sk-test", CTXSIEVE_URL="http://ctxsieve.invalid:8000")
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ctxsieve.invalid:8000 is not on this machine" in done.stderr
    result = json.loads(model.outputs(model.requests[-1])[0]["output"][-1]["text"])
    assert result["output"] == LOG, "the command's output whole"


def test_stats_shows_each_agents_sessions_tokens_and_refs_fetched_back(machine: Machine) -> None:
    """Claude Code through the command hook (two reads and a ref fetched back) and Codex through `wrap` (its proxy
    told `--agent codex`): `ctxsieve stats` puts each session under its agent and sums each agent (sessions of other
    tests on the same service are beside them)."""
    from ctxsieve_client import Client

    url, session = machine.env["CTXSIEVE_URL"], f"stats-{machine.home.parent.name[-12:]}"
    for command in ("cat sync.log", "cat sync.log | grep ERROR"):
        payload = {"session_id": session, "transcript_path": "/nonexistent", "cwd": str(machine.home),
                   "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                   "tool_response": {"stdout": LOG * 3, "stderr": ""}, "tool_use_id": "toolu_1"}
        answer = machine.run("hook", "claude-code", stdin=json.dumps(payload)).stdout
    ref = re.search(r"src_[0-9a-f]+", answer)
    assert ref is not None, answer
    Client(url, session_id=f"cc-{session}").fetch_ref(ref.group(0))
    (machine.home / "sync.log").write_text(LOG)
    model = ScriptedResponses(calls=[("exec", CAT)])
    api, server = model.serve()
    codex_config(machine, api)
    try:
        wrapped = machine.run("wrap", "codex", "exec", "--skip-git-repo-check", f"Which shard failed ({session})?",
                              OPENAI_API_KEY="sk-test")
    finally:
        server.should_exit = True
    assert wrapped.returncode == 0, wrapped.stderr[-2000:]
    done = machine.run("stats", "--since", "1h")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    (claude,) = [r for r in rows if r[1] == f"cc-{session}"]
    assert claude[0] == "claude-code" and claude[2:4] == ["hook", "3"] and claude[7] == "1", done.stdout
    produced, sent = int(claude[4].replace(",", "")), int(claude[5].replace(",", ""))
    assert produced > 10_000 and 0 < sent < produced / 3
    codex = [r for r in rows if r[0] == "codex" and r[1].startswith("px-")]
    assert codex and all(r[2] == "proxy" for r in codex), done.stdout
    assert any(int(r[4].replace(",", "")) > int(r[5].replace(",", "")) > 0 for r in codex), done.stdout
    sums = {r[0] for r in rows if "all" in r[1:4]}  # each agent's line, and the total's
    assert {"claude-code", "codex", "total"} <= sums, done.stdout
    assert machine.run("stats", "--since", "yesterday").returncode == 1
