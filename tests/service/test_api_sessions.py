"""Session diagnostics and metrics through HTTP (the stand-in model: what is ranked first does not matter here)."""

from __future__ import annotations

from fastapi.testclient import TestClient

TEXT = "\n\n".join(f"Section {i}: the {w} pipeline stage writes its logs to bucket {i}." for i, w in
                   enumerate(["ingest", "parse", "embed", "index", "rank", "pack", "serve", "audit"] * 4))


def test_session_tracks_token_curve_and_repeated_reads(stub_client: TestClient) -> None:
    headers = {"X-Session-Id": "agent-42"}
    first = stub_client.post("/v1/filter", json={"query": "where does the embed stage log?", "content": TEXT, "k": 2},
                        headers=headers).json()
    stub_client.post(f"/v1/refs/{first['ref']}/filter", json={"query": "audit logs", "k": 2}, headers=headers)
    stub_client.get(f"/v1/refs/{first['ref']}", headers=headers)
    report = stub_client.get("/v1/sessions/agent-42").json()
    routes = [r["route"] for r in report["requests"]]
    assert routes == ["filter", "refilter", "fetch"]
    assert [r["repeated"] for r in report["requests"]] == [False, True, True]
    assert report["requests"][0]["input_tokens"] > report["requests"][0]["output_tokens"] > 0
    assert report["repeated_read_rate"] == round(2 / 3, 4) and "raise k or max_tokens" in report["warning"]
    assert stub_client.get("/v1/sessions/nobody").status_code == 404
    assert stub_client.post("/v1/filter", json={"query": "q", "content": "x"},
                       headers={"X-Session-Id": "bad id!"}).status_code == 422


def test_calm_session_has_no_warning(stub_client: TestClient) -> None:
    for i in range(3):
        stub_client.post("/v1/filter", json={"query": "q", "content": f"distinct output {i}"},
                    headers={"X-Session-Id": "calm"})
    report = stub_client.get("/v1/sessions/calm").json()
    assert report["repeated_read_rate"] == 0 and report["warning"] is None


def test_metrics_expose_requests_tokens_cache_and_queue(stub_client: TestClient) -> None:
    stub_client.post("/v1/filter", json={"query": "embed stage", "content": TEXT, "k": 2})
    text = stub_client.get("/metrics").text
    assert 'ctxsieve_requests_total{route="/v1/filter",status="200"}' in text
    assert "ctxsieve_request_seconds_bucket" in text
    assert "ctxsieve_input_tokens_total" in text and "ctxsieve_output_tokens_total" in text
    assert 'ctxsieve_embedding_cache_total{result="hit"}' in text
    assert "ctxsieve_inference_queue_depth" in text and "ctxsieve_saved_ratio_bucket" in text
