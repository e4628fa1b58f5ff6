"""The Python client against the real running service (uvicorn on loopback)."""

from __future__ import annotations

import asyncio

import pytest
from ctxsieve_client import AsyncClient, Client, CtxsieveError, anthropic_tools, openai_tools, wrap_tool

LOG = "\n\n".join([f"2026-11-29 10:{i:02d} INFO worker-{i % 4} processed batch {i} in {i * 13 % 97} ms"
                   for i in range(60)] + ["2026-11-29 11:00 ERROR worker-2 lost connection to db-primary (timeout)"])


def test_filter_refilter_fetch_and_session(live_url: str) -> None:
    with Client(live_url, session_id="client-test") as client:
        result = client.filter(query="which worker lost the database connection?", content=LOG, max_tokens=120)
        assert any("db-primary" in s["text"] for s in result["snippets"])
        again = client.refilter(result["ref"], "batch 7", k=1)
        assert again["ref"] == result["ref"]
        assert client.fetch_ref(result["ref"])["text"] == LOG
        assert client.fetch_ref(result["ref"], chunk=0, window=0)["start"] == 0
        session = client.session("client-test")
        assert [r["route"] for r in session["requests"]] == ["filter", "refilter", "fetch", "fetch"]


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
        openai = openai_tools(client.select_tools("refund my order", ["helpers"], k=1, format="openai"))
        assert openai[0]["function"]["name"] == "refund_order"
        anthropic = anthropic_tools(client.select_tools("weather in Paris", ["helpers"], k=1, format="anthropic"))
        assert anthropic[0]["name"] == "get_weather"
        with pytest.raises(ValueError):
            anthropic_tools(client.select_tools("x", ["helpers"], format="openai"))
        assert client.tools_feedback("money back", ["refund_order"], ["helpers"]) == {"recorded": 1}


def test_collections_through_the_client(live_url: str) -> None:
    with Client(live_url) as client:
        client.create_collection("client-kb", "style guide")
        client.add_documents("client-kb", [{"id": "tone", "text": "Use a friendly tone."}])
        hit = client.query_collection("client-kb", "what tone?", k=1)
        assert hit["snippets"][0]["document_id"] == "tone"


def test_async_client(live_url: str) -> None:
    async def run() -> dict:  # type: ignore[type-arg]
        async with AsyncClient(live_url) as client:
            return await client.filter(query="db", content=LOG, k=1)  # type: ignore[no-any-return]

    assert asyncio.run(run())["snippets"]
