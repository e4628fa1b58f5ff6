"""The served OpenAPI document carries the routes and fields API.md fixes."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_contract_routes_are_served(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    expected = {("/v1/filter", "post"), ("/v1/refs/{ref}", "get"), ("/v1/refs/{ref}/filter", "post"),
                ("/healthz", "get"), ("/readyz", "get")}
    served = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    assert expected <= served
    request = spec["components"]["schemas"]["FilterRequest"]["properties"]
    for field in ("query", "content", "documents", "content_type", "source", "k", "max_tokens", "min_score",
                  "order", "mode", "is_error"):
        assert field in request
    assert request["k"]["anyOf"][0]["maximum"] == 50 and request["max_tokens"]["anyOf"][0]["maximum"] == 32000
    response = spec["components"]["schemas"]["FilterResponse"]["properties"]
    assert set(response) == {"ref", "snippets", "placeholder", "more", "usage", "passthrough", "content_type", "map",
                             "verdict", "view"}
    snippet = spec["components"]["schemas"]["SnippetOut"]["properties"]
    assert {"id", "text", "score", "start", "end", "tokens", "document", "title", "url"} <= set(snippet)
