"""A cut's placeholder line in the words of the tools the model it is shown to has.

The service writes the line for ctxsieve's own tools (`filter_ref` / `fetch_ref`: its `tools` style). A surface whose
model is not offered them (Codex, or Claude Code without ctxsieve's MCP server, behind the proxy) writes it here
instead, from the same facts (`FilterResult.more`) and the call that produced the output: a file's lines come back
with `sed -n 'A,Bp' path` (a Read with offset and limit when the model has Read), a command's by re-running it
narrower, and anything else by re-running the call. A text an agent cut before ctxsieve saw it (`partial`) says so
and what its numbers are, whatever the tools. The line keeps the form `[ctxsieve src_...: ...]` that the service's
compaction reads a cut's ref from (`indexes.more.cut_from`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .languages import source_path
from .models import More
from .partial import Partial
from .placeholder import Namer, head, prefixed, ref_ways

# a command that prints one file from its first line and nothing else: its output's lines are the file's
_PRINTS_FILE = re.compile(r"\A\s*(?:cat|bat|nl|less|more|head(?:\s+-n\s*\d+|\s+-\d+)?)\s+(['\"]?)([\w./~+@-]+)\1\s*\Z")
_CMD_IN_SCRIPT = re.compile(r"""\b(?:cmd|command)["']?\s*:\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_REF_WAYS = re.compile(r'; (?:more: filter_ref\(ref="src_[0-9a-f]+", query="\.\.\."\)|whole: fetch_ref\(ref="src_'
                       r'[0-9a-f]+"\)|a part: fetch_ref\(ref="src_[0-9a-f]+", chunk=N, window=1\)|lines A-B of \d+: '
                       r'fetch_ref\(ref="src_[0-9a-f]+", lines="A-B"\))')


@dataclass(frozen=True, kw_only=True)
class Tools:
    """What the model can call to get more: ctxsieve's ref tools, and a Read that takes offset and limit."""

    ref_tools: bool
    read: bool = False
    prefix: str = ""  # how the client names the ref tools to its model (`mcp__ctxsieve__`), "" as they are


@dataclass(frozen=True, kw_only=True)
class Source:
    """Where an output came from: the file it is from its first line, and the shell command that printed it."""

    path: str | None = None
    command: str | None = None


def source_of(arguments: Mapping[str, Any]) -> Source:
    """The call's file (a read from the first line, or a command that only prints a file) and its shell command
    (its `cmd` / `command`, or the one a script passes to `exec_command`, as Codex's `exec` does)."""
    command = _command(arguments)
    printed = _PRINTS_FILE.match(command) if command else None
    offset = arguments.get("offset")
    read = source_path(arguments)
    searched = any(isinstance(arguments.get(k), str) for k in ("pattern", "query"))  # a Grep's path: not its output
    path = printed.group(2) if printed else read if read and not searched and (
        not isinstance(offset, int) or offset <= 1) else None
    return Source(path=path, command=command)


def _command(arguments: Mapping[str, Any]) -> str | None:
    for key in ("cmd", "command"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
            return shlex.join(value[2:]) if value[:2] in (["bash", "-lc"], ["bash", "-c"]) else shlex.join(value)
    for value in arguments.values():
        found = _CMD_IN_SCRIPT.search(value) if isinstance(value, str) else None
        if found:
            return _unquoted(found.group(1))
    return None


def _unquoted(literal: str) -> str | None:
    try:
        value = json.loads(literal if literal.startswith('"') else '"' + literal[1:-1].replace('"', '\\"') + '"')
    except ValueError:
        return None
    return value.strip() or None if isinstance(value, str) else None


def line(more: More, source: Source, tools: Tools, cut: Partial | None = None) -> str:
    """The placeholder: what was shown, what the numbers are when an agent cut the output first, then each way to
    the rest the model has."""
    ref = more.ref or ""
    facts = [_shown(more, cut), *([_numbers(cut, source)] if cut else [])]
    if tools.ref_tools:
        facts += _ref_ways(more, source, cut, prefixed(tools.prefix))
    facts += _own_ways(more, source, tools, cut)
    return f"[ctxsieve {ref}: " + "; ".join(facts) + "]"


def _shown(more: More, cut: Partial | None) -> str:
    counts = head(more)
    if cut is None:
        return counts
    return f"{cut.agent} cut this output before ctxsieve saw it ({cut.dropped}); of what it kept, {counts}"


def _numbers(cut: Partial, source: Source) -> str:
    whose = _whose(source)
    if (dropped := cut.dropped_lines()) is not None:
        return f"numbered lines are {whose} own, on both sides of the cut, which spans {whose} lines " \
               f"{dropped[0]}-{dropped[1]}"
    return f"numbered lines are {whose} own; after the cut, lines have no number (their place is unknown)"


def _whose(source: Source) -> str:
    return "the file's" if source.path else "the output's"


def _ref_ways(more: More, source: Source, cut: Partial | None, name: Namer) -> list[str]:
    if cut is None:
        return ref_ways(more, "tools", name)
    kept = f"lines A-B of the text {cut.agent} kept (its own numbering, {_whose(source)} only to line {cut.head})"
    return ref_ways(more, "tools", name, lines=kept, whole="all it kept")


def _own_ways(more: More, source: Source, tools: Tools, cut: Partial | None) -> list[str]:
    """The rest through the model's own tools: the file's lines, else the command again, else the call again."""
    ways = [f"the whole output: {cut.saved} (saved by {cut.agent})"] if cut and cut.saved else []
    lines = f"the file's lines A-B{f' (of {more.lines})' if more.lines and not cut else ''}"
    if source.path and tools.read:
        ways.append(f"{lines}: Read(file_path={json.dumps(source.path)}, offset=A, limit=B-A+1)")
    elif source.path:
        ways.append(f"{lines}: sed -n 'A,Bp' {shlex.quote(source.path)}")
    elif source.command:
        ways.append(f"lines A-B of its output: re-run it narrower, {source.command} | sed -n 'A,Bp' (or | grep -n)")
    elif more.rerun is not None:
        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in more.rerun.args.items())
        ways.append(f"re-run: {more.rerun.tool}({args})")
    return ways


def without_ref_tools(placeholder: str) -> str:
    """A service placeholder (a cut's or a cleared result's) without the ways that call ctxsieve's ref tools."""
    return _REF_WAYS.sub("", placeholder)
