"""OpenAI Chat Completions (`/v1/chat/completions`), named `openai` as `/v1/context/compact` names it: a tool result
is a `tool` message answering the `tool_calls` entry of the same id; the format has no error flag. The system prompt
is a turn (a `system` or `developer` message), the history the body's `messages`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..intent import own_words
from .base import Call, Name, ToolCall, ToolInput, ToolResult, dicts, json_object, tool_name

_TEXT = ("text",)


class Chat:
    name: Name = "openai"

    def recognizes(self, turn: Mapping[str, Any]) -> bool:
        return turn.get("role") == "tool" or "tool_calls" in turn

    def turns(self, body: Mapping[str, Any]) -> list[Any] | None:
        value = body.get("messages")
        return value if isinstance(value, list) else None

    def with_turns(self, body: Mapping[str, Any], turns: list[Any]) -> dict[str, Any]:
        return {**body, "messages": turns}

    def system(self, body: Mapping[str, Any]) -> Any:  # noqa: ARG002 - the protocol's
        return None

    def turn_tools(self, body: Mapping[str, Any]) -> list[Any] | None:  # noqa: ARG002 - the protocol's
        return None

    def results(self, turns: Sequence[Any]) -> Iterator[ToolResult]:
        calls: dict[str, Call] = {}
        request = ""
        for i, message in dicts(turns):
            role = message.get("role")
            said = own_words(message.get("content"), _TEXT) if role == "assistant" else ""
            for entry, function in _functions(message):
                calls[str(entry.get("id"))] = _call(function, said, request)
            if role == "user":
                request = own_words(message.get("content"), _TEXT) or request
            elif role == "tool":
                yield ToolResult(turn=i, block=None, call=calls.get(str(message.get("tool_call_id"))),
                                 own_name=tool_name(message.get("name")), request=request, flagged=None,
                                 holder=message, key="content", text_types=_TEXT)

    def inputs(self, turns: Sequence[Any]) -> Iterator[ToolInput]:
        """Each call's `arguments`, a JSON text: an object put in its place is written as JSON text too."""
        for i, message in dicts(turns):
            for _, function in _functions(message):
                if isinstance(function.get("arguments"), str):
                    yield ToolInput(turn=i, block=None, call=_call(function, "", ""), text=function["arguments"],
                                    put=_arguments_setter(function))

    def tool_definition(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}

    def streamed_answer(self, events: list[Any]) -> dict[str, Any]:
        content: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        for event in events:
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    content.append(delta["content"])
                for entry in delta.get("tool_calls") or []:
                    call = calls.setdefault(entry.get("index", 0), {"id": "", "type": "function",
                                                                    "function": {"name": "", "arguments": ""}})
                    call["id"] = entry.get("id") or call["id"]
                    function = entry.get("function") or {}
                    call["function"]["name"] += function.get("name") or ""
                    call["function"]["arguments"] += function.get("arguments") or ""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return {"choices": [{"message": message}]}

    def answer_calls(self, answer: dict[str, Any]) -> list[ToolCall]:
        message = (answer.get("choices") or [{}])[0].get("message") or {}
        return [(str(c.get("id")), str(c["function"].get("name")), json_object(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []]

    def continued(self, body: Mapping[str, Any], answer: dict[str, Any], results: list[tuple[str, str]]
                  ) -> dict[str, Any]:
        message = answer["choices"][0]["message"]
        replies = [{"role": "tool", "tool_call_id": i, "content": text} for i, text in results]
        return {**body, "messages": [*body["messages"], {k: v for k, v in message.items() if v is not None},
                                     *replies]}

    def unreachable(self, message: str) -> dict[str, Any]:
        return openai_unreachable(message)


CHAT = Chat()


def openai_unreachable(message: str) -> dict[str, Any]:
    """The upstream could not be reached, in OpenAI's error shape (Chat Completions' and Responses' alike)."""
    return {"error": {"message": message, "type": "upstream_unreachable", "param": None, "code": None}}


def _functions(message: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(entry, its function) for each of a message's `tool_calls`."""
    for _, entry in dicts(message.get("tool_calls")):
        function = entry.get("function")
        if isinstance(function, dict):
            yield entry, function


def _arguments_setter(function: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda value: function.__setitem__("arguments", json.dumps(value, ensure_ascii=False))


def _call(function: dict[str, Any], said: str, request: str) -> Call:
    raw = function.get("arguments")
    return Call(tool=tool_name(function.get("name")), arguments=json_object(raw), raw=raw, said=said,
                request=request)
