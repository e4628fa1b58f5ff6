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
from collections.abc import Iterable
from pathlib import Path

from . import gateway_entry, instructions
from .changes import Change, read
from .commands import write_bytes
from .family import Context, Kind, Plan
from .manifest import Entry, Manifest, digest
from .registry import AGENTS, Found, canonical, detect, where_to_look
from .state import service_url, state_dir


def kinds() -> dict[str, Kind]:
    """Every kind of file install changes: how each is checked once written, and taken out again."""
    found = {gateway_entry.KIND: Kind(parse=json.loads), instructions.KIND: instructions.kind()}
    for agent in AGENTS:
        found.update(agent.kinds())
    return found


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
    p.add_argument("--url", default=None, help="the service the agents reach (default: CTXSIEVE_URL, else "
                   "CTXSIEVE_PORT on this machine, else the one installed, else http://127.0.0.1:8000)")


def add_uninstall_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent", action="append", default=[], help="undo only this agent's changes (repeatable)")
    p.add_argument("--yes", "-y", action="store_true", help="undo without asking")


def install(args: argparse.Namespace) -> int:
    agents = _chosen(args.agent)
    _say_agents(agents)
    if not agents:
        sys.stdout.write(f"no agent to wire found ({where_to_look()}); name one with --agent\n")
        return 0
    try:
        context = Context(service_url(args.url), args.scope, command_hook=args.command)
        plan = _plan(agents, context)
    except SystemExit as exc:  # a command that would be written does not run: nothing is written
        sys.stderr.write(f"{exc}\n")
        return 1
    pending = [c for c in plan.changes if c.pending]
    _show(plan.changes, plan.notes)
    if not pending:
        sys.stdout.write("nothing to change: ctxsieve is installed as planned\n")
        return 0
    if args.dry_run or not _confirmed(args.yes, "Write these changes?"):
        sys.stdout.write("nothing written\n")
        return 0 if args.dry_run else 1
    _write(pending, context)
    return _verified(pending)


def _chosen(names: list[str]) -> list[Found]:
    """The named agents (found or not), else every agent found."""
    wanted = {canonical(n) for n in names}
    return [a for a in detect() if (a.name in wanted if wanted else a.found)]


def _plan(agents: list[Found], context: Context) -> Plan:
    """Each agent's changes, and the block in its own instruction file saying when to use search_code."""
    plan = Plan()
    for found in agents:
        agent = found.agent
        if context.scope not in agent.scopes:
            plan.notes.append(f"{agent.title}: --scope {context.scope}: its user config only is written by "
                              "install; skipped")
            continue
        own = agent.plan(context)
        plan.changes += own.changes
        plan.notes += own.notes
        guide = agent.instructions(context.scope)
        if guide is not None:
            plan.changes.append(instructions.change(guide, agent.name))
    return plan


def _say_agents(agents: list[Found]) -> None:
    if agents:
        sys.stdout.write(f"ctxsieve install: {', '.join(f'{a.agent.title} ({a.where()})' for a in agents)}\n")


def _show(changes: Iterable[Change], notes: list[str]) -> None:
    known = kinds()
    for change in changes:
        shown = known[change.kind].shown if change.kind in known else None
        if not change.pending:
            sys.stdout.write(f"{change.path}: unchanged\n")
        elif shown is not None:
            sys.stdout.write(f"{change.path}: {'created' if change.before is None else 'replaced'} "
                             f"({shown}, {len(change.after.splitlines())} lines)\n")
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


def _write(pending: list[Change], context: Context) -> None:
    """The manifest (with each file's bytes before) is saved before the file changes, so a crash leaves it undoable;
    it keeps the URL and capture folder written into the agents' configs (every command reads them from there)."""
    manifest = Manifest.load(state_dir())
    manifest.url = context.url
    manifest.capture_dir = context.capture_dir or manifest.capture_dir
    manifest.note_folders([c.path for c in pending])
    for change in pending:
        manifest.record(change.path, change.agent, change.kind, change.before, change.after)
        manifest.save()
        mode = change.mode if change.before is None else change.path.stat().st_mode & 0o7777
        write_bytes(change.path, change.after)
        if mode is not None:
            change.path.chmod(mode)  # a file replaced keeps its permissions (~/.claude.json is the user's alone)
        sys.stdout.write(f"wrote {change.path}\n")
    sys.stdout.write(f"backups and the record of what changed: {manifest.folder}\n")


def _verified(written: list[Change]) -> int:
    """Each file written reads back as written and parses; the capture script runs commands as written."""
    problems = []
    known = kinds()
    for change in written:
        kind = known.get(change.kind, Kind())
        if read(change.path) != change.after:
            problems.append(f"{change.path}: not what was written")
            continue
        try:
            if kind.verify is not None:
                kind.verify(change.path)
            if kind.parse is not None:
                kind.parse(change.after.decode("utf-8"))  # as the agent will read it
        except SystemExit as exc:
            problems.append(str(exc))
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
    if _remover(entry) is None:
        return "changed since install: left as it is"
    return "changed since install: ctxsieve's entries taken out, your changes kept"


def _remover(entry: Entry) -> Kind | None:
    kind = kinds().get(entry.kind)
    return kind if kind is not None and kind.remove is not None else None


def _undo(manifest: Manifest, entry: Entry) -> str:
    path, now = Path(entry.path), read(Path(entry.path))
    if now is None:
        return "gone already"
    if digest(now) == entry.after:
        return _restore(path, manifest.before(entry), entry.mode)
    kind = _remover(entry)
    if kind is None or kind.remove is None:
        return "changed since install: left as it is"
    try:
        kept = kind.remove(now, manifest.before(entry))
    except ValueError as exc:  # the file no longer parses: it is the user's to mend
        return f"changed since install and does not parse ({exc}): left as it is; remove ctxsieve's entries by hand"
    if entry.backup is None and kept.strip() in (b"", b"{}"):
        path.unlink()
        return "changed since install, nothing of yours in it: removed"
    write_bytes(path, kept)
    return "changed since install: ctxsieve's entries taken out, your changes kept"


def _restore(path: Path, before: bytes | None, mode: int | None) -> str:
    if before is None:
        path.unlink()
        return "removed (install created it)"
    write_bytes(path, before)
    if mode is not None:
        os.chmod(path, mode)
    return "put back to its bytes before install"
