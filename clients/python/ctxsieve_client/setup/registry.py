"""The one list of the coding agents ctxsieve wires, in the order `install` wires them: install, uninstall, doctor
and wrap loop over it; and which of them are found on this machine (an executable on PATH or a config folder)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .claude_code import ClaudeCode
from .codex import Codex
from .cursor import Cursor
from .family import Agent
from .gemini import Gemini
from .mcp_json import JsonConfigAgent
from .opencode import OpenCode

AGENTS: tuple[Agent, ...] = (ClaudeCode(), Codex(), JsonConfigAgent(OpenCode()), JsonConfigAgent(Gemini()),
                             JsonConfigAgent(Cursor()))
ALIASES = {"claude": "claude-code", "gemini-cli": "gemini", "codex-cli": "codex"}


@dataclass(frozen=True)
class Found:
    agent: Agent
    executable: str | None
    folder: Path | None  # its config folder, when there is one

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def found(self) -> bool:
        return self.executable is not None or self.folder is not None

    def where(self) -> str:
        parts = [f"{Path(self.executable).name} at {self.executable}"] if self.executable else []
        return ", ".join(parts + ([str(self.folder)] if self.folder else [])) or "not found"


def detect() -> list[Found]:
    """Every agent ctxsieve knows, found or not, in the order `install` wires them."""
    out = []
    for agent in AGENTS:
        found = next((w for w in map(shutil.which, agent.commands) if w), None)
        folder = agent.folder()
        out.append(Found(agent, found, folder if folder.is_dir() else None))
    return out


def canonical(name: str) -> str:
    name = ALIASES.get(name, name)
    if name not in {a.name for a in AGENTS}:
        raise SystemExit(f"ctxsieve: no agent named {name!r} (known: {', '.join(a.name for a in AGENTS)})")
    return name


def by_command(command: str) -> Agent | None:
    """The agent an executable of this name is (wrap's first argument)."""
    return next((a for a in AGENTS if Path(command).name in a.commands), None)


def where_to_look() -> str:
    """How install finds each agent, for the line saying none was found."""
    return "; ".join(f"{a.title}: {' or '.join(f'`{c}`' for c in a.commands)} or {a.folder()}" for a in AGENTS)
