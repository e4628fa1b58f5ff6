"""Re-filtering a seen ref needs no inference once the idle-time worker has embedded the rest of it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.indexes.background import BackgroundEmbedder
from tests.conftest import make_settings, open_client
from tests.service.test_api_filter import QUESTION, search_response


class RecordingCache:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def passages(self, passages: Sequence[str]) -> None:
        self.batches.append(list(passages))


def test_worker_waits_for_idle_and_works_in_small_batches() -> None:
    idle = threading.Event()
    cache = RecordingCache()
    worker = BackgroundEmbedder(cache, idle.is_set, batch=3, poll=0.005)
    try:
        worker.submit("a", [f"a{i}" for i in range(7)])
        worker.submit("a", ["ignored: this source is already queued"])
        assert not worker.drain(timeout=0.2), "nothing may run while a request is admitted"
        assert cache.batches == []
        idle.set()
        assert worker.drain(timeout=5)
        assert cache.batches == [["a0", "a1", "a2"], ["a3", "a4", "a5"], ["a6"]]
        assert worker.pending == 0 and worker.embedded == 7
    finally:
        worker.close()


def test_full_queue_drops_the_oldest_source() -> None:
    cache = RecordingCache()
    worker = BackgroundEmbedder(cache, lambda: False, batch=100, max_jobs=2, poll=0.005)
    try:
        for name in "abc":
            worker.submit(name, [name])
        assert worker.dropped == 1
    finally:
        worker.close()


def refilter_once(client: TestClient, query: str) -> bytes:
    first = client.post("/v1/filter", json={"query": QUESTION, "content": search_response(), "max_tokens": 600})
    assert first.status_code == 200
    response = client.post(f"/v1/refs/{first.json()['ref']}/filter", json={"query": query, "k": 4})
    assert response.status_code == 200
    return response.content


@pytest.mark.slow
def test_refilter_after_idle_embeds_nothing_and_answers_the_same(tmp_path: Path) -> None:
    query = "What did the Apollo program's command module heat shield protect against?"
    client = open_client(make_settings(tmp_path / "with"))
    try:
        engine = client.app.state.engine.engine  # type: ignore[attr-defined]
        ref = client.post("/v1/filter", json={"query": QUESTION, "content": search_response(),
                                              "max_tokens": 600}).json()["ref"]
        assert engine.sieve.background.drain(timeout=600)
        misses = engine.sieve.vectors.misses
        warm = client.post(f"/v1/refs/{ref}/filter", json={"query": query, "k": 4})
        assert warm.status_code == 200
        assert engine.sieve.vectors.misses == misses, "every chunk was embedded while idle"
    finally:
        client.__exit__(None, None, None)
    cold = open_client(make_settings(tmp_path / "without", background_embedding=False))
    try:
        assert refilter_once(cold, query) == warm.content, "the worker changes latency, never the answer"
    finally:
        cold.__exit__(None, None, None)
