"""An old server's questions to a 2026-07-28 client, relayed as input-required rounds.

A session-era server asks its client mid-call (an elicitation, sampling or roots request); a 2026-07-28 client
cannot be asked that way (the era has no server-to-client requests) but answers an `InputRequiredResult`. So
when a server's session speaks the handshake while its client speaks 2026-07-28, the call goes on in a task of
its own; a question it asks ends the client's request with an input-required round (`input_requests` holding
the server's request as it was sent, `request_state` naming the call), and the client's retry, carrying the
answer, hands it to the waiting server, whose call then goes on to its result or to its next question. A call
whose question is not answered within the server's `timeout_s` is ended. (The other way round needs nothing of
ours: a session-era client's upstream session shakes hands too, and the proxy forwards the server's requests.)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as mt
from fastmcp.tools.base import InputRequiredToolResult, ToolResult

STATE_PREFIX = "ctxsieve-ask:"


@dataclass
class _Question:
    key: str
    request: Any  # an mt.InputRequest: what the server sent
    answer: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class _Call:
    task: asyncio.Task[ToolResult]
    questions: asyncio.Queue[_Question] = field(default_factory=asyncio.Queue)
    waiting: _Question | None = None
    numbers: itertools.count[int] = field(default_factory=itertools.count)


class Asking:
    """The calls of 2026-07-28 clients whose session-era servers are waiting for an answer."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}
        self._asking: dict[int, _Call] = {}  # upstream client (by id) -> the call it is running for a modern client

    async def start(self, client: Any, call: Callable[[], Awaitable[ToolResult]], timeout_s: float) -> ToolResult:
        """Run a call whose server may ask; its result, or the round that asks the client its first question."""
        state = STATE_PREFIX + uuid.uuid4().hex
        holder: dict[str, _Call] = {}

        async def running() -> ToolResult:
            self._asking[id(client)] = holder["call"]
            try:
                return await call()
            finally:
                self._asking.pop(id(client), None)

        holder["call"] = self._calls[state] = _Call(task=asyncio.get_running_loop().create_task(running()))
        return await self._next(state, timeout_s)

    def knows(self, state: str | None) -> bool:
        return state is not None and state in self._calls

    async def resume(self, state: str, answers: dict[str, Any] | None, timeout_s: float) -> ToolResult:
        """The client's retry: its answer to the waiting question, then the call's result or next question."""
        call = self._calls[state]
        question = call.waiting
        if question is not None and answers and question.key in answers and not question.answer.done():
            question.answer.set_result(answers[question.key])
            call.waiting = None
        return await self._next(state, timeout_s)

    async def _next(self, state: str, timeout_s: float) -> ToolResult:
        call = self._calls[state]
        if call.waiting is not None:  # retried without the answer: ask again
            return _round(call.waiting, state)
        asked = asyncio.ensure_future(call.questions.get())
        done, _ = await asyncio.wait({call.task, asked}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if asked in done:
            call.waiting = asked.result()
            return _round(call.waiting, state)
        asked.cancel()
        del self._calls[state]
        if call.task in done:
            return call.task.result()
        call.task.cancel()
        raise TimeoutError(f"no answer or result within {timeout_s:g} s")

    async def ask(self, client: Any, request: Any) -> Any | None:
        """A server's request over this upstream client: the client's answer when a modern call is running on
        it, else None (the proxy forwards it to a session-era client as before)."""
        call = self._asking.get(id(client))
        if call is None:
            return None
        question = _Question(key=f"q{next(call.numbers)}", request=request)
        await call.questions.put(question)
        return await question.answer

    def relay_through(self, client: Any) -> None:
        """Route the upstream client's elicitation, sampling and roots requests through `ask`."""
        kwargs = client._session_kwargs

        def relayed(name: str, request: Callable[..., Any]) -> None:
            forward = kwargs.get(name)

            async def callback(context: Any, *params: Any) -> Any:
                answer = await self.ask(client, request(*params))
                if answer is not None:
                    return answer
                if forward is None:
                    return mt.ErrorData(code=mt.METHOD_NOT_FOUND, message="the client cannot answer this")
                return await forward(context, *params)

            kwargs[name] = callback

        relayed("elicitation_callback", lambda params: mt.ElicitRequest(params=params))
        relayed("sampling_callback", lambda params: mt.CreateMessageRequest(params=params))
        relayed("list_roots_callback", lambda: mt.ListRootsRequest())

    async def close(self) -> None:
        for call in self._calls.values():
            call.task.cancel()
            with contextlib.suppress(BaseException):
                await call.task
        self._calls.clear()


def _round(question: _Question, state: str) -> ToolResult:
    return InputRequiredToolResult(mt.InputRequiredResult(input_requests={question.key: question.request},
                                                          request_state=state))
