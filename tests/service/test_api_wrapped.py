"""Wrapped search (against a Tavily stand-in on loopback) and file reads (with the security cases)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.ingest.kinds.html import html_to_text
from tests.conftest import make_settings, open_client, shared, stub_models
from tests.service.fake_tavily import KEY, FakeTavily


def real_pages() -> list[dict[str, str]]:
    pages = []
    for name in ("bbc-1", "nytimes-1", "qq", "wikipedia", "lemonde-1"):
        text, title = html_to_text(shared("web_pages", name, "expected.html").read_text(errors="replace"))
        pages.append({"title": title or name, "url": f"https://news.example/{name}", "text": text})
    return pages


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(real_pages()) as fake:
        yield fake


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    inside = tmp_path_factory.mktemp("readable")
    outside = tmp_path_factory.mktemp("secret")
    (outside / "secret.txt").write_text("the launch code is 0000")
    (inside / "notes.md").write_text("# Notes\n\n## Deploy\n\nDeploys run at 09:00 UTC from the main branch.\n\n"
                                     + "## Misc\n\n" + "Unrelated filler text about lunch. " * 200)
    (inside / "中文.txt").write_text("长江是中国最长的河流。\n\n" + "其他无关的内容。" * 300, encoding="utf-8")
    (inside / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (inside / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (inside / "huge.txt").write_text("x" * 30_000)
    os.symlink(outside / "secret.txt", inside / "escape.txt")
    os.symlink(inside / "notes.md", inside / "alias.md")
    os.mkfifo(inside / "pipe")
    return inside, outside


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, tavily: FakeTavily, roots: tuple[Path, Path]
            ) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("wrapped-data"), tavily_api_key=KEY, tavily_base_url=tavily.url,
                             tavily_timeout=1.5, read_roots=str(roots[0]), max_read_bytes=20_000)
    client = open_client(settings)
    yield client
    client.__exit__(None, None, None)


def test_search_keeps_pages_and_returns_relevant_snippets(service: TestClient, tavily: FakeTavily) -> None:
    response = service.post("/v1/search", json={"query": "DeepMind differentiable neural computer memory",
                                                "max_tokens": 600, "max_results": 5})
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["results"]) == 5 and all(r["ref"].startswith("src_") for r in body["results"])
    shown = [s for r in body["results"] for s in r["snippets"]]
    assert shown and sum(s["tokens"] for s in shown) <= 600
    assert any("DNC" in s["text"] or "DeepMind" in s["text"] for s in shown)
    assert 're-run: search(query="DeepMind differentiable neural computer memory")' in body["placeholder"]
    assert tavily.requests[-1]["body"]["include_raw_content"] == "markdown"
    qq = next(r for r in body["results"] if r["url"].endswith("/qq"))
    whole = service.get(f"/v1/refs/{qq['ref']}").json()
    assert whole["documents"][0]["url"] == qq["url"] and "DeepMind" in whole["text"]
    assert whole["documents"][0]["metadata"]["score"] == qq["score"]


def test_search_ranks_by_task_when_given(service: TestClient) -> None:
    body = service.post("/v1/search", json={"query": "news", "task": "长江 河流", "k": 1}).json()
    assert body["usage"]["chunks_returned"] == 1


@pytest.mark.parametrize(("query", "status", "fragment"), [
    ("ratelimit please", 502, "excessive requests"),
    ("explode now", 502, "500"),
    ("sleepy search", 504, "did not answer"),
])
def test_upstream_failures_are_reported_not_hidden(service: TestClient, query: str, status: int, fragment: str
                                                   ) -> None:
    response = service.post("/v1/search", json={"query": query})
    assert response.status_code == status and fragment in response.json()["error"]["message"]


def test_search_without_key_says_how_to_set_one(tmp_path: Path, tavily: FakeTavily) -> None:
    client = open_client(make_settings(tmp_path, tavily_api_key=None, tavily_base_url=tavily.url), stub_models())
    try:
        response = client.post("/v1/search", json={"query": "anything"})
        assert response.status_code == 400 and "TAVILY_API_KEY" in response.json()["error"]["message"]
    finally:
        client.__exit__(None, None, None)


def test_read_returns_relevant_part_of_a_file(service: TestClient, roots: tuple[Path, Path]) -> None:
    body = service.post("/v1/read", json={"path": "notes.md", "query": "when do deploys run?", "k": 1}).json()
    assert body["path"] == str(roots[0] / "notes.md") and body["size"] > 1000 and body["mtime"] > 0
    assert "09:00 UTC" in body["snippets"][0]["text"] and "Deploy" in body["snippets"][0]["context"]
    assert 're-run: read(path="notes.md")' in body["placeholder"]
    chinese = service.post("/v1/read", json={"path": str(roots[0] / "中文.txt"), "query": "最长的河流", "k": 1}).json()
    assert "长江" in chinese["snippets"][0]["text"]


def test_changed_file_gets_new_ref_and_old_ref_still_resolves(service: TestClient, roots: tuple[Path, Path]
                                                              ) -> None:
    path = roots[0] / "changing.txt"
    path.write_text("version one of the file")
    first = service.post("/v1/read", json={"path": str(path), "query": "version"}).json()["ref"]
    again = service.post("/v1/read", json={"path": str(path), "query": "version"}).json()["ref"]
    path.write_text("version two of the file")
    second = service.post("/v1/read", json={"path": str(path), "query": "version"}).json()["ref"]
    assert first == again != second
    assert service.get(f"/v1/refs/{first}").json()["text"] == "version one of the file"


@pytest.mark.parametrize(("path", "status"), [
    ("../secret/secret.txt", 403),
    ("escape.txt", 403),
    ("/etc/passwd", 403),
    ("/proc/self/environ", 403),
    ("/dev/zero", 403),
    ("pipe", 403),
    ("missing.txt", 404),
    ("blob.bin", 415),
    ("latin1.txt", 415),
    ("huge.txt", 413),
    (".", 415),
])
def test_read_security_and_errors(service: TestClient, path: str, status: int) -> None:
    response = service.post("/v1/read", json={"path": path, "query": "anything"})
    assert response.status_code == status, response.text
    assert "launch code" not in response.text


def test_symlink_inside_the_roots_is_fine(service: TestClient) -> None:
    assert service.post("/v1/read", json={"path": "alias.md", "query": "deploy"}).status_code == 200


def test_reading_is_off_until_roots_are_configured(client: TestClient) -> None:
    response = client.post("/v1/read", json={"path": "/etc/hostname", "query": "q"})
    assert response.status_code == 403 and "CTXSIEVE_READ_ROOTS" in response.json()["error"]["message"]
