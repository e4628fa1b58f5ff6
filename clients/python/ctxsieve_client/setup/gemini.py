"""Gemini CLI: its user settings `~/.gemini/settings.json`, servers in `mcpServers` (`command`, `args`, `env`, `cwd`,
`timeout` in ms; `url` / `httpUrl` for remote ones). `$NAME` and `${NAME}` in any string are the variable NAME.

Gemini CLI starts a server with its environment less anything that looks like a secret, so ctxsieve's servers get
CTXSIEVE_API_KEY through their `env`. With `mcp.allowed` set, only the servers it names start: ctxsieve's are added
to it. A server Gemini CLI trusts, filters (includeTools / excludeTools) or signs in to stays in front of it.

Its output limit (`tools.truncateToolOutputThreshold`, 40,000 characters) is left as it is: it applies to an MCP
output after the gateway has cut it, and a shell output reaches no ctxsieve surface (the proxy does not speak
Gemini's API), so a higher limit would only send the model more."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import gateway_entry
from .gateway_entry import Kept, Moved, Syntax, stdio
from .mcp_json import Data, McpServers

LOCAL_KEYS = {"command", "args", "env", "cwd", "timeout", "description"}
DEFAULT_THRESHOLD = 40_000


class Gemini(McpServers):
    name = "gemini"
    title = "Gemini CLI"
    commands: tuple[str, ...] = ("gemini",)
    syntax = Syntax(re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"), re.compile(r"\$"),
                    "${{{}}}")

    def folder(self) -> Path:
        return Path.home() / ".gemini"

    def instructions(self, _scope: str) -> Path | None:
        return Path.home() / ".gemini" / "GEMINI.md"  # its global context file

    def path(self) -> Path:
        return Path.home() / ".gemini" / "settings.json"

    def translate(self, name: str, entry: Any, data: Data, /) -> Moved | Kept:
        allowed, excluded = _listed(data, "allowed"), _listed(data, "excluded")
        if name in (excluded or []) or (allowed is not None and name not in allowed):
            return Kept(name, "turned off (mcp.allowed / mcp.excluded)")
        if not isinstance(entry, dict) or "command" not in entry:
            return Kept(name, "a remote server (url / httpUrl): Gemini CLI's own connection and sign-in kept")
        extra = sorted(set(entry) - LOCAL_KEYS)
        if extra:
            return Kept(name, f"its {', '.join(extra)} is Gemini CLI's alone")
        timeout = entry.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
            return Kept(name, "its timeout is not a number of milliseconds the gateway can take")
        return stdio(name, entry["command"], entry.get("args"), entry.get("env"), entry.get("cwd"), self.syntax,
                     min(timeout / 1000, 3600.0) if timeout else None)

    def gateway_settings(self, _at: tuple[str, ...], moved: list[Moved], /) -> Data:
        """Its timeout for the gateway (connecting, and each call) above the gateway's for the slowest server behind
        it: without one, `gemini mcp list` gives a server 5 s to connect, less than the gateway may take to start."""
        return {"timeout": int((max(m.timeout_s or 60.0 for m in moved) + 5) * 1000)}

    def extra_env(self) -> dict[str, str]:
        return {"CTXSIEVE_API_KEY": "${CTXSIEVE_API_KEY}"}  # a KEY is kept from a server's inherited environment

    def allowed(self, data: Data, /) -> list[Any] | None:
        return _listed(data, "allowed")

    def elsewhere(self) -> list[str]:
        return []

    def limits(self, data: Data, /) -> tuple[str, str]:
        tools = _object(data.get("tools"))
        threshold = tools.get("truncateToolOutputThreshold", DEFAULT_THRESHOLD)
        return "ok", (f"tools.truncateToolOutputThreshold {threshold}: it cuts what {gateway_entry.NAME} already "
                      "cut; shell outputs reach no ctxsieve surface (the proxy does not speak Gemini's API)")


def _listed(data: Data, key: str) -> list[Any] | None:
    mcp = data.get("mcp")
    found = mcp.get(key) if isinstance(mcp, dict) else None
    return found if isinstance(found, list) else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
