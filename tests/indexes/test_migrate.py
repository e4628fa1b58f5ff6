"""A data dir written by the code before Qdrant Edge (tests/fixtures/datadir-7f2c7b8) is converted whole."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.indexes.collections import CollectionIndex, CollectionInfo, QueryParams
from ctxsieve.indexes.migrate import migrate
from ctxsieve.indexes.sessions import SessionLog
from ctxsieve.indexes.sieve import FilterParams, Sieve
from ctxsieve.indexes.sources import SourceStore
from ctxsieve.indexes.store import open_edge
from ctxsieve.indexes.tools import ToolIndex
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import HashingEmbedder
from ctxsieve.service.app import create_app
from tests.conftest import make_settings

FIXTURE = Path(__file__).parents[1] / "fixtures" / "datadir-7f2c7b8"
TEXT_REF, DOCS_REF = "src_df10c996b9a85bf0b909", "src_97bfa932d6505617c693"


@pytest.fixture
def old_dir(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "data")
    return tmp_path / "data"


def test_service_refuses_an_old_data_dir_and_says_how_to_convert(old_dir: Path) -> None:
    with TestClient(create_app(make_settings(old_dir))) as client:
        deadline = time.monotonic() + 30
        while (ready := client.get("/readyz")).json()["detail"] == "starting":  # the engine's thread checks first
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert ready.status_code == 503
        assert f"ctxsieve migrate --data-dir {old_dir}" in ready.json()["detail"]
        refused = client.post("/v1/filter", json={"query": "q", "content": "x"})
        assert refused.status_code == 503 and "migrate" in refused.json()["error"]["message"]


def test_migrate_converts_sources_collections_toolsets_and_sessions(old_dir: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    embedder = HashingEmbedder()
    done = migrate(old_dir, embedder, tokenizer, 96)
    assert (done.sources, done.collections, done.documents, done.toolsets, done.recorded, done.reads) == \
        (2, 1, 2, 1, 1, 2)
    assert done.vectors > 0
    assert (old_dir / "qdrant" / "meta.json").exists(), "the old files are kept"
    with pytest.raises(FileExistsError):
        migrate(old_dir, embedder, tokenizer, 96)

    store = open_edge(old_dir)
    try:
        cache = EmbeddingCache(store, embedder)
        sources = SourceStore(store, tokenizer, 96, retention_days=0)  # the fixture ages; keep it readable
        text = sources.get("default", TEXT_REF)
        assert text.text.startswith("Sentence 0 says the harbour opened in year 1900.")
        assert (text.tool, text.args) == ("search_web", {"query": "harbour"})
        docs = sources.get("default", DOCS_REF)
        assert [d["title"] for d in docs.documents or []] == ["Tea", "Coffee"]
        before = cache.misses
        Sieve(sources, cache, tokenizer).refilter("default", TEXT_REF, FilterParams("when did it open", k=2))
        assert cache.misses - before <= 20, "vectors embedded before the move are found, not re-made"

        collections = CollectionIndex(store, cache, tokenizer, 96)
        assert collections.info("default", "glossary") == CollectionInfo(name="glossary", description="brand terms",
                                                                         documents=2, chunks=2)
        answer = collections.query("default", "glossary", "tone", QueryParams(filter={"lang": "zh"}))
        assert [h.document_id for h in answer.snippets] == ["zh/tone"]
        assert answer.snippets[0].text == "我们的语气温暖而直接。"

        tools = ToolIndex(store, cache, tokenizer)
        crm = tools.get_many("default", ["crm"], with_feedback=True)[0]
        assert [t.name for t in crm.tools] == ["find_customer", "send_invoice"]
        assert [(r.tool, r.query) for r in crm.feedback] == [("find_customer", "who is Ada Lovelace in our CRM")]

        report = SessionLog(store, 10_000).report("default", "agent-1")
        assert [r.repeated for r in report.requests] == [False, True]
    finally:
        store.close()
