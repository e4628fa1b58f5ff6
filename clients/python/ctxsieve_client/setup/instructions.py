"""The two lines install adds to each agent's own instruction file (Claude Code's CLAUDE.md, Codex's AGENTS.md, ...):
when to call ctxsieve's `search_code` MCP tool, in a marked block. Uninstall puts the file back byte for byte (one
install created is removed); in a file changed since, only the block and the blank line install put before it go."""

from __future__ import annotations

import re
from pathlib import Path

from .changes import Change, read
from .checks import Row
from .family import Kind

KIND = "instructions"  # the manifest's kind for an instruction file
BEGIN = "<!-- >>> ctxsieve: added by `ctxsieve install`; `ctxsieve uninstall` takes it out -->"
END = "<!-- <<< ctxsieve -->"
LINES = ("To find where something is defined or handled in this repository, call search_code(query) (ctxsieve MCP) "
         "before grepping.",
         "Its results carry the files' true line numbers; fetch_ref(ref) (ctxsieve MCP) reads the rest of anything "
         "ctxsieve cut.")
BLOCK = "\n".join([BEGIN, *LINES, END]) + "\n"
FOUND = re.compile(re.escape(BEGIN) + r"[^\n]*\n.*?" + re.escape(END) + r"[^\n]*(?:\n|$)", re.DOTALL)


def change(path: Path, agent: str) -> Change:
    """The file with the block: in place of an older block of ctxsieve's, else after the user's text."""
    before = read(path)
    text = (before or b"").decode("utf-8")
    if FOUND.search(text):
        after = FOUND.sub(lambda _: BLOCK, text, count=1)
    else:
        after = text + ("" if not text else "\n" if text.endswith("\n") else "\n\n") + BLOCK
    return Change(path, before, after.encode("utf-8"), agent, KIND)


def remove(now: bytes, _before: bytes | None = None) -> bytes:
    """The file without the block, and without the blank line install put before it."""
    text = now.decode("utf-8")
    found = FOUND.search(text)
    if found is None:
        return now
    start = found.start() - 1 if text[:found.start()].endswith("\n\n") else found.start()
    return (text[:start] + text[found.end():]).encode("utf-8")


def kind() -> Kind:
    return Kind(remove=remove)


def row(agent: str, path: Path) -> list[Row]:
    """doctor's row: the agent's instruction file says when to use search_code (as this install would say it)."""
    part = f"{agent}: instructions"
    found = FOUND.search((read(path) or b"").decode("utf-8", "replace"))
    if found is None:
        return [Row(part, "warn", f"{path} does not say when to use ctxsieve's search_code", "ctxsieve install")]
    if found.group(0) != BLOCK:
        return [Row(part, "warn", f"{path}: ctxsieve's block is not this version's", "ctxsieve install")]
    return [Row(part, "ok", f"{path} says when to call search_code and fetch_ref")]
