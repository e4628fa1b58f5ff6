"""`ctxsieve install` putting Codex's own MCP servers behind the gateway, in a fresh HOME with the user's
`~/.codex/config.toml` and the real Codex CLI (npm `@openai/codex` 0.169, tests/mcp) on PATH: the moved server's
tables commented out in place in a marked block, the gateway's table and config, what stays and why, Codex listing
the servers as installed, the model sent the gateway's cut of a large file Codex read through it (a scripted
Responses API on loopback), idempotence, `--dry-run`, doctor, and uninstall putting every byte back."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.client.gateway.test_codex_gateway import CODEX
from tests.client.gateway.test_gateway import NODE_BIN
from tests.client.installing import (
    BIN,
    LOG,
    Home,
    Machine,
    doctor_rows,
    dry_run_changes_nothing,
    gateway_tools,
    installed_twice,
)
from tests.client.scripted_openai import ScriptedResponses

FS = str(NODE_BIN / "mcp-server-filesystem")
FILES = ('[mcp_servers.files]\ncommand = "{fs}"\nargs = ["{shared}"]\ntool_timeout_sec = 30\n'
         'default_tools_approval_mode = "approve"\n\n[mcp_servers.files.env]\nLOG_LEVEL = "warn"\n')
CONFIG = ('model = "gpt-6.1-sol"  # mine\napproval_policy = "never"\nsandbox_mode = "read-only"\n\n{files}\n'
          '# the team\'s remote one\n[mcp_servers.docs]\nurl = "https://example.com/mcp"\n\n'
          '[mcp_servers.needed]\ncommand = "{fs}"\nargs = ["/tmp"]\nrequired = true\n\n'
          '[profiles.fast]\nmodel = "gpt-5-codex"\n')


def user_config(shared: Path) -> str:
    return CONFIG.format(files=FILES.format(fs=FS, shared=shared), fs=FS)


@pytest.fixture
def machine(tmp_path: Path, home: Home) -> Machine:
    (tmp_path / "shared").mkdir()
    return home({".codex/config.toml": user_config(tmp_path / "shared")}, {"codex": CODEX})


def test_local_servers_move_behind_the_gateway_and_uninstall_puts_every_byte_back(machine: Machine) -> None:
    assert CODEX.exists(), "run `make test` (it installs tests/mcp's npm packages)"
    before = machine.files()
    plan = dry_run_changes_nothing(machine, "codex")
    assert "docs stays in front of Codex: a remote server (url)" in plan
    assert "needed stays in front of Codex: its required is Codex's alone" in plan
    installed_twice(machine, "codex")

    path = machine.home / ".codex" / "config.toml"
    text = path.read_text()
    moved = FILES.format(fs=FS, shared=machine.home.parent / "shared").split("\n\n")
    for table in moved:  # each of the server's tables commented out where it was
        commented = "".join(f"# {line}\n" for line in table.strip("\n").split("\n"))
        assert f"by `ctxsieve install`; `ctxsieve uninstall` puts it back\n{commented}# <<< ctxsieve: moved\n" in text
    config = tomllib.loads(text)
    assert list(config["mcp_servers"]) == ["docs", "needed", "ctxsieve", "ctxsieve-gateway"]
    gateway_config = machine.home / ".config" / "ctxsieve" / "gateway-codex.json"
    assert config["mcp_servers"]["ctxsieve-gateway"] == {
        "command": str(BIN / "ctxsieve-gateway"), "args": ["--config", str(gateway_config), "--url",
                                                           machine.env["CTXSIEVE_URL"]],
        "startup_timeout_sec": 50, "tool_timeout_sec": 35, "default_tools_approval_mode": "approve"}
    assert json.loads(gateway_config.read_text()) == {"mcpServers": {"files": {
        "command": FS, "args": [str(machine.home.parent / "shared")], "env": {"LOG_LEVEL": "warn"},
        "ctxsieve": {"timeout_s": 30.0}}}}

    listed = subprocess.run(["codex", "mcp", "list"], cwd=machine.home, env=machine.env, capture_output=True,
                            text=True, timeout=120)
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert {"ctxsieve", "ctxsieve-gateway", "docs", "needed"} <= set(names) and "files" not in names, listed.stdout
    gateway = config["mcp_servers"]["ctxsieve-gateway"]
    assert "read_text_file" in gateway_tools([gateway["command"], *gateway["args"]], machine.env)
    assert [r for r in doctor_rows(machine) if "codex" in r] == [
        "ok codex: codex", "ok codex: gateway", "ok codex: MCP server", "ok codex: output limits",
        "ok codex: instructions"]

    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    codex_own = ".codex/mcp-oauth-locks"  # made by `codex mcp list`
    assert {k: v for k, v in machine.files().items() if not k.startswith(codex_own)} == before


def test_uninstall_keeps_what_the_user_changed_since(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "codex").returncode == 0
    path = machine.home / ".codex" / "config.toml"
    path.write_text(path.read_text() + '\n[profiles.slow]\nmodel = "o3"\n')
    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert path.read_text() == user_config(machine.home.parent / "shared") + '\n[profiles.slow]\nmodel = "o3"\n'


def test_codex_reads_a_large_file_through_the_installed_gateway_and_the_model_gets_the_cut(machine: Machine) -> None:
    """Codex as the user runs it after install (its own provider at the scripted API): the model has it read a large
    log through the moved server; what the model was sent is the gateway's cut with its ref, not the log."""
    log = machine.home.parent / "shared" / "sync.log"
    log.write_text(LOG * 3)
    assert machine.run("install", "--yes", "--agent", "codex").returncode == 0
    call = (f'const r = await tools.mcp__ctxsieve_gateway__read_text_file({{path: "{log}", intent: "the shard whose '
            'checksum did not match"});\ntext(r);')
    wait = 'await tools.exec_command({cmd: "sleep 15", yield_time_ms: 30000});\ntext("waited");'
    model = ScriptedResponses(calls=[("exec", wait), ("exec", call)])  # Codex does not wait for MCP servers to start
    url, server = model.serve()
    config = machine.home / ".codex" / "config.toml"
    config.write_text(f'openai_base_url = "{url}"\nforced_login_method = "api"\n' + config.read_text())
    try:
        done = subprocess.run(["codex", "exec", "--skip-git-repo-check", "Which shard failed?"], cwd=machine.home,
                              env={**machine.env, "OPENAI_API_KEY": "sk-test"}, capture_output=True, text=True,
                              timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = [json.dumps(o) for o in model.outputs(model.requests[-1])]
    assert len(outputs) == 2 and "shard 431 checksum mismatch" in outputs[1], outputs[1][:3000]
    assert "fetch_ref" in outputs[1] and len(outputs[1]) < len(LOG * 3) / 4, "the gateway's cut, not the whole log"
