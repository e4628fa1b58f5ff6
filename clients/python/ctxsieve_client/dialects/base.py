"""What a dialect is: one model API's wire format, read and written. It finds the tool results of a history with the
call that asked for each and the words before it, says where the history, the system prompt and the tools are, and
writes what the proxy adds (its own tools, the model's answer with their results, an error in the API's shape).

Readers are pure: the same turns give the same results in the same order. A result is written back in place (its
`put`): a caller that must keep the original reads a copy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Name = Literal["anthropic", "openai", "responses"]  # as `/v1/context/compact` names them
# the texts that make a result an error in a format without an error flag (the proxy and compaction read them alike)
ERROR_STARTS = ("Traceback (most recent call last):", "Error", "error:", "Exception")
ToolCall = tuple[str, str, dict[str, Any]]  # (call id, tool, arguments) of a model's answer


@dataclass(frozen=True, kw_only=True)
class Call:
    """A tool call in the history, with the words before it."""

    tool: str | None  # None: the call names no tool
    arguments: dict[str, Any]  # its JSON object; a free-form input (a Responses custom tool's) as {"input": text}
    raw: Any  # the arguments as the format carries them
    said: str  # the assistant's own words before the call
    request: str  # the latest user request before it


@dataclass(frozen=True, kw_only=True, eq=False)
class ToolResult:
    """One tool result in the history, where it is and how to write other content in its place."""

    turn: int  # its index in the history
    block: int | None  # its content block (Anthropic), None when the result is a turn of its own
    call: Call | None  # the call that asked for it, None when the history does not hold it
    own_name: str | None  # the tool the result names itself (a Chat Completions tool message's `name`)
    request: str  # the latest user request before the result
    flagged: bool | None  # the format's error flag (Anthropic's `is_error`); None: the format has none
    holder: dict[str, Any] = field(repr=False)
    key: str  # holder[key] is the result's content
    text_types: tuple[str, ...]  # the types of its content's text parts

    @property
    def tool(self) -> str | None:
        return self.call.tool if self.call is not None else self.own_name

    def parts(self) -> Iterator[tuple[str, Callable[[str], None]]]:
        """(text, put) for each text part: the content itself when it is a string. Other parts (an image) and the
        keys beside a part's text (`cache_control`) are never touched."""
        return text_parts(self.holder.get(self.key), self.text_types, self.holder, self.key)

    def text(self) -> str | None:
        """The whole content when it is text only (a string, or text parts joined by lines); None otherwise."""
        content = self.holder.get(self.key)
        if isinstance(content, str):
            return content
        if isinstance(content, list) and content and all(isinstance(b, dict) and b.get("type") in self.text_types
                                                         for b in content):
            return "\n".join(str(b.get("text", "")) for b in content)
        return None

    def put(self, text: str) -> None:
        """The whole content replaced by one text."""
        self.holder[self.key] = text


@dataclass(frozen=True, kw_only=True)
class ToolInput:
    """A tool call's input as sent (an agent's written file, say), and how to put an object in its place."""

    turn: int
    block: int | None
    call: Call
    text: str
    put: Callable[[dict[str, Any]], None]


class Dialect(Protocol):
    @property
    def name(self) -> Name: ...

    def recognizes(self, turn: Mapping[str, Any]) -> bool:
        """The turn is a tool call or result only this format writes so (`detect` asks in its order)."""
        ...

    def turns(self, body: Mapping[str, Any]) -> list[Any] | None:
        """The request's history (messages, or input items); None when it has no list of them."""
        ...

    def with_turns(self, body: Mapping[str, Any], turns: list[Any]) -> dict[str, Any]: ...

    def system(self, body: Mapping[str, Any]) -> Any:
        """The system prompt outside the turns (None in a format that keeps it among them)."""
        ...

    def turn_tools(self, body: Mapping[str, Any]) -> list[Any] | None:
        """Tools offered among the turns rather than in `tools` (Codex's `additional_tools` items); None: no such
        item."""
        ...

    def results(self, turns: Sequence[Any]) -> Iterator[ToolResult]:
        """Every tool result of the history, oldest first."""
        ...

    def inputs(self, turns: Sequence[Any]) -> Iterator[ToolInput]:
        """Every tool call's input that can be replaced by an object (none in a format that does not allow it)."""
        ...

    def tool_definition(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]: ...

    def streamed_answer(self, events: list[Any]) -> dict[str, Any]:
        """The model's answer as a non-streamed one, from its stream's events (raises on an answer it cannot read)."""
        ...

    def answer_calls(self, answer: dict[str, Any]) -> list[ToolCall]: ...

    def continued(self, body: Mapping[str, Any], answer: dict[str, Any], results: list[tuple[str, str]]
                  ) -> dict[str, Any]:
        """The request again with the model's answer and the (call id, text) results of its calls after it."""
        ...

    def unreachable(self, message: str) -> dict[str, Any]:
        """The proxy's answer when the upstream cannot be reached: an error in the API's own shape."""
        ...


def json_object(raw: Any) -> dict[str, Any]:
    """Arguments as an object: the object itself or the JSON text of one; {} for anything else."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def text_parts(content: Any, text_types: tuple[str, ...], holder: dict[str, Any], key: str
               ) -> Iterator[tuple[str, Callable[[str], None]]]:
    if isinstance(content, str):
        yield content, lambda shown: holder.__setitem__(key, shown)
        return
    if not isinstance(content, list):
        return
    for part in content:
        if isinstance(part, dict) and part.get("type") in text_types and isinstance(part.get("text"), str):
            yield part["text"], (lambda p: lambda shown: p.__setitem__("text", shown))(part)


def dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for each object of a list (nothing when it is not one)."""
    for i, item in enumerate(value if isinstance(value, list) else []):
        if isinstance(item, dict):
            yield i, item


def tool_name(value: Any) -> str | None:
    return str(value) if value else None
