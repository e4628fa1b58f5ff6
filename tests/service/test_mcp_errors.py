"""`ctxsieve mcp` when the service is down, slow or says no: every tool's error names the service's URL and the
cause, as the text of an is_error result the model reads (not only "Error executing tool fetch_ref")."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ctxsieve_client import Client as CtxsieveClient
from ctxsieve_client.mcp_server import build_server

DOWN = "http://127.0.0.1:9"  # the discard port: nothing listens on it here, so the connection is refused
CALLS: dict[str, dict[str, Any]] = {
    "search": {"query": "tower"}, "read_file": {"path": "README.md", "query": "install"},
    "filter_ref": {"ref": "src_00000000000000000000", "query": "why"},
    "fetch_ref": {"ref": "src_00000000000000000000"},
    "select_tools": {"query": "refund", "toolsets": ["crm"]},
    "query_collection": {"collection": "glossary", "query": "ref"},
}


async def errors_over_stdio(url: str, calls: dict[str, dict[str, Any]]) -> dict[str, tuple[bool, str]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxsieve.service.cli", "mcp", "--url", url])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answers = {name: await session.call_tool(name, arguments) for name, arguments in calls.items()}
        return {name: (bool(a.is_error), str(a.content[0].text)) for name, a in answers.items()}


def test_every_tool_names_the_url_and_the_refused_connection() -> None:
    answers = asyncio.run(errors_over_stdio(DOWN, CALLS))
    for name, (is_error, text) in answers.items():
        assert is_error, name
        assert f"the ctxsieve service at {DOWN} cannot be reached" in text, text
        assert "Connection refused" in text and "ctxsieve serve" in text, text


def test_an_error_answer_is_named_with_its_status_type_and_message(stub_url: str) -> None:
    (is_error, text), = asyncio.run(errors_over_stdio(stub_url, {"fetch_ref": CALLS["fetch_ref"]})).values()
    assert is_error
    assert text.startswith(f"Error executing tool fetch_ref: the ctxsieve service at {stub_url} answered 404 "
                           "not_found: "), text
    assert "src_00000000000000000000" in text and "(request " in text, "the API's own message and request id"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_service_that_does_not_answer_is_a_timeout_named_as_such(silent_url: str) -> None:
    """In process (the command waits 300 s for an answer), through the SDK's client all the same."""
    server = build_server(CtxsieveClient(silent_url, timeout=0.5), silent_url)

    async def call() -> tuple[bool, str]:
        async with Client(server) as client:
            answer = await client.call_tool("fetch_ref", CALLS["fetch_ref"])
            return bool(answer.is_error), str(answer.content[0].text)

    is_error, text = asyncio.run(call())
    assert is_error and f"the ctxsieve service at {silent_url} did not answer in time (ReadTimeout)" in text, text
