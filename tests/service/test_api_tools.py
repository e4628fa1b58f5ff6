"""Toolsets and tool selection through HTTP against the real app, model and store."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def tool(name: str, description: str, **params: str) -> dict[str, Any]:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": {"type": "object", "properties": props}}}


CRM = [
    tool("create_ticket", "Open a customer support ticket", subject="what the problem is"),
    tool("refund_order", "Refund a customer's order", order_id="the order to refund"),
    tool("lookup_customer", "Find a customer record by email or phone", email="customer email"),
    tool("update_address", "Change the shipping address of a customer", address="new address"),
]
SEARCH = [
    tool("search_web", "Search the web for recent pages", query="search terms"),
    tool("get_weather", "Current weather and forecast for a city", city="city name"),
    tool("translate_text", "Translate text between languages, e.g. English to Chinese", text="text"),
    tool("finish", "Finish the task and answer the user"),
]


def register(client: TestClient, name: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    response = client.put(f"/v1/toolsets/{name}", json={"tools": tools})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def select(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/tools/select", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_register_list_get_delete(client: TestClient) -> None:
    info = register(client, "crm", CRM)
    assert info["toolset"] == "crm" and info["count"] == 4 and info["tokens"] > 50
    assert register(client, "crm", CRM) == info, "registering again is idempotent"
    listed = client.get("/v1/toolsets").json()["toolsets"]
    assert any(t["toolset"] == "crm" for t in listed)
    detail = client.get("/v1/toolsets/crm", params={"format": "anthropic"}).json()
    assert detail["tools"][0] == {"name": "create_ticket", "description": "Open a customer support ticket",
                                  "input_schema": CRM[0]["function"]["parameters"]}
    register(client, "scratch", SEARCH[:1])
    assert client.delete("/v1/toolsets/scratch").json() == {"deleted": "scratch"}
    assert client.get("/v1/toolsets/scratch").status_code == 404


def test_selection_returns_relevant_tools_in_the_requested_format(client: TestClient) -> None:
    register(client, "crm", CRM)
    register(client, "search", SEARCH)
    body = select(client, query="I was charged twice, please give me my money back", toolsets=["crm", "search"],
                  k=2, format="anthropic", always=["finish"])
    names = [t["name"] for t in body["tools"]]
    assert names[0] == "finish" and "refund_order" in names and len(names) == 3
    assert all("input_schema" in t for t in body["tools"])
    assert body["selected"][1]["toolset"] in ("crm", "search")
    usage = body["usage"]
    assert 0 < usage["tokens_selected"] < usage["tokens_all"] and usage["saved_ratio"] > 0


def test_chinese_request_finds_the_tool(client: TestClient) -> None:
    register(client, "search", SEARCH)
    body = select(client, query="明天上海的天气怎么样？", toolsets=["search"], k=1, format="mcp")
    assert body["tools"][0]["name"] == "get_weather" and "inputSchema" in body["tools"][0]


def test_default_deny_only_named_toolsets_are_searched(client: TestClient) -> None:
    register(client, "crm", CRM)
    register(client, "search", SEARCH)
    body = select(client, query="refund my order", toolsets=["search"], k=4)
    assert all(s["toolset"] == "search" for s in body["selected"])
    assert client.post("/v1/tools/select", json={"query": "q", "toolsets": ["nope"]}).status_code == 404
    assert client.post("/v1/tools/select", json={"query": "q", "toolsets": []}).status_code == 422
    missing_always = {"query": "q", "toolsets": ["search"], "always": ["refund_order"]}
    assert client.post("/v1/tools/select", json=missing_always).status_code == 404


def test_budget_and_threshold_bound_the_answer(client: TestClient) -> None:
    register(client, "crm", CRM)
    tight = select(client, query="customer", toolsets=["crm"], k=4, max_tokens=80)
    assert tight["usage"]["tokens_selected"] <= 80 and len(tight["tools"]) < 4
    assert select(client, query="customer", toolsets=["crm"], min_score=0.99)["tools"] == []


def test_same_request_gives_identical_bytes(client: TestClient) -> None:
    register(client, "crm", CRM)
    body = {"query": "change where my parcel goes", "toolsets": ["crm"], "k": 3}
    assert client.post("/v1/tools/select", json=body).content == client.post("/v1/tools/select", json=body).content


def test_feedback_teaches_selection(client: TestClient) -> None:
    jargon = [tool(f"op_{i}", f"Internal operation number {i}") for i in range(12)]
    register(client, "ops", jargon)
    query = "rotate the signing keys for the payments service"
    before = select(client, query=query, toolsets=["ops"], k=1)
    target = "op_7" if before["tools"][0]["function"]["name"] != "op_7" else "op_3"
    for phrasing in ["rotate signing keys", "roll the payment service keys", "key rotation for payments"]:
        recorded = client.post("/v1/tools/feedback", json={"query": phrasing, "used": [target], "toolsets": ["ops"]})
        assert recorded.status_code == 200 and recorded.json() == {"recorded": 1}
    after = select(client, query=query, toolsets=["ops"], k=1)
    assert after["tools"][0]["function"]["name"] == target
    unknown = client.post("/v1/tools/feedback", json={"query": "q", "used": ["nope"], "toolsets": ["ops"]})
    assert unknown.status_code == 404
    register(client, "ops", jargon)  # re-registering keeps what was learned for tools that remain
    assert select(client, query=query, toolsets=["ops"], k=1)["tools"][0]["function"]["name"] == target


def test_invalid_definitions_get_422_naming_the_tool(client: TestClient) -> None:
    bad = [tool("ok", "fine"), {"name": "broken", "parameters": {"type": "object", "properties": {"a": 5}}}]
    response = client.put("/v1/toolsets/bad", json={"tools": bad})
    assert response.status_code == 422 and "broken" in response.json()["error"]["message"]
    dup = client.put("/v1/toolsets/bad", json={"tools": [tool("a", "x"), tool("a", "y")]})
    assert dup.status_code == 422 and "duplicate" in dup.json()["error"]["message"]
    assert client.put("/v1/toolsets/bad%20name", json={"tools": []}).status_code == 422
    assert client.get("/v1/toolsets/bad").status_code == 404, "a refused toolset is not half-stored"


def test_each_intent_of_a_request_gets_its_tool(client: TestClient) -> None:
    register(client, "crm", CRM)
    register(client, "search", SEARCH)
    body = select(client, query="Look up the customer with email ana@example.com, then translate her complaint "
                                "into Chinese", toolsets=["crm", "search"], k=2)
    assert {s["name"] for s in body["selected"]} == {"lookup_customer", "translate_text"}
    chinese = select(client, query="查一下上海明天的天气，然后在网上搜索最近的新闻", toolsets=["crm", "search"], k=2)
    assert {s["name"] for s in chinese["selected"]} == {"get_weather", "search_web"}


def test_abstain_answers_only_the_always_tools_when_nothing_fits(client: TestClient) -> None:
    register(client, "crm", CRM)
    register(client, "search", SEARCH)
    off_topic = {"query": "what is the time complexity of heapsort", "toolsets": ["crm"], "k": 3}
    assert select(client, **off_topic)["abstained"] is False, "without abstain nothing changes"
    assert len(select(client, **off_topic)["tools"]) == 3
    nothing = select(client, **off_topic, abstain=True)
    assert nothing["abstained"] is True and nothing["tools"] == [] and "no tool fits" in nothing["reason"]
    kept = select(client, **{**off_topic, "toolsets": ["crm", "search"], "always": ["finish"]}, abstain=True)
    assert [s["name"] for s in kept["selected"]][:1] == ["finish"], "an always tool is never stripped"
    fits = select(client, query="refund order 1234, I was charged twice", toolsets=["crm"], k=2, abstain=True)
    assert fits["abstained"] is False and fits["reason"] is None
    assert fits["selected"][0]["name"] == "refund_order"


def test_bulk_feedback_is_all_or_nothing(client: TestClient) -> None:
    jargon = [tool(f"job_{i}", f"Internal job number {i}") for i in range(12)]
    register(client, "jobs", jargon)
    query = "rebuild the search index for the catalogue"
    before = select(client, query=query, toolsets=["jobs"], k=1)["selected"][0]["name"]
    target = "job_5" if before != "job_5" else "job_2"
    uses = [{"query": q, "used": [target]} for q in ("reindex the catalogue", "catalogue search index rebuild",
                                                       "refresh product search index")]
    rejected = client.post("/v1/tools/feedback", json={"uses": [*uses, {"query": "x", "used": ["nope"]}],
                                                       "toolsets": ["jobs"]})
    assert rejected.status_code == 404 and "nope" in rejected.json()["error"]["message"]
    assert select(client, query=query, toolsets=["jobs"], k=1)["selected"][0]["name"] == before
    recorded = client.post("/v1/tools/feedback", json={"uses": uses, "toolsets": ["jobs"]})
    assert recorded.status_code == 200 and recorded.json() == {"recorded": 3}
    assert select(client, query=query, toolsets=["jobs"], k=1)["selected"][0]["name"] == target
    for bad in ({"query": "q", "used": [target], "uses": uses, "toolsets": ["jobs"]},
                {"toolsets": ["jobs"]}, {"query": "q", "toolsets": ["jobs"]},
                {"uses": [{"query": "q", "used": [target]}] * 1001, "toolsets": ["jobs"]}):
        response = client.post("/v1/tools/feedback", json=bad)
        assert response.status_code == 422 and response.json()["error"]["message"], bad


def test_a_request_of_any_length_is_accepted(stub_client: TestClient) -> None:
    """A 20,000-character multi-turn request (over the old 4,000 limit) is chosen for by its latest turn."""
    tools = [{"name": "refund_order", "description": "Refund a customer's order and return the money",
              "input_schema": {"type": "object"}},
             {"name": "update_address", "description": "Change a customer's shipping address",
              "input_schema": {"type": "object"}}]
    assert stub_client.put("/v1/toolsets/long-crm", json={"tools": tools}).status_code == 200
    turns = "\n".join(f"User: change the shipping address of parcel {i}\nAssistant: done, address {i} changed"
                      for i in range(300))
    request = f"{turns}\nUser: refund the order and return the money"
    assert len(request) > 20_000
    answer = stub_client.post("/v1/tools/select", json={"query": request, "toolsets": ["long-crm"], "k": 1})
    assert answer.status_code == 200, answer.text
    assert [s["name"] for s in answer.json()["selected"]] == ["refund_order"]
