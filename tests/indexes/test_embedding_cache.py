"""Nothing is embedded twice: chunks, tools and recorded queries are cached by (model, text) in the store."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.tools import ToolIndex
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages_seen: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages_seen.extend(texts)
        return super().embed_passages(texts)


def test_reregistering_embeds_only_changed_tools(tokenizer) -> None:
    embedder = CountingEmbedder()
    store = open_store()
    tools = ToolIndex(store, EmbeddingCache(store, embedder), tokenizer)
    defs = [{"name": f"t{i}", "description": f"does thing {i}"} for i in range(5)]
    tools.put("tenant", "set", defs)
    assert len(embedder.passages_seen) == 5
    tools.put("tenant", "set", defs)
    assert len(embedder.passages_seen) == 5, "identical toolset: nothing embedded"
    defs[2] = {"name": "t2", "description": "does something else now"}
    tools.put("tenant", "set", defs)
    assert len(embedder.passages_seen) == 6 and "something else" in embedder.passages_seen[-1]
    tools.put("other-tenant", "set", defs)
    assert len(embedder.passages_seen) == 6, "vectors are content-addressed; the registry is per tenant"
    assert [t.name for t in tools.all("other-tenant")] == ["set"] and tools.all("nobody") == []
