"""The gateway's relay of an old server's questions to a 2026-07-28 client (gateway/asking.py), on the cases no
SDK client can produce end to end: a question asked between calls, a question no call takes in time, and a
client whose request no longer declares what its session was opened with (a stdio client changing its
capabilities). test_gateway_eras.py drives the same relay with the real SDK client and servers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as mt
from fastmcp.tools.base import InputRequiredToolResult, ToolResult

from ctxsieve_client.gateway.asking import Asking

ROOTS = mt.ListRootsResult(roots=[mt.Root(uri="file:///work/app", name="app")])


class UpstreamSession:
    """What the relay touches of an upstream client: the callbacks its MCP session answers the server with."""

    def __init__(self) -> None:
        self._session_kwargs: dict[str, Any] = {"list_roots_callback": None}

    async def server_asks_roots(self) -> Any:
        return await self._session_kwargs["list_roots_callback"](None)


def answered(text: str, before: Callable[[], Awaitable[Any]] | None = None) -> Callable[[], Awaitable[ToolResult]]:
    """An upstream call: `before` (a question it asks) first, then its result."""
    async def call() -> ToolResult:
        heard = await before() if before is not None else None
        return ToolResult(content=[mt.TextContent(type="text", text=f"{text} {heard!r}" if heard else text)])
    return call


def shown(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, mt.TextContent))


def test_a_question_asked_between_calls_is_asked_in_the_next_calls_round() -> None:
    async def main() -> tuple[ToolResult, Any, ToolResult]:
        asking, session = Asking(), UpstreamSession()
        asking.relay_through(session, frozenset({"roots"}), timeout_s=5)
        server = asyncio.create_task(session.server_asks_roots())  # as the session comes up, before any call
        await asyncio.sleep(0)
        first = await asking.start(session, answered("listed"), 5, frozenset({"roots"}))
        assert isinstance(first, InputRequiredToolResult)
        state = first.input_required.request_state
        assert state is not None
        result = await asking.resume(state, {"q0": ROOTS}, 5)
        return first, await server, result

    first, heard, result = asyncio.run(main())
    assert isinstance(first, InputRequiredToolResult)
    assert first.input_required.input_requests == {"q0": mt.ListRootsRequest()}
    assert heard == ROOTS and shown(result) == "listed", "the server got the client's roots, the client its result"


def test_a_question_no_call_takes_in_time_is_refused() -> None:
    async def main() -> Any:
        asking, session = Asking(), UpstreamSession()
        asking.relay_through(session, frozenset({"roots"}), timeout_s=0.2)
        return await session.server_asks_roots()

    refused = asyncio.run(main())
    assert refused == mt.ErrorData(code=mt.INVALID_REQUEST, message="List roots not supported")


def test_a_question_the_calling_client_did_not_declare_is_refused_and_the_call_goes_on() -> None:
    async def main() -> ToolResult:
        asking, session = Asking(), UpstreamSession()
        asking.relay_through(session, frozenset({"roots"}), timeout_s=5)  # opened for a client with roots
        return await asking.start(session, answered("read", session.server_asks_roots), 5, frozenset())

    result = asyncio.run(main())
    assert not isinstance(result, InputRequiredToolResult), "the client was not asked"
    assert "List roots not supported" in shown(result), "the server heard the refusal and answered the call"


def test_what_the_client_did_not_declare_is_not_relayed() -> None:
    session = UpstreamSession()
    Asking().relay_through(session, frozenset(), timeout_s=5)
    assert session._session_kwargs == {"list_roots_callback": None}, "the session declares nothing it would relay"
