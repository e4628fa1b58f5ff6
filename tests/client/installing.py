"""The one set-up of every install test (tests/client/test_install_*.py): a fresh HOME holding only the user's own
files given, on PATH each agent given (the real CLI, or a stand-in that install only finds and doctor only asks for
its version), the service on loopback (the real app with the stand-in model), and `ctxsieve` run as the user runs
it; with the helpers every agent's tests share (a dry run, an install run twice, doctor's rows)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
ROW = re.compile(r"^(ok|warn|FAIL)\s+(.+?)  ")  # doctor's state and part
LOG = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} synced shard {i} to the archive"
                for i in range(560)) + "\n2026-11-30 11:00:00 ERROR shard 431 checksum mismatch, archive rejected\n"


@dataclass
class Machine:
    home: Path
    env: dict[str, str]

    def run(self, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BIN / "ctxsieve"), *args], cwd=self.home, env={**self.env, **env}, input=stdin,
                              capture_output=True, text=True, timeout=300)

    def files(self) -> dict[str, bytes]:
        """Every file under HOME and its bytes, and every folder (as None's stand-in, b"<dir>")."""
        return {str(p.relative_to(self.home)): p.read_bytes() if p.is_file() else b"<dir>"
                for p in sorted(self.home.rglob("*"))}


Home = Callable[..., Machine]  # (files, agents, url=...) -> Machine


def home_with(root: Path, url: str, files: Mapping[str, str], agents: Mapping[str, Path | None]) -> Machine:
    """HOME under `root` holding only these files (paths under HOME); on PATH each agent command: a link to the real
    CLI, or (None) a stand-in answering --version."""
    home = root / "home"
    for name, text in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    home.mkdir(exist_ok=True)
    tools = root / "bin"
    tools.mkdir()
    for command, real in agents.items():
        if real is not None:
            (tools / command).symlink_to(real)
            continue
        (tools / command).write_text(f"#!/bin/sh\necho '{command} 0.0.0 (a stand-in)'\n")
        (tools / command).chmod(0o755)
    env = {"HOME": str(home), "PATH": f"{tools}:/usr/bin:/bin", "CTXSIEVE_URL": url, "LANG": "C.UTF-8"}
    if os.environ.get("PYTHONPATH"):  # a checkout other than the installed one: its code, in every process
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return Machine(home, env)


def dry_run_changes_nothing(machine: Machine, agent: str) -> str:
    before = machine.files()
    done = machine.run("install", "--dry-run", "--agent", agent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert machine.files() == before, "nothing written, no backup, no state folder"
    assert done.stdout.endswith("nothing written\n")
    return done.stdout


def installed_twice(machine: Machine, agent: str) -> str:
    """Install, then install again: the second run finds nothing to change and changes no byte."""
    done = machine.run("install", "--yes", "--agent", agent)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = machine.files()
    again = machine.run("install", "--yes", "--agent", agent)
    assert again.returncode == 0 and again.stdout.endswith("nothing to change: ctxsieve is installed as planned\n")
    assert machine.files() == installed, "a second install changes nothing"
    return done.stdout


def doctor_rows(machine: Machine, **env: str) -> list[str]:
    done = machine.run("doctor", **env)
    rows = [" ".join(m.groups()) for m in map(ROW.match, done.stdout.splitlines()) if m]
    assert done.returncode == (1 if any(r.startswith("FAIL") for r in rows) else 0), done.stdout
    return rows


def gateway_tools(command: list[str], env: dict[str, str]) -> list[str]:
    """The tools the gateway lists when started as the agent's config says, as an MCP client asks."""
    from ctxsieve_client.setup.checks import tools

    return tools(command, env=env)
