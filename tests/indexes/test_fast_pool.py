"""Fast mode's dense budget: the first stage's candidates, then the neighbours of the best dense hits."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ctxsieve.indexes.ranking import neighbours
from ctxsieve.indexes.sieve import FAST_CANDIDATES, FAST_NEIGHBOURS, Prepared, Sieve
from ctxsieve.indexes.sources import SourceInput, SourceStore
from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import HashingEmbedder
from ctxsieve.ingest.normalize import Document
from tests.conftest import make_settings, open_client
from tests.service.test_api_filter import QUESTION, search_response

PARAGRAPH = "The {n}th paragraph of document {d} describes harbour {n} in enough words to fill a chunk. " * 6


def two_documents(tokenizer) -> tuple[Prepared, int]:  # type: ignore[no-untyped-def]
    store = open_store()
    sieve = Sieve(SourceStore(store, tokenizer, 96), EmbeddingCache(store, HashingEmbedder()), tokenizer)
    docs = tuple(Document("\n\n".join(PARAGRAPH.format(n=n, d=d) for n in range(5)), f"doc {d}") for d in range(2))
    prep = sieve._prepared_of([sieve.sources.put("t", SourceInput(docs, False))])
    last_of_first = max(i for i, (_, chunk) in enumerate(prep.units) if chunk.document == 0)
    assert 2 <= last_of_first < len(prep.units) - 2, "fixture: both documents have several chunks"
    return prep, last_of_first


def scored(prep: Prepared, scores: dict[int, float]) -> np.ndarray:
    dense = np.full(len(prep.units), np.nan)
    for i, score in scores.items():
        dense[i] = score
    return dense


def test_neighbours_of_the_best_hits_never_cross_a_document(tokenizer) -> None:  # type: ignore[no-untyped-def]
    prep, last = two_documents(tokenizer)
    dense = scored(prep, {last: 0.9, 0: 0.8, last + 2: 0.1})
    # `last` ends document 0: its next chunk opens document 1, a different page, so it is not taken.
    assert neighbours([last, 0, last + 2], dense, prep.documents, best=2) == [1, last - 1]


def test_radius_two_reaches_two_chunks_each_way(tokenizer) -> None:  # type: ignore[no-untyped-def]
    prep, last = two_documents(tokenizer)
    dense = scored(prep, {1: 0.9})
    assert neighbours([1], dense, prep.documents, best=1, radius=2) == [0, 2, 3]


def test_neighbours_already_scored_are_not_embedded_again(tokenizer) -> None:  # type: ignore[no-untyped-def]
    prep, last = two_documents(tokenizer)
    dense = scored(prep, {last: 0.9, last - 1: 0.8})
    assert neighbours([last, last - 1], dense, prep.documents, best=3) == [last - 2]


@pytest.mark.slow
def test_fast_mode_embeds_at_most_candidates_and_their_neighbours(tmp_path: Path) -> None:
    """End to end on the real app: a fresh ~40k-token output costs at most 12 + 2 x 3 dense passages."""
    client = open_client(make_settings(tmp_path, background_embedding=False))
    try:
        def misses() -> float:
            text = client.get("/metrics").text
            return float(re.search(r'ctxsieve_embedding_cache_total\{result="miss"\} (\S+)', text).group(1))  # type: ignore[union-attr]

        before = misses()
        body = client.post("/v1/filter", json={"content": search_response(), "query": QUESTION}).json()
        embedded = misses() - before
        assert body["usage"]["chunks_total"] > 100
        assert FAST_CANDIDATES < embedded <= FAST_CANDIDATES + 2 * FAST_NEIGHBOURS, "the best hits have neighbours"
        assert any("Apollo" in s["text"] for s in body["snippets"])
    finally:
        client.__exit__(None, None, None)
