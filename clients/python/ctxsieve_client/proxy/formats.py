"""The three model APIs' request bodies as the proxy reads them: where the tool results are, the call that asked
for each, the words around it, and how to put other text back. Sans-IO and pure: the same body gives the same
results in the same order.

- Anthropic Messages (`/v1/messages`): `tool_result` blocks of user messages, their `tool_use` in the assistant
  message before; `is_error: true` marks an error.
- OpenAI Chat Completions (`/v1/chat/completions`): `tool` messages, their `tool_calls` entry.
- OpenAI Responses (`/v1/responses`): `function_call_output` / `custom_tool_call_output` items, their
  `function_call` / `custom_tool_call` item.

A result is cut text part by text part: a string result is one part, a list result's text parts are each one (an
image or any other part is never touched, nor the keys beside a part's text, such as `cache_control`). A text part
that is a command's result has only its output cut, and is an error when its exit code is not 0: a JSON object with
`exit_code` and a string `output` (Codex's `exec_command` inside its `exec`), or Codex's text form of the same
(`Chunk ID: ...`, `Wall time: ...`, `Process exited with code N`, ..., `Output:` and the output). In the OpenAI
formats, which have no error flag, a part that begins like an error (ERROR_STARTS, as `/v1/context/compact` reads
them) is one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..intent import own_words, step_intent

Format = Literal["anthropic", "chat", "responses"]
ERROR_STARTS = ("Traceback (most recent call last):", "Error", "error:", "Exception")
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


@dataclass(frozen=True)
class _Call:
    tool: str
    arguments: dict[str, Any]
    said: str  # the assistant's text before the call
    request: str  # the latest user request before it


def parts(fmt: Format, body: dict[str, Any]) -> list[Part]:
    """Every text part of every tool result in the body, oldest first."""
    if fmt == "anthropic":
        return list(_anthropic(body.get("messages")))
    if fmt == "chat":
        return list(_chat(body.get("messages")))
    return list(_responses(body.get("input")))


def dumps(body: Any) -> bytes:
    """One serialization for every body the proxy writes: the same projection always gives the same bytes."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def history(fmt: Format, body: Mapping[str, Any]) -> list[Any] | None:
    """The list of turns compaction works on (messages, or the Responses API's input items)."""
    value = body.get("input" if fmt == "responses" else "messages")
    return value if isinstance(value, list) else None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _text_parts(content: Any, text_types: tuple[str, ...], holder: dict[str, Any], key: str
                ) -> Iterator[tuple[str, Callable[[str], None]]]:
    """(text, put) for each text part of a result's content: the content itself when it is a string."""
    if isinstance(content, str):
        yield content, lambda shown: holder.__setitem__(key, shown)
        return
    if not isinstance(content, list):
        return
    for part in content:
        if isinstance(part, dict) and part.get("type") in text_types and isinstance(part.get("text"), str):
            yield part["text"], (lambda p: lambda shown: p.__setitem__("text", shown))(part)


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


def _emit(call: _Call, text: str, put: Callable[[str], None], flagged: bool,
          read_errors: bool) -> Part:
    """One part, a command's JSON result opened to its output; `read_errors`: the format has no error flag."""
    intent = step_intent(call.request, call.said, call.arguments)
    command = _command_output(text) or _codex_text_output(text)
    if command is not None:
        output, code, rebuild = command
        return Part(text=output, tool=call.tool, arguments=call.arguments, intent=intent,
                    is_error=flagged or code != 0, put=lambda shown: put(rebuild(shown)))
    is_error = flagged or (read_errors and (text.lstrip().startswith(ERROR_STARTS)
                                            or _EXIT_LINE.search(text[:500]) is not None))
    return Part(text=text, tool=call.tool, arguments=call.arguments, intent=intent, is_error=is_error, put=put)


def _anthropic(messages: Any) -> Iterator[Part]:
    calls: dict[str, _Call] = {}
    request = ""
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "assistant":
            said = own_words(content, ("text",))
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = _Call(str(block.get("name") or "tool"),
                                                        _arguments(block.get("input")), said, request)
            continue
        if message.get("role") == "user":  # (not a system message among the turns)
            request = own_words(content, ("text",)) or request
        for block in content if isinstance(content, list) else []:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            call = calls.get(str(block.get("tool_use_id")), _Call("tool", {}, "", request))
            for text, put in _text_parts(block.get("content"), ("text",), block, "content"):
                yield _emit(call, text, put, block.get("is_error") is True, read_errors=False)


def _chat(messages: Any) -> Iterator[Part]:
    calls: dict[str, _Call] = {}
    request = ""
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            said = own_words(message.get("content"), ("text",))
            for entry in message.get("tool_calls") or []:
                function = entry.get("function") if isinstance(entry, dict) else None
                if isinstance(function, dict):
                    calls[str(entry.get("id"))] = _Call(str(function.get("name") or "tool"),
                                                        _arguments(function.get("arguments")), said, request)
        elif role == "user":
            request = own_words(message.get("content"), ("text",)) or request
        elif role == "tool":
            call = calls.get(str(message.get("tool_call_id")), _Call("tool", {}, "", request))
            for text, put in _text_parts(message.get("content"), ("text",), message, "content"):
                yield _emit(call, text, put, False, read_errors=True)


_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _responses(items: Any) -> Iterator[Part]:
    calls: dict[str, _Call] = {}
    request = said = ""
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            request, said = own_words(item.get("content"), ("input_text",)) or request, ""
        elif kind == "message" and item.get("role") == "assistant":
            said = " ".join(filter(None, [said, own_words(item.get("content"), ("output_text",))]))
        elif kind in _CALLS:
            raw = item.get("arguments") if kind == "function_call" else item.get("input")
            arguments = _arguments(raw) or ({"input": raw} if isinstance(raw, str) else {})
            calls[str(item.get("call_id"))] = _Call(str(item.get("name") or "tool"), arguments, said, request)
        elif kind in _OUTPUTS:
            call = calls.get(str(item.get("call_id")), _Call("tool", {}, "", request))
            for text, put in _text_parts(item.get("output"), ("input_text", "output_text"), item, "output"):
                yield _emit(call, text, put, False, read_errors=True)


def tool_names(fmt: Format, body: Mapping[str, Any]) -> frozenset[str]:
    """The names of the tools the request offers: its tools, and a Responses request's `additional_tools` items
    (Codex's), namespaces opened."""
    items = body.get("input") if fmt == "responses" else None
    extra = [t for i in (items if isinstance(items, list) else [])
             if isinstance(i, dict) and i.get("type") == "additional_tools" for t in i.get("tools") or []]
    return frozenset(_names(body.get("tools"))) | frozenset(_names(extra))


def _names(tools: Any) -> Iterator[str]:
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            if isinstance(name, str):
                yield name
            yield from _names(tool.get("tools"))


def offers_tools(fmt: Format, body: Mapping[str, Any]) -> bool:
    """The request offers its model tools (in `tools`, or a Responses request's `additional_tools` item)."""
    tools = body.get("tools")
    items = body.get("input") if fmt == "responses" else None
    return bool(isinstance(tools, list) and tools) or (isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "additional_tools" for i in items))


_REF_TOOL = re.compile(r"(mcp__[A-Za-z0-9_-]+?__)(?:filter_ref|fetch_ref)\b")


def ref_tool_prefix(fmt: Format, body: Mapping[str, Any]) -> str:
    """How the client names ctxsieve's `fetch_ref` / `filter_ref` to its model (`mcp__ctxsieve__` when it runs
    `ctxsieve mcp` as its server `ctxsieve`), from the start of the request: its tools, system prompt and first
    turns, where clients list their tools, deferred ones included. "" when it offers them by their own names or
    not at all."""
    turns = history(fmt, body) or []
    start = json.dumps([body.get("tools"), body.get("system"), body.get("instructions"), turns[:4]],
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


def first_turn(fmt: Format, body: Mapping[str, Any]) -> str:
    """What names a conversation without any state the client sends: its system prompt and first turn (a later
    request of the same conversation repeats both; another conversation differs in one)."""
    turns = history(fmt, body) or [body.get("input")]
    system = body.get("system") if fmt == "anthropic" else body.get("instructions")
    first = next((t for t in turns if not (isinstance(t, dict) and t.get("role") in ("system", "developer"))),
                 None)
    preamble = [t for t in turns if isinstance(t, dict) and t.get("role") in ("system", "developer")][:1]
    return json.dumps(unmarked([system, preamble, first]), ensure_ascii=False, sort_keys=True, default=str)


def unmarked(value: Any) -> Any:
    """The value without `cache_control` markers: clients (and proxies) move them along a conversation as it
    grows, without changing what the provider caches."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value
