"""`ctxsieve install` and `ctxsieve uninstall`: each agent found here wired with what fails open (the plan shown
first, asked unless --yes), a backup of every file changed, and every change undone on uninstall.

Install is idempotent (a second run finds nothing to change) and writes absolute paths only, each command run
once before anything is written. Uninstall puts each file back to its bytes before install (removing the ones it
created); a file changed since keeps the user's changes and loses only ctxsieve's entries."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from ..hooks import cli as hook_cli
from . import claude_code, codex, gateway_entry, mcp_json
from .agents import Agent, canonical, detect
from .changes import Change, read
from .json_agents import JSON_AGENTS
from .manifest import Entry, Manifest, digest
from .state import service_url, state_dir

# how uninstall takes ctxsieve's part out of a file changed since install: (its bytes now, its bytes before) -> after
REMOVERS: dict[str, Callable[[bytes, bytes | None], bytes]] = {
    "claude-settings": lambda now, _: claude_code.remove_settings(now),
    "claude-servers": lambda now, _: claude_code.remove_server(now), "codex": lambda now, _: codex.remove(now),
    **{name: partial(mcp_json.remove_with, agent) for name, agent in JSON_AGENTS.items()}}
PARSERS: dict[str, Callable[[str], object]] = {"claude-settings": json.loads, "claude-servers": json.loads,
                                               "codex": tomllib.loads, gateway_entry.KIND: json.loads,
                                               **dict.fromkeys(JSON_AGENTS, json.loads)}


def add_install_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", action="append", default=[], help="wire only this agent (repeatable): claude-code, "
                   "codex, opencode, gemini, cursor (default: every one found)")
    p.add_argument("--yes", "-y", action="store_true", help="write without asking")
    p.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    p.add_argument("--scope", choices=["user", "project"], default="user",
                   help="Claude Code: the user's settings or this project's (.claude/settings.json, .mcp.json); the "
                   "other agents' user config only")
    p.add_argument("--command", action="store_true", help="Claude Code: a command hook (a process per call) "
                   "instead of the http hook (Claude Code 2.1.63+)")
    p.add_argument("--url", default=None, help="the service the agents reach (default: CTXSIEVE_URL, else the "
                   "one installed, else http://127.0.0.1:8000)")


def add_uninstall_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", action="append", default=[], help="undo only this agent's changes (repeatable)")
    p.add_argument("--yes", "-y", action="store_true", help="undo without asking")


def install(args: argparse.Namespace) -> int:
    url = (args.url or service_url()).rstrip("/")
    agents = _chosen(args.agent)
    _say_agents(agents)
    if not agents:
        sys.stdout.write("no agent to wire found (Claude Code: `claude` on PATH or ~/.claude; Codex: `codex` or "
                         "~/.codex; OpenCode: `opencode` or ~/.config/opencode; Gemini CLI: `gemini` or ~/.gemini; "
                         "Cursor: `cursor-agent`, `cursor` or ~/.cursor); name one with --agent\n")
        return 0
    try:
        changes, notes = _plan(agents, url, args)
    except SystemExit as exc:  # a command that would be written does not run: nothing is written
        sys.stderr.write(f"{exc}\n")
        return 1
    pending = [c for c in changes if c.pending]
    _show(changes, notes)
    if not pending:
        sys.stdout.write("nothing to change: ctxsieve is installed as planned\n")
        return 0
    if args.dry_run or not _confirmed(args.yes, "Write these changes?"):
        sys.stdout.write("nothing written\n")
        return 0 if args.dry_run else 1
    _write(pending, url)
    return _verified(pending)


def _chosen(names: list[str]) -> list[Agent]:
    """The named agents (found or not), else every agent found."""
    wanted = {canonical(n) for n in names}
    return [a for a in detect() if (a.name in wanted if wanted else a.found)]


def _plan(agents: list[Agent], url: str, args: argparse.Namespace) -> tuple[list[Change], list[str]]:
    changes: list[Change] = []
    notes: list[str] = []
    checked = False  # the same `ctxsieve-mcp` is written for every agent: run once before (Claude Code's plan runs it)
    for agent in agents:
        if agent.name == "claude-code":
            changes += claude_code.plan(url, args.command, args.scope == "project", Path.cwd())
            continue
        if args.scope == "project":
            notes.append(f"{agent.title}: --scope project: its user config only is written by install; skipped")
            continue
        if not checked and not any(c.kind == "claude-servers" for c in changes):
            hook_cli.check_runs(claude_code.server_command(url), "--check")
        checked = True
        more, said = codex.plan(url, checked=True) if agent.name == "codex" else \
            mcp_json.plan(JSON_AGENTS[agent.name], url)
        changes += more
        notes += said
    return changes, notes


def _say_agents(agents: list[Agent]) -> None:
    if agents:
        sys.stdout.write(f"ctxsieve install: {', '.join(f'{a.title} ({a.where()})' for a in agents)}\n")


def _show(changes: Iterable[Change], notes: list[str]) -> None:
    for change in changes:
        if not change.pending:
            sys.stdout.write(f"{change.path}: unchanged\n")
        elif change.kind == "file":
            sys.stdout.write(f"{change.path}: {'created' if change.before is None else 'replaced'} "
                             f"(ctxsieve's capture script, {len(change.after.splitlines())} lines)\n")
        else:
            sys.stdout.write(f"{change.path}: {'created' if change.before is None else 'changed'}\n")
            sys.stdout.writelines(f"  {line}\n" for line in change.lines())
    sys.stdout.writelines(f"note: {n}\n" for n in notes)


def _confirmed(yes: bool, question: str) -> bool:
    if yes:
        return True
    sys.stdout.write(f"{question} [y/N] ")
    sys.stdout.flush()
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:  # not asked on a terminal: only --yes writes
        sys.stdout.write("\n(no answer: pass --yes to write without asking)\n")
        return False


def _write(pending: list[Change], url: str) -> None:
    """The manifest (with each file's bytes before) is saved before the file changes, so a crash leaves it undoable."""
    manifest = Manifest.load(state_dir())
    manifest.url = url
    manifest.note_folders([c.path for c in pending])
    for change in pending:
        manifest.record(change.path, change.agent, change.kind, change.before, change.after)
        manifest.save()
        mode = change.mode if change.before is None else change.path.stat().st_mode & 0o7777
        hook_cli.write_bytes(change.path, change.after)
        if mode is not None:
            change.path.chmod(mode)  # a file replaced keeps its permissions (~/.claude.json is the user's alone)
        sys.stdout.write(f"wrote {change.path}\n")
    sys.stdout.write(f"backups and the record of what changed: {manifest.folder}\n")


def _verified(written: list[Change]) -> int:
    """Each file written reads back as written and parses; the capture script runs commands as written."""
    problems = []
    for change in written:
        if read(change.path) != change.after:
            problems.append(f"{change.path}: not what was written")
        elif change.kind == "file":
            try:
                hook_cli.check_prefix(change.path)
            except SystemExit as exc:
                problems.append(str(exc))
        elif change.kind in PARSERS:
            try:
                PARSERS[change.kind](change.after.decode("utf-8"))  # as the agent will read it
            except ValueError as exc:
                problems.append(f"{change.path}: does not parse: {exc}")
    sys.stdout.writelines(f"problem: {p}\n" for p in problems)
    if not problems:
        sys.stdout.write("checked: every file written parses and every command in it runs; "
                         "`ctxsieve doctor` checks the rest\n")
    return 1 if problems else 0


def uninstall(args: argparse.Namespace) -> int:
    manifest = Manifest.load(state_dir())
    agents = {canonical(n) for n in args.agent}
    entries = [e for e in manifest.entries.values() if not agents or e.agent in agents]
    if not entries:
        sys.stdout.write("nothing to undo: ctxsieve install changed no file here\n")
        return 0
    if not args.yes:
        sys.stdout.writelines(f"{entry.path}: {_undo_plan(entry)}\n" for entry in entries)
    if not _confirmed(args.yes, "Undo these changes?"):
        sys.stdout.write("nothing changed\n")
        return 1
    for entry in entries:
        sys.stdout.write(f"{entry.path}: {_undo(manifest, entry)}\n")
        manifest.forget(entry)
        manifest.save()
    return 0


def _undo_plan(entry: Entry) -> str:
    now = read(Path(entry.path))
    if now is None:
        return "gone already: nothing to do"
    if digest(now) == entry.after:
        return "removed (install created it)" if entry.backup is None else "put back to its bytes before install"
    if entry.kind not in REMOVERS:
        return "changed since install: left as it is"
    return "changed since install: ctxsieve's entries taken out, your changes kept"


def _undo(manifest: Manifest, entry: Entry) -> str:
    path, now = Path(entry.path), read(Path(entry.path))
    if now is None:
        return "gone already"
    if digest(now) == entry.after:
        return _restore(path, manifest.before(entry), entry.mode)
    if entry.kind not in REMOVERS:
        return "changed since install: left as it is"
    try:
        kept = REMOVERS[entry.kind](now, manifest.before(entry))
    except ValueError as exc:  # the file no longer parses: it is the user's to mend
        return f"changed since install and does not parse ({exc}): left as it is; remove ctxsieve's entries by hand"
    if entry.backup is None and kept.strip() in (b"", b"{}"):
        path.unlink()
        return "changed since install, nothing of yours in it: removed"
    hook_cli.write_bytes(path, kept)
    return "changed since install: ctxsieve's entries taken out, your changes kept"


def _restore(path: Path, before: bytes | None, mode: int | None) -> str:
    if before is None:
        path.unlink()
        return "removed (install created it)"
    hook_cli.write_bytes(path, before)
    if mode is not None:
        os.chmod(path, mode)
    return "put back to its bytes before install"
