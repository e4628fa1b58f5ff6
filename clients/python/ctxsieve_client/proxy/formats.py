"""The proxy's reading of a request body through its dialect (`ctxsieve_client.dialects`): each text part of each tool
result with the call that asked for it and the words around it, and how to put other text back; the tools the
request offers, and what names its conversation. Sans-IO and pure: the same body gives the same results in the same
order.

A result is cut text part by text part: a string result is one part, a list result's text parts are each one (an
image or any other part is never touched, nor the keys beside a part's text, such as `cache_control`). A text part
that is a command's result has only its output cut, and is an error when its exit code is not 0: a JSON object with
`exit_code` and a string `output` (Codex's `exec_command` inside its `exec`), or Codex's text form of the same
(`Chunk ID: ...`, `Wall time: ...`, `Process exited with code N`, ..., `Output:` and the output). In a format
without an error flag (the OpenAI ones), a part that begins like an error (ERROR_STARTS, as `/v1/context/compact`
reads them) is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..dialects import ERROR_STARTS, Dialect, ToolResult
from ..intent import step_intent
from ..languages import usable_folder

_EXIT_LINE = re.compile(r"^(?:Exit code:?|Process exited with code) ([1-9]\d*)\s*$", re.M)


@dataclass(frozen=True, kw_only=True)
class Part:
    """One text part of one tool result: what was asked for it, and how to put other text in its place."""

    text: str
    tool: str
    arguments: dict[str, Any]
    intent: str | None  # the latest user request, the assistant's words before the call, the call's own words
    is_error: bool
    put: Callable[[str], None]  # writes the replacement into the body it was read from
    folder: str | None = None  # the agent's working folder when the tool ran, as the request tells the model


def parts(dialect: Dialect, body: dict[str, Any]) -> list[Part]:
    """Every text part of every tool result in the body, oldest first, each with the folder its tool ran in."""
    stated = folders_stated(dialect, body)
    return [replace(part, folder=_folder_at(stated, result.turn))
            for result in dialect.results(dialect.turns(body) or []) for part in _parts_of(result)]


def dumps(body: Any) -> bytes:
    """One serialization for every body the proxy writes: the same projection always gives the same bytes."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _parts_of(result: ToolResult) -> Iterator[Part]:
    call = result.call
    tool = (call.tool if call is not None else None) or "tool"
    arguments, said, request = (call.arguments, call.said, call.request) if call is not None else (
        {}, "", result.request)
    intent = step_intent(request, said, arguments)
    for text, put in result.parts():
        yield _emit(text, put, tool, arguments, intent, result.flagged)


# Codex's text form of a command's result (codex-rs unified exec): its header lines, then the output
_CODEX_HEADER = re.compile(r"\A(?:Chunk ID: \S+\n)?Wall time: [0-9.]+ seconds\n(?:Process exited with code (-?\d+)\n)?"
                           r"(?:Process running with session ID \S+\n)?(?:Original token count: \d+\n)?Output:\n")


def _codex_text_output(text: str) -> tuple[str, int, Callable[[str], str]] | None:
    """Codex's text result of a command: its output, exit code (0 while it runs on) and the header kept as it came."""
    header = _CODEX_HEADER.match(text)
    if header is None:
        return None
    return text[header.end():], int(header.group(1) or 0), lambda shown: text[:header.end()] + shown


def _command_output(text: str) -> tuple[str, int, Callable[[str], str]] | None:
    """A command's JSON result (`{"exit_code": 0, "output": "..."}`, Codex's `exec_command`, maybe under Codex's
    own warning that it shortened the output): its output, exit code, and how to put other output back in the same
    place. With `output` the last field (Codex's order), everything around it is kept as it came, byte for byte;
    otherwise the object is written again with the cut output."""
    start = text.find('{"')
    if start < 0 or start > 300 or '"exit_code"' not in text[start:start + 400]:
        return None
    spliced = _last_field_output(text, start)
    if spliced is not None:
        return spliced
    try:
        value = json.loads(text[start:])
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str) \
            or not isinstance(value.get("exit_code"), int):
        return None
    prefix = text[:start]
    return value["output"], value["exit_code"], lambda shown: prefix + json.dumps({**value, "output": shown},
                                                                                 ensure_ascii=False)


_LAST_OUTPUT = re.compile(r'(\{[^\n]*?"exit_code":(-?\d+)[^\n]*?"output":")(.*)"\}\s*\Z', re.S)
# Codex cuts a JSON result's text at a byte: its mark may split an escape (`\` or `\u00` before it, the rest after)
_SPLIT_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\(?:u[0-9a-fA-F]{0,3})?)(…\d+ (?:tokens|chars) truncated…)")


def _escapes_whole(raw: str) -> str:
    """The JSON string's text with an escape Codex's mark split put back together after the mark: the mark's
    place in the text moves by one character, and the character the escape stood for comes back."""
    return _SPLIT_ESCAPE.sub(lambda m: m.group(1) + m.group(3) + m.group(2), raw)


def _last_field_output(text: str, start: int) -> tuple[str, int, Callable[[str], str]] | None:
    found = _LAST_OUTPUT.match(text, start)
    if found is None:
        return None
    try:
        output = json.loads(f'"{_escapes_whole(found.group(3))}"')
    except ValueError:
        return None
    head = text[:start] + found.group(1)
    return output, int(found.group(2)), lambda shown: head + json.dumps(shown, ensure_ascii=False)[1:-1] + '"}'


def _emit(text: str, put: Callable[[str], None], tool: str, arguments: dict[str, Any], intent: str | None,
          flagged: bool | None) -> Part:
    """One part, a command's JSON result opened to its output; `flagged` None: the format has no error flag."""
    command = _command_output(text) or _codex_text_output(text)
    if command is not None:
        output, code, rebuild = command
        return Part(text=output, tool=tool, arguments=arguments, intent=intent, is_error=flagged is True or code != 0,
                    put=lambda shown: put(rebuild(shown)))
    is_error = flagged is True or (flagged is None and (text.lstrip().startswith(ERROR_STARTS)
                                                        or _EXIT_LINE.search(text[:500]) is not None))
    return Part(text=text, tool=tool, arguments=arguments, intent=intent, is_error=is_error, put=put)


def tool_names(dialect: Dialect, body: Mapping[str, Any]) -> frozenset[str]:
    """The names of the tools the request offers: its tools, and those among its turns (a Responses request's
    `additional_tools` items, Codex's), namespaces opened."""
    return frozenset(_names(body.get("tools"))) | frozenset(_names(dialect.turn_tools(body)))


def _names(tools: Any) -> Iterator[str]:
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            if isinstance(name, str):
                yield name
            yield from _names(tool.get("tools"))


def offers_tools(dialect: Dialect, body: Mapping[str, Any]) -> bool:
    """The request offers its model tools (in `tools`, or among its turns: a Responses request's `additional_tools`
    item)."""
    tools = body.get("tools")
    return bool(isinstance(tools, list) and tools) or dialect.turn_tools(body) is not None


_REF_TOOL = re.compile(r"(mcp__[A-Za-z0-9_-]+?__)(?:filter_ref|fetch_ref)\b")


def ref_tool_prefix(dialect: Dialect, body: Mapping[str, Any]) -> str:
    """How the client names ctxsieve's `fetch_ref` / `filter_ref` to its model (`mcp__ctxsieve__` when it runs
    `ctxsieve mcp` as its server `ctxsieve`), from the start of the request: its tools, system prompt and the turns
    before the model's first, where clients list their tools, deferred ones included. "" when it offers them by
    their own names or not at all."""
    opening = list(_opening(dialect, dialect.turns(body) or []))
    start = json.dumps([body.get("tools"), body.get("system"), body.get("instructions"), opening],
                       ensure_ascii=False, default=str)
    prefixes = sorted(set(_REF_TOOL.findall(start)))
    return prefixes[0] if prefixes else ""


def named(cut: str, prefix: str) -> str:
    """The cut with its placeholder's calls (its last line) in the client's names."""
    if not prefix:
        return cut
    head, _, last = cut.rpartition("\n")
    last = last.replace("filter_ref(", f"{prefix}filter_ref(").replace("fetch_ref(", f"{prefix}fetch_ref(")
    return f"{head}\n{last}" if head else last


def first_turn(dialect: Dialect, body: Mapping[str, Any]) -> str:
    """What names a conversation without any state the client sends: its system prompt and first turn (a later
    request of the same conversation repeats both; another conversation differs in one)."""
    turns = dialect.turns(body) or [body.get("input")]  # (a Responses request's input may be one text)
    system = dialect.system(body)
    first = next((t for t in turns if not (isinstance(t, dict) and t.get("role") in ("system", "developer"))),
                 None)
    preamble = [t for t in turns if isinstance(t, dict) and t.get("role") in ("system", "developer")][:1]
    return json.dumps(unmarked([system, preamble, first]), ensure_ascii=False, sort_keys=True, default=str)


# Claude Code's Grep in files_with_matches mode: `Found 12 files`, `Found 250 files limit: 250, offset: 0`
_LIST_HEAD = re.compile(r"^Found \d+ files?(?: limit: \d+)?(?:,? ?offset: \d+)?$")
# the lines Claude Code closes a list with: Glob's truncation, Grep's pagination
_LIST_TAIL = ("(Showing ", "(Results are truncated", "[Showing results with pagination")


@dataclass(frozen=True)
class Listing:
    """A tool result that lists files as Claude Code renders them for its model: its head line (Grep's `Found N
    files`), the paths, one a line, and its closing note lines (Glob's `(Showing 100 of 120 matching files; ...)`)."""

    head: list[str]
    paths: list[str]
    tail: list[str]

    @property
    def truncated(self) -> bool:
        """The tool listed only some of the matches (Glob's `(Showing 100 of 120 ...)`, Grep's `limit:`)."""
        return any(line.startswith(_LIST_TAIL) for line in self.tail) or any("limit:" in line for line in self.head)

    def text(self, paths: list[str], note: str) -> str:
        return "\n".join([*self.head, *paths, *self.tail, note])


def listing(text: str) -> Listing | None:
    """The list of files a Glob's or a Grep's result renders, or None when the text is something else."""
    lines = text.split("\n")
    head = lines[:1] if lines and _LIST_HEAD.match(lines[0]) else []
    end = len(lines)
    while end > len(head) and (not lines[end - 1].strip() or lines[end - 1].startswith(_LIST_TAIL)):
        end -= 1
    paths = lines[len(head):end]
    if len(paths) < 2 or any(not p or p != p.strip() or "\t" in p for p in paths):
        return None
    return Listing(head, paths, lines[end:])


# where an agent tells its model the folder it runs in: Claude Code's environment section, Codex's environment_context
_FOLDER = re.compile(r"Primary working directory: ([^\n]+?)(?: \(was [^\n]*\))?$|<cwd>([^<\n]+)</cwd>", re.M)


def working_folder(dialect: Dialect, body: Mapping[str, Any]) -> str | None:
    """The folder the request first tells its model the agent runs in (a grep's relative paths are read from it)."""
    stated = folders_stated(dialect, body)
    return stated[0][1] if stated else None


def folders_stated(dialect: Dialect, body: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(turn, folder) wherever the request tells its model the folder the agent runs in, oldest first: the system
    prompt (turn -1) and the turns before the model's first (Codex 0.169 sends its `<environment_context>` after up
    to five developer messages), then each `<environment_context>` Codex sends again when its cwd moves. A line
    naming no absolute folder (in a user's file, say) is passed over."""
    turns = dialect.turns(body) or []
    opening = sum(1 for _ in _opening(dialect, turns))
    stated = []
    for turn, value in [(-1, dialect.system(body)), *enumerate(turns)]:
        if turn >= opening and not _agents_own(dialect, value):
            continue
        texts = [text for text in texts_in(value) if turn < opening or _CONTEXT in text]
        folder = next((f for text in texts for m in _FOLDER.finditer(text)
                       if (f := usable_folder((m.group(1) or m.group(2)).strip())) is not None), None)
        if folder is not None:
            stated.append((turn, folder))
    return stated


def _folder_at(stated: list[tuple[int, str]], turn: int) -> str | None:
    """The folder in force at `turn`: the latest stated before it (a result's folder never changes as the
    conversation grows, so neither does its cut)."""
    return next((folder for at, folder in reversed(stated) if at < turn), None)


_OPENING_ROLES = ("system", "developer", "user")
_CONTEXT = "<environment_context>"


def _agents_own(dialect: Dialect, turn: Any) -> bool:
    """A turn the agent (or its user) wrote, not the model and not a tool's result."""
    return isinstance(turn, dict) and turn.get("role") in _OPENING_ROLES and not dialect.recognizes(turn)


def _opening(dialect: Dialect, turns: list[Any]) -> Iterator[Any]:
    """The conversation's turns before the model's first: what the agent states before any work (any item without
    one of these roles, the model's reasoning or a call, ends it)."""
    for turn in turns:
        if not _agents_own(dialect, turn):
            return
        yield turn


def texts_in(value: Any) -> Iterator[str]:
    """Every string in a request body (or a part of one), in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_in(item)


def unmarked(value: Any) -> Any:
    """The value without `cache_control` markers: clients (and proxies) move them along a conversation as it
    grows, without changing what the provider caches."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value
