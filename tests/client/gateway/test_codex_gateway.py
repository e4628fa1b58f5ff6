"""The real Codex CLI (npm `@openai/codex` 0.169, `codex exec`) with `ctxsieve gateway` as an MCP server from its
config, against a scripted Responses API on loopback: the model calls a stateful upstream's tool three times from
Codex's `exec` (its code mode reaches MCP tools as `tools.mcp__<server>__<tool>`), and the upstream is started at
most twice (the gateway's own listing, and Codex's session) and keeps its count across the calls; when Codex ends,
no server the gateway started outlives it (one that stays after its stdin closes and ignores SIGTERM among them).

Codex's own provider is pointed at the loopback API (`openai_base_url`): with a custom `model_providers` entry,
Codex 0.169 offers the model no MCP tools at all (it defers them behind a tool search it only offers its own
provider), whatever the server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from bench.gateway_stops import LINGERING, counted, outlives
from tests.client.gateway.test_gateway import BIN
from tests.client.gateway.test_gateway_eras import STATEFUL, starts
from tests.client.scripted_openai import ScriptedResponses

CODEX = Path(__file__).resolve().parents[2] / "mcp" / "node_modules" / ".bin" / "codex"
TICK = "const result = await tools.mcp__gw__tick({});\ntext(JSON.stringify(result));"
LINGER = "const result = await tools.mcp__gw__linger({});\ntext(JSON.stringify(result));"


def codex_config(api: str, gateway_config: Path, url: str) -> str:
    return "\n".join([
        'model = "gpt-6.1-sol"', f'openai_base_url = "{api}"', 'forced_login_method = "api"',
        'approval_policy = "never"', 'sandbox_mode = "read-only"', "",
        "[mcp_servers.gw]", f'command = "{BIN / "ctxsieve-gateway"}"',
        f'args = ["--config", "{gateway_config}", "--url", "{url}"]',
        'default_tools_approval_mode = "approve"', "required = true", ""])


def test_three_calls_start_the_upstream_at_most_twice_and_no_server_outlives_codex(stub_url: str,
                                                                                   tmp_path: Path) -> None:
    assert CODEX.exists(), "run `make test` (it installs tests/mcp's npm packages)"
    log, lingering = tmp_path / "stateful.starts", tmp_path / "lingering.starts"
    gateway_config = tmp_path / "gateway.json"
    gateway_config.write_text(json.dumps({"mcpServers": {"st": counted([sys.executable, str(STATEFUL)], log),
                                                         "lingers": counted([sys.executable, str(LINGERING)],
                                                                            lingering)},
                                          "ctxsieve": {"tool_search": "off"}}))
    model = ScriptedResponses(calls=[*[("exec", TICK)] * 3, ("exec", LINGER)])
    api, server = model.serve()
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(codex_config(api, gateway_config, stub_url))
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "OPENAI_API_KEY": "sk-test"}
    try:
        done = subprocess.run([str(CODEX), "exec", "--skip-git-repo-check", "Tick three times"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = [json.dumps(o.get("output")) for o in model.outputs(model.requests[-1])]
    outputs, lingered = outputs[:3], outputs[3:]
    assert "lingering in pid" in str(lingered), lingered
    answers = [re.search(r"call (\d+) in pid (\d+)", o) for o in outputs]
    assert [a.group(1) if a else o for a, o in zip(answers, outputs, strict=True)] == ["1", "2", "3"], outputs
    assert len({a.group(2) for a in answers if a}) == 1, "one upstream process answered every call"
    assert starts(log) <= 2, f"started {starts(log)} times"
    servers = [int(pid) for path in (log, lingering) for pid in path.read_text().split()]
    assert not [pid for pid in servers if outlives(pid)], "no server the gateway started outlives Codex"
