"""ctxsieve's code ranker as a bench.localize localizer: the repository index's walk and memory, in process (no
service, no store), so a run measures the ranking rule itself.

- `ctxsieve`: as a `ready` repository ranks (its best DENSE_TOP units re-ranked by the dense model's vectors, made
  here for the units a search re-ranks and kept by their text, as the service's vector cache keeps them);
- `ctxsieve-lexical`: as a repository ranks before its vectors are made (state `lexical`);
- `ctxsieve-fused` (tried at stop 68, not kept): `ctxsieve` with the nearest by meaning fused in by their ranks
  (`fused_by_rank`) for a request whose words in Chinese, Japanese or Korean no definition holds
  (`RepoMemory.foreign_words`), as if only the vectors could read those words.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TypeVar

import numpy as np

from bench.localize import Hit, checkout, commit_order, judged, workdir
from bench.localize_data import LocCase
from ctxsieve.indexes.repos.memory import RepoMemory, own_words
from ctxsieve.indexes.repos.walk import read_source, walk
from ctxsieve.ingest.coderank.lexical import K3
from ctxsieve.ingest.coderank.query import read_code_query
from ctxsieve.ingest.coderank.ranker import (
    QUERY_TOKENS,
    WEIGHTS,
    Cosines,
    Weights,
    meaning_units,
    nearest,
    passage_of,
)
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
    def __init__(self, weights: Weights = WEIGHTS, dense: bool = True, k3: float = K3, fused: bool = False) -> None:
        self.memory = RepoMemory(k3)
        self.weights = weights
        self.dense = dense
        self.fused = fused and dense
        self.own: frozenset[str] = frozenset()  # the words of the repository's name (its folder's, as synced)
        self._vectors: dict[str, np.ndarray] = {}  # passage -> vector, across the repository's commits

    def sync(self, root: Path) -> None:
        self.own = own_words(root.name, str(root))
        listed = walk(root).files
        indexed = self.memory.hashes()
        for path in listed:
            state = read_source(root, path)
            if state.text is not None and indexed.get(path) != state.hash:
                self.memory.put_file(path, state.hash, units_of(path, state.text))
        for path in set(indexed) - set(listed):
            self.memory.drop_file(path)

    def search(self, query: str, k: int) -> list[Hit]:
        """As a repository index's search ranks (`RepoIndex._hits`): by the words and names, re-ranked by the vectors
        when dense; when dense and nothing matched (or only the project's own name, beside words no definition
        holds), the nearest by meaning alone (its `by_meaning` answer). With
        `fused`, for words no definition holds, twice k by the words fused with twice k nearest by meaning."""
        cosines = self.cosines(query) if self.dense else None
        read = read_code_query(query)
        foreign = self.fused and not read.tests and self.memory.foreign_words(read)
        found = [(h.unit, h.score) for h in
                 self.memory.search(read, 2 * k if foreign else k, weights=self.weights, cosines=cosines)]
        common = self.dense and not foreign and bool(found) and self.memory.names_only_itself(read, self.own)  # (the
        # project's own name beside words no definition holds: by meaning, as if none had matched)
        if self.dense and not read.tests and read.terms and (foreign or not found or common):
            units = meaning_units(self.memory.snapshot()[1])
            near = cosines(units) if units and cosines is not None else None  # (the request embedded once)
            meant = [(units[j], float(near[j])) for j in nearest(units, near, 2 * k if found and not common else k)] \
                if near is not None else []
            found = fused_by_rank(found, meant, lambda h: (h[0].path, h[0].start_line)) if found and not common \
                else meant
        return [hit_of(unit, score) for unit, score in found[:k]]

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


def fused() -> CtxsieveLocalizer:
    return CtxsieveLocalizer(fused=True)


FUSION_K = 10  # a rank r worth 1 / (FUSION_K + r)
Keyed = TypeVar("Keyed")


def fused_by_rank(first: Sequence[Keyed], second: Sequence[Keyed], key: Callable[[Keyed], Hashable]
                  ) -> list[Keyed]:
    """Two rankings as one: each item's reciprocal ranks summed (an item both hold counts twice, as the first's);
    ties in the order the items first appear."""
    worth: dict[Hashable, float] = {}
    items: dict[Hashable, Keyed] = {}
    for ranking in (first, second):
        for rank, item in enumerate(ranking):
            found = key(item)
            worth[found] = worth.get(found, 0.0) + 1.0 / (FUSION_K + rank + 1)
            items.setdefault(found, item)
    return [items[found] for found in sorted(items, key=lambda f: -worth[f])]  # (stable: first seen first)


def hit_of(unit: CodeUnit, score: float) -> Hit:
    return Hit(unit.path, unit.name, unit.kind, unit.start_line, unit.end_line, score)


def synced(cases: Iterable[LocCase], localizer: Callable[[], CtxsieveLocalizer]
           ) -> Iterator[tuple[LocCase, CtxsieveLocalizer]]:
    """Each case with its repository indexed at its base commit: a repository at a time, its cases in base-commit
    order, one localizer synced incrementally across them (bench.localize's way), a line when a repository is done."""
    by_repo: dict[str, list[LocCase]] = defaultdict(list)
    for case in cases:
        by_repo[case.repo].append(case)
    for repo in sorted(by_repo):
        made = localizer()
        with workdir(repo) as folder:
            for case in commit_order(folder, by_repo[repo]):
                checkout(folder, case.base_commit)
                made.sync(folder)
                yield case, made
        print(f"  {repo}: {len(by_repo[repo])} cases gathered", flush=True)


def rates(ranked: Iterable[tuple[LocCase, Sequence[CodeUnit], np.ndarray, Sequence[int]]]
          ) -> tuple[float, float, float, float]:
    """File Acc@1, Acc@5, MRR and function Acc@10 (bench.localize's judgement) over (case, units, scores, order)."""
    buckets: list[list[float]] = [[], [], [], []]
    for case, units, scores, order in ranked:
        hits = [hit_of(units[j], float(scores[j])) for j in order if scores[j] > 0]
        for bucket, value in zip(buckets, judged(case, hits), strict=True):
            if value is not None:
                bucket.append(float(value))
    a1, a5, mrr, f10 = (statistics.fmean(b) if b else 0.0 for b in buckets)
    return a1, a5, mrr, f10
