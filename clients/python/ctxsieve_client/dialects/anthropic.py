"""Anthropic Messages (`/v1/messages`): a tool result is a `tool_result` block of a user message, answering the
`tool_use` block of the same id in the assistant message before; `is_error: true` marks an error. The system
prompt is the body's `system`, the history its `messages`."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..intent import own_words
from .base import Call, Name, ToolCall, ToolInput, ToolResult, dicts, json_object, tool_name

_TEXT = ("text",)


class Anthropic:
    name: Name = "anthropic"

    def recognizes(self, turn: Mapping[str, Any]) -> bool:
        return any(b.get("type") in ("tool_use", "tool_result") for _, b in dicts(turn.get("content")))

    def turns(self, body: Mapping[str, Any]) -> list[Any] | None:
        value = body.get("messages")
        return value if isinstance(value, list) else None

    def with_turns(self, body: Mapping[str, Any], turns: list[Any]) -> dict[str, Any]:
        return {**body, "messages": turns}

    def system(self, body: Mapping[str, Any]) -> Any:
        return body.get("system")

    def turn_tools(self, body: Mapping[str, Any]) -> list[Any] | None:  # noqa: ARG002 - the protocol's
        return None

    def results(self, turns: Sequence[Any]) -> Iterator[ToolResult]:
        calls: dict[str, Call] = {}
        request = ""
        for i, message in dicts(turns):
            content = message.get("content")
            said = own_words(content, _TEXT) if message.get("role") == "assistant" else ""
            if message.get("role") == "user":  # (not a system message among the turns)
                request = own_words(content, _TEXT) or request
            for b, block in dicts(content):
                if block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = _call(block, said, request)
                elif block.get("type") == "tool_result":
                    yield ToolResult(turn=i, block=b, call=calls.get(str(block.get("tool_use_id"))), own_name=None,
                                     request=request, flagged=block.get("is_error") is True, holder=block,
                                     key="content", text_types=_TEXT)

    def inputs(self, turns: Sequence[Any]) -> Iterator[ToolInput]:
        """Each `tool_use` block's `input` (an object in, an object out)."""
        for i, message in dicts(turns):
            for b, block in dicts(message.get("content")):
                if block.get("type") == "tool_use":
                    call = _call(block, "", "")
                    yield ToolInput(turn=i, block=b, call=call, text=json.dumps(call.arguments, ensure_ascii=False),
                                    put=_setter(block, "input"))

    def tool_definition(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "description": description, "input_schema": schema}

    def streamed_answer(self, events: list[Any]) -> dict[str, Any]:
        message: dict[str, Any] = {}
        partial: dict[int, str] = {}  # a tool_use block's input as its JSON arrives
        for event in events:
            kind = event.get("type")
            if kind == "message_start":
                message = copy.deepcopy(event["message"])
                message["content"] = []
            elif kind == "content_block_start":
                message["content"].append(copy.deepcopy(event["content_block"]))
            elif kind == "content_block_delta":
                _apply_delta(message["content"][event["index"]], event["delta"], partial, event["index"])
            elif kind == "message_delta":
                message.update(event.get("delta") or {})
        for index, raw in partial.items():
            message["content"][index]["input"] = json.loads(raw) if raw else {}
        return message

    def answer_calls(self, answer: dict[str, Any]) -> list[ToolCall]:
        return [(str(b.get("id")), str(b.get("name")), json_object(b.get("input")))
                for b in answer.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]

    def continued(self, body: Mapping[str, Any], answer: dict[str, Any], results: list[tuple[str, str]]
                  ) -> dict[str, Any]:
        turn = {"role": "assistant", "content": answer["content"]}
        reply = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": text}
                                             for i, text in results]}
        return {**body, "messages": [*body["messages"], turn, reply]}

    def unreachable(self, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "api_error", "message": message}}


ANTHROPIC = Anthropic()


def _call(block: dict[str, Any], said: str, request: str) -> Call:
    raw = block.get("input")
    return Call(tool=tool_name(block.get("name")), arguments=json_object(raw), raw=raw, said=said, request=request)


def _setter(holder: dict[str, Any], key: str) -> Callable[[dict[str, Any]], None]:
    return lambda value: holder.__setitem__(key, value)


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], partial: dict[int, str], index: int) -> None:
    if delta.get("type") == "input_json_delta":
        partial[index] = partial.get(index, "") + delta.get("partial_json", "")
    elif delta.get("type") == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif delta.get("type") == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif delta.get("type") == "signature_delta":
        block["signature"] = delta.get("signature", "")
