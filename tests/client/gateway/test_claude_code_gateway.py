"""The real Claude Code (the CLI the Claude Agent SDK bundles, headless) with `ctxsieve gateway` as its MCP server,
against a scripted Messages API on loopback: the model calls a stateful upstream's tool three times, and the
upstream is started at most twice (the gateway's own listing, and Claude Code's session, whatever era it
negotiates) and keeps its count across the calls; when Claude Code ends, no server the gateway started outlives it
(one that stays after its stdin closes and ignores SIGTERM among them), nor the gateway's log folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from bench.gateway_stops import LINGERING, counted, outlives
from tests.client.gateway.test_gateway_eras import STATEFUL, starts
from tests.client.hooks.test_claude_code_hook import BIN, CLAUDE
from tests.client.scripted_anthropic import ScriptedModel


def test_three_calls_start_the_upstream_at_most_twice_and_no_server_outlives_claude_code(stub_url: str,
                                                                                         tmp_path: Path) -> None:
    log, lingering, temp = tmp_path / "stateful.starts", tmp_path / "lingering.starts", tmp_path / "tmp"
    temp.mkdir()
    gateway_config = tmp_path / "gateway.json"
    gateway_config.write_text(json.dumps({"mcpServers": {"st": counted([sys.executable, str(STATEFUL)], log),
                                                         "lingers": counted([sys.executable, str(LINGERING)],
                                                                            lingering)},
                                          "ctxsieve": {"tool_search": "off"}}))
    mcp_config = tmp_path / "mcp.json"
    mcp_config.write_text(json.dumps({"mcpServers": {"gw": {"type": "stdio", "command": str(BIN / "ctxsieve-gateway"),
                                                            "args": ["--config", str(gateway_config), "--url",
                                                                     stub_url]}}}))
    # Claude Code defers MCP tools behind its ToolSearch: the model loads the tool's schema first, then calls it
    model = ScriptedModel(calls=[("ToolSearch", {"query": "select:mcp__gw__tick"}), *[("mcp__gw__tick", {})] * 3,
                                 ("ToolSearch", {"query": "select:mcp__gw__linger"}), ("mcp__gw__linger", {})])
    api, server = model.serve()
    env = {"PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "TMPDIR": str(temp)}
    try:
        done = subprocess.run([str(CLAUDE), "-p", "Tick three times", "--mcp-config", str(mcp_config),
                               "--strict-mcp-config", "--allowedTools", "mcp__gw__tick,mcp__gw__linger",
                               "--output-format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    results = [b for m in model.requests[-1]["messages"] if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    seen = [r["content"] if isinstance(r["content"], str) else "".join(b.get("text", "") for b in r["content"])
            for r in results[1:4]]  # after ToolSearch's
    answers = [re.search(r"call (\d+) in pid (\d+)", s) for s in seen]  # Claude Code shows the structured copy
    assert [a.group(1) if a else s for a, s in zip(answers, seen, strict=True)] == ["1", "2", "3"], seen
    assert len({a.group(2) for a in answers if a}) == 1, "one upstream process answered every call"
    assert starts(log) <= 2, f"started {starts(log)} times"
    assert "lingering in pid" in str(results[-1]["content"]), "listed in time: its listing session closes behind"
    servers = [int(pid) for path in (log, lingering) for pid in path.read_text().split()]
    assert not [pid for pid in servers if outlives(pid)], "no server the gateway started outlives Claude Code"
    assert not list(temp.glob("ctxsieve-gateway-*")), "nor the gateway's log folder (Claude Code's own stay)"
