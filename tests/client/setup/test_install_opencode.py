"""`ctxsieve install` for OpenCode, in a fresh HOME holding the user's own `~/.config/opencode/opencode.json` and a
stand-in `opencode` on PATH (for detection: OpenCode itself is not installed here): what the config gains, the
gateway's config beside it, the gateway as written started against the real server-filesystem (npm, tests/mcp),
idempotence, `--dry-run`, doctor's rows, and uninstall putting every byte back.

With `CTXSIEVE_TEST_AGENT_BIN` naming a folder that holds the real `opencode` (npm `opencode-ai`), the last test
has OpenCode itself connect to what install wrote."""

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
CONFIG_PATH = ".config/opencode/opencode.json"
LOCAL = f'"files": {{"type": "local", "command": ["{FS}", "ROOT"], "environment": {{"TOKEN": "{{env:FILES_TOKEN}}"}}}}'
REMOTE = '"docs": {"type": "remote", "url": "https://example.com/mcp"}'
OFF = '"off": {"type": "local", "command": ["true"], "enabled": false}'


def user_config(root: Path) -> str:
    servers = ",\n    ".join([LOCAL.replace("ROOT", str(root)), REMOTE, OFF])
    return ('{\n  "$schema": "https://opencode.ai/config.json",\n  "model": "anthropic/claude-sonnet-4-5",\n'
            f'  "mcp": {{\n    {servers}\n  }}\n}}\n')


@pytest.fixture
def machine(tmp_path: Path, home: Home) -> Machine:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "notes.txt").write_text("the pump at station 4\n")
    return home({CONFIG_PATH: user_config(tmp_path / "shared")}, {"opencode": None})


def test_local_servers_move_behind_the_gateway_and_uninstall_puts_every_byte_back(machine: Machine) -> None:
    before = machine.files()
    plan = dry_run_changes_nothing(machine, "opencode")
    assert '  +    "ctxsieve-gateway": {' in plan and "docs stays in front of OpenCode: a remote server" in plan
    assert "off stays in front of OpenCode: turned off" in plan and "base_url" not in plan.lower()
    installed_twice(machine, "opencode")

    text = (machine.home / CONFIG_PATH).read_text()
    head = '{\n  "$schema": "https://opencode.ai/config.json",\n  "model": "anthropic/claude-sonnet-4-5",\n'
    assert text.startswith(f'{head}  "mcp": {{\n    {REMOTE},\n    {OFF},\n    "ctxsieve": {{'), "the user's lines kept"
    servers = json.loads(text)["mcp"]
    assert list(servers) == ["docs", "off", "ctxsieve", "ctxsieve-gateway"]
    assert servers["ctxsieve"] == {"type": "local", "command": [str(BIN / "ctxsieve-mcp"), "--url",
                                                                machine.env["CTXSIEVE_URL"]]}
    gateway = servers["ctxsieve-gateway"]
    config = machine.home / ".config" / "ctxsieve" / "gateway-opencode.json"
    assert gateway == {"type": "local", "command": [str(BIN / "ctxsieve-gateway"), "--config", str(config), "--url",
                                                    machine.env["CTXSIEVE_URL"]],
                       "environment": {"CTXSIEVE_ENV_FILES_TOKEN": "{env:FILES_TOKEN}"}, "timeout": 65000}
    shared = str(machine.home.parent / "shared")
    assert json.loads(config.read_text()) == {"mcpServers": {"files": {
        "command": FS, "args": [shared], "env": {"TOKEN": "${CTXSIEVE_ENV_FILES_TOKEN}"}}}}

    names = gateway_tools(gateway["command"], {**machine.env, "CTXSIEVE_ENV_FILES_TOKEN": "t"})
    assert {"read_text_file", "list_directory", "fetch_ref", "filter_ref"} <= set(names), names
    assert [r for r in doctor_rows(machine) if "opencode" in r] == [
        "ok opencode: opencode", "ok opencode: gateway", "ok opencode: MCP server", "ok opencode: output limits",
        "ok opencode: instructions"]

    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert machine.files() == before, "every file byte for byte as before; the gateway's config and its folder gone"


def test_opencode_2s_shape_is_written_in_its_own_shape(tmp_path: Path, home: Home) -> None:
    """`mcp.servers` (OpenCode 2): ctxsieve's entries go there, the gateway's timeout as OpenCode 2 writes one."""
    text = f'{{"mcp": {{"servers": {{"files": {{"type": "local", "command": ["{FS}", "{tmp_path}"]}}}}}}}}\n'
    machine = home({CONFIG_PATH: text}, {})
    installed_twice(machine, "opencode")
    servers = json.loads((machine.home / CONFIG_PATH).read_text())["mcp"]["servers"]
    assert list(servers) == ["ctxsieve", "ctxsieve-gateway"]
    assert servers["ctxsieve-gateway"]["timeout"] == {"catalog": 65000, "execution": 65000}
    assert machine.run("uninstall", "--yes").returncode == 0
    assert (machine.home / CONFIG_PATH).read_text() == text


def test_uninstall_keeps_what_the_user_changed_since(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "opencode").returncode == 0
    path = machine.home / CONFIG_PATH
    path.write_text(path.read_text().replace('"model": "anthropic/claude-sonnet-4-5"', '"model": "openai/gpt-6"'))
    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"{path}: changed since install: ctxsieve's entries taken out, your changes kept" in done.stdout
    data = json.loads(path.read_text())
    assert data["model"] == "openai/gpt-6" and list(data["mcp"]) == ["docs", "off", "files"], "the moved one back"
    assert data["mcp"]["files"] == json.loads(user_config(machine.home.parent / "shared"))["mcp"]["files"]
    assert not (machine.home / ".config" / "ctxsieve").exists()


def test_a_config_with_comments_is_said_and_nothing_is_written(home: Home) -> None:
    machine = home({CONFIG_PATH: '{\n  // mine\n  "model": "x",\n}\n'}, {"opencode": None})
    before = machine.files()
    done = machine.run("install", "--yes")
    assert done.returncode == 1 and "opencode.json is not a JSON object" in done.stderr
    assert "--agent NAME" in done.stderr, "how to wire the others meanwhile"
    assert machine.files() == before


REAL = Path(os.environ.get("CTXSIEVE_TEST_AGENT_BIN", "/nonexistent")) / "opencode"


@pytest.mark.skipif(not REAL.exists(), reason="CTXSIEVE_TEST_AGENT_BIN has no real opencode")
def test_the_real_opencode_connects_to_what_install_wrote(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "opencode").returncode == 0
    done = subprocess.run([str(REAL), "mcp", "list"], cwd=machine.home, env=machine.env, capture_output=True,
                          text=True, timeout=300)
    lines = done.stdout.splitlines()
    for name in ("ctxsieve", "ctxsieve-gateway"):
        assert any(f"✓ {name} " in line and "connected" in line for line in lines), done.stdout
    assert not any("✓ files" in line for line in lines), "moved: OpenCode starts it only through the gateway"


def test_servers_in_opencode_jsonc_beside_it_are_said_to_stay(home: Home) -> None:
    """OpenCode merges opencode.jsonc with opencode.json: install writes the latter, and says the former's servers
    stay in front of OpenCode."""
    jsonc = '{\n  // mine\n  "mcp": {"files": {"type": "local", "command": ["true"]}},\n}\n'
    machine = home({".config/opencode/opencode.jsonc": jsonc}, {})
    before = machine.files()
    done = machine.run("install", "--yes", "--agent", "opencode")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "opencode.jsonc: its MCP servers stay in front of OpenCode (install edits opencode.json only)" in done.stdout
    assert list(json.loads((machine.home / CONFIG_PATH).read_text())["mcp"]) == ["ctxsieve"]
    assert machine.run("uninstall", "--yes").returncode == 0 and machine.files() == before
