"""Claude Code: the hook (HTTP by default, a command with --command), the capture prefix and `ctxsieve mcp`, as
`ctxsieve hook claude-code --install` writes them (hooks.cli.plan_install); uninstall's way to take them out again."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ..hooks import cli as hook_cli
from .changes import Change, read
from .jsontext import patched

KINDS = {"settings": "claude-settings", "servers": "claude-servers"}


def plan(url: str, command: bool, project: bool, cwd: Path) -> list[Change]:
    """The files the hook install would write, each command written run first (SystemExit says which failed)."""
    args = argparse.Namespace(url=url, http=not command, project=project)
    for path in (cwd / ".claude" / "settings.json", cwd / ".mcp.json") if project else (
            Path.home() / ".claude" / "settings.json", Path.home() / ".claude.json"):
        _readable(path)
    planned = hook_cli.plan_install(args, cwd, Path.home())
    changes = []
    for path, content in planned.files:
        if path.name == hook_cli.CAPTURE_NAME:
            _check_capture(content)
            changes.append(Change(path, read(path), content, "claude-code", "file", 0o755))
        else:
            kind = KINDS["settings"] if path.name == "settings.json" else KINDS["servers"]
            before = read(path)
            changes.append(Change(path, before, _kept_layout(before, content), "claude-code", kind))
    return changes


def _kept_layout(before: bytes | None, content: bytes) -> bytes:
    """The install's value written into the user's own text: only what changes is rewritten."""
    if before is None:
        return content
    return patched(before.decode("utf-8"), json.loads(content)).encode("utf-8")


def _readable(path: Path) -> None:
    """A settings file that is not JSON is the user's to mend: said, and nothing is written."""
    content = read(path)
    try:
        _object(content or b"{}")
    except ValueError as exc:
        raise SystemExit(f"ctxsieve install: {path} is not a JSON object ({exc}); nothing written") from None


def _check_capture(content: bytes) -> None:
    """The capture script runs commands as written, checked on a copy before anything is written."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / hook_cli.CAPTURE_NAME
        copy.write_bytes(content)
        copy.chmod(0o755)
        hook_cli.check_prefix(copy)


def remove_settings(content: bytes) -> bytes:
    """Settings without ctxsieve's hooks and prefix; everything else as it is."""
    data = _object(content)
    hooks = data.get("hooks", {})
    for event in hook_cli.EVENTS:
        entries = [{**e, "hooks": [h for h in e.get("hooks", []) if not hook_cli.is_ours(h)]}
                   for e in hooks.get(event, [])]
        hooks[event] = [e for e in entries if e["hooks"]]
        if not hooks[event]:
            hooks.pop(event)
    env = data.get("env", {})
    if Path(str(env.get(hook_cli.PREFIX_VARIABLE, ""))).name == hook_cli.CAPTURE_NAME:
        env.pop(hook_cli.PREFIX_VARIABLE)
    _drop_empty(data, "hooks", "env")
    return patched(content.decode("utf-8"), data).encode("utf-8")


def remove_server(content: bytes) -> bytes:
    """The MCP servers without `ctxsieve mcp`."""
    data = _object(content)
    if is_our_server(data.get("mcpServers", {}).get("ctxsieve")):
        data["mcpServers"].pop("ctxsieve")
    _drop_empty(data, "mcpServers")
    return patched(content.decode("utf-8"), data).encode("utf-8")


def server_command(url: str) -> list[str]:
    """ctxsieve's MCP server as the hook install writes it (by its absolute path)."""
    return [hook_cli.executable(hook_cli.SERVER_COMMAND), "--url", url]


def is_our_server(entry: Any) -> bool:
    """`ctxsieve-mcp ...`, or `ctxsieve mcp ...` as installs before it wrote; by path or bare name."""
    if not isinstance(entry, dict):
        return False
    name, args = Path(str(entry.get("command", ""))).name, entry.get("args") or []
    return name == "ctxsieve-mcp" or (name == "ctxsieve" and isinstance(args, list) and args[:1] == ["mcp"])


def _object(content: bytes) -> dict[str, Any]:
    data = json.loads(content)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _drop_empty(data: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in data and not data[key]:
            data.pop(key)
