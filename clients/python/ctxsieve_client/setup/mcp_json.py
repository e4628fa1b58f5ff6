"""The agents whose MCP servers are an object in a JSON config (OpenCode, Gemini CLI, Cursor): one protocol for what
differs between them, one plan for what does not.

Install adds `ctxsieve-mcp` as the server `ctxsieve` (for `fetch_ref` / `filter_ref`) and moves the agent's own local
servers behind one `ctxsieve-gateway` entry, whose config it writes beside (gateway_entry.py); the user's text keeps
every byte but the entries changed (jsontext.patched). A later install plans from the config as it was before the
first (its backup), so it finds nothing to change; uninstall puts the bytes back, or, in a file changed since, takes
ctxsieve's entries out and puts back the servers the gateway held."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from . import gateway_entry
from .changes import Change, read
from .checks import Check, Row, executable_row, gateway_row, mcp_row, read_json
from .claude_code import is_our_server
from .family import Context, Kind, Plan, Pointing, pointed_by_environment
from .gateway_entry import Kept, Moved, Syntax
from .jsontext import patched
from .manifest import Manifest, digest
from .state import state_dir

Data = dict[str, Any]


class JsonAgent(Protocol):
    name: str  # as --agent takes it, and the manifest's kind for its config
    title: str
    commands: tuple[str, ...]
    syntax: Syntax

    def folder(self) -> Path: ...

    def instructions(self, scope: str, /) -> Path | None: ...

    def path(self) -> Path: ...

    def servers_at(self, data: Data, /) -> tuple[str, ...]:
        """The keys leading to its servers' object in this config."""
        ...

    def entry(self, at: tuple[str, ...], command: list[str], env: dict[str, str], /) -> Data:
        """A local server as it writes one there."""
        ...

    def command_of(self, entry: Any, /) -> list[str] | None:
        """A local server entry's command and arguments; None for any other."""
        ...

    def translate(self, name: str, entry: Any, data: Data, /) -> Moved | Kept:
        """One of its servers as the gateway's config entry, or why it stays."""
        ...

    def gateway_settings(self, at: tuple[str, ...], moved: list[Moved], /) -> Data:
        """What the gateway's own entry needs besides its command (its timeout, for one)."""
        ...

    def extra_env(self) -> dict[str, str]:
        """What ctxsieve's own servers need passed from the agent's environment."""
        ...

    def allowed(self, data: Data, /) -> list[Any] | None:
        """The list naming the only servers it starts, when the config has one (Gemini's mcp.allowed)."""
        ...

    def limits(self, data: Data, /) -> tuple[str, str]:
        """Its own output limits in this config, for doctor: (ok or warn, what they mean for ctxsieve)."""
        ...

    def elsewhere(self) -> list[str]:
        """What the plan says of configs of its that install does not edit (their servers are not moved)."""
        ...


@dataclass
class Wiring:
    after: bytes
    moved: list[Moved] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class JsonConfigAgent:
    """A family member (family.Agent) made of what differs in its JSON config; the rest is the same for all."""

    scopes: tuple[str, ...] = ("user",)

    def __init__(self, config: JsonAgent) -> None:
        self.config = config
        self.name, self.title, self.commands = config.name, config.title, config.commands

    def folder(self) -> Path:
        return self.config.folder()

    def instructions(self, scope: str) -> Path | None:
        return self.config.instructions(scope)

    def plan(self, context: Context) -> Plan:
        return Plan(*plan(self.config, context))

    def kinds(self) -> dict[str, Kind]:
        return {self.name: Kind(json.loads, partial(remove_with, self.config)), gateway_entry.KIND: Kind(json.loads)}

    def checks(self) -> list[Check]:
        return checks(self.config)

    def point(self, argv: list[str]) -> Pointing:
        return pointed_by_environment(argv)


def plan(agent: JsonAgent, context: Context) -> tuple[list[Change], list[str]]:
    """The agent's config with ctxsieve's entries, and the gateway's config when servers move behind it."""
    url = context.url
    path, gateway = agent.path(), gateway_entry.config_path(agent.name)
    current = read(path)
    parsed(path, current)
    if gateway_entry.changed_by_user(gateway):
        return [Change(path, current, current or b"", agent.name, agent.name)], [
            gateway_entry.left_note(gateway, path, agent.name)]
    wiring = wire(agent, base(agent, path, current), url, context.server)
    changes = [Change(path, current, wiring.after, agent.name, agent.name)]
    if wiring.moved:
        gateway_entry.check(agent.name, wiring.moved, url)
        changes.append(Change(gateway, read(gateway), gateway_entry.config_bytes(wiring.moved), agent.name,
                              gateway_entry.KIND))
    return changes, wiring.notes + agent.elsewhere()


def parsed(path: Path, content: bytes | None) -> Data:
    """The config's value; one that is not a JSON object is the user's to mend: said, and nothing is written."""
    try:
        return _object(content or b"{}")
    except ValueError as exc:
        raise SystemExit(f"ctxsieve install: {path} is not a JSON object ({exc}; comments and trailing commas are "
                         "not edited); nothing written (`--agent NAME` wires the others)") from None


def _object(content: bytes) -> Data:
    data = json.loads(content)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def base(agent: JsonAgent, path: Path, current: bytes | None) -> bytes | None:
    """The config as it was before ctxsieve's entries: what a later install plans from."""
    manifest = Manifest.load(state_dir())
    known = manifest.entries.get(str(path))
    if known is None or current is None:
        return current
    before = manifest.before(known)
    if digest(current) == known.after:
        return before
    return remove_with(agent, current, before)


def wire(agent: JsonAgent, before: bytes | None, url: str, server: Callable[[], list[str]]) -> Wiring:
    text = (before or b"").decode("utf-8")
    old = json.loads(text) if text.strip() else {}
    data = copy.deepcopy(old)
    at = agent.servers_at(data)
    servers = _dig(data, at)
    wiring = Wiring(b"")
    if _taken(agent, servers, "ctxsieve"):
        wiring.notes.append(f"{agent.path()}: an MCP server named ctxsieve is yours: kept")
    else:
        servers["ctxsieve"] = agent.entry(at, server(), agent.extra_env())
    wiring.moved, kept = _movable(agent, old, servers)
    if wiring.moved and _taken(agent, servers, gateway_entry.NAME):
        wiring.notes.append(f"{agent.path()}: an MCP server named {gateway_entry.NAME} is yours: no server moved "
                            "behind ctxsieve's gateway")
        wiring.moved = []
    if wiring.moved:
        for moved in wiring.moved:
            servers.pop(moved.name)
        env = {**gateway_entry.passed(wiring.moved, agent.syntax), **agent.extra_env()}
        servers[gateway_entry.NAME] = {**agent.entry(at, gateway_entry.command(agent.name, url), env),
                                       **agent.gateway_settings(at, wiring.moved)}
    allowed = agent.allowed(data)
    if allowed is not None:  # ctxsieve's servers named where only the servers named start
        allowed += [n for n in ("ctxsieve", gateway_entry.NAME) if n in servers and n not in allowed]
    wiring.notes += _said(agent, wiring.moved, kept)
    wiring.after = patched(text, data).encode("utf-8") if text.strip() else _dumps(data)
    return wiring


def _movable(agent: JsonAgent, old: Data, servers: Data) -> tuple[list[Moved], list[Kept]]:
    moved: list[Moved] = []
    kept: list[Kept] = []
    for name, entry in list(servers.items()):
        if name in ("ctxsieve", gateway_entry.NAME):
            continue
        found = agent.translate(name, entry, old)
        if isinstance(found, Moved):
            moved.append(found)
        else:
            kept.append(found)
    return moved, kept


def _said(agent: JsonAgent, moved: list[Moved], kept: list[Kept]) -> list[str]:
    path = agent.path()
    notes = [f"{path}: {k.name} stays in front of {agent.title}: {k.why}" for k in kept]
    if moved:
        names = ", ".join(m.name for m in moved)
        notes.append(f"{path}: {names} moved behind {gateway_entry.NAME} ({gateway_entry.config_path(agent.name)}): "
                     f"their tools keep their names under the server {gateway_entry.NAME}, and a call waits at most "
                     "60 s in the gateway unless the server's entry set its own timeout")
    return notes


def _taken(agent: JsonAgent, servers: Data, name: str) -> bool:
    """A server of this name that is not ctxsieve's own."""
    return name in servers and not is_ours(agent, name, servers[name])


def _as_claude(agent: JsonAgent, entry: Any) -> dict[str, Any] | None:
    words = agent.command_of(entry)
    return {"command": words[0], "args": words[1:]} if words else None


def _dig(data: Data, at: tuple[str, ...]) -> Data:
    node = data
    for key in at:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    return node


def _dumps(data: Data) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def remove_with(agent: JsonAgent, now: bytes, before: bytes | None) -> bytes:
    """The config without ctxsieve's servers, with the servers the gateway held put back as they were in `before`;
    everything else as it is now."""
    data = _object(now)  # ValueError: uninstall says the file is the user's to mend
    old = _object(before) if before else {}
    at = agent.servers_at(data)
    servers = _existing(data, at)
    if servers is not None:
        ours = [n for n in ("ctxsieve", gateway_entry.NAME) if n in servers and is_ours(agent, n, servers[n])]
        for name in ours:
            servers.pop(name)
        held = gateway_entry.moved_names(agent.name)
        for name, entry in (_existing(old, agent.servers_at(old)) or {}).items():
            if name not in servers and (held is None or name in held):
                servers[name] = entry
        allowed, was = agent.allowed(data), agent.allowed(old) or []
        if allowed is not None:
            allowed[:] = [n for n in allowed if n not in ours or n in was]
        _prune(data, old, at)
    return patched(now.decode("utf-8"), data).encode("utf-8")


def is_ours(agent: JsonAgent, name: str, entry: Any) -> bool:
    """`ctxsieve` as ctxsieve's MCP server, or the gateway's entry as install writes it."""
    if name == "ctxsieve":
        return is_our_server(_as_claude(agent, entry))
    return name == gateway_entry.NAME and gateway_entry.is_ours(agent.command_of(entry))


def _existing(data: Data, at: tuple[str, ...]) -> Data | None:
    node: Any = data
    for key in at:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _prune(data: Data, old: Data, at: tuple[str, ...]) -> None:
    """The objects install made on the way to the servers, dropped when they are empty again."""
    for depth in range(len(at), 0, -1):
        parent = _existing(data, at[:depth - 1])
        key = at[depth - 1]
        if parent is not None and parent.get(key) == {} and _existing(old, at[:depth]) is None:
            parent.pop(key)


class McpServers:
    """The `mcpServers` object most MCP clients share (Gemini CLI, Cursor): a local server is
    `{"command": ..., "args": [...], "env": {...}}`."""

    def servers_at(self, _data: Data, /) -> tuple[str, ...]:
        return ("mcpServers",)

    def entry(self, _at: tuple[str, ...], command: list[str], env: dict[str, str], /) -> Data:
        return {"command": command[0], "args": command[1:], **({"env": env} if env else {})}

    def command_of(self, entry: Any, /) -> list[str] | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            return None
        args = entry.get("args") or []
        return [entry["command"], *map(str, args)] if isinstance(args, list) else None


def checks(agent: JsonAgent) -> list[Check]:
    """doctor's rows for an agent whose config install writes as JSON, when ctxsieve's servers are in it."""
    path = agent.path()
    data = read_json(path)
    servers = _existing(data, agent.servers_at(data)) or {}
    found: list[Check] = []
    gateway = servers.get(gateway_entry.NAME)
    if isinstance(gateway, dict) and is_ours(agent, gateway_entry.NAME, gateway):
        env = gateway.get("env") or gateway.get("environment") or {}
        found.append(partial(gateway_row, agent.name, path, agent.command_of(gateway), env))
    words = agent.command_of(servers.get("ctxsieve"))
    if is_ours(agent, "ctxsieve", servers.get("ctxsieve")) and words:
        found.append(partial(mcp_row, f"{agent.name}: MCP server", path, {"command": words[0], "args": words[1:]}))
    if not found:
        return []
    state, detail = agent.limits(data)
    return [partial(executable_row, agent.name, agent.commands), *found,
            lambda: [Row(f"{agent.name}: output limits", state, detail)]]
