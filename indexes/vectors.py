"""The chunk-vector cache: a passage, tool text or recorded query is embedded once per model, ever.

Vectors live in the store under (model, text): one space per model, so two models never share one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ctxsieve.ingest.embedding import Embedder, vector_name

from .lru import Lru
from .sources import passage_key
from .store import PointData, SpaceSpec, Store, layout


class EmbeddingCache:
    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self.vector = vector_name(embedder.model_id)
        self.space = layout.chunk_vectors(self.vector)
        store.ensure(SpaceSpec(name=self.space, dense={self.vector: embedder.dim}))
        self._queries: Lru[str, np.ndarray] = Lru(4096)
        self._embedding = threading.Lock()
        self.hits = 0  # texts found already embedded (for metrics)
        self.misses = 0

    @staticmethod
    def key(text: str, kind: str = "chunk") -> str:
        return f"{kind}:{passage_key(text)}"

    def passages(self, passages: Sequence[str]) -> np.ndarray:
        return self._cached(passages, "chunk")

    def queries(self, queries: Sequence[str]) -> np.ndarray:
        """Recorded queries (tool feedback), embedded with the query prompt and kept like passages."""
        return self._cached(queries, "query")

    def stored_passages(self, passages: Sequence[str]) -> list[np.ndarray | None]:
        """The vectors stored already for these passages, None where there is none: nothing is embedded."""
        keys = [self.key(p) for p in passages]
        found = self._stored(list(dict.fromkeys(keys))) if keys else {}
        return [found.get(k) for k in keys]

    def unstored_passages(self, passages: Sequence[str]) -> list[str]:
        """The passages with no stored vector yet (their points looked up, no vector read)."""
        keys = [self.key(p) for p in passages]
        found = self.store.get(self.space, list(dict.fromkeys(keys)), payload=False) if keys else {}
        return [p for p, k in zip(passages, keys, strict=True) if k not in found]

    def forget(self, passage_keys: Sequence[str]) -> None:
        """Drop passages' vectors (by `passage_key`): those of a forgotten source that no other one uses."""
        self.store.delete(self.space, [f"chunk:{k}" for k in passage_keys])

    def _stored(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found = self.store.get(self.space, keys, payload=False, vectors=(self.vector,))
        return {k: f.dense[self.vector] for k, f in found.items() if self.vector in f.dense}

    def _cached(self, texts: Sequence[str], kind: str) -> np.ndarray:
        keys = [self.key(t, kind) for t in texts]
        unique = list(dict.fromkeys(keys))
        found = self._stored(unique) if unique else {}
        missing = [k for k in unique if k not in found]
        if missing:
            # Under one lock, and re-checked: a passage the background worker (or another request) is
            # embedding right now is then read, not embedded twice with possibly different last bits.
            with self._embedding:
                found.update(self._stored(missing))
                missing = [k for k in missing if k not in found]
                if missing:
                    first = dict(zip(keys, texts, strict=True))
                    embed = self.embedder.embed_passages if kind == "chunk" else self.embedder.embed_queries
                    fresh = embed([first[k] for k in missing])
                    self.store.upsert(self.space, [PointData(key=k, payload={"kind": kind}, dense={self.vector: v})
                                                   for k, v in zip(missing, fresh, strict=True)])
                    found.update(zip(missing, fresh, strict=True))
        self.hits += len(unique) - len(missing)
        self.misses += len(missing)
        if not keys:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def query(self, text: str) -> np.ndarray:
        return np.asarray(self.query_batch([text])[0])

    def query_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Request-time queries embedded together, kept by the whole batch: a batch pads its texts to one
        length, which moves the last bits, so a text is only ever reused in the batch it was embedded in
        (the same request gives the same bytes, whatever was asked before)."""
        key = "\x00".join(texts)
        cached = self._queries.get(key)
        return cached if cached is not None else self._queries.put(key, self.embedder.embed_queries(texts))
