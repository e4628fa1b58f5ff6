"""POST /v1/context/compact through HTTP: the contract of API.md, a session's thrash signal, refs that a history
still holds outliving retention, and bad input as 422."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi.testclient import TestClient

from tests.conftest import make_settings, open_client, stub_models
from tests.indexes.test_compaction import openai_history

OPTIONS = {"trigger_tokens": 5_000, "keep_tool_results": 2, "clear_at_least": 2_000}


def compact(client: TestClient, messages: list[dict[str, Any]], session: str | None = None,
            **options: Any) -> dict[str, Any]:
    headers = {"X-Session-Id": session} if session else {}
    response = client.post("/v1/context/compact", json={"messages": messages, **OPTIONS, **options}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_compaction_over_http_is_reversible_and_byte_identical(stub_client: TestClient) -> None:
    history = openai_history(8)
    first = compact(stub_client, history)
    assert first["compacted"] and first["format"] == "openai" and first["usage"]["saved_ratio"] > 0.3
    again = stub_client.post("/v1/context/compact", json={"messages": history, **OPTIONS})
    assert again.content == stub_client.post("/v1/context/compact", json={"messages": history, **OPTIONS}).content
    for cleared in first["cleared"]:
        original = history[cleared["message"]]["content"]
        assert stub_client.get(f"/v1/refs/{cleared['ref']}").json()["text"] == original
        filtered = stub_client.post("/v1/filter", json={"query": "x", "content": original}).json()
        assert filtered["ref"] == cleared["ref"], "the same ref /v1/filter gives the same content"
    assert compact(stub_client, first["messages"])["compacted"] is False, "compacting a compacted history"
    small = compact(stub_client, history[:3])
    assert small["compacted"] is False and small["messages"] == history[:3] and small["cleared"] == []
    tools_style = compact(stub_client, history, placeholder="tools")
    line = tools_style["messages"][tools_style["cleared"][0]["message"]]["content"]
    assert "fetch_ref(ref=" in line and "/v1/" not in line


def test_responses_items_are_compacted_and_a_cleared_cut_names_the_output_it_was_cut_from(
        stub_client: TestClient) -> None:
    chat = openai_history(8)
    items: list[dict[str, Any]] = []
    for message in chat:  # the same history as the Responses API's input items
        if message["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                          "output": message["content"]})
        elif message.get("tool_calls"):
            items += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                       "arguments": c["function"]["arguments"]} for c in message["tool_calls"]]
        else:
            items.append({"role": message["role"], "content": message["content"]})
    out = compact(stub_client, items)
    assert out["compacted"] and out["format"] == "responses"
    for cleared in out["cleared"]:
        assert out["messages"][cleared["message"]]["output"].startswith(f"[ctxsieve {cleared['ref']}: ")
        assert stub_client.get(f"/v1/refs/{cleared['ref']}").json()["text"] == items[cleared["message"]]["output"]

    original = items[2]["output"]  # a surface's cut of it, as the proxy or the hook puts it in a history
    cut = stub_client.post("/v1/filter", json={"query": "x", "content": original, "max_tokens": 100,
                                               "placeholder": "tools"}).json()
    shown = "\n\n".join([*(s["text"] for s in cut["snippets"]), cut["placeholder"]])
    again = compact(stub_client, [*items[:2], {**items[2], "output": shown}, *items[3:]])
    assert again["cleared"][0]["message"] == 2 and again["cleared"][0]["ref"] == cut["ref"]
    assert stub_client.get(f"/v1/refs/{cut['ref']}").json()["text"] == original, "the whole output, not the cut"


def test_a_session_that_keeps_fetching_what_was_cleared_gets_more_kept(stub_client: TestClient) -> None:
    session = f"thrash-{time.time_ns()}"
    history = openai_history(10)
    first = compact(stub_client, history, session)
    assert first["tuned"] is None and first["cleared"]
    for cleared in first["cleared"][:2]:  # the agent comes back for what was cleared
        assert stub_client.get(f"/v1/refs/{cleared['ref']}", headers={"X-Session-Id": session}).status_code == 200
    tuned = compact(stub_client, history, session)["tuned"]
    assert tuned["keep_tool_results"] >= 2 * OPTIONS["keep_tool_results"] and "fetched again" in tuned["reason"]
    assert tuned["trigger_tokens"] > OPTIONS["trigger_tokens"]
    report = stub_client.get(f"/v1/sessions/{session}").json()
    assert report["compactions"] == 2 and report["cleared_results"] >= 2 and report["cleared_refetched"] == 2
    assert "compaction keeps too little" in report["warning"]
    assert [r["route"] for r in report["requests"]].count("compact") == 2, "the token curve per request"


def test_a_ref_a_history_still_holds_outlives_retention(tmp_path: Any) -> None:
    client = open_client(make_settings(tmp_path, source_retention_days=1), stub_models())
    try:
        kept = compact(client, openai_history(6))["cleared"][0]["ref"]
        nobody = {"query": "q", "content": "an output nobody names " * 300}
        dropped = client.post("/v1/filter", json=nobody).json()["ref"]
        engine = client.app.state.engine.get()  # type: ignore[attr-defined]
        engine.sieve.sources.touch([kept], now=time.time() + 1.5 * 86400)  # a compaction a day and a half later
        engine.sieve.sources.expire(now=time.time() + 2 * 86400 - 60)
        assert client.get(f"/v1/refs/{dropped}").status_code == 410
        assert client.get(f"/v1/refs/{kept}").status_code == 200, "a ref a history still names is kept"
    finally:
        client.__exit__(None, None, None)


def test_bad_input_is_422_naming_the_field(stub_client: TestClient) -> None:
    cases = [({"messages": {"role": "user"}}, "messages"),
             ({"messages": [], "trigger_tokens": -1}, "trigger_tokens"),
             ({"messages": [], "clear_at_least": 0}, "clear_at_least"),
             ({"messages": [], "format": "gemini"}, "format"),
             ({"messages": ["not an object"]}, "messages"),
             ({"messages": [], "keep_tool_results": 10**9}, "keep_tool_results")]
    for body, field in cases:
        response = stub_client.post("/v1/context/compact", json=body)
        assert response.status_code == 422 and field in response.json()["error"]["message"], (body, response.text)
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nobody", "content": "x " * 6000}]
    answer = compact(stub_client, orphan, trigger_tokens=100, keep_tool_results=0, clear_at_least=10)
    assert answer["compacted"] and "re-run" not in answer["messages"][1]["content"], "no call: no re-run hint"
    assert json.loads(json.dumps(answer["messages"][0])) == orphan[0]
