"""`ctxsieve install`, `uninstall` and `doctor` as a user runs them: a fresh HOME holding the user's own Claude Code
and Codex configs, the real Claude Code CLI (the one the Claude Agent SDK bundles) and the real Codex CLI on PATH,
the service on loopback (the real app with the stand-in model), and the agents run against scripted model APIs
that record what the model is sent."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.client.gateway.test_codex_gateway import CODEX
from tests.client.hooks.test_claude_code_hook import CLAUDE
from tests.client.installing import BIN, LOG, ROW, Home, Machine, doctor_rows

SETTINGS = '{\n    "permissions": {"allow": ["Read"]},\n    "model": "sonnet"\n}\n'  # the user's own layout
CODEX_CONFIG = 'model = "gpt-6.1-sol"  # mine\napproval_policy = "never"\nsandbox_mode = "read-only"\n\n' \
               '[profiles.fast]\nmodel = "gpt-5-codex"\n'


def claude_and_codex(home: Home, url: str | None = None) -> Machine:
    """The user's own Claude Code settings and Codex config, the real Claude Code and Codex CLIs on PATH."""
    files = {".claude/settings.json": SETTINGS, ".codex/config.toml": CODEX_CONFIG}
    return home(files, {"claude": CLAUDE, "codex": CODEX}, **({"url": url} if url else {}))


@pytest.fixture
def machine(home: Home) -> Machine:
    return claude_and_codex(home)


def test_dry_run_shows_the_plan_and_changes_nothing(machine: Machine) -> None:
    before = machine.files()
    done = machine.run("install", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert machine.files() == before, "nothing written, no backup, no state folder"
    out = done.stdout
    assert out.startswith("ctxsieve install: Claude Code (claude at ") and "Codex CLI (codex at " in out
    for path in (".claude/settings.json", ".claude.json", ".codex/config.toml",
                 ".local/share/ctxsieve/claude-code-capture.sh"):
        assert f"{machine.home / path}: " in out
    assert "  +[mcp_servers.ctxsieve]" in out and "  +tool_output_token_limit = 100000" in out
    assert '  +    "env": {' in out and "CLAUDE_CODE_SHELL_PREFIX" in out, "in the user's own 4-space layout"
    assert "max_output_tokens" in out, "the plan says what the Codex setting does not do"
    assert "openai_base_url" not in out and "base_url" not in out, "never a model base URL"
    assert out.endswith("nothing written\n")


def test_install_doctor_reinstall_and_uninstall_leave_every_file_as_it_was(machine: Machine) -> None:
    before = machine.files()
    done = machine.run("install", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    settings = (machine.home / ".claude" / "settings.json").read_text()
    assert settings.startswith('{\n    "permissions": {"allow": ["Read"]},\n    "model": "sonnet",\n    "hooks": {')
    hook = json.loads(settings)["hooks"]["PostToolUse"][0]["hooks"][0]
    assert hook["type"] == "http" and hook["url"] == f"{machine.env['CTXSIEVE_URL']}/v1/hooks/claude-code"
    config_text = (machine.home / ".codex" / "config.toml").read_text()
    assert CODEX_CONFIG in config_text, "the user's TOML kept byte for byte"
    config = tomllib.loads(config_text)
    assert config["model"] == "gpt-6.1-sol" and config["profiles"] == {"fast": {"model": "gpt-5-codex"}}
    assert config["tool_output_token_limit"] == 100_000 and "openai_base_url" not in config
    server = config["mcp_servers"]["ctxsieve"]
    claude_server = json.loads((machine.home / ".claude.json").read_text())["mcpServers"]["ctxsieve"]
    assert [server["command"], *server["args"]] == [claude_server["command"], *claude_server["args"]]
    assert Path(server["command"]).parent == BIN and server["args"][-2:] == ["--url", machine.env["CTXSIEVE_URL"]]

    doctor = machine.run("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    rows = [" ".join(m.groups()) for m in map(ROW.match, doctor.stdout.splitlines()) if m]
    assert rows == ["ok service", "ok model", "ok stages", "ok repositories", "ok claude-code: claude",
                    "ok claude-code user: hook",
                    "ok claude-code user: output limits", "ok claude-code user: MCP server",
                    "ok claude-code: instructions", "ok codex: codex", "ok codex: MCP server",
                    "ok codex: output limits", "ok codex: instructions"], doctor.stdout

    installed = machine.files()
    again = machine.run("install", "--yes")
    assert again.returncode == 0 and again.stdout.endswith("nothing to change: ctxsieve is installed as planned\n")
    assert machine.files() == installed, "a second install changes nothing"

    undone = machine.run("uninstall", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert machine.files() == before, "every file byte for byte as before; the files and folders made are gone"


def test_uninstall_keeps_what_the_user_changed_since(machine: Machine) -> None:
    assert machine.run("install", "--yes").returncode == 0
    settings = machine.home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"model": "sonnet",', '"model": "opus",'))
    config = machine.home / ".codex" / "config.toml"
    config.write_text(config.read_text() + '\n[profiles.slow]\nmodel = "o3"\n')
    servers = machine.home / ".claude.json"  # Claude Code rewrites it as it runs
    servers.write_text(json.dumps({"numStartups": 2, **json.loads(servers.read_text())}, indent=2))
    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert settings.read_text() == SETTINGS.replace('"model": "sonnet"', '"model": "opus"')
    assert config.read_text() == CODEX_CONFIG + '\n[profiles.slow]\nmodel = "o3"\n'
    assert json.loads(servers.read_text()) == {"numStartups": 2}
    assert f"{settings}: changed since install: ctxsieve's entries taken out, your changes kept" in done.stdout
    assert not (machine.home / ".local" / "share" / "ctxsieve").exists()


def test_doctor_says_what_is_broken_and_how_to_mend_it(home: Home) -> None:
    machine = claude_and_codex(home, "http://127.0.0.1:9")  # nothing listens there
    assert machine.run("install", "--yes", "--agent", "claude").returncode == 0
    (machine.home / ".local" / "share" / "ctxsieve" / "claude-code-capture.sh").unlink()
    done = machine.run("doctor")
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert any(line.startswith("FAIL  service ") for line in lines)
    assert "fix: ctxsieve service start" in done.stdout
    assert any(line.startswith("FAIL  claude-code user: hook") for line in lines)
    assert any(line.startswith("FAIL  claude-code user: output limits") for line in lines)
    assert any(line.startswith("ok    claude-code user: MCP server") for line in lines), "it lists tools without"
    codex = [line for line in lines if "codex" in line]
    assert len(codex) == 2 and codex[0].startswith("warn  codex ") and "not wired to ctxsieve" in codex[0], codex
    assert codex[1].endswith("fix: ctxsieve install --agent codex"), "Codex was found, not wired: said, not broken"


def test_doctor_lists_the_repositories_code_search_has(home: Home, tmp_path: Path) -> None:
    """A trial user looked for the indexed repositories in `ctxsieve doctor`: a row names each with its state and
    files (none yet: how to index one)."""
    import time

    import httpx

    from tests.conftest import make_settings, serve_on_loopback, stub_models

    url, stop = serve_on_loopback(make_settings(tmp_path / "data", read_roots=str(tmp_path)), stub_models())
    try:
        machine = claude_and_codex(home, url)
        none = next(line for line in machine.run("doctor").stdout.splitlines() if " repositories " in line)
        assert none.startswith("ok    repositories ") and "none indexed yet: `ctxsieve index`" in none, none
        (tmp_path / "app").mkdir()
        (tmp_path / "app" / "shop.py").write_text("def total(cart):\n    return sum(cart)\n")
        assert httpx.put(f"{url}/v1/repos/app", json={"path": str(tmp_path / "app")}).status_code == 202
        deadline = time.monotonic() + 120
        while httpx.get(f"{url}/v1/repos/app").json()["state"] == "indexing":
            assert time.monotonic() < deadline, "indexed within two minutes"
            time.sleep(0.1)
        state = httpx.get(f"{url}/v1/repos/app").json()["state"]
        listed = next(line for line in machine.run("doctor").stdout.splitlines() if " repositories " in line)
        assert listed.endswith(f"1 indexed: app ({state}, 1 file)"), listed
    finally:
        stop()


def test_every_agent_found_is_planned_and_an_unknown_one_is_said(machine: Machine) -> None:
    (machine.home / ".gemini").mkdir()
    found = machine.run("install", "--dry-run")
    assert found.stdout.startswith("ctxsieve install: Claude Code (") and ", Gemini CLI (" in found.stdout
    assert f"{machine.home / '.gemini' / 'settings.json'}: created" in found.stdout
    done = machine.run("install", "--agent", "vim")
    assert done.returncode == 1 and "no agent named 'vim'" in done.stderr


def test_without_an_answer_nothing_is_written(machine: Machine) -> None:
    before = machine.files()
    done = machine.run("install", stdin="n\n")
    assert done.returncode == 1 and "Write these changes? [y/N]" in done.stdout
    assert machine.files() == before


def claude_reads(machine: Machine, api: str, log: Path) -> subprocess.CompletedProcess[str]:
    """Claude Code as the user runs it after install: its own settings and ~/.claude.json, no flags of ours."""
    env = {**machine.env, "ANTHROPIC_BASE_URL": api, "ANTHROPIC_API_KEY": "sk-test", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    return subprocess.run(["claude", "-p", f"Read {log} and find the checksum mismatch", "--allowedTools", "Read",
                           "--output-format", "json"], cwd=machine.home, env=env, capture_output=True, text=True,
                          timeout=300)


def installed_claude_reads_the_log(machine: Machine) -> str:
    """Install, then Claude Code as the user runs it reads a large log: what its model was sent of it."""
    from tests.client.coding_scenarios import tool_results
    from tests.client.scripted_anthropic import ScriptedModel

    assert machine.run("install", "--yes").returncode == 0
    log = machine.home / "sync.log"
    log.write_text(LOG * 3)
    model = ScriptedModel(str(log))
    api, server = model.serve()
    try:
        done = claude_reads(machine, api, log)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    return tool_results(model.requests)["toolu_00"]


def test_claude_code_as_installed_sends_the_model_the_cut_with_its_ref(machine: Machine) -> None:
    seen = installed_claude_reads_the_log(machine)
    assert "mcp__ctxsieve__fetch_ref(ref=\"src_" in seen and len(seen) < len(LOG * 3) / 4


def codex_cats(machine: Machine) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Codex as the user runs it after install (its own provider at the scripted API, as its config says): the model
    has it `cat` the log; what the model was sent of it."""
    from tests.client.scripted_openai import ScriptedResponses

    (machine.home / "sync.log").write_text(LOG)
    model = ScriptedResponses(calls=[("exec", 'const r = await tools.exec_command({cmd: "cat sync.log"});\ntext(r);')])
    url, server = model.serve()
    config = machine.home / ".codex" / "config.toml"
    config.write_text(f'openai_base_url = "{url}"\nforced_login_method = "api"\n' + config.read_text())
    try:
        done = subprocess.run(["codex", "exec", "--skip-git-repo-check", "Which shard failed to sync?"],
                              cwd=machine.home, env={**machine.env, "OPENAI_API_KEY": "sk-test"}, capture_output=True,
                              text=True, timeout=300)
    finally:
        server.should_exit = True
    return done, [json.dumps(o) for r in model.requests for o in model.outputs(r)]


def test_with_the_service_stopped_both_installed_agents_still_work(home: Home) -> None:
    """Everything install writes fails open: with nothing at the service's URL, Claude Code's hook is a non-blocking
    error and the model gets Read's own output; Codex starts with its MCP server unable to reach the service and
    the model gets the command's output."""
    machine = claude_and_codex(home, "http://127.0.0.1:9")
    seen = installed_claude_reads_the_log(machine)
    assert "shard 559 to the archive" in seen and "mcp__ctxsieve__" not in seen, "Read's own output"

    done, outputs = codex_cats(machine)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(outputs) == 1 and "shard 431 checksum mismatch" in outputs[0] and "shard 559" in outputs[0]


def test_install_needs_no_service_and_writes_only_absolute_paths(machine: Machine) -> None:
    done = machine.run("install", "--yes", "--command", CTXSIEVE_URL="http://127.0.0.1:9")
    assert done.returncode == 0, done.stderr
    hook = json.loads((machine.home / ".claude" / "settings.json").read_text())["hooks"]["PostToolUse"][0]["hooks"][0]
    assert hook["command"] == f"{BIN / 'ctxsieve-hook'} claude-code --url http://127.0.0.1:9"
    assert os.path.isabs(json.loads((machine.home / ".claude.json").read_text())["mcpServers"]["ctxsieve"]["command"])


def test_a_config_that_does_not_parse_is_said_and_nothing_is_written(machine: Machine) -> None:
    (machine.home / ".codex" / "config.toml").write_text("model = [\n")
    before = machine.files()
    done = machine.run("install", "--yes")
    assert done.returncode == 1 and "config.toml is not valid TOML" in done.stderr
    assert machine.files() == before
    (machine.home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (machine.home / ".claude" / "settings.json").write_text('{"model": ')
    before = machine.files()
    done = machine.run("install", "--yes")
    assert done.returncode == 1 and "settings.json is not a JSON object" in done.stderr
    assert machine.files() == before


def test_each_agents_instruction_file_says_when_to_use_search_code_and_uninstall_takes_it_out(
        machine: Machine) -> None:
    mine = machine.home / ".claude" / "CLAUDE.md"
    mine.write_text("# my rules\nAlways run the tests.")  # no newline at its end
    before = machine.files()
    assert machine.run("install", "--yes").returncode == 0
    block = ("<!-- >>> ctxsieve: added by `ctxsieve install`; `ctxsieve uninstall` takes it out -->\n"
             "To find where something is defined or handled in this repository, call search_code(query) (ctxsieve MCP) "
             "before grepping.\nIts results carry the files' true line numbers; fetch_ref(ref) (ctxsieve MCP) reads "
             "the rest of anything ctxsieve cut.\n<!-- <<< ctxsieve -->\n")
    assert mine.read_text() == "# my rules\nAlways run the tests.\n\n" + block, "two lines in a marked block"
    assert (machine.home / ".codex" / "AGENTS.md").read_text() == block, "created"
    assert "ok claude-code: instructions" in doctor_rows(machine)
    assert machine.run("uninstall", "--yes").returncode == 0
    assert machine.files() == before, "the file appended to is back to its bytes; the one created is gone"

    assert machine.run("install", "--yes").returncode == 0
    mine.write_text(mine.read_text() + "Never push on Fridays.\n")  # changed since install
    done = machine.run("uninstall", "--yes")
    assert f"{mine}: changed since install: ctxsieve's entries taken out, your changes kept" in done.stdout
    assert mine.read_text() == "# my rules\nAlways run the tests.\nNever push on Fridays.\n"
