"""`--serve-tools`: the proxy offers the model `filter_ref` and `fetch_ref` itself, for a client without MCP.

The two definitions are added at the end of a request's tools (only a request that offers tools: an agent that
can take a tool's answer; a Responses request offering them in an `additional_tools` item, as Codex does, gets
them as its top-level tools), the same bytes on every request so the prompt cache keeps hitting. When the model's
answer calls only these two, the proxy runs the calls against the service, appends the answer and the results to
the request, and asks the upstream again (up to MAX_ROUNDS), so the client sees one answer: the last. An answer
that also calls one of the client's tools goes to the client as it is (the client answers its own tools; it
answers ours as unknown, and the model sees that). A streamed answer is held until it is whole, as the proxy
cannot know before its end whether it calls one of these; the client then gets it as the upstream streamed it.
An upstream error is passed on as it came.

The fetched text is not in the client's history: a later turn that needs it again asks again. A ref holding a text an
agent cut before ctxsieve saw it (the projector's `partials`) is answered with what its lines are: a fetched part
after a line saying they are the kept text's lines (and which of the output's they are, where that is known), a
re-filter with only the numbers that can be placed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import httpx

from ..client import CtxsieveError, Requests
from ..models import FilterResult, RefContent
from ..partial import Partial, fetch_note, render_cut
from ..wrap import render_result
from .formats import Format, dumps, offers_tools
from .projection import Send

M = TypeVar("M")
MAX_ROUNDS = 4
OURS = ("filter_ref", "fetch_ref")
_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "filter_ref": ("Show more of a tool output that ctxsieve held back (its placeholder names the ref): the parts "
                   "of the stored output that answer the query.",
                   {"type": "object", "properties": {
                       "ref": {"type": "string", "description": "the ref in the placeholder, src_..."},
                       "query": {"type": "string", "description": "what you need from that output now"},
                       "max_tokens": {"type": "integer", "description": "at most this many tokens (default 1500)"}},
                    "required": ["ref", "query"]}),
    "fetch_ref": ("Fetch a tool output that ctxsieve held back, whole or a part: lines \"A-B\" (its own line "
                  "numbers), or chunk N with `window` chunks each side.",
                  {"type": "object", "properties": {
                      "ref": {"type": "string", "description": "the ref in the placeholder, src_..."},
                      "lines": {"type": "string", "description": "\"A-B\": those lines of the output"},
                      "chunk": {"type": "integer"}, "window": {"type": "integer"}},
                   "required": ["ref"]}),
}
Upstream = Callable[[bytes], Awaitable[httpx.Response]]
ToolCall = tuple[str, str, dict[str, Any]]  # (call id, tool, arguments)


def definitions(fmt: Format) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, (description, schema) in _SCHEMAS.items():
        if fmt == "anthropic":
            out.append({"name": name, "description": description, "input_schema": schema})
        elif fmt == "chat":
            out.append({"type": "function", "function": {"name": name, "description": description,
                                                         "parameters": schema}})
        else:
            out.append({"type": "function", "name": name, "description": description, "parameters": schema,
                        "strict": False})
    return out


def offered(fmt: Format, body: dict[str, Any]) -> dict[str, Any]:
    """The request with the two tools at the end of its tools (when it offers tools and not already these). A
    Responses request may offer its tools in an `additional_tools` input item instead (Codex does): then the two
    are its top-level tools."""
    if not offers_tools(fmt, body):
        return body
    given = body.get("tools")
    tools = given if isinstance(given, list) else []
    names = {t.get("name") or (t.get("function") or {}).get("name") for t in tools if isinstance(t, dict)}
    return {**body, "tools": [*tools, *(d for d in definitions(fmt) if _name(d) not in names)]}


def _name(definition: dict[str, Any]) -> str:
    return str(definition.get("name") or definition["function"]["name"])


class ToolServer:
    def __init__(self, send: Send[Any], partials: Mapping[str, Partial] | None = None) -> None:
        self._send = send
        self._partials = partials if partials is not None else {}  # ref -> the agent's cut of what it holds

    async def answer(self, fmt: Format, body: dict[str, Any], session: str, upstream: Upstream) -> httpx.Response:
        """The upstream's last answer, read whole, after answering up to MAX_ROUNDS of calls of the two tools."""
        body = offered(fmt, body)
        for _ in range(MAX_ROUNDS):
            response = await upstream(dumps(body))
            answer = _answer_of(fmt, response, body.get("stream") is True) if response.status_code < 400 else None
            calls = _calls(fmt, answer) if answer is not None else []
            if answer is None or not calls or any(tool not in OURS for _, tool, _ in calls):
                return response
            results = [(call_id, await self._run(tool, arguments, session)) for call_id, tool, arguments in calls]
            body = _continued(fmt, body, answer, results)
        return response

    async def _run(self, tool: str, arguments: dict[str, Any], session: str) -> str:
        """A call's answer as the model reads it; a refused call answers with the service's reason."""
        ref = str(arguments.get("ref", ""))
        try:
            if tool == "filter_ref":
                budget = arguments.get("max_tokens") if isinstance(arguments.get("max_tokens"), int) else 1500
                found: FilterResult = await self._send(replace(Requests.refilter(
                    ref, str(arguments.get("query") or ""), k=8, max_tokens=budget, placeholder="tools"),
                    session=session))
                cut = self._partials.get(ref)
                return render_cut(found, cut, found.placeholder) if cut else render_result(found)
            chunk = arguments.get("chunk") if isinstance(arguments.get("chunk"), int) else None
            window = arguments.get("window") if isinstance(arguments.get("window"), int) else 0
            lines = arguments.get("lines") if isinstance(arguments.get("lines"), str) else None
            part: RefContent = await self._send(replace(Requests.fetch_ref(
                ref, chunk=chunk, window=window if chunk is not None else None, lines=lines), session=session))
            cut = self._partials.get(ref)  # a text an agent cut: its own line numbers are not the output's
            return f"{fetch_note(cut, part.line_start, part.line_end)}\n{part.text}" if cut else part.text
        except CtxsieveError as exc:
            return f"Error: {exc.status} {exc.type}: {exc.message}"


def _answer_of(fmt: Format, response: httpx.Response, streamed: bool) -> dict[str, Any] | None:
    """The model's answer, whole: the JSON body, or the stream's events put together."""
    try:
        if not streamed:
            value = response.json()
            return value if isinstance(value, dict) else None
        events = _events(response.text)
        return {"anthropic": _anthropic_stream, "chat": _chat_stream, "responses": _responses_stream}[fmt](events)
    except (ValueError, KeyError, TypeError, IndexError):
        return None  # not an answer the proxy can read: the client gets it as it is


def _events(text: str) -> list[Any]:
    out = []
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
        if data and data != "[DONE]":
            out.append(json.loads(data))
    return out


def _anthropic_stream(events: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = copy.deepcopy(event["message"])
            message["content"] = []
        elif kind == "content_block_start":
            message["content"].append(copy.deepcopy(event["content_block"]))
        elif kind == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            if delta.get("type") == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta.get("partial_json", "")
            elif delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif delta.get("type") == "signature_delta":
                block["signature"] = delta.get("signature", "")
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
    for index, raw in partial.items():
        message["content"][index]["input"] = json.loads(raw) if raw else {}
    return message


def _chat_stream(events: list[Any]) -> dict[str, Any]:
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


def _responses_stream(events: list[Any]) -> dict[str, Any]:
    done = next(e for e in reversed(events) if e.get("type") == "response.completed")
    response: dict[str, Any] = done["response"]
    return response


def _calls(fmt: Format, answer: dict[str, Any]) -> list[ToolCall]:
    if fmt == "anthropic":
        return [(str(b.get("id")), str(b.get("name")), _parsed(b.get("input")))
                for b in answer.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
    if fmt == "chat":
        message = (answer.get("choices") or [{}])[0].get("message") or {}
        return [(str(c.get("id")), str(c["function"].get("name")), _parsed(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []]
    return [(str(i.get("call_id")), str(i.get("name")), _parsed(i.get("arguments")))
            for i in answer.get("output") or [] if isinstance(i, dict) and i.get("type") in (
                "function_call", "custom_tool_call")]


def _parsed(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _continued(fmt: Format, body: dict[str, Any], answer: dict[str, Any], results: list[tuple[str, str]]
               ) -> dict[str, Any]:
    """The request again, with the model's answer and the calls' results after it."""
    if fmt == "anthropic":
        turn = {"role": "assistant", "content": answer["content"]}
        reply = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": text}
                                             for i, text in results]}
        return {**body, "messages": [*body["messages"], turn, reply]}
    if fmt == "chat":
        message = answer["choices"][0]["message"]
        replies = [{"role": "tool", "tool_call_id": i, "content": text} for i, text in results]
        return {**body, "messages": [*body["messages"], {k: v for k, v in message.items() if v is not None},
                                     *replies]}
    given = body.get("input")
    items = given if isinstance(given, list) else [{"role": "user", "content": given}]
    outputs = [{"type": "function_call_output", "call_id": i, "output": text} for i, text in results]
    return {**body, "input": [*items, *answer.get("output", []), *outputs]}
