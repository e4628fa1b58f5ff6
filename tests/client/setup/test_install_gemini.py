"""`ctxsieve install` for Gemini CLI, in a fresh HOME holding the user's own `~/.gemini/settings.json` and a
stand-in `gemini` on PATH (for detection: Gemini CLI itself is not installed here): what the settings gain (and
`mcp.allowed`, which must name ctxsieve's servers for Gemini CLI to start them), the servers that stay and why, the
gateway as written started against the real server-filesystem (npm, tests/mcp) with a variable the agent expands,
idempotence, `--dry-run`, doctor's rows, and uninstall putting every byte back.

With `CTXSIEVE_TEST_AGENT_BIN` naming a folder that holds the real `gemini` (npm `@google/gemini-cli`), the last
test has Gemini CLI itself connect to what install wrote."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.client.gateway.test_gateway import NODE_BIN
from tests.client.installing import (
    BIN,
    Home,
    Machine,
    doctor_rows,
    dry_run_changes_nothing,
    gateway_tools,
    installed_twice,
)

FS = str(NODE_BIN / "mcp-server-filesystem")
SETTINGS = ".gemini/settings.json"


def user_settings() -> str:
    return ('{\n  "general": {"vimMode": true},\n  "mcp": {"allowed": ["files", "trusted", "web"]},\n'
            '  "mcpServers": {\n'
            f'    "files": {{"command": "{FS}", "args": ["$SHARED"], "env": {{"TOKEN": "${{FILES_TOKEN}}"}}, '
            '"timeout": 30000},\n'
            f'    "trusted": {{"command": "{FS}", "args": ["/tmp"], "trust": true}},\n'
            '    "web": {"httpUrl": "https://example.com/mcp"},\n'
            f'    "unlisted": {{"command": "{FS}", "args": ["/tmp"]}}\n  }}\n}}\n')


@pytest.fixture
def machine(tmp_path: Path, home: Home) -> Machine:
    (tmp_path / "shared").mkdir()
    return home({SETTINGS: user_settings()}, {"gemini": None})


def test_local_servers_move_behind_the_gateway_and_uninstall_puts_every_byte_back(machine: Machine) -> None:
    before = machine.files()
    plan = dry_run_changes_nothing(machine, "gemini")
    assert "trusted stays in front of Gemini CLI: its trust is Gemini CLI's alone" in plan
    assert "web stays in front of Gemini CLI: a remote server" in plan
    assert "unlisted stays in front of Gemini CLI: turned off (mcp.allowed" in plan
    installed_twice(machine, "gemini")

    text = (machine.home / SETTINGS).read_text()
    assert text.startswith('{\n  "general": {"vimMode": true},\n  "mcp": {"allowed": ["files", "trusted", "web", '
                           '"ctxsieve", "ctxsieve-gateway"]},\n  "mcpServers": {\n    "trusted": ')
    settings = json.loads(text)
    assert list(settings["mcpServers"]) == ["trusted", "web", "unlisted", "ctxsieve", "ctxsieve-gateway"]
    assert settings["mcpServers"]["ctxsieve"] == {"command": str(BIN / "ctxsieve-mcp"), "args": [
        "--url", machine.env["CTXSIEVE_URL"]], "env": {"CTXSIEVE_API_KEY": "${CTXSIEVE_API_KEY}"}}
    gateway = settings["mcpServers"]["ctxsieve-gateway"]
    config = machine.home / ".config" / "ctxsieve" / "gateway-gemini.json"
    assert gateway == {"command": str(BIN / "ctxsieve-gateway"), "args": [
        "--config", str(config), "--url", machine.env["CTXSIEVE_URL"]], "env": {
        "CTXSIEVE_ENV_FILES_TOKEN": "${FILES_TOKEN}", "CTXSIEVE_ENV_SHARED": "${SHARED}",
        "CTXSIEVE_API_KEY": "${CTXSIEVE_API_KEY}"}, "timeout": 35000}
    assert json.loads(config.read_text()) == {"mcpServers": {"files": {
        "command": FS, "args": ["${CTXSIEVE_ENV_SHARED}"], "env": {"TOKEN": "${CTXSIEVE_ENV_FILES_TOKEN}"},
        "ctxsieve": {"timeout_s": 30.0}}}}

    shared = machine.home.parent / "shared"  # what Gemini CLI passes for $SHARED
    names = gateway_tools([gateway["command"], *gateway["args"]], {**machine.env, "CTXSIEVE_ENV_SHARED": str(shared),
                                                                   "CTXSIEVE_ENV_FILES_TOKEN": "t"})
    assert {"read_text_file", "list_allowed_directories", "fetch_ref"} <= set(names), names
    rows = doctor_rows(machine, SHARED=str(shared))  # doctor passes the variable from its own environment
    assert [r for r in rows if "gemini" in r] == [
        "ok gemini: gemini", "ok gemini: gateway", "ok gemini: MCP server", "ok gemini: output limits",
        "ok gemini: instructions"]

    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert machine.files() == before, "every file byte for byte as before; the gateway's config and its folder gone"


def test_uninstall_keeps_what_the_user_changed_since(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "gemini").returncode == 0
    path = machine.home / SETTINGS
    path.write_text(path.read_text().replace('"vimMode": true', '"vimMode": false'))
    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"{path}: changed since install: ctxsieve's entries taken out, your changes kept" in done.stdout
    settings = json.loads(path.read_text())
    original = json.loads(user_settings())
    assert settings["general"] == {"vimMode": False} and settings["mcp"] == original["mcp"]
    assert settings["mcpServers"] == original["mcpServers"], "the moved one back as it was; ctxsieve's gone"


REAL = Path(os.environ.get("CTXSIEVE_TEST_AGENT_BIN", "/nonexistent")) / "gemini"


@pytest.mark.skipif(not REAL.exists(), reason="CTXSIEVE_TEST_AGENT_BIN has no real gemini")
def test_the_real_gemini_cli_connects_to_what_install_wrote(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "gemini").returncode == 0
    work = machine.home / "work"
    work.mkdir()
    (machine.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(work): "TRUST_FOLDER"}))
    env = {**machine.env, "SHARED": str(machine.home.parent / "shared"), "FILES_TOKEN": "t"}
    done = subprocess.run([str(REAL), "mcp", "list"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stderr.splitlines()  # where Gemini CLI writes its list
    for name in ("ctxsieve", "ctxsieve-gateway", "trusted"):
        assert any(line.startswith(f"✓ {name}: ") and line.endswith("Connected") for line in lines), done.stderr
    assert not any(line.startswith("✓ files:") for line in lines), "moved: started only through the gateway"
