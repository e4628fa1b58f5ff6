"""The real Claude Code (the CLI the Claude Agent SDK bundles, headless) with `ctxsieve gateway` as its MCP server,
against a scripted Messages API on loopback: the model calls a stateful upstream's tool three times, and the
upstream is started at most twice (the gateway's own listing, and Claude Code's session, whatever era it
negotiates) and keeps its count across the calls."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.client.gateway.test_gateway_eras import STATEFUL, counted, starts
from tests.client.hooks.test_claude_code_hook import BIN, CLAUDE
from tests.client.scripted_anthropic import ScriptedModel


def test_three_calls_through_the_gateway_start_the_upstream_at_most_twice(stub_url: str, tmp_path: Path) -> None:
    log = tmp_path / "stateful.starts"
    gateway_config = tmp_path / "gateway.json"
    gateway_config.write_text(json.dumps({"mcpServers": {"st": counted([sys.executable, str(STATEFUL)], log)},
                                          "ctxsieve": {"tool_search": "off"}}))
    mcp_config = tmp_path / "mcp.json"
    mcp_config.write_text(json.dumps({"mcpServers": {"gw": {"type": "stdio", "command": str(BIN / "ctxsieve-gateway"),
                                                            "args": ["--config", str(gateway_config), "--url",
                                                                     stub_url]}}}))
    # Claude Code defers MCP tools behind its ToolSearch: the model loads the tool's schema first, then calls it
    model = ScriptedModel(calls=[("ToolSearch", {"query": "select:mcp__gw__tick"}), *[("mcp__gw__tick", {})] * 3])
    api, server = model.serve()
    env = {"PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    try:
        done = subprocess.run([str(CLAUDE), "-p", "Tick three times", "--mcp-config", str(mcp_config),
                               "--strict-mcp-config", "--allowedTools", "mcp__gw__tick", "--output-format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    results = [b for m in model.requests[-1]["messages"] if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    seen = [r["content"] if isinstance(r["content"], str) else "".join(b.get("text", "") for b in r["content"])
            for r in results[1:]]  # after ToolSearch's
    answers = [re.search(r"call (\d+) in pid (\d+)", s) for s in seen]  # Claude Code shows the structured copy
    assert [a.group(1) if a else s for a, s in zip(answers, seen, strict=True)] == ["1", "2", "3"], seen
    assert len({a.group(2) for a in answers if a}) == 1, "one upstream process answered every call"
    assert starts(log) <= 2, f"started {starts(log)} times"
