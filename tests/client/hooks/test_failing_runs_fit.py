"""Failing runs with 1, 8, 30 and 100 failing tests and a build with 50 compiler errors, through the real Claude Code
(bundled in claude-agent-sdk) with the hooks, the capture prefix and the `ctxsieve` MCP server as `install` writes
them, in one session against a scripted Messages API that records what the model was sent. Claude Code saves a
hook's context over 10,000 characters to a file and shows a 2 KB preview: what ctxsieve sends must arrive whole,
every failing test's id and assertion line in it (for 100: as many as fit, how many more and the call that lists
them), the call that reads the rest naming a tool the model has. The same answers through `ctxsieve mcp` and the
gateway fit Claude Code's MCP limit and Codex's per-call limit."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ctxsieve_client import Client
from ctxsieve_client.cutting import CutOptions, cut_request
from ctxsieve_client.fitting import CLAUDE_HOOK_CONTEXT, CODEX_CALL, claude_mcp_limit, fit_failing
from ctxsieve_client.hooks.whole import capture_script
from ctxsieve_client.setup.commands import server_command
from tests.client.coding_scenarios import tool_results
from tests.client.failing_runs import Run
from tests.client.hooks.test_claude_code_outputs import BIN, CLAUDE, hook
from tests.client.scripted_anthropic import ScriptedModel

REQUEST = "The billing tests and the ledger build fail: list every failing test and why."
LISTING = re.compile(r'mcp__ctxsieve__fetch_ref\(ref="src_[0-9a-f]{20}", lines="\d+-\d+"\)')
FETCH = re.compile(r'mcp__ctxsieve__fetch_ref\(ref="src_[0-9a-f]{20}", lines="(?:\d+-\d+|A-B)"\)')


def check(seen: str, run: Run, name: str, listing: re.Pattern[str] = LISTING) -> None:
    """Every failing test id and assertion line (100 failures: as many as fit, the count and the call, as `listing`
    names it)."""
    shown = [fact for fact in run.ids + run.asserts if fact in seen]
    if "pytest 100" in name and "more failures not listed" in seen:
        more = re.search(r"… and (\d+) more failures not listed here.*?lists every one.*?" + listing.pattern, seen)
        assert more, "how many more failures there are, and the call that lists them"
        listed = sum(i in seen for i in run.ids)
        assert listed >= 40 and listed + int(more.group(1)) == 100, f"{listed} listed, {more.group(1)} more"
        assert all((i in seen) == (a in seen) for i, a in zip(run.ids, run.asserts, strict=True))
    else:
        assert len(shown) == len(run.ids + run.asserts), f"{name}: missing {set(run.ids + run.asserts) - set(shown)}"


def test_failing_runs_reach_claude_codes_model_whole(live_url: str, runs: tuple[Path, dict[str, Run]],
                                                     tmp_path: Path) -> None:
    root, made = runs
    model = ScriptedModel(calls=[("Bash", {"command": run.command, "description": name})
                                 for name, run in made.items()])
    api, server = model.serve()
    wired = [{"matcher": "*", "hooks": [hook("command", live_url)]}]
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"env": {"CLAUDE_CODE_SHELL_PREFIX": str(capture_script())},
                                    "hooks": {"PostToolUse": wired, "PostToolUseFailure": wired}}))
    command = server_command(live_url)
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"ctxsieve": {"command": command[0], "args": command[1:]}}}))
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}  # the hook runs the code under test
    try:
        done = subprocess.run([str(CLAUDE), "-p", REQUEST, "--allowedTools", "Bash", "--settings", str(settings),
                               "--mcp-config", str(mcp), "--strict-mcp-config", "--output-format", "json"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    seen = tool_results(model.requests)
    assert len(seen) == len(made), "every call's result reached the model"
    offered = model.raw[-1].decode()
    assert "mcp__ctxsieve__fetch_ref" in offered, "the tool the calls name is one the model has"
    for (name, run), text in zip(made.items(), seen.values(), strict=True):
        assert text.startswith("Exit code 1\n"), f"{name}: Claude Code's own error, as is"
        assert "<persisted-output>" not in text and "Output too large" not in text, f"{name}: no preview"
        check(text, run, name)
        assert FETCH.search(text), f"{name}: the call that reads the rest"


@pytest.mark.parametrize(("surface", "limit"), [("claude mcp", claude_mcp_limit()), ("codex", CODEX_CALL),
                                                 ("claude hook", CLAUDE_HOOK_CONTEXT)])
def test_each_limit_holds_every_failure(stub_url: str, runs: tuple[Path, dict[str, Run]], surface: str,
                                        limit: object) -> None:
    """The same shaping at each agent's limit, measured in the agent's own unit."""
    del surface
    assert hasattr(limit, "measure")
    client = Client(stub_url)
    for name, run in runs[1].items():
        request = cut_request(run.output, REQUEST, "Bash", {"command": run.command}, CutOptions(max_tokens=1000),
                              kind="log")
        assert request is not None
        result = client.send(request)
        text = fit_failing(result, "", result.placeholder, limit,  # type: ignore[arg-type]
                           lambda ref, lines: f'mcp__ctxsieve__fetch_ref(ref="{ref}", lines="{lines}")')
        assert text is not None and limit.measure(text) <= limit.size, name  # type: ignore[attr-defined]
        check(text, run, name)
