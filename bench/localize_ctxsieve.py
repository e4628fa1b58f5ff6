"""ctxsieve's code ranker as a bench.localize localizer: the repository index's walk and memory, in process (no
service, no store), so a dev-split run measures the ranking rule itself."""

from __future__ import annotations

from pathlib import Path

from bench.localize import Hit
from ctxsieve.indexes.repos.memory import RepoMemory
from ctxsieve.indexes.repos.walk import read_source, walk
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import WEIGHTS, Weights
from ctxsieve.ingest.coderank.units import units_of


class CtxsieveLocalizer:
    def __init__(self, weights: Weights = WEIGHTS) -> None:
        self.memory = RepoMemory()
        self.weights = weights

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
        return [Hit(h.unit.path, h.unit.name, h.unit.kind, h.unit.start_line, h.unit.end_line, h.score)
                for h in self.memory.search(read_code_query(query), k, weights=self.weights)]
