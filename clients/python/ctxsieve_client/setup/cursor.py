"""Cursor (the editor and `cursor-agent`): its user config `~/.cursor/mcp.json`, servers in `mcpServers`
(`command`, `args`, `env`; `url` for remote ones). `${env:NAME}` in any string is the variable NAME; its other
substitutions (`${userHome}`, `${workspaceFolder}`, ...) and an `envFile` are Cursor's own, so a server using them
stays in front of it. Cursor has no setting of its own for the size of a tool's output."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .gateway_entry import Kept, Moved, Syntax, stdio
from .mcp_json import Data, McpServers

LOCAL_KEYS = {"command", "args", "env", "type", "description"}


class Cursor(McpServers):
    name = "cursor"
    title = "Cursor"
    commands: tuple[str, ...] = ("cursor-agent", "cursor")
    syntax = Syntax(re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}"), re.compile(r"\$\{"), "${{env:{}}}")

    def folder(self) -> Path:
        return Path.home() / ".cursor"

    def instructions(self, _scope: str) -> Path | None:
        return None  # Cursor's user rules live in its settings, not in a file

    def path(self) -> Path:
        return Path.home() / ".cursor" / "mcp.json"

    def translate(self, name: str, entry: Any, _data: Data, /) -> Moved | Kept:
        if not isinstance(entry, dict) or "command" not in entry or entry.get("type", "stdio") != "stdio":
            return Kept(name, "a remote server: Cursor's own connection and sign-in (OAuth) kept")
        extra = sorted(set(entry) - LOCAL_KEYS)
        if extra:
            return Kept(name, f"its {', '.join(extra)} is Cursor's alone")
        return stdio(name, entry["command"], entry.get("args"), entry.get("env"), None, self.syntax)

    def gateway_settings(self, _at: tuple[str, ...], _moved: list[Moved], /) -> Data:
        return {}

    def extra_env(self) -> dict[str, str]:
        return {}  # Cursor starts a server with its own environment

    def allowed(self, _data: Data, /) -> list[Any] | None:
        return None

    def elsewhere(self) -> list[str]:
        return []

    def limits(self, _data: Data, /) -> tuple[str, str]:
        return "ok", "Cursor has no output limit setting of its own; MCP outputs reach the gateway whole"
