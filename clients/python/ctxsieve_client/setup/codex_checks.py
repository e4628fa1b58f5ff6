"""doctor's rows for Codex CLI: its config parses, its version, ctxsieve's MCP server and the gateway list their
tools, and its own tool-output limit."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from typing import Any

from . import gateway_entry
from .checks import Check, Row, gateway_row, mcp_row
from .claude_code import is_our_server
from .codex import OUTPUT_LIMIT, PER_CALL_NOTE, config_path, read_config


def checks() -> list[Check]:
    path = config_path()
    try:
        config = read_config()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        broken = Row("codex: config", "FAIL", f"{path}: {exc}", "mend the line it names; Codex will not start either")
        return [lambda: [broken]]
    servers = config.get("mcp_servers", {})
    server, gateway = servers.get("ctxsieve"), servers.get(gateway_entry.NAME)
    words = [str(gateway.get("command")), *map(str, gateway.get("args", []))] if isinstance(gateway, dict) else None
    checks: list[Check] = [lambda: gateway_row("codex", path, words, {})] if gateway_entry.is_ours(words) else []
    if is_our_server(server):
        checks.append(lambda: mcp_row("codex: MCP server", path, server))
    return [_codex, *checks, lambda: _codex_limit(config)] if checks else []


def _codex() -> list[Row]:
    found = shutil.which("codex")
    if found is None:
        return [Row("codex: codex", "warn", "not on PATH: its config is wired for when it is")]
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return [Row("codex: codex", "FAIL", f"{found} --version exited {done.returncode}", "reinstall it")]
    return [Row("codex: codex", "ok", f"{done.stdout.strip()} at {found}")]


def _codex_limit(config: dict[str, Any]) -> list[Row]:
    limit = config.get("tool_output_token_limit")
    if not isinstance(limit, int) or limit < OUTPUT_LIMIT:
        return [Row("codex: output limits", "warn", f"tool_output_token_limit is {limit or 'unset'}: Codex cuts each "
                    "tool output in its history before ctxsieve sees it", "ctxsieve install")]
    return [Row("codex: output limits", "ok", f"tool_output_token_limit = {limit}; {PER_CALL_NOTE}")]
