"""The MCP gateway in front of an agent's own MCP servers: which of them install moves behind one `ctxsieve-gateway`
entry, the gateway's config it writes for them (one file per agent, under ~/.config/ctxsieve), and the command.

A server is moved only when the gateway runs it as the agent would: a local (stdio) server whose every setting the
gateway has (command, args, env, an absolute cwd, a timeout). A remote one, one the agent filters, trusts, signs in
to or keeps off, one whose name the gateway does not take, or one using a substitution the agent does itself (other
than an environment variable) stays in front of the agent, and the plan says why. An environment variable the
server's entry reads is passed by the agent to the gateway as CTXSIEVE_ENV_<NAME> (in the agent's own syntax, so
the agent expands it as it did) and read back in the gateway's config as ${CTXSIEVE_ENV_<NAME>}: set (maybe empty)
whenever the gateway starts, so the gateway's config never names a variable that is missing."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..gateway.config import ConfigError, parse_config
from .changes import read
from .commands import check_runs, executable
from .manifest import Manifest, digest
from .state import state_dir

NAME = "ctxsieve-gateway"  # the entry in the agent's config
COMMAND = "ctxsieve-gateway"  # the light entry point (`ctxsieve gateway` is the same)
KIND = "gateway-config"  # the manifest's kind for the gateway's config file
ENV_PREFIX = "CTXSIEVE_ENV_"
SERVER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")  # what the gateway's config takes (gateway.config)


@dataclass(frozen=True)
class Syntax:
    """How an agent's config refers to an environment variable, and what else in a string it (or the gateway)
    would expand: a server with the latter stays in front of the agent."""

    reference: re.Pattern[str]  # the variable's name in the first group that matched
    other: re.Pattern[str]
    written: str  # the agent's reference to a variable, with {} for its name ("" when it has none)

    def moved(self, text: str) -> tuple[str, set[str]] | None:
        """`text` as the gateway's config says it, and the variables it reads; None when it cannot say it."""
        if self.other.search(self.reference.sub("", text)):
            return None
        names: set[str] = set()

        def one(match: re.Match[str]) -> str:
            name = next(g for g in match.groups() if g)
            names.add(name)
            return "${" + ENV_PREFIX + name + "}"

        return self.reference.sub(one, text), names


@dataclass(frozen=True)
class Moved:
    name: str
    entry: dict[str, Any]  # as the gateway's mcpServers takes it
    variables: frozenset[str]
    timeout_s: float | None  # the agent's own timeout for this server, when its entry sets one


@dataclass(frozen=True)
class Kept:
    name: str
    why: str


def stdio(name: str, command: Any, args: Any, env: Any, cwd: Any, syntax: Syntax,
          timeout_s: float | None = None) -> Moved | Kept:
    """A local server's settings as the gateway's config entry, or why it stays in front of the agent."""
    if not SERVER_NAME.match(name):
        return Kept(name, "its name is not one the gateway takes (1-64 letters, digits, '_', '-', '.')")
    if not isinstance(command, str) or not command or not _strings(args) or not _mapping(env) \
            or not (cwd is None or isinstance(cwd, str)):
        return Kept(name, "its command, args, env or cwd is not what the gateway reads (strings)")
    if cwd is not None and not os.path.isabs(cwd):
        return Kept(name, "its cwd is relative (to the agent's folder, which the gateway may not share)")
    texts = {"command": command, **{f"args.{i}": a for i, a in enumerate(args or [])},
             **{f"env.{k}": v for k, v in (env or {}).items()}, **({"cwd": cwd} if cwd else {})}
    said = {key: syntax.moved(text) for key, text in texts.items()}
    if any(s is None for s in said.values()):
        return Kept(name, "it uses a substitution the agent makes itself, other than an environment variable")
    out = {key: s[0] for key, s in said.items() if s is not None}
    entry: dict[str, Any] = {"command": out["command"]}
    if args:
        entry["args"] = [out[f"args.{i}"] for i in range(len(args))]
    if env:
        entry["env"] = {k: out[f"env.{k}"] for k in env}
    if cwd:
        entry["cwd"] = out["cwd"]
    if timeout_s is not None:
        entry["ctxsieve"] = {"timeout_s": timeout_s}
    variables = frozenset(n for s in said.values() if s is not None for n in s[1])
    return Moved(name, entry, variables, timeout_s)


def _strings(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _mapping(value: Any) -> bool:
    return value is None or (isinstance(value, dict) and all(isinstance(v, str) for v in value.values()))


def config_path(agent: str) -> Path:
    """Where the gateway's config for this agent is written: the user's to read and tune (its `ctxsieve` options)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ctxsieve" / f"gateway-{agent}.json"


def command(agent: str, url: str) -> list[str]:
    """The gateway as the agent starts it: absolute paths only (an agent's PATH may not have it)."""
    return [executable(COMMAND), "--config", str(config_path(agent)), "--url", url]


def config_bytes(moved: Iterable[Moved]) -> bytes:
    data = {"mcpServers": {m.name: m.entry for m in moved}}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def variables(moved: Iterable[Moved]) -> list[str]:
    return sorted({v for m in moved for v in m.variables})


def passed(moved: Iterable[Moved], syntax: Syntax) -> dict[str, str]:
    """The gateway entry's env: each variable the moved servers read, as the agent refers to it."""
    return {ENV_PREFIX + v: syntax.written.format(v) for v in variables(moved)}


def check(agent: str, moved: list[Moved], url: str) -> None:
    """The gateway's config is one the gateway serves, and the gateway's command runs (SystemExit says which not)."""
    environ = {**os.environ, **{ENV_PREFIX + v: "" for v in variables(moved)}}
    try:
        parse_config(json.loads(config_bytes(moved)), environ)
    except ConfigError as exc:
        raise SystemExit(f"ctxsieve install: the gateway's config for {agent} would not load ({exc}); "
                         "nothing written") from None
    _runs(tuple(command(agent, url)[:1]))


@functools.cache
def _runs(words: tuple[str, ...]) -> None:
    """The gateway's command answers --help (once per install: every agent's gateway is the same command)."""
    check_runs(list(words))


def is_ours(words: list[str] | None) -> bool:
    """`ctxsieve-gateway ...` or `ctxsieve gateway ...` with a config install wrote (by path or bare name)."""
    if not words:
        return False
    name = Path(words[0]).name
    rest = words[1:] if name == COMMAND else words[2:] if name == "ctxsieve" and words[1:2] == ["gateway"] else None
    if rest is None or "--config" not in rest[:-1]:
        return False
    config = Path(rest[rest.index("--config") + 1])
    return config.parent.name == "ctxsieve" and config.name.startswith("gateway-")


def changed_by_user(path: Path) -> bool:
    """A gateway config there that install did not write as it is now: the user's, and left alone."""
    now = read(path)
    if now is None:
        return False
    known = Manifest.load(state_dir()).entries.get(str(path))
    return known is None or digest(now) != known.after


def left_note(gateway: Path, config: Path, agent: str) -> str:
    return (f"{gateway}: changed since install (or not written by it): the gateway's servers and {config} left as "
            f"they are; `ctxsieve uninstall --agent {agent}`, then install again, redoes them")


def moved_names(agent: str) -> set[str] | None:
    """The servers the gateway's config for this agent holds now; None when there is none to read."""
    try:
        data = json.loads(config_path(agent).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return set(servers) if isinstance(servers, dict) else None


def environment(entry_env: Mapping[str, Any]) -> dict[str, str]:
    """The gateway's environment as doctor starts it: each CTXSIEVE_ENV_<NAME> from this environment's NAME (the
    agent's own expansion is its business), over this environment."""
    out = dict(os.environ)
    for key in entry_env:
        if key.startswith(ENV_PREFIX):
            out[key] = os.environ.get(key[len(ENV_PREFIX):], "")
    return out
