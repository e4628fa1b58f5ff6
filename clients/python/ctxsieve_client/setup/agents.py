"""The coding agents found on this machine: an executable on PATH or a config folder of theirs."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Agent:
    name: str  # as --agent takes it
    title: str
    executable: str | None
    folder: Path | None  # its config folder, when there is one

    @property
    def found(self) -> bool:
        return self.executable is not None or self.folder is not None

    def where(self) -> str:
        parts = [f"{Path(self.executable).name} at {self.executable}"] if self.executable else []
        return ", ".join(parts + ([str(self.folder)] if self.folder else [])) or "not found"


ALIASES = {"claude": "claude-code", "gemini-cli": "gemini", "codex-cli": "codex"}


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _known() -> list[tuple[str, str, tuple[str, ...], Path]]:
    home = Path.home()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [("claude-code", "Claude Code", ("claude",), home / ".claude"),
            ("codex", "Codex CLI", ("codex",), codex_home()),
            ("opencode", "OpenCode", ("opencode",), config / "opencode"),
            ("gemini", "Gemini CLI", ("gemini",), home / ".gemini"),
            ("cursor", "Cursor", ("cursor-agent", "cursor"), home / ".cursor")]


def detect() -> list[Agent]:
    """Every agent ctxsieve knows, found or not, in the order `install` wires them."""
    agents = []
    for name, title, commands, folder in _known():
        found = next((w for w in map(shutil.which, commands) if w), None)
        agents.append(Agent(name, title, found, folder if folder.is_dir() else None))
    return agents


def canonical(name: str) -> str:
    name = ALIASES.get(name, name)
    if name not in {k[0] for k in _known()}:
        raise SystemExit(f"ctxsieve: no agent named {name!r} (known: {', '.join(k[0] for k in _known())})")
    return name
