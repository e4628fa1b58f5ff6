"""POST /v1/filter and the ref routes, through HTTP against the real app, model and store."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.conftest import make_settings, open_client, shared, stub_models

QUESTION = "Which spacecraft fire killed three astronauts during a launch rehearsal test?"


@cache
def search_response() -> str:
    """A ~40k-token web search response in Tavily's shape, its pages' raw content from SQuAD articles."""
    articles = json.loads(shared("squad", "squad_dev_v1.1.json").read_text())["data"][:5]
    results = [
        {"title": a["title"].replace("_", " "), "url": f"https://en.wikipedia.org/wiki/{a['title']}",
         "content": a["paragraphs"][0]["context"][:300], "score": round(0.9 - i * 0.05, 2),
         "raw_content": "\n\n".join(p["context"] for p in a["paragraphs"])}
        for i, a in enumerate(articles)
    ]
    return json.dumps({"query": "1970s history", "results": results}, ensure_ascii=False, indent=2)


def post_filter(client: TestClient, **body: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/v1/filter", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def big(client: TestClient) -> dict:  # type: ignore[type-arg]
    return post_filter(client, query=QUESTION, content=search_response(), max_tokens=800,
                       source={"tool": "search_web", "args": {"query": "1970s history"}})


def test_large_search_response_is_cut_to_relevant_snippets(big: dict, tokenizer) -> None:  # type: ignore[type-arg]
    usage = big["usage"]
    assert usage["input_tokens"] == tokenizer.count(search_response()) > 35_000
    assert 0 < len(big["snippets"]) <= 5
    assert sum(s["tokens"] for s in big["snippets"]) == usage["output_tokens"] <= 800
    assert usage["saved_ratio"] > 0.97
    assert any("Apollo 1" in s["text"] for s in big["snippets"]), "the Apollo 1 fire passage must be kept"
    assert big["ref"].startswith("src_") and not big["passthrough"]
    for s in big["snippets"]:
        assert s["tokens"] == tokenizer.count(s["text"])
        assert s["id"].startswith(big["ref"] + "#")
    starts = [s["start"] for s in big["snippets"]]
    assert starts == sorted(starts), "document order by default"


def test_placeholder_names_ref_and_how_to_get_more(big: dict) -> None:  # type: ignore[type-arg]
    ref, usage = big["ref"], big["usage"]
    line = big["placeholder"]
    assert "\n" not in line
    assert f"{usage['chunks_returned']} of {usage['chunks_total']} chunks shown" in line
    assert f"{usage['input_tokens']} -> {usage['output_tokens']} tokens" in line
    assert f"POST /v1/refs/{ref}/filter" in line and f"GET /v1/refs/{ref}" in line
    assert 're-run: search_web(query="1970s history")' in line


def test_whole_source_comes_back_byte_for_byte(client: TestClient, big: dict) -> None:  # type: ignore[type-arg]
    body = client.get(f"/v1/refs/{big['ref']}").json()
    assert body["text"] == search_response()
    assert body["content_type"] == "json"
    assert body["source"] == {"tool": "search_web", "args": {"query": "1970s history"}}
    assert body["chunks"] == big["usage"]["chunks_total"]
    assert body["tokens"] == big["usage"]["input_tokens"]
    view = body["view"]
    for s in big["snippets"]:  # snippet offsets point into the view
        assert view[s["start"] : s["end"]] == s["text"]


def test_ranges_and_chunk_windows(client: TestClient, big: dict) -> None:  # type: ignore[type-arg]
    ref = big["ref"]
    snippet = big["snippets"][0]
    part = client.get(f"/v1/refs/{ref}", params={"start": snippet["start"], "end": snippet["end"]}).json()
    assert part["text"] == snippet["text"]
    index = int(snippet["id"].split("#")[1])
    window = client.get(f"/v1/refs/{ref}", params={"chunk": index, "window": 1}).json()
    assert snippet["text"] in window["text"] and len(window["text"]) > len(snippet["text"])
    assert client.get(f"/v1/refs/{ref}", params={"chunk": 10**6}).status_code == 422
    assert client.get(f"/v1/refs/{ref}", params={"start": 5, "end": 2}).status_code == 422
    assert client.get(f"/v1/refs/{ref}", params={"start": 0, "chunk": 1}).status_code == 400


def test_refilter_by_ref_with_another_query(client: TestClient, big: dict) -> None:  # type: ignore[type-arg]
    response = client.post(f"/v1/refs/{big['ref']}/filter",
                           json={"query": "When did the 1973 oil crisis begin?", "k": 3})
    assert response.status_code == 200
    body = response.json()
    assert body["ref"] == big["ref"] and len(body["snippets"]) == 3
    assert any("October 1973" in s["text"] for s in body["snippets"])
    assert 're-run: search_web(query="1970s history")' in body["placeholder"]


def test_same_request_is_byte_identical(client: TestClient) -> None:
    body = {"query": QUESTION, "content": search_response(), "max_tokens": 500, "order": "score"}
    first = client.post("/v1/filter", json=body)
    second = client.post("/v1/filter", json=body)
    assert first.status_code == 200 and first.content == second.content
    scores = [s["score"] for s in first.json()["snippets"]]
    assert len(scores) >= 2


@pytest.mark.slow
def test_restart_keeps_refs_and_gives_identical_bytes(tmp_path: Path) -> None:
    text = search_response()
    body = {"query": QUESTION, "content": text, "k": 4, "source": {"tool": "search_web", "args": {"q": "sb"}}}
    first_client = open_client(make_settings(tmp_path))
    try:
        before = first_client.post("/v1/filter", json=body)
        ref = before.json()["ref"]
        refetch_before = first_client.get(f"/v1/refs/{ref}").content
        refilter_before = first_client.post(f"/v1/refs/{ref}/filter", json={"query": "oil embargo", "k": 2}).content
    finally:
        first_client.__exit__(None, None, None)
    second_client = open_client(make_settings(tmp_path))
    try:
        assert second_client.get(f"/v1/refs/{ref}").content == refetch_before
        after = second_client.post("/v1/filter", json=body)
        assert after.status_code == 200 and after.content == before.content
        again = second_client.post(f"/v1/refs/{ref}/filter", json={"query": "oil embargo", "k": 2}).content
        assert again == refilter_before
    finally:
        second_client.__exit__(None, None, None)


def test_error_output_passes_through_verbatim(client: TestClient) -> None:
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "/srv/app/module_{i}.py", line {i * 7}, in handler_{i}\n    result = call_{i}(payload)\n'
        for i in range(60)) + "AuthError: token expired for tenant acme (kid=42)\n"
    body = post_filter(client, content=trace, is_error=True, max_tokens=50, query="auth")
    assert body["passthrough"] is True
    assert [s["text"] for s in body["snippets"]] == [trace]
    assert body["usage"]["output_tokens"] == body["usage"]["input_tokens"] > 500
    assert client.get(f"/v1/refs/{body['ref']}").json()["text"] == trace


def test_error_output_needs_no_query(client: TestClient) -> None:
    body = post_filter(client, content="500 Internal Server Error\n  at db.connect()", is_error=True)
    assert body["snippets"][0]["text"] == "500 Internal Server Error\n  at db.connect()"


def test_content_that_fits_comes_back_whole(client: TestClient) -> None:
    text = "The deploy finished in 42 seconds.\n\nAll 17 checks passed."
    body = post_filter(client, query="did the deploy pass?", content=text, max_tokens=200)
    assert body["passthrough"] is True and [s["text"] for s in body["snippets"]] == [text]
    body = post_filter(client, query="did the deploy pass?", content=text)  # no max_tokens: k chunks bound
    assert body["passthrough"] is True


def test_min_score_gives_explicit_empty_result(client: TestClient, big: dict) -> None:  # type: ignore[type-arg]
    body = client.post(f"/v1/refs/{big['ref']}/filter", json={"query": QUESTION, "min_score": 0.99}).json()
    assert body["snippets"] == []
    assert "reached min_score 0.99" in body["placeholder"] and big["ref"] in body["placeholder"]
    relaxed = client.post(f"/v1/refs/{big['ref']}/filter", json={"query": QUESTION, "min_score": 0.5}).json()
    assert relaxed["snippets"] and all(s["score"] >= 0.5 for s in relaxed["snippets"])


def test_documents_keep_title_and_url(client: TestClient) -> None:
    docs = [
        {"title": "Brand glossary", "url": "https://example.com/glossary",
         "text": "Acme Cloud is our hosting product.\n\n" + "Filler about unrelated pricing tiers. " * 80},
        {"title": "Incident report", "url": "https://example.com/incident",
         "text": "On 3 May the EU-West database failed over after a disk filled up.\n\n"
                 + "Timeline details follow with routine notes. " * 80},
    ]
    body = post_filter(client, query="why did the database fail over?", documents=docs, k=1)
    top = body["snippets"][0]
    assert top["document"] == 1 and top["title"] == "Incident report" and top["url"].endswith("/incident")
    assert "disk filled up" in top["text"]
    fetched = client.get(f"/v1/refs/{body['ref']}").json()
    assert [d["title"] for d in fetched["documents"]] == ["Brand glossary", "Incident report"]


def test_chinese_query_finds_chinese_passage(client: TestClient) -> None:
    paragraphs = [
        "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
        "长江是中国最长的河流，全长约6300公里，流经十一个省级行政区。",
        "大熊猫主要生活在四川、陕西和甘肃的山区，以竹子为主要食物。",
        "杭州西湖以秀丽的湖光山色和众多的名胜古迹闻名。",
    ] * 1
    filler = "这是一段与问题无关的填充文字，用来让输入变长。" * 30
    text = "\n\n".join(p + filler for p in paragraphs)
    body = post_filter(client, query="中国最长的河流有多长？", content=text, k=1)
    assert "6300公里" in body["snippets"][0]["text"]


@pytest.mark.parametrize(("body", "status"), [
    ({"content": "x"}, 400),                                     # no query
    ({"query": "q"}, 400),                                       # neither content nor documents
    ({"query": "q", "content": "x", "documents": [{"text": "y"}]}, 400),
    ({"query": "q", "content": "x", "k": 51}, 422),
    ({"query": "q", "content": "x", "max_tokens": 32_001}, 422),
    ({"query": "q", "content": "x", "order": "random"}, 422),
    ({"query": "q", "content": ""}, 422),
    ({"query": "q", "content": "x", "surprise": 1}, 422),
])
def test_bad_requests_get_the_error_envelope(client: TestClient, body: dict, status: int) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/filter", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["type"] and error["message"] and error["request_id"] == response.headers["x-request-id"]


def test_lone_surrogate_is_refused(client: TestClient) -> None:
    raw = b'{"query": "q", "content": "bad \\ud800 text"}'
    response = client.post("/v1/filter", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422 and "unicode" in response.json()["error"]["message"].lower()


def test_unknown_ref_is_404(client: TestClient) -> None:
    for path in ("/v1/refs/src_00000000000000000000", "/v1/refs/not-a-ref"):
        response = client.get(path)
        assert response.status_code == 404 and response.json()["error"]["type"] == "not_found"
    assert client.post("/v1/refs/src_00000000000000000000/filter", json={"query": "q"}).status_code == 404


def test_body_over_limit_is_413_and_stored_data_survives(tmp_path: Path) -> None:
    c = open_client(make_settings(tmp_path, max_body_bytes=4096), stub_models())
    try:
        kept = c.post("/v1/filter", json={"query": "q", "content": "small and kept"}).json()["ref"]
        response = c.post("/v1/filter", json={"query": "q", "content": "x" * 10_000})
        assert response.status_code == 413 and response.json()["error"]["type"] == "payload_too_large"
        body = json.dumps({"query": "q", "content": "x" * 10_000}).encode()
        chunked = c.post("/v1/filter", content=iter([body[i : i + 1000] for i in range(0, len(body), 1000)]),
                         headers={"content-type": "application/json"})
        assert "content-length" not in chunked.request.headers, "sent without a declared length"
        assert chunked.status_code == 413 and chunked.json()["error"]["type"] == "payload_too_large"
        small = json.dumps({"query": "q", "content": "also kept, sent in pieces"}).encode()
        pieces = c.post("/v1/filter", content=iter([small[:10], small[10:]]),
                        headers={"content-type": "application/json"})
        assert pieces.status_code == 200, pieces.text
        assert c.post("/v1/filter", json={"query": "q", "content": "y" * 3000, "k": 0}).status_code == 422
        assert c.get(f"/v1/refs/{kept}").json()["text"] == "small and kept"
    finally:
        c.__exit__(None, None, None)


def test_store_unreachable_is_503_not_a_hang(tmp_path: Path) -> None:
    app_client = TestClient(__import__("ctxsieve.service.app", fromlist=["create_app"]).create_app(
        make_settings(tmp_path, qdrant_url="http://127.0.0.1:9", qdrant_timeout=1), stub_models()))
    with app_client as c:
        assert c.get("/healthz").status_code == 200
        response = c.post("/v1/filter", json={"query": "q", "content": "x"})
        assert response.status_code == 503 and response.json()["error"]["type"] in ("not_ready", "store_unavailable")
        ready = c.get("/readyz")
        assert ready.status_code == 503 and ready.json()["ready"] is False


def test_delete_ref_forgets_it_and_only_vectors_no_one_else_uses(client: TestClient) -> None:
    shared_part = " ".join(f"The reactor {i} report lists coolant flow {i * 3} litres." for i in range(80))
    first = post_filter(client, query="coolant flow", content=shared_part + " First-only tail about turbines.", k=2)
    second = post_filter(client, query="coolant flow", content=shared_part + " Second-only tail about pumps.", k=2)
    gone = client.delete(f"/v1/refs/{first['ref']}")
    assert gone.status_code == 204 and gone.content == b""
    assert client.get(f"/v1/refs/{first['ref']}").status_code == 404
    assert client.post(f"/v1/refs/{first['ref']}/filter", json={"query": "x"}).status_code == 404
    assert client.delete(f"/v1/refs/{first['ref']}").status_code == 404
    engine = client.app.state.engine.engine  # type: ignore[attr-defined]
    source = engine.sieve.sources.get("default", second["ref"])
    keys = [engine.sieve.vectors.key(source.passage(c)) for c in source.chunks]
    assert engine.store.get(engine.sieve.vectors.space, keys[:3], payload=False), \
        "the chunks the two outputs share keep their vectors"
    again = client.post(f"/v1/refs/{second['ref']}/filter", json={"query": "coolant flow", "k": 2})
    assert again.status_code == 200 and again.json()["ref"] == second["ref"]


def test_a_ref_past_retention_is_410_naming_the_setting(tmp_path: Path) -> None:
    client = open_client(make_settings(tmp_path, source_retention_days=2 / 86400, sweep_seconds=0.5), stub_models())
    try:
        ref = post_filter(client, query="q", content="a short tool output that will expire soon")["ref"]
        assert client.get(f"/v1/refs/{ref}").status_code == 200
        import time

        time.sleep(3)
        for response in (client.get(f"/v1/refs/{ref}"), client.post(f"/v1/refs/{ref}/filter", json={"query": "q"})):
            assert response.status_code == 410, response.text
            assert "CTXSIEVE_SOURCE_RETENTION_DAYS" in response.json()["error"]["message"]
        stored = client.app.state.engine.engine.store.get("sources", [ref])[ref].payload  # type: ignore[attr-defined]
        assert stored["state"] == "expired" and "text" not in stored, "the sweep left only a tombstone"
        fresh = post_filter(client, query="q", content="a short tool output that will expire soon")
        assert fresh["ref"] == ref and client.get(f"/v1/refs/{ref}").status_code == 200, "sent again, kept again"
    finally:
        client.__exit__(None, None, None)


def test_refiltering_an_error_ref_keeps_it_verbatim(client: TestClient) -> None:
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: boom " + "detail " * 400
    ref = post_filter(client, content=trace, is_error=True)["ref"]
    again = client.post(f"/v1/refs/{ref}/filter", json={"is_error": True, "query": "boom", "max_tokens": 20}).json()
    assert again["ref"] == ref and [s["text"] for s in again["snippets"]] == [trace] and again["passthrough"]


def test_refiltering_a_documents_ref_keeps_its_documents_and_titles(client: TestClient) -> None:
    pages = [{"text": " ".join(f"Tea fact {i}: harvest {i} in Assam." for i in range(60)), "title": "Tea",
              "url": "https://tea.example"},
             {"text": " ".join(f"Coffee fact {i}: roast {i} in Lima." for i in range(60)), "title": "Coffee",
              "url": "https://coffee.example"}]
    first = post_filter(client, query="tea harvest", documents=pages, k=2)
    again = client.post(f"/v1/refs/{first['ref']}/filter", json={"query": "coffee roast in Lima", "k": 2}).json()
    assert again["ref"] == first["ref"]
    assert {s["title"] for s in again["snippets"]} == {"Coffee"}
    assert {s["url"] for s in again["snippets"]} == {"https://coffee.example"}
    stored = client.get(f"/v1/refs/{first['ref']}").json()
    assert [d["title"] for d in stored["documents"]] == ["Tea", "Coffee"]


def test_placeholder_speaks_each_surfaces_words_with_the_same_facts(stub_client: TestClient) -> None:
    """`placeholder: tools` names the calls a model has (filter_ref, fetch_ref); `more` carries the facts either
    way; each style is byte-identical on a repeat."""
    log = "\n\n".join(f"step {i}: copied shard {i} to the archive" for i in range(120))
    body = {"query": "which shard failed?", "content": log, "k": 2, "source": {"tool": "tail", "args": {"n": 120}}}
    http, tools = (post_filter(stub_client, **body, placeholder=style) for style in ("http", "tools"))
    ref = http["ref"]
    assert http["more"] == tools["more"] == {
        "ref": ref, "chunks_shown": 2, "chunks_total": http["usage"]["chunks_total"],
        "input_tokens": http["usage"]["input_tokens"], "output_tokens": http["usage"]["output_tokens"],
        "rerun": {"tool": "tail", "args": {"n": 120}}, "shown": "some", "min_score": None, "pages": None,
        "collection": None, "lines": None}
    assert f"POST /v1/refs/{ref}/filter" in http["placeholder"]
    assert f'filter_ref(ref="{ref}", query="...")' in tools["placeholder"] and "/v1/" not in tools["placeholder"]
    facts = [{k: v for k, v in answer.items() if k != "placeholder"} for answer in (http, tools)]
    assert facts[0] == facts[1]
    for style, first in (("http", http), ("tools", tools)):
        again = stub_client.post("/v1/filter", json={**body, "placeholder": style})
        assert again.content == stub_client.post("/v1/filter", json={**body, "placeholder": style}).content
        assert again.json() == first
    refiltered = stub_client.post(f"/v1/refs/{ref}/filter", json={"query": "shard 7", "placeholder": "tools"}).json()
    assert refiltered["placeholder"].startswith(f"[ctxsieve {ref}:") and "fetch_ref(" in refiltered["placeholder"]
    assert stub_client.post("/v1/filter", json={**body, "placeholder": "html"}).status_code == 422
