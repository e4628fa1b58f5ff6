"""The core's rooms on the real store (Qdrant Edge in a temp dir) and real tiktoken, with the hashing stand-in
for the model: these tests are about the logic around the model, not its quality."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxsieve.indexes.sources import SourceStore
from ctxsieve.indexes.store import Store, open_store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import HashingEmbedder
from ctxsieve.ingest.tokens import Tokenizer
from tests.conftest import stub_models


@pytest.fixture
def edge(tmp_path: Path) -> Iterator[Store]:
    store = open_store(tmp_path)
    yield store
    store.close()


@pytest.fixture
def words() -> Tokenizer:
    return stub_models().tokenizer


@pytest.fixture
def cache(edge: Store) -> EmbeddingCache:
    return EmbeddingCache(edge, HashingEmbedder())


@pytest.fixture
def sources(edge: Store, words: Tokenizer) -> SourceStore:
    return SourceStore(edge, words, 32, retention_days=30)
