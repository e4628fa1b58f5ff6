"""OpenCode: its user config `~/.config/opencode/opencode.json` (OpenCode merges it with opencode.jsonc and
config.json beside it; install edits this one only). Servers are `mcp.<name>` (OpenCode 1) or `mcp.servers.<name>`
(OpenCode 2's native shape, which 1.17+ also reads): install writes in the shape the file already uses, else the
first, which both read. A local server is `{"type": "local", "command": [...], "environment": {...}}`, and
`{env:NAME}` in any string is the variable NAME.

Its output limits (`tool_output.max_lines` / `max_bytes`: 2,000 lines, 51,200 bytes) are left as they are: a longer
output is saved whole to a file its hint names, which `ctxsieve wrap opencode`'s proxy reads and cuts, and an MCP
server's output reaches the gateway whole before OpenCode's limit applies; a higher limit would only send more of an
unwrapped run's outputs to the model."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from . import gateway_entry
from .gateway_entry import Kept, Moved, Syntax, stdio
from .mcp_json import Data

LOCAL_KEYS = {"type", "command", "environment", "enabled", "disabled", "timeout", "cwd"}
DEFAULT_LIMITS = (2000, 51_200)


class OpenCode:
    name = "opencode"
    title = "OpenCode"
    commands: tuple[str, ...] = ("opencode",)
    syntax = Syntax(re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}"), re.compile(r"\{file:|\$\{"), "{{env:{}}}")

    def folder(self) -> Path:
        return config_dir()

    def instructions(self, _scope: str) -> Path | None:
        return config_dir() / "AGENTS.md"  # its global rules, read in every project

    def path(self) -> Path:
        return config_dir() / "opencode.json"

    def servers_at(self, data: Data, /) -> tuple[str, ...]:
        mcp = data.get("mcp")
        nested = mcp.get("servers") if isinstance(mcp, dict) else None
        if isinstance(nested, dict) and not isinstance(nested.get("type"), str):  # not a server named "servers"
            return ("mcp", "servers")
        return ("mcp",)

    def entry(self, _at: tuple[str, ...], command: list[str], env: dict[str, str], /) -> Data:
        return {"type": "local", "command": command, **({"environment": env} if env else {})}

    def command_of(self, entry: Any, /) -> list[str] | None:
        if not isinstance(entry, dict) or entry.get("type") != "local":
            return None
        words = entry.get("command")
        return [str(w) for w in words] if isinstance(words, list) and words else None

    def translate(self, name: str, entry: Any, _data: Data, /) -> Moved | Kept:
        if not isinstance(entry, dict) or entry.get("type") != "local":
            return Kept(name, "a remote server: OpenCode's own connection and sign-in (OAuth) kept")
        if entry.get("enabled") is False or entry.get("disabled") is True:
            return Kept(name, "turned off")
        extra = sorted(set(entry) - LOCAL_KEYS)
        if extra:
            return Kept(name, f"its {', '.join(extra)} is OpenCode's alone")
        timeout = entry.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0):
            return Kept(name, "its timeout is not a number of milliseconds the gateway can take")
        words = entry.get("command")
        if not isinstance(words, list) or not words:
            return Kept(name, "it has no command")
        return stdio(name, words[0], words[1:], entry.get("environment"), entry.get("cwd"), self.syntax,
                     timeout / 1000 if timeout else None)

    def gateway_settings(self, at: tuple[str, ...], moved: list[Moved], /) -> Data:
        """OpenCode's timeout for the gateway (connecting, listing and each call): above the gateway's own for the
        slowest server behind it, so the gateway's answer (or its error saying which server) is what comes back."""
        ms = int((max([m.timeout_s or 60.0 for m in moved]) + 5) * 1000)
        return {"timeout": ms if at == ("mcp",) else {"catalog": ms, "execution": ms}}

    def extra_env(self) -> dict[str, str]:
        return {}  # OpenCode starts a local server with its own environment

    def allowed(self, _data: Data, /) -> list[Any] | None:
        return None

    def elsewhere(self) -> list[str]:
        """OpenCode merges opencode.jsonc and config.json beside it: their servers stay in front of it."""
        out = []
        for other in (config_dir() / "opencode.jsonc", config_dir() / "config.json"):
            if other.exists() and "mcp" in other.read_text(encoding="utf-8", errors="replace"):
                out.append(f"{other}: its MCP servers stay in front of OpenCode (install edits {self.path().name} "
                           "only): move them there, then install again, to put them behind the gateway")
        return out

    def limits(self, data: Data, /) -> tuple[str, str]:
        limits = _object(data.get("tool_output"))
        lines, size = limits.get("max_lines", DEFAULT_LIMITS[0]), limits.get("max_bytes", DEFAULT_LIMITS[1])
        return "ok", (f"tool_output {lines} lines / {size} bytes: a longer output is saved whole where its hint says, "
                      "and `ctxsieve wrap opencode`'s proxy cuts that file; MCP outputs reach "
                      f"{gateway_entry.NAME} whole")


def config_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "opencode"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
