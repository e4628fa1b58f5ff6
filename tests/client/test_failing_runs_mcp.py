"""The failing runs of failing_runs.py (1, 8, 30 and 100 failing tests, a 50-error build) through ctxsieve's MCP
surfaces, driven by the real Claude Code (bundled in claude-agent-sdk) with its MCP result limit in place
(MAX_MCP_OUTPUT_TOKENS at its default, 25,000), in one session against a scripted Messages API that records what
the model was sent and counts tokens as a provider does (tiktoken over the counted messages: the default stand-in
answers 100 for anything, which would let a whole 214 KB result through uncut, and prove nothing):

- the gateway in front of an MCP server of the tests' own whose tool returns each run as its error result (isError)
  and as a normal result;
- `ctxsieve mcp`, the model fetching the whole ref of the 100-failure run, and filtering it.

What reaches the model for each call: every failing test id and assertion line (100 failures: as many as fit, how
many more and the call that lists them), none of Claude Code's own cut (a truncation note, a `<persisted-output>`
or saved-file preview of ctxsieve's text), and the call that reads the rest named when the run was not shown
whole."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxsieve_client import Client
from ctxsieve_client.cutting import CutOptions, cut_request
from ctxsieve_client.fitting import claude_mcp_limit
from ctxsieve_client.setup.commands import server_command
from tests.client.coding_scenarios import tool_results
from tests.client.failing_runs import Run
from tests.client.hooks.test_claude_code_outputs import BIN, CLAUDE
from tests.client.hooks.test_failing_runs_fit import REQUEST, check
from tests.client.scripted_anthropic import ScriptedModel

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "failing_runs_server.py"
INTENT = "which tests fail and why"
REST = re.compile(r'fetch_ref\(ref="src_[0-9a-f]{20}"(?:, lines="\d+-\d+")?\)')
LISTING = re.compile(r'fetch_ref\(ref="src_[0-9a-f]{20}", lines="\d+-\d+"\)')  # the MCP tools' own name
CUT_BY_CLAUDE = ("<persisted-output>", "Output too large", "was truncated", "exceeds maximum allowed tokens",
                 "token limit]", "saved to")


def _session(root: Path, tmp_path: Path, stub_url: str, runs: dict[str, Run], calls: list[tuple[str, dict[str, Any]]],
             counter: Any) -> ScriptedModel:
    """One headless Claude Code session with the gateway (over the tests' CI server) and `ctxsieve mcp`, the model
    making `calls` one a turn; the scripted model, with every request it was sent."""
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({name: run.output for name, run in runs.items()}))
    gateway = tmp_path / "gateway.json"
    gateway.write_text(json.dumps({"mcpServers": {"ci": {"command": sys.executable, "args": [str(SERVER),
                                                                                            str(outputs)]}},
                                   "ctxsieve": {"tool_search": "off"}}))
    mcp = server_command(stub_url)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "gw": {"command": str(BIN / "ctxsieve-gateway"), "args": ["--config", str(gateway), "--url", stub_url]},
        "ctxsieve": {"command": mcp[0], "args": mcp[1:]}}}))
    model = ScriptedModel(calls=calls, count=counter)
    api, server = model.serve()
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}  # the servers run the code under test
    allowed = "mcp__gw__run_check,mcp__ctxsieve__fetch_ref,mcp__ctxsieve__filter_ref"
    try:
        done = subprocess.run([str(CLAUDE), "-p", REQUEST, "--allowedTools", allowed, "--mcp-config", str(config),
                               "--strict-mcp-config", "--output-format", "json"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    return model


def _reached_whole(text: str, run: Run, name: str, whole: bool) -> None:
    """Every failure, none of Claude Code's own cut, within its limit; the call for the rest unless shown whole."""
    assert not any(mark in text for mark in CUT_BY_CLAUDE), f"{name}: Claude Code cut it: {text[-600:]}"
    assert claude_mcp_limit().measure(text) <= claude_mcp_limit().size, f"{name}: {len(text):,} characters"
    check(text, run, name, LISTING)
    assert whole or REST.search(text), f"{name}: the call that reads the rest"


def test_failing_runs_reach_claude_codes_model_through_the_mcp_surfaces(
        stub_url: str, runs: tuple[Path, dict[str, Run]], tmp_path: Path, tokenizer: Any) -> None:
    root, made = runs
    big = made["pytest 100"]
    stored = Client(stub_url).send(cut_request(big.output, INTENT, "run_check", {"name": "pytest 100"},  # type: ignore[arg-type]
                                               CutOptions(), kind="log"))
    calls: list[tuple[str, dict[str, Any]]] = [("ToolSearch", {"query": "select:mcp__gw__run_check,"
                                                               "mcp__ctxsieve__fetch_ref,mcp__ctxsieve__filter_ref"})]
    calls += [("mcp__gw__run_check", {"name": name, "failed": failed, "intent": INTENT})
              for failed in (True, False) for name in made]
    calls += [("mcp__ctxsieve__fetch_ref", {"ref": stored.ref}),
              ("mcp__ctxsieve__filter_ref", {"ref": stored.ref, "query": INTENT})]
    model = _session(root, tmp_path, stub_url, made, calls, tokenizer.count)
    seen = list(tool_results(model.requests).values())[1:]  # after ToolSearch's
    assert len(seen) == len(calls) - 1, "every call's result reached the model"
    for (tool, arguments), text in zip(calls[1:], seen, strict=True):
        run = made[arguments.get("name", "pytest 100")]
        label = f"{tool} {arguments.get('name', 'pytest 100')}" + (" (error)" if arguments.get("failed") else "")
        whole = run.output.strip() in text  # small enough to pass as it is (an error result within the limit)
        _reached_whole(text, run, label, whole)
