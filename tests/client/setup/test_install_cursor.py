"""`ctxsieve install` for Cursor, in a fresh HOME holding the user's own `~/.cursor/mcp.json` and a stand-in
`cursor-agent` on PATH (for detection: Cursor is not installed here): what the config gains, the servers that stay
(a remote one, one using Cursor's own `${workspaceFolder}`, one with an envFile), the gateway as written started
against the real server-filesystem (npm, tests/mcp), idempotence, `--dry-run`, doctor's rows, and uninstall putting
every byte back."""

from __future__ import annotations

import json
import sys
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
CONFIG = ".cursor/mcp.json"


def user_config(shared: Path) -> str:
    return json.dumps({"mcpServers": {
        "files": {"command": FS, "args": [str(shared)], "env": {"TOKEN": "${env:FILES_TOKEN}"}},
        "workspace": {"command": FS, "args": ["${workspaceFolder}"]},
        "secrets": {"command": FS, "args": ["/tmp"], "envFile": "~/.env.mcp"},
        "linear": {"url": "https://mcp.linear.app/sse"}}}, indent=4) + "\n"


@pytest.fixture
def machine(tmp_path: Path, home: Home) -> Machine:
    (tmp_path / "shared").mkdir()
    return home({CONFIG: user_config(tmp_path / "shared")}, {"cursor-agent": None})


def test_local_servers_move_behind_the_gateway_and_uninstall_puts_every_byte_back(machine: Machine) -> None:
    before = machine.files()
    plan = dry_run_changes_nothing(machine, "cursor")
    assert "workspace stays in front of Cursor: it uses a substitution the agent makes itself" in plan
    assert "secrets stays in front of Cursor: its envFile is Cursor's alone" in plan
    assert "linear stays in front of Cursor: a remote server" in plan
    installed_twice(machine, "cursor")

    text = (machine.home / CONFIG).read_text()
    assert '\n        "ctxsieve-gateway": {\n            "command": ' in text, "in the file's own 4-space layout"
    servers = json.loads(text)["mcpServers"]
    assert list(servers) == ["workspace", "secrets", "linear", "ctxsieve", "ctxsieve-gateway"]
    assert servers["ctxsieve"] == {"command": str(BIN / "ctxsieve-mcp"), "args": ["--url", machine.env["CTXSIEVE_URL"]]}
    config = machine.home / ".config" / "ctxsieve" / "gateway-cursor.json"
    gateway = servers["ctxsieve-gateway"]
    assert gateway == {"command": str(BIN / "ctxsieve-gateway"), "args": [
        "--config", str(config), "--url", machine.env["CTXSIEVE_URL"]],
        "env": {"CTXSIEVE_ENV_FILES_TOKEN": "${env:FILES_TOKEN}"}}
    assert json.loads(config.read_text())["mcpServers"] == {"files": {
        "command": FS, "args": [str(machine.home.parent / "shared")], "env": {"TOKEN": "${CTXSIEVE_ENV_FILES_TOKEN}"}}}

    names = gateway_tools([gateway["command"], *gateway["args"]], {**machine.env, "CTXSIEVE_ENV_FILES_TOKEN": ""})
    assert {"read_text_file", "search_files", "filter_ref"} <= set(names), names
    assert [r for r in doctor_rows(machine) if "cursor" in r] == [
        "ok cursor: cursor-agent", "ok cursor: gateway", "ok cursor: MCP server", "ok cursor: output limits"]

    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert machine.files() == before


def test_doctor_says_why_the_servers_behind_the_gateway_did_not_start(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "cursor").returncode == 0
    config = machine.home / ".config" / "ctxsieve" / "gateway-cursor.json"
    written = json.loads(config.read_text())
    written["mcpServers"]["files"] = {"command": sys.executable, "args": [
        "-c", "import sys; sys.stderr.write('cannot open the database at /nope\\n'); sys.exit(3)"]}
    config.write_text(json.dumps(written))
    done = machine.run("doctor")
    assert done.returncode == 1, done.stdout
    row = done.stdout.split("FAIL  cursor: gateway", 1)[1]
    assert "lists only its own tools: none of files started behind it; the gateway said:" in row, done.stdout
    assert "server 'files' failed" in row and "cannot open the database at /nope" in row, done.stdout


def test_doctor_quotes_a_gateway_that_will_not_start_without_waiting_for_it(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "cursor").returncode == 0
    config = machine.home / ".config" / "ctxsieve" / "gateway-cursor.json"
    config.write_text(json.dumps({"mcpServers": {"files": {"args": ["/tmp"]}}}))  # no command
    done = machine.run("doctor")
    assert done.returncode == 1, done.stdout
    row = done.stdout.split("FAIL  cursor: gateway", 1)[1]
    # the gateway's exit seen as it happens (an EOFError), not waited out (a TimeoutError after 60 s)
    said = "EOFError: it closed its output before answering tools/list (exit status 2); the gateway said:"
    assert said in row, done.stdout
    assert "bad config: mcpServers.files" in row, done.stdout


def test_a_server_of_the_gateways_name_that_is_the_users_stops_the_move(home: Home) -> None:
    text = json.dumps({"mcpServers": {"files": {"command": FS, "args": ["/tmp"]},
                                      "ctxsieve-gateway": {"command": "my-own-gateway"}}}) + "\n"
    machine = home({CONFIG: text}, {})
    done = machine.run("install", "--yes", "--agent", "cursor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "an MCP server named ctxsieve-gateway is yours: no server moved" in done.stdout
    servers = json.loads((machine.home / CONFIG).read_text())["mcpServers"]
    assert list(servers) == ["files", "ctxsieve-gateway", "ctxsieve"] and servers["ctxsieve-gateway"] == {
        "command": "my-own-gateway"}
    assert not (machine.home / ".config" / "ctxsieve").exists()


def test_a_config_broken_since_install_is_left_for_the_user_and_said(machine: Machine) -> None:
    assert machine.run("install", "--yes", "--agent", "cursor").returncode == 0
    path = machine.home / CONFIG
    path.write_text(path.read_text()[:-3])
    done = machine.run("uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"{path}: changed since install and does not parse" in done.stdout and "by hand" in done.stdout
    assert not (machine.home / ".config" / "ctxsieve").exists(), "the gateway's config is ctxsieve's: removed"
