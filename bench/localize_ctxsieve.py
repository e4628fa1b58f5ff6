"""ctxsieve's code ranker as a bench.localize localizer: the repository index's walk and memory, in process (no
service, no store), so a run measures the ranking rule itself.

- `ctxsieve`: as a `ready` repository ranks (its best DENSE_TOP units re-ranked by the dense model's vectors, made
  here for the units a search re-ranks and kept by their text, as the service's vector cache keeps them);
- `ctxsieve-lexical`: as a repository ranks before its vectors are made (state `lexical`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from bench.localize import Hit
from ctxsieve.indexes.repos.memory import RepoMemory
from ctxsieve.indexes.repos.walk import read_source, walk
from ctxsieve.ingest.coderank.lexical import K3
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import QUERY_TOKENS, WEIGHTS, Cosines, Weights, passage_of
from ctxsieve.ingest.coderank.units import CodeUnit, units_of
from ctxsieve.ingest.embedding import Embedder, head_of


@cache
def dense_model() -> Embedder:
    """The service's dense model, as `ctxsieve serve` loads it from ~/.cache/ctxsieve/models."""
    from ctxsieve.ingest.embedding import load_embedder
    from ctxsieve.service.settings import Settings

    settings = Settings()
    return load_embedder(settings.embed_model, settings.model_dir, settings.inference_threads, settings.int8,
                         settings.runtime)


class CtxsieveLocalizer:
    def __init__(self, weights: Weights = WEIGHTS, dense: bool = True, k3: float = K3) -> None:
        self.memory = RepoMemory(k3)
        self.weights = weights
        self.dense = dense
        self._vectors: dict[str, np.ndarray] = {}  # passage -> vector, across the repository's commits

    def sync(self, root: Path) -> None:
        listed = walk(root).files
        indexed = self.memory.hashes()
        for path in listed:
            state = read_source(root, path)
            if state.text is not None and indexed.get(path) != state.hash:
                self.memory.put_file(path, state.hash, units_of(path, state.text))
        for path in set(indexed) - set(listed):
            self.memory.drop_file(path)

    def search(self, query: str, k: int) -> list[Hit]:
        cosines = self.cosines(query) if self.dense else None
        return [Hit(h.unit.path, h.unit.name, h.unit.kind, h.unit.start_line, h.unit.end_line, h.score)
                for h in self.memory.search(read_code_query(query), k, weights=self.weights, cosines=cosines)]

    def cosines(self, query: str) -> Cosines:
        model = dense_model()
        asked = model.embed_queries([head_of(model, query, QUERY_TOKENS)])[0]

        def of(units: Sequence[CodeUnit]) -> np.ndarray | None:
            passages = [passage_of(u) for u in units]
            new = sorted({p for p in passages if p not in self._vectors})
            for start in range(0, len(new), 8):
                self._vectors.update(zip(new[start : start + 8], model.embed_passages(new[start : start + 8]),
                                         strict=True))
            return np.stack([self._vectors[p] for p in passages]) @ asked

        return of


def lexical_only() -> CtxsieveLocalizer:
    return CtxsieveLocalizer(dense=False)
