"""The gateway's config: the `mcpServers` JSON MCP clients already use, plus an optional `"ctxsieve"` object.

    {"mcpServers": {
        "fs":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
        "api": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"},
                "ctxsieve": {"max_tokens": 800}}},
     "ctxsieve": {"tool_search": "auto", "passthrough_tokens": 1000}}

`${VAR}` in any string expands from the environment (a missing variable is an error naming it). A stdio server
gets only what the MCP SDK passes (HOME, PATH, SHELL, TERM, USER, LOGNAME) and its own `env`, unless
`"inherit_env"` says more: `true` passes the gateway's whole environment, as the agent would have, a list passes
the variables it names (its own `env` still wins). A server's
own `"ctxsieve"` object overrides the top-level one for that server. A bad config is refused at start with the
key that is wrong.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

ToolSearch = Literal["auto", "on", "off"]
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


class ConfigError(ValueError):
    """The config cannot be served; the message names the key."""


@dataclass(frozen=True, kw_only=True)
class Options:
    """The gateway's settings (API.md, "MCP surfaces"); each server may override any of them."""

    passthrough_tokens: int = 1000  # text up to this many tokens passes through byte for byte
    max_tokens: int | None = None  # what the agent sees of a large output (None: code by the service's rule, else 1500)
    tool_search: ToolSearch = "auto"  # auto: on when the servers have more than tool_search_threshold tools
    tool_search_threshold: int = 30
    find_k: int = 5
    always: tuple[str, ...] = ()  # tools listed even with tool search on
    timeout_s: float = 60.0  # per upstream call, its late listing, and a call waiting for that listing
    start_timeout_s: float = 5.0  # the gateway serves after this long; a server listed later is added then
    notify_list_changed: bool = False  # send tools/list_changed when find_tools found tools (breaks prompt caches)
    client_idle_s: float = 900.0  # a 2026-07-28 client over HTTP is gone after this long without a request
    inherit_env: bool | tuple[str, ...] = False  # a stdio server gets the gateway's environment (or these names)


@dataclass(frozen=True, kw_only=True)
class Upstream:
    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    options: Options = field(default_factory=Options)


@dataclass(frozen=True, kw_only=True)
class GatewayConfig:
    servers: tuple[Upstream, ...]
    options: Options


def load_config(path: Path, environ: Mapping[str, str] | None = None) -> GatewayConfig:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
    return parse_config(data, os.environ if environ is None else environ)


def parse_config(data: Any, environ: Mapping[str, str]) -> GatewayConfig:
    if not isinstance(data, dict):
        raise ConfigError("the config must be a JSON object with an `mcpServers` object")
    unknown = sorted(set(data) - {"mcpServers", "ctxsieve"})
    if unknown:
        raise ConfigError(f"unknown top-level key {unknown[0]!r} (expected `mcpServers` and optionally `ctxsieve`)")
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not servers:
        raise ConfigError("`mcpServers` must be an object naming at least one server")
    options = _options(data.get("ctxsieve", {}), Options(), "ctxsieve")
    enabled = {name: entry for name, entry in servers.items()
               if not (isinstance(entry, dict) and entry.get("disabled") is True)}  # as Claude Desktop marks them
    if not enabled:
        raise ConfigError("`mcpServers`: every server is disabled")
    return GatewayConfig(servers=tuple(_server(name, entry, options, environ) for name, entry in enabled.items()),
                         options=options)


def _server(name: str, entry: Any, defaults: Options, environ: Mapping[str, str]) -> Upstream:
    where = f"mcpServers.{name}"
    if not _SERVER_NAME.match(name):
        raise ConfigError(f"{where}: a server name is 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be an object")
    entry = _expand(entry, environ, where)
    kind = entry.get("type", "stdio" if "command" in entry else None)
    options = _options(entry.get("ctxsieve", {}), defaults, f"{where}.ctxsieve")
    known = {"type", "ctxsieve", "disabled", "description", "timeout"}  # fields other clients write
    if kind == "stdio":
        _only(entry, known | {"command", "args", "env", "cwd"}, where)
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise ConfigError(f"{where}.command: a stdio server needs a command (a string)")
        env = {**_inherited(options.inherit_env, environ), **_mapping(entry.get("env", {}), f"{where}.env")}
        return Upstream(name=name, transport="stdio", command=command, args=_strings(entry.get("args", []),
                        f"{where}.args"), env=env,
                        cwd=_optional_string(entry.get("cwd"), f"{where}.cwd"), options=options)
    if kind in ("http", "sse", "streamable-http"):
        _only(entry, known | {"url", "headers"}, where)
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.url: a {kind} server needs an http(s) URL")
        return Upstream(name=name, transport="sse" if kind == "sse" else "http", url=url,
                        headers=_mapping(entry.get("headers", {}), f"{where}.headers"), options=options)
    raise ConfigError(f"{where}.type: {kind!r} is not a server type (stdio, http or sse; stdio needs `command`)")


def _options(raw: Any, defaults: Options, where: str) -> Options:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be an object")
    names = {f.name: f for f in fields(Options)}
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in names:
            raise ConfigError(f"{where}.{key}: unknown setting (known: {', '.join(sorted(names))})")
        changes[key] = _option(key, value, f"{where}.{key}")
    return replace(defaults, **changes)


def _option(key: str, value: Any, where: str) -> Any:
    if key == "tool_search":
        if value not in ("auto", "on", "off"):
            raise ConfigError(f"{where}: one of auto, on, off")
        return value
    if key == "always":
        return _strings(value, where)
    if key == "inherit_env":
        if isinstance(value, bool) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value if isinstance(value, bool) else tuple(value)
        raise ConfigError(f"{where}: true, false or a list of variable names")
    if key == "notify_list_changed":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: true or false")
        return value
    limits = {"timeout_s": (0.1, 3600.0), "start_timeout_s": (0.0, 3600.0), "client_idle_s": (1.0, 86_400.0),
              "find_k": (1, 50), "tool_search_threshold": (0, 100_000), "passthrough_tokens": (0, 1_000_000),
              "max_tokens": (50, 32_000)}
    low, high = limits[key]
    seconds = key.endswith("_s")
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high \
            or (not seconds and not isinstance(value, int)):
        kind = "a number" if seconds else "a whole number"
        raise ConfigError(f"{where}: {kind} from {low} to {high}")
    return float(value) if seconds else value


def _inherited(inherit: bool | tuple[str, ...], environ: Mapping[str, str]) -> dict[str, str]:
    """What a stdio server gets of the gateway's environment beyond the SDK's few variables."""
    if inherit is True:
        return dict(environ)
    return {name: environ[name] for name in inherit or () if name in environ}


def _expand(value: Any, environ: Mapping[str, str], where: str) -> Any:
    """`${VAR}` from the environment, in every string of the entry."""
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            if match.group(1) not in environ:
                raise ConfigError(f"{where}: ${{{match.group(1)}}} is not set in the environment")
            return environ[match.group(1)]
        return _VAR.sub(one, value)
    if isinstance(value, list):
        return [_expand(v, environ, where) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, f"{where}.{k}") for k, v in value.items()}
    return value


def _only(entry: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: not a key of this server type")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: must be a list of strings")
    return tuple(value)


def _mapping(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where}: must be an object of strings")
    return dict(value)


def _optional_string(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: must be a string")
    return value
