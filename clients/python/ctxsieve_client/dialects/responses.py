"""OpenAI Responses (`/v1/responses`): a tool result is a `function_call_output` / `custom_tool_call_output` item
answering the `function_call` / `custom_tool_call` item of the same `call_id`; the format has no error flag. The
system prompt is the body's `instructions`, the history its `input` items (Codex also offers tools among them, in
`additional_tools` items)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..intent import own_words
from .base import Call, Name, ToolCall, ToolInput, ToolResult, dicts, json_object, tool_name
from .chat import openai_unreachable

CALLS = ("function_call", "custom_tool_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")
_OUTPUT_TEXT = ("input_text", "output_text")


class Responses:
    name: Name = "responses"

    def recognizes(self, turn: Mapping[str, Any]) -> bool:
        return turn.get("type") in CALLS + OUTPUTS

    def turns(self, body: Mapping[str, Any]) -> list[Any] | None:
        value = body.get("input")
        return value if isinstance(value, list) else None

    def with_turns(self, body: Mapping[str, Any], turns: list[Any]) -> dict[str, Any]:
        return {**body, "input": turns}

    def system(self, body: Mapping[str, Any]) -> Any:
        return body.get("instructions")

    def turn_tools(self, body: Mapping[str, Any]) -> list[Any] | None:
        items = [item for _, item in dicts(body.get("input")) if item.get("type") == "additional_tools"]
        return [tool for item in items for tool in item.get("tools") or []] if items else None

    def results(self, turns: Sequence[Any]) -> Iterator[ToolResult]:
        calls: dict[str, Call] = {}
        request = said = ""  # the assistant's words since the latest user request
        for i, item in dicts(turns):
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") == "user":
                request, said = own_words(item.get("content"), ("input_text",)) or request, ""
            elif kind == "message" and item.get("role") == "assistant":
                said = " ".join(filter(None, [said, own_words(item.get("content"), ("output_text",))]))
            elif kind in CALLS:
                raw = item.get("arguments") if kind == "function_call" else item.get("input")
                arguments = json_object(raw) or ({"input": raw} if isinstance(raw, str) else {})
                calls[str(item.get("call_id"))] = Call(tool=tool_name(item.get("name")), arguments=arguments,
                                                       raw=raw, said=said, request=request)
            elif kind in OUTPUTS:
                yield ToolResult(turn=i, block=None, call=calls.get(str(item.get("call_id"))), own_name=None,
                                 request=request, flagged=None, holder=item, key="output", text_types=_OUTPUT_TEXT)

    def inputs(self, turns: Sequence[Any]) -> Iterator[ToolInput]:  # noqa: ARG002 - the protocol's
        """None: a call's input is not replaced in this format."""
        yield from ()

    def tool_definition(self, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "name": name, "description": description, "parameters": schema, "strict": False}

    def streamed_answer(self, events: list[Any]) -> dict[str, Any]:
        done = next(e for e in reversed(events) if e.get("type") == "response.completed")
        response: dict[str, Any] = done["response"]
        return response

    def answer_calls(self, answer: dict[str, Any]) -> list[ToolCall]:
        return [(str(i.get("call_id")), str(i.get("name")), json_object(i.get("arguments")))
                for i in answer.get("output") or [] if isinstance(i, dict) and i.get("type") in CALLS]

    def continued(self, body: Mapping[str, Any], answer: dict[str, Any], results: list[tuple[str, str]]
                  ) -> dict[str, Any]:
        given = body.get("input")
        items = given if isinstance(given, list) else [{"role": "user", "content": given}]
        outputs = [{"type": "function_call_output", "call_id": i, "output": text} for i, text in results]
        return {**body, "input": [*items, *answer.get("output", []), *outputs]}

    def unreachable(self, message: str) -> dict[str, Any]:
        return openai_unreachable(message)


RESPONSES = Responses()
