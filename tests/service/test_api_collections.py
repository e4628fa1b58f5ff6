"""Static collections and the ingest CLI, through HTTP against the real app, model and store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.service.app import create_app
from ctxsieve.service.cli import main as cli
from tests.conftest import make_settings, serve_on_loopback, wait_ready

GLOSSARY = [
    {"id": "acme-cloud", "text": "Acme Cloud is our managed hosting product. Never call it 'the server'.",
     "title": "Acme Cloud", "metadata": {"brand": "acme", "lang": "en"}},
    {"id": "acme-tone", "text": "Write in a warm, direct tone. Avoid exclamation marks in support replies.",
     "title": "Tone", "metadata": {"brand": "acme", "lang": "en"}},
    {"id": "zeta-name", "text": "泽塔云是我们的云存储品牌，中文材料中不要翻译成英文。", "title": "泽塔云",
     "metadata": {"brand": "zeta", "lang": "zh"}},
]


def test_collection_lifecycle(client: TestClient) -> None:
    assert client.put("/v1/collections/brand", json={"description": "brand glossary"}).status_code == 200
    added = client.post("/v1/collections/brand/documents", json={"documents": GLOSSARY}).json()
    assert added["ids"] == ["acme-cloud", "acme-tone", "zeta-name"] and added["chunks"] == 3
    again = client.post("/v1/collections/brand/documents", json={"documents": GLOSSARY}).json()
    assert again["chunks"] == 0, "unchanged documents are not stored or embedded again"
    info = client.get("/v1/collections/brand").json()
    assert info == {"name": "brand", "description": "brand glossary", "documents": 3, "chunks": 3}
    assert any(c["name"] == "brand" for c in client.get("/v1/collections").json()["collections"])

    body = client.post("/v1/collections/brand/query", json={"query": "what tone should support replies use?",
                                                             "k": 1}).json()
    assert body["snippets"][0]["document_id"] == "acme-tone" and "ref" not in body
    chinese = client.post("/v1/collections/brand/query", json={"query": "云存储品牌叫什么", "k": 1}).json()
    assert chinese["snippets"][0]["document_id"] == "zeta-name"
    filtered = client.post("/v1/collections/brand/query", json={"query": "hosting product", "filter": {"lang": "zh"}})
    assert [s["document_id"] for s in filtered.json()["snippets"]] == ["zeta-name"]
    budget = client.post("/v1/collections/brand/query", json={"query": "brand", "k": 3, "max_tokens": 25}).json()
    assert budget["usage"]["output_tokens"] <= 25

    changed = dict(GLOSSARY[1], text="Write in a calm, precise tone.")
    assert client.post("/v1/collections/brand/documents", json={"documents": [changed]}).json()["chunks"] == 1
    tone = client.post("/v1/collections/brand/query", json={"query": "tone", "k": 1}).json()["snippets"][0]
    assert tone["text"] == "Write in a calm, precise tone."

    assert client.delete("/v1/collections/brand/documents/acme-tone").status_code == 200
    assert client.get("/v1/collections/brand").json()["documents"] == 2
    assert client.delete("/v1/collections/brand/documents/acme-tone").status_code == 404
    assert client.delete("/v1/collections/brand").status_code == 200
    assert client.post("/v1/collections/brand/query", json={"query": "tone"}).status_code == 404


def test_unknown_collection_and_bad_names(client: TestClient) -> None:
    assert client.post("/v1/collections/nope/documents", json={"documents": GLOSSARY}).status_code == 404
    assert client.put("/v1/collections/bad name", json={}).status_code == 422


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[str]:
    url, stop = serve_on_loopback(make_settings(tmp_path / "data"))
    yield url
    stop()


def test_ingest_cli_is_incremental_and_prunes(tmp_path: Path, served: str, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n\nThe release train leaves every Thursday.\n")
    (docs / "sub" / "faq.txt").write_text("Refunds are processed within five business days.")
    (docs / "sub" / "中文.md").write_text("# 说明\n\n退货需要在三十天内申请。")
    (docs / "image.bin").write_bytes(b"\x00\x01")
    assert cli(["ingest", str(docs), "--collection", "kb", "--url", served]) == 0
    first = capsys.readouterr().out
    assert "3 files (0 unchanged" in first and "chunks" in first and "tokens" in first
    (docs / "sub" / "faq.txt").unlink()
    (docs / "guide.md").write_text("# Guide\n\nThe release train leaves every Friday.\n")
    assert cli(["ingest", str(docs), "--collection", "kb", "--url", served, "--prune"]) == 0
    second = capsys.readouterr().out
    assert "2 files (1 unchanged" in second and "1 pruned" in second
    import httpx

    listed = httpx.get(f"{served}/v1/collections/kb/documents").json()["documents"]
    assert sorted(d["id"] for d in listed) == ["guide.md", "sub/中文.md"]
    hit = httpx.post(f"{served}/v1/collections/kb/query", json={"query": "退货期限", "k": 1}).json()
    assert hit["snippets"][0]["document_id"] == "sub/中文.md"


@pytest.mark.slow
def test_ingest_cli_writes_directly_when_no_service_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Alpha handbook: the office opens at eight.")
    settings = make_settings(tmp_path / "data")
    monkeypatch.setenv("CTXSIEVE_MODEL_DIR", str(settings.model_dir))
    monkeypatch.setenv("CTXSIEVE_TIKTOKEN_CACHE_DIR", str(settings.tiktoken_cache_dir))
    assert cli(["ingest", str(docs), "--collection", "handbook", "--data-dir", str(tmp_path / "data")]) == 0
    assert "1 files (0 unchanged" in capsys.readouterr().out
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        body = client.post("/v1/collections/handbook/query", json={"query": "when does the office open"}).json()
        assert body["snippets"][0]["document_id"] == "a.md"


SPECS = [{"id": f"spec-{i:02d}", "text": f"Specification {i}: the pump rated for {10 * i} bar, revision {i % 3}.",
          "title": f"Spec {i}", "metadata": {"year": 2015 + i, "family": ["pump", "valve", "seal"][i % 3],
                                             "released": f"20{15 + i}-06-01", "weight": 1.5 * i}}
         for i in range(12)]


def query_ids(client: TestClient, flt: dict, k: int = 20) -> list[str]:  # type: ignore[type-arg]
    response = client.post("/v1/collections/specs/query", json={"query": "pump rated bar", "k": k, "filter": flt})
    assert response.status_code == 200, response.text
    return sorted(s["document_id"] for s in response.json()["snippets"])


def test_filter_operators_run_in_the_store(stub_client: TestClient) -> None:
    stub_client.put("/v1/collections/specs", json={})
    assert stub_client.post("/v1/collections/specs/documents", json={"documents": SPECS}).status_code == 200
    every = [s["id"] for s in SPECS]
    assert query_ids(stub_client, {}) == every
    assert query_ids(stub_client, {"family": "valve"}) == ["spec-01", "spec-04", "spec-07", "spec-10"]
    assert query_ids(stub_client, {"family": {"any": ["seal", "valve"]}}) == \
        [i for n, i in enumerate(every) if n % 3 != 0]
    assert query_ids(stub_client, {"year": {"gte": 2024}}) == ["spec-09", "spec-10", "spec-11"]
    assert query_ids(stub_client, {"year": {"gt": 2016, "lt": 2019}}) == ["spec-02", "spec-03"]
    assert query_ids(stub_client, {"released": {"lt": "2017-01-01"}}) == ["spec-00", "spec-01"]
    assert query_ids(stub_client, {"weight": {"lte": 3.0}}) == ["spec-00", "spec-01", "spec-02"]
    assert query_ids(stub_client, {"weight": 4.5}) == ["spec-03"]
    assert query_ids(stub_client, {"family": {"not": "pump"}, "year": {"lte": 2018}}) == ["spec-01", "spec-02"]
    assert query_ids(stub_client, {"family": {"not": {"any": ["pump", "valve"]}}}) == ["spec-02", "spec-05", "spec-08",
                                                                                 "spec-11"]


@pytest.mark.parametrize(("flt", "named"), [
    ({"colour": "red"}, "'colour'"), ({"year": {"between": [1, 2]}}, "'between'"),
    ({"year": {"gte": "soon"}}, "'year'"), ({"family": {"any": []}}, "'any'"), ({"year": None}, "'year'")])
def test_a_bad_filter_is_422_naming_it(stub_client: TestClient, flt: dict, named: str) -> None:  # type: ignore[type-arg]
    stub_client.put("/v1/collections/specs", json={})
    stub_client.post("/v1/collections/specs/documents", json={"documents": SPECS})
    response = stub_client.post("/v1/collections/specs/query", json={"query": "pump", "filter": flt})
    assert response.status_code == 422, response.text
    assert named in response.json()["error"]["message"]


def test_documents_are_paged(stub_client: TestClient) -> None:
    stub_client.put("/v1/collections/specs", json={})
    stub_client.post("/v1/collections/specs/documents", json={"documents": SPECS})
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = stub_client.get("/v1/collections/specs/documents", params={"offset": offset, "limit": 5}).json()
        assert len(page["documents"]) <= 5 and page["offset"] == offset
        seen += [d["id"] for d in page["documents"]]
        offset = page["next_offset"]
    assert sorted(seen) == [s["id"] for s in SPECS] and len(seen) == len(set(seen))
    first = stub_client.get("/v1/collections/specs/documents", params={"limit": 1}).json()["documents"][0]
    assert set(first["metadata"]) == {"year", "family", "released", "weight"}
    assert stub_client.get("/v1/collections/specs/documents", params={"limit": 0}).status_code == 422


def test_a_collection_query_says_how_to_ask_again_in_each_style(stub_client: TestClient) -> None:
    stub_client.put("/v1/collections/styles", json={})
    assert stub_client.post("/v1/collections/styles/documents", json={"documents": SPECS}).status_code == 200
    http = stub_client.post("/v1/collections/styles/query", json={"query": "valve", "k": 2}).json()
    tools = stub_client.post("/v1/collections/styles/query", json={"query": "valve", "k": 2,
                                                                   "placeholder": "tools"}).json()
    assert "POST /v1/collections/styles/query" in http["placeholder"]
    assert 'query_collection(collection="styles", query="...")' in tools["placeholder"]
    assert http["more"] == tools["more"] and http["more"]["collection"] == "styles"
    assert http["more"]["chunks_shown"] == len(http["snippets"]) == 2
