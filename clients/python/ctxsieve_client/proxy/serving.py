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

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import httpx

from ..client import CtxsieveError, Requests
from ..dialects import Dialect
from ..models import FilterResult, RefContent
from ..partial import Partial, fetch_note, render_cut
from ..wrap import render_result
from .formats import dumps, offers_tools
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


def definitions(dialect: Dialect) -> list[dict[str, Any]]:
    return [dialect.tool_definition(name, description, schema) for name, (description, schema) in _SCHEMAS.items()]


def offered(dialect: Dialect, body: dict[str, Any]) -> dict[str, Any]:
    """The request with the two tools at the end of its tools (when it offers tools and not already these). A
    Responses request may offer its tools in an `additional_tools` input item instead (Codex does): then the two
    are its top-level tools."""
    if not offers_tools(dialect, body):
        return body
    given = body.get("tools")
    tools = given if isinstance(given, list) else []
    names = {t.get("name") or (t.get("function") or {}).get("name") for t in tools if isinstance(t, dict)}
    return {**body, "tools": [*tools, *(d for d in definitions(dialect) if _name(d) not in names)]}


def _name(definition: dict[str, Any]) -> str:
    return str(definition.get("name") or definition["function"]["name"])


class ToolServer:
    def __init__(self, send: Send[Any], partials: Mapping[str, Partial] | None = None) -> None:
        self._send = send
        self._partials = partials if partials is not None else {}  # ref -> the agent's cut of what it holds

    async def answer(self, dialect: Dialect, body: dict[str, Any], session: str, upstream: Upstream
                     ) -> httpx.Response:
        """The upstream's last answer, read whole, after answering up to MAX_ROUNDS of calls of the two tools."""
        body = offered(dialect, body)
        for _ in range(MAX_ROUNDS):
            response = await upstream(dumps(body))
            answer = _answer_of(dialect, response, body.get("stream") is True) if response.status_code < 400 else None
            calls = dialect.answer_calls(answer) if answer is not None else []
            if answer is None or not calls or any(tool not in OURS for _, tool, _ in calls):
                return response
            results = [(call_id, await self._run(tool, arguments, session)) for call_id, tool, arguments in calls]
            body = dialect.continued(body, answer, results)
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


def _answer_of(dialect: Dialect, response: httpx.Response, streamed: bool) -> dict[str, Any] | None:
    """The model's answer, whole: the JSON body, or the stream's events put together."""
    try:
        if not streamed:
            value = response.json()
            return value if isinstance(value, dict) else None
        return dialect.streamed_answer(_events(response.text))
    except (ValueError, KeyError, TypeError, IndexError):
        return None  # not an answer the proxy can read: the client gets it as it is


def _events(text: str) -> list[Any]:
    out = []
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
        if data and data != "[DONE]":
            out.append(json.loads(data))
    return out
