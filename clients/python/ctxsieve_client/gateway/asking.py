"""An old server's questions to a 2026-07-28 client, relayed as input-required rounds.

A session-era server asks its client mid-call (an elicitation, sampling or roots request); a 2026-07-28 client
cannot be asked that way (the era has no server-to-client requests) but answers an `InputRequiredResult`. So
when a server's session speaks the handshake while its client speaks 2026-07-28, the call goes on in a task of
its own; a question it asks ends the client's request with an input-required round (`input_requests` holding
the server's request as it was sent, `request_state` naming the call), and the client's retry, carrying the
answer, hands it to the waiting server, whose call then goes on to its result or to its next question. A call
whose question is not answered within the server's `timeout_s` is ended. A question asked between calls (as
server-filesystem asks for roots once the session is up, often during the client's tools/list) waits for the
client's next call, for up to `timeout_s`. The session declares only what the client declared (upstreams.py);
a question the calling client did not declare is refused as a session without it would refuse, and the call
goes on. (The other way round needs nothing of ours: a session-era client's upstream session shakes hands too,
and the proxy forwards the server's requests.)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as mt
from fastmcp.tools.base import InputRequiredToolResult, ToolResult

STATE_PREFIX = "ctxsieve-ask:"
REFUSALS = {"roots": "List roots not supported", "sampling": "Sampling not supported",
            "elicitation": "Elicitation not supported"}  # the MCP SDK's own, from a client without the capability
RELAYED: dict[str, tuple[str, Callable[..., Any]]] = {  # capability -> the session's callback, the request it gets
    "roots": ("list_roots_callback", lambda: mt.ListRootsRequest()),
    "sampling": ("sampling_callback", lambda params: mt.CreateMessageRequest(params=params)),
    "elicitation": ("elicitation_callback", lambda params: mt.ElicitRequest(params=params)),
}


@dataclass
class _Question:
    key: str
    capability: str  # of RELAYED
    request: Any  # an mt.InputRequest: what the server sent
    answer: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    taken: asyncio.Event = field(default_factory=asyncio.Event)  # a call has it (or it was refused)
    dropped: bool = False  # no call took it in time: it has been refused already


@dataclass
class _Session:
    """An upstream session's questions, waiting for a call of its client to take them."""

    questions: asyncio.Queue[_Question] = field(default_factory=asyncio.Queue)
    numbers: itertools.count[int] = field(default_factory=itertools.count)


@dataclass
class _Call:
    task: asyncio.Future[ToolResult]
    session: _Session
    declared: frozenset[str]  # what the calling client may be asked
    waiting: _Question | None = None


class Asking:
    """The calls of 2026-07-28 clients whose session-era servers are waiting for an answer."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}
        self._sessions: weakref.WeakKeyDictionary[Any, _Session] = weakref.WeakKeyDictionary()

    async def start(self, client: Any, call: Callable[[], Awaitable[ToolResult]], timeout_s: float,
                    declared: frozenset[str]) -> ToolResult:
        """Run a call whose server may ask; its result, or the round that asks the client its first question."""
        state = STATE_PREFIX + uuid.uuid4().hex
        session = self._sessions.setdefault(client, _Session())
        self._calls[state] = _Call(task=asyncio.ensure_future(call()), session=session,
                                   declared=declared)
        return await self._next(state, timeout_s)

    def knows(self, state: str | None) -> bool:
        return state is not None and state in self._calls

    async def resume(self, state: str, answers: dict[str, Any] | None, timeout_s: float) -> ToolResult:
        """The client's retry: its answer to the waiting question, then the call's result or next question."""
        call = self._calls[state]
        question = call.waiting
        if question is not None and question.answer.done():  # the server stopped waiting (its session closed)
            call.waiting = None
        elif question is not None and answers and question.key in answers:
            question.answer.set_result(answers[question.key])
            call.waiting = None
        return await self._next(state, timeout_s)

    async def _next(self, state: str, timeout_s: float) -> ToolResult:
        call = self._calls[state]
        if call.waiting is not None:  # retried without the answer: ask again
            return _round(call.waiting, state)
        asked = asyncio.ensure_future(_askable(call))
        either: set[asyncio.Future[Any]] = {call.task, asked}
        done, _ = await asyncio.wait(either, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if asked in done:
            call.waiting = asked.result()
            return _round(call.waiting, state)
        asked.cancel()
        del self._calls[state]
        if call.task in done:
            return call.task.result()
        call.task.cancel()
        raise TimeoutError(f"no answer or result within {timeout_s:g} s")

    def relay_through(self, client: Any, declared: frozenset[str], timeout_s: float) -> None:
        """Route a 2026-07-28 client's upstream session's questions (those it declared) to its calls' rounds."""
        session = self._sessions.setdefault(client, _Session())
        kwargs = client._session_kwargs

        def relayed(capability: str) -> None:
            name, request = RELAYED[capability]

            async def callback(_context: Any, *params: Any) -> Any:
                return await _ask(session, capability, request(*params), timeout_s)

            kwargs[name] = callback

        for capability in RELAYED:
            if capability in declared:
                relayed(capability)

    async def close(self) -> None:
        for call in self._calls.values():
            call.task.cancel()
            with contextlib.suppress(BaseException):
                await call.task
        self._calls.clear()


async def _ask(session: _Session, capability: str, request: Any, timeout_s: float) -> Any:
    """A server's question: the client's answer in the round of its running or next call; refused when no call
    takes it within timeout_s (the server then goes on as with a client that cannot answer)."""
    question = _Question(key=f"q{next(session.numbers)}", capability=capability, request=request)
    await session.questions.put(question)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(question.taken.wait(), timeout_s)
    if not question.taken.is_set():
        question.dropped = True
        return refusal(capability)
    return await question.answer


async def _askable(call: _Call) -> _Question:
    """The session's next question this call's client can be asked; the others are refused on the way."""
    while True:
        question = await call.session.questions.get()
        if question.dropped or question.answer.done():  # refused already, or the server stopped waiting
            continue
        question.taken.set()
        if question.capability in call.declared:
            return question
        question.answer.set_result(refusal(question.capability))


def refusal(capability: str) -> mt.ErrorData:
    return mt.ErrorData(code=mt.INVALID_REQUEST, message=REFUSALS[capability])


def _round(question: _Question, state: str) -> ToolResult:
    return InputRequiredToolResult(mt.InputRequiredResult(input_requests={question.key: question.request},
                                                          request_state=state))
