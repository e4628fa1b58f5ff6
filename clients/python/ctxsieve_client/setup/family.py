"""The coding agents as one family: what `install`, `uninstall`, `doctor` and `wrap` ask of each (one module per
agent, one registry in registry.py), and what they hand each other.

An agent says where its files are, how it is found, the changes install plans for it (each command written run
first), how uninstall takes its part out of each kind of file it was given, doctor's rows for what is wired, and how
`wrap` points one run of it at the proxy. Nothing outside its own module names it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .changes import Change
from .checks import Check
from .commands import check_runs, server_command

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"


@dataclass
class Context:
    """What install plans with: the service's URL, its flags, and the MCP server's command, run once for all."""

    url: str
    scope: str = "user"  # user, or project (Claude Code only)
    command_hook: bool = False  # Claude Code: a command hook instead of the http hook
    cwd: Path = field(default_factory=Path.cwd)
    capture_dir: str | None = None  # Claude Code's capture folder as its plan wrote it (install records it)
    _server: list[str] | None = None

    def server(self) -> list[str]:
        """`ctxsieve-mcp --url URL`, run with --check the first time it is asked for (every agent writes it)."""
        if self._server is None:
            command = server_command(self.url)
            check_runs(command, "--check")
            self._server = command
        return self._server


@dataclass(frozen=True)
class Kind:
    """A kind of file install changes: how uninstall takes ctxsieve's part out of it when it changed since ((its
    bytes now, its bytes before) -> after; None: left as it is) and how install checks it once written."""

    parse: Callable[[str], object] | None = None
    remove: Callable[[bytes, bytes | None], bytes] | None = None
    verify: Callable[[Path], None] | None = None  # run on the file written (SystemExit says what is wrong)
    shown: str | None = None  # the plan names the file as this instead of showing its lines


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Pointing:
    """How one agent run is pointed at the proxy: its upstreams, the arguments it gains before its own (given the
    proxy's URL), and whether ANTHROPIC_BASE_URL / OPENAI_BASE_URL are set in its environment."""

    anthropic: str = ANTHROPIC
    openai: str = OPENAI
    argv: list[str] = field(default_factory=list)
    flags: Callable[[str], list[str]] = lambda _proxy: []
    by_environment: bool = True


def pointed_by_environment(argv: list[str]) -> Pointing:
    """Any command that reads ANTHROPIC_BASE_URL / OPENAI_BASE_URL: the ones it had become the upstreams."""
    return Pointing(os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC, os.environ.get("OPENAI_BASE_URL") or OPENAI,
                    argv)


class Agent(Protocol):
    name: str  # as --agent takes it; the manifest's agent
    title: str
    commands: tuple[str, ...]  # the executables that show it is here (wrap knows it by these names too)
    scopes: tuple[str, ...]  # the --scope values install takes for it

    def folder(self) -> Path:
        """Its config folder: it is found here when the folder exists."""
        ...

    def instructions(self, scope: str) -> Path | None:
        """Its own instruction file (where install says when to use search_code); None when it has none."""
        ...

    def plan(self, context: Context) -> Plan:
        """The files install would change, and what it says of what it leaves; SystemExit: nothing is written."""
        ...

    def kinds(self) -> dict[str, Kind]:
        """Each kind of file its plan changes (Change.kind, kept in the manifest)."""
        ...

    def checks(self) -> list[Check]:
        """doctor's checks of what install wired for it; [] when nothing is wired."""
        ...

    def point(self, argv: list[str]) -> Pointing:
        """One run of it, given as `argv`, pointed at the proxy the way it reads its base URL."""
        ...
