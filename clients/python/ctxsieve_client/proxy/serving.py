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

from ..client import CtxsieveError
from ..dialects import Dialect
from ..partial import Partial, fetch_note, render_cut
from ..ref_tools import BY_NAME, FILTER_REF, REF_TOOLS
from .formats import dumps, offers_tools
from .projection import Send

M = TypeVar("M")
MAX_ROUNDS = 4
Upstream = Callable[[bytes], Awaitable[httpx.Response]]


def definitions(dialect: Dialect) -> list[dict[str, Any]]:
    return [dialect.tool_definition(t.name, t.description, t.schema()) for t in REF_TOOLS]


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
            if answer is None or not calls or any(tool not in BY_NAME for _, tool, _ in calls):
                return response
            results = [(call_id, await self._run(tool, arguments, session)) for call_id, tool, arguments in calls]
            body = dialect.continued(body, answer, results)
        return response

    async def _run(self, tool: str, arguments: dict[str, Any], session: str) -> str:
        """A call's answer as the model reads it; a refused call answers with the service's reason."""
        ref_tool = BY_NAME[tool]
        cut = self._partials.get(ref_tool.arguments(arguments)["ref"])  # an agent's cut of what the ref holds
        try:
            answer = await self._send(replace(ref_tool.call(arguments), session=session))
        except CtxsieveError as exc:
            return f"Error: {exc.status} {exc.type}: {exc.message}"
        if cut is None:
            return ref_tool.answer(answer)
        if tool == FILTER_REF.name:  # only the numbers that can be placed in the output
            return render_cut(answer, cut, answer.placeholder)
        return f"{fetch_note(cut, answer.line_start, answer.line_end)}\n{answer.text}"  # the kept text's own lines


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
