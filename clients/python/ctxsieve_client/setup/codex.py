"""Codex CLI: `ctxsieve mcp` as its MCP server `ctxsieve` and its own tool-output limit raised, in its config.toml.

The user's TOML is never re-serialised: ctxsieve's lines are added as marked blocks (the root key at the top, where
a root key must be, the server's table at the end), checked with tomllib, and uninstall takes the blocks out again.
No model base URL is written: a Codex pointed at a proxy that is not running cannot work (that is `wrap`'s job)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from ..hooks import cli as hook_cli
from .agents import codex_home
from .changes import Change, read
from .claude_code import server_command

OUTPUT_LIMIT = 100_000  # tokens of a tool output Codex keeps in its history (it cuts to its own budget otherwise)
BEGIN = "# >>> ctxsieve: added by `ctxsieve install`; `ctxsieve uninstall` takes it out"
END = "# <<< ctxsieve"
BLOCK = re.compile(r"\n?" + re.escape(BEGIN) + r"[^\n]*\n.*?" + re.escape(END) + r"[^\n]*(?:\n|$)", re.DOTALL)
PER_CALL_NOTE = ("Codex 0.169 still cuts a command's output to its call's max_output_tokens (10,000 tokens unless "
                 "the model asks for more) before anyone sees it: this setting alone does not give ctxsieve those "
                 "outputs whole")


def config_path() -> Path:
    return codex_home() / "config.toml"


def plan(url: str, checked: bool = False) -> tuple[list[Change], list[str]]:
    """The config with ctxsieve's blocks, and what was left alone because it is the user's; `checked`: the server's
    command already ran (the Claude Code plan runs the same one), else it is run here first."""
    path = config_path()
    before = read(path)
    text = (before or b"").decode("utf-8")
    try:
        mine = _parsed(remove_text(text))
    except tomllib.TOMLDecodeError as exc:
        raise SystemExit(f"ctxsieve install: {path} is not valid TOML ({exc}); not changed") from None
    server = server_command(url)
    if not checked:
        hook_cli.check_runs(server, "--check")
    after, notes = wired(remove_text(text), mine, server)
    try:
        _parsed(after)
    except tomllib.TOMLDecodeError as exc:  # e.g. mcp_servers written as an inline table
        raise SystemExit(f"ctxsieve install: {path} would not parse with ctxsieve's lines ({exc}); not changed, "
                         f"add [mcp_servers.ctxsieve] by hand: command = {json.dumps(server[0])}, args = "
                         f"{json.dumps(server[1:])}") from None
    return [Change(path, before, after.encode("utf-8"), "codex", "codex")], notes


def wired(text: str, mine: dict[str, Any], server: list[str]) -> tuple[str, list[str]]:
    """The user's text with ctxsieve's blocks added where the user has not set the same keys."""
    notes = [f"{config_path()}: tool_output_token_limit = {OUTPUT_LIMIT}: {PER_CALL_NOTE}"]
    head = tail = ""
    limit = mine.get("tool_output_token_limit")
    if limit is None:
        head = _block([f"tool_output_token_limit = {OUTPUT_LIMIT}"])
    else:
        notes[0] = f"{config_path()}: tool_output_token_limit = {limit} is yours: kept. {PER_CALL_NOTE}"
    if "ctxsieve" in mine.get("mcp_servers", {}):
        notes.append(f"{config_path()}: [mcp_servers.ctxsieve] is yours: kept")
    else:
        gap = "" if not text else "\n" if text.endswith("\n") else "\n\n"
        tail = gap + _block(["[mcp_servers.ctxsieve]", f"command = {json.dumps(server[0])}",
                             f"args = {json.dumps(server[1:])}", 'default_tools_approval_mode = "approve"'])
    return head + text + tail, notes


def _block(lines: list[str]) -> str:
    return "\n".join([BEGIN, *lines, END]) + "\n"


def remove_text(text: str) -> str:
    return BLOCK.sub("", text)


def remove(content: bytes) -> bytes:
    """The config without ctxsieve's blocks; the user's lines as they are."""
    return remove_text(content.decode("utf-8")).encode("utf-8")


def _parsed(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def read_config() -> dict[str, Any]:
    """Codex's config as Codex reads it; {} when there is none."""
    content = read(config_path())
    return tomllib.loads(content.decode("utf-8")) if content else {}
