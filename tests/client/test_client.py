"""The Python client: its own logic against httpx's MockTransport (no service), then against the real
running service (uvicorn on loopback)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from ctxsieve_client import (
    AsyncClient,
    Client,
    CtxsieveError,
    FilterResult,
    Requests,
    Selection,
    anthropic_tools,
    openai_tools,
    wrap_tool,
)
from ctxsieve_client.client import FEEDBACK_BATCH

LOG = "\n\n".join([f"2026-11-29 10:{i:02d} INFO worker-{i % 4} processed batch {i} in {i * 13 % 97} ms"
                   for i in range(60)] + ["2026-11-29 11:00 ERROR worker-2 lost connection to db-primary (timeout)"])
FILTERED = {"ref": "src_1", "placeholder": "[ctxsieve src_1: ...]", "passthrough": False, "new_field": [1, 2],
            "snippets": [{"id": "src_1#0", "text": "hello", "score": 0.5, "start": 0, "end": 5, "tokens": 1,
                          "document": 0, "title": None, "url": None, "context": "", "later": True}],
            "usage": {"input_tokens": 10, "output_tokens": 1, "saved_ratio": 0.9, "chunks_total": 3,
                      "chunks_returned": 1}}


def mock(answer: Any, status: int = 200, seen: list[httpx.Request] | None = None) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, json=answer, headers={"retry-after": "2"} if status == 429 else {})

    return httpx.MockTransport(handle)


def test_results_are_typed_and_keep_unknown_fields() -> None:
    seen: list[httpx.Request] = []
    with Client("http://ctxsieve", api_key="k", session_id="s", transport=mock(FILTERED, seen=seen)) as client:
        result = client.filter("q", "raw", max_tokens=50, source={"tool": "t", "args": {}})
    assert isinstance(result, FilterResult) and result.snippets[0].text == "hello"
    assert result.usage.saved_ratio == 0.9 and result.ref == "src_1"
    assert result.extra == {"new_field": [1, 2]} and result.snippets[0].extra == {"later": True}
    request = seen[0]
    assert request.url.path == "/v1/filter" and request.headers["authorization"] == "Bearer k"
    assert request.headers["x-session-id"] == "s"
    assert json.loads(request.content) == {"query": "q", "content": "raw", "max_tokens": 50,
                                           "source": {"tool": "t", "args": {}}}, "unset options are not sent"


def test_errors_carry_the_envelope_and_retry_after() -> None:
    envelope = {"error": {"type": "overloaded", "message": "busy", "request_id": "r1"}}
    with Client("http://ctxsieve", transport=mock(envelope, 429)) as client, pytest.raises(CtxsieveError) as caught:
        client.refilter("src_1", "q")
    error = caught.value
    assert (error.status, error.type, error.message, error.request_id, error.retry_after) == \
        (429, "overloaded", "busy", "r1", "2")


def test_paths_and_queries_are_encoded() -> None:
    seen: list[httpx.Request] = []
    page = {"documents": [{"id": "a/b c", "hash": "h", "chunks": 1}], "offset": 0, "next_offset": None}
    with Client("http://ctxsieve", transport=mock(page, seen=seen)) as client:
        assert client.list_documents("kb", offset=0, limit=5).documents[0].id == "a/b c"
        client.delete_document("kb", "a/b c")
    assert seen[0].url.params["limit"] == "5"
    assert seen[1].url.raw_path == b"/v1/collections/kb/documents/a/b%20c"


def test_wrap_tool_handles_empty_and_structured_output() -> None:
    seen: list[httpx.Request] = []
    client = Client("http://ctxsieve", transport=mock(FILTERED, seen=seen))

    @wrap_tool(client, query_from="q")
    def nothing(q: str) -> str:
        return ""

    @wrap_tool(client, query_from="q")
    def rows(q: str) -> list[dict[str, int]]:
        return [{"id": 1}, {"id": 2}]

    assert nothing("x") == "[ctxsieve: nothing returned nothing]" and not seen, "nothing to store, no request"
    assert rows("x").endswith("[ctxsieve src_1: ...]")
    sent = json.loads(seen[0].content)
    assert sent["content_type"] == "json" and json.loads(sent["content"]) == [{"id": 1}, {"id": 2}]


def test_wrap_tool_wraps_async_tools() -> None:
    seen: list[httpx.Request] = []

    async def run() -> tuple[str, str]:
        async with AsyncClient("http://ctxsieve", transport=mock(FILTERED, seen=seen)) as client:
            @wrap_tool(client, query_from="q")
            async def fetch(q: str) -> str:
                return "some long page"

            @wrap_tool(client, query_from="q", reraise=False)
            async def failing(q: str) -> str:
                raise RuntimeError("token expired for kid=42")

            return await fetch("x"), await failing("x")

    text, failure = asyncio.run(run())
    assert text.startswith("hello") and failure.startswith("hello")
    assert json.loads(seen[1].content)["is_error"] is True
    assert "token expired for kid=42" in json.loads(seen[1].content)["content"]
    with pytest.raises(TypeError, match="AsyncClient"):
        wrap_tool(Client("http://ctxsieve"), query_from="q")(failing_sync_async)


async def failing_sync_async(q: str) -> str:
    return q


# --- against the real service --------------------------------------------------------------------------


def test_filter_refilter_fetch_and_session(live_url: str) -> None:
    with Client(live_url, session_id="client-test") as client:
        result = client.filter("which worker lost the database connection?", LOG, max_tokens=120)
        assert any("db-primary" in s.text for s in result.snippets)
        again = client.refilter(result.ref, "batch 7", k=1)
        assert again.ref == result.ref
        assert client.fetch_ref(result.ref).text == LOG
        assert client.fetch_ref(result.ref, chunk=0, window=0).start == 0
        session = client.session("client-test")
        assert [r.route for r in session.requests] == ["filter", "refilter", "fetch", "fetch"]
        client.delete_ref(result.ref)
        with pytest.raises(CtxsieveError) as gone:
            client.fetch_ref(result.ref)
        assert gone.value.status == 404


def test_errors_raise_with_the_envelope(live_url: str) -> None:
    with Client(live_url) as client, pytest.raises(CtxsieveError) as caught:
        client.fetch_ref("src_00000000000000000000")
    assert caught.value.status == 404 and caught.value.type == "not_found" and caught.value.request_id


def test_wrap_tool_filters_output_and_passes_errors_verbatim(live_url: str) -> None:
    client = Client(live_url)

    @wrap_tool(client, query_from="question", max_tokens=100)
    def read_logs(question: str) -> str:
        return LOG

    text = read_logs("which worker lost the database connection?")
    assert "db-primary" in text and "[ctxsieve src_" in text and 're-run: read_logs(question=' in text
    assert len(text) < len(LOG) / 2

    @wrap_tool(client, query_from="question", reraise=False)
    def broken(question: str) -> str:
        raise RuntimeError("credentials expired for tenant acme; rotate key kid=42 " + "x" * 2000)

    failure = broken("anything")
    assert "credentials expired for tenant acme; rotate key kid=42 " + "x" * 2000 in failure
    assert "Traceback" in failure

    @wrap_tool(client, query_from="question")
    def raising(question: str) -> str:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        raising("q")


def test_tool_selection_helpers(live_url: str) -> None:
    with Client(live_url) as client:
        client.register_toolset("helpers", [
            {"name": "refund_order", "description": "Refund an order", "input_schema": {"type": "object"}},
            {"name": "get_weather", "description": "Weather for a city", "input_schema": {"type": "object"}},
        ])
        selection = client.select_tools("refund my order", ["helpers"], k=1, format="openai")
        assert isinstance(selection, Selection) and selection.selected[0].name == "refund_order"
        assert openai_tools(selection)[0]["function"]["name"] == "refund_order"
        anthropic = anthropic_tools(client.select_tools("weather in Paris", ["helpers"], k=1, format="anthropic"))
        assert anthropic[0]["name"] == "get_weather"
        with pytest.raises(ValueError):
            anthropic_tools(client.select_tools("x", ["helpers"], format="openai"))
        assert client.tools_feedback("money back", ["refund_order"], ["helpers"]) == 1
        assert client.import_feedback([("money back please", ["refund_order"]),
                                       ("rain tomorrow?", ["get_weather", "refund_order"])], ["helpers"]) == 3


def test_a_large_feedback_import_is_sent_in_batches_the_service_accepts() -> None:
    calls = Requests.import_feedback([(f"query {i}", ["tool"]) for i in range(2 * FEEDBACK_BATCH + 1)], ["set"])
    assert [len(call.body["uses"]) for call in calls] == [FEEDBACK_BATCH, FEEDBACK_BATCH, 1]
    assert calls[2].body == {"uses": [{"query": f"query {2 * FEEDBACK_BATCH}", "used": ["tool"]}],
                             "toolsets": ["set"]}


def test_collections_through_the_client(live_url: str) -> None:
    with Client(live_url) as client:
        client.create_collection("client-kb", "style guide")
        client.add_documents("client-kb", [{"id": "tone", "text": "Use a friendly tone.", "metadata": {"v": 2}}])
        hit = client.query_collection("client-kb", "what tone?", k=1, filter={"v": {"gte": 2}})
        assert hit.snippets[0].document_id == "tone" and hit.snippets[0].metadata == {"v": 2}
        assert client.collection("client-kb").documents == 1


def test_async_client(live_url: str) -> None:
    async def run() -> FilterResult:
        async with AsyncClient(live_url) as client:
            return await client.filter("db", LOG, k=1)

    assert asyncio.run(run()).snippets
