"""A repository's definitions as vectors, made in the background once it is searchable by its words and names.

The dense model embeds the passage (`passage_of`: its path, name and first lines) of each unit of the code a repository
ships (`has_vector`: not its tests, examples, docs or vendored code) into the chunk-vector cache, where a vector is
kept by its text: a file changed re-embeds only its changed definitions, a restart none. The work runs on a thread of
its own, a few units at a time and only while no request is being served, so a sync (an agent's edit) and a search
never wait for it. A repository is `ready` once each such unit of its current version has a vector; until then its
searches rank as in the lexical state, and a search re-ranks by vectors only when each of the units it would re-rank
has one (`rerank`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ctxsieve.ingest.coderank.ranker import QUERY_TOKENS, has_vector, meaning_units, nearest, passage_of
from ctxsieve.ingest.coderank.units import CodeUnit
from ctxsieve.ingest.embedding import head_of

from ..vectors import EmbeddingCache
from .memory import Hit, RepoMemory, matches

__all__ = ["UnitVectors"]

log = logging.getLogger("ctxsieve")
BATCH = 4  # units embedded at once: a request arriving meanwhile waits for no more than this many
PAGE = 512  # units whose stored vectors are looked up at once
IDLE_POLL_S = 0.05


class UnitVectors:
    def __init__(self, cache: EmbeddingCache, is_idle: Callable[[], bool] = lambda: True) -> None:
        self.cache = cache
        self.is_idle = is_idle
        self._cond = threading.Condition()
        self._wanted: dict[object, RepoMemory] = {}
        self._covered: dict[object, int] = {}  # repository -> the memory version whose every unit has a vector
        self._left: dict[object, int] = {}  # repository -> units without a vector, as last counted
        # repository -> (memory version, the units a search by meaning ranks, their vectors): read from the store
        # once per version, for the searches none of whose words the code has
        self._meanings: dict[object, tuple[int, list[CodeUnit], np.ndarray]] = {}
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="ctxsieve-repo-vectors", daemon=True)
        self._thread.start()

    def want(self, repo: object, memory: RepoMemory) -> None:
        """Make (or complete) the vectors of `repo`'s units, as its memory holds them now (what is left is counted
        again: the last count was of the units before)."""
        with self._cond:
            self._wanted[repo] = memory
            self._left.pop(repo, None)
            self._cond.notify_all()

    def ready(self, repo: object, memory: RepoMemory) -> bool:
        with self._cond:
            return self._covered.get(repo) == memory.version

    def left(self, repo: object, memory: RepoMemory | None = None) -> int | None:
        """The units of `repo` still without a vector; counted now (once) when the worker has not counted them yet
        and `memory` is given, so a status read right after an index says how many are coming."""
        with self._cond:
            left = self._left.get(repo)
            wanted = repo in self._wanted
        if left is None and wanted and memory is not None:
            left = len(self._missing(memory.snapshot()[1]))
            with self._cond:
                if repo in self._wanted:  # not forgotten meanwhile
                    left = self._left.setdefault(repo, left)
        return left

    def forget(self, repo: object) -> None:
        with self._cond:
            for table in (self._wanted, self._covered, self._left, self._meanings):
                table.pop(repo, None)

    def cosines(self, query: str) -> Callable[[Sequence[CodeUnit]], np.ndarray | None]:
        """The units' cosines with `query`, or None unless every one of them has its vector already."""
        head = head_of(self.cache.embedder, query, QUERY_TOKENS)

        def of(units: Sequence[CodeUnit]) -> np.ndarray | None:
            found = self.cache.stored_passages([passage_of(u) for u in units])
            if not found or any(v is None for v in found):
                return None
            return np.asarray(np.stack([v for v in found if v is not None]) @ self.cache.query(head))

        return of

    def nearest(self, repo: object, memory: RepoMemory, query: str, k: int, path_glob: str | None = None
                ) -> list[Hit]:
        """The k definitions of `repo` (of the files `path_glob` matches) nearest `query` by their vectors alone
        (`ranker.meaning_units`, `ranker.nearest`); none unless each has its vector."""
        found = self._meaning_vectors(repo, memory)
        if found is None:
            return []
        units, vectors = found
        kept = [j for j, u in enumerate(units) if not path_glob or matches(u.path, path_glob)]
        if not kept:
            return []
        asked = self.cache.query(head_of(self.cache.embedder, query, QUERY_TOKENS))
        cosines = vectors[kept] @ asked
        chosen = [units[j] for j in kept]
        return [Hit(chosen[i], float(cosines[i])) for i in nearest(chosen, cosines, k)]

    def _meaning_vectors(self, repo: object, memory: RepoMemory) -> tuple[list[CodeUnit], np.ndarray] | None:
        version, every = memory.snapshot()
        with self._cond:
            kept = self._meanings.get(repo)
        if kept is not None and kept[0] == version:
            return kept[1], kept[2]
        units = meaning_units(every)
        stored = [v for start in range(0, len(units), PAGE)
                  for v in self.cache.stored_passages([passage_of(u) for u in units[start:start + PAGE]])]
        if not units or any(v is None for v in stored):
            return None
        vectors = np.stack([v for v in stored if v is not None]).astype(np.float32)
        with self._cond:
            if repo in self._covered:  # not forgotten meanwhile
                self._meanings[repo] = (version, units, vectors)
        return units, vectors

    def drain(self, timeout: float) -> bool:
        """Wait until every wanted repository's vectors are made (tests, benchmarks); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._wanted, timeout)

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout=30)

    # --- the worker ---------------------------------------------------------------------------------------

    def _run(self) -> None:
        while (job := self._next()) is not None:
            repo, memory = job
            version, units = memory.snapshot()
            try:
                complete = self._fill(repo, units)
            except Exception:  # noqa: BLE001 -- a failed batch must not end the thread; the next want retries
                log.exception("repository vectors: embedding failed")
                complete = False
            with self._cond:
                if complete:
                    self._covered[repo] = version
                if self._wanted.get(repo) is memory and memory.version == version:
                    del self._wanted[repo]  # else changed meanwhile (or failed): go round again
                self._cond.notify_all()

    def _next(self) -> tuple[object, RepoMemory] | None:
        with self._cond:
            self._cond.wait_for(lambda: self._stop or bool(self._wanted))
            if self._stop:
                return None
            repo = next(iter(self._wanted))
            return repo, self._wanted[repo]

    def _fill(self, repo: object, units: list[CodeUnit]) -> bool:
        """Embed every unit without a stored vector; False if the repository changed or went meanwhile."""
        missing = self._missing(units)
        self._count(repo, len(missing))
        missing.sort(key=len)  # a batch pads to its longest passage: alike lengths together waste less inference
        for start in range(0, len(missing), BATCH):
            if not self._wait_idle(repo):
                return False
            self.cache.passages(missing[start : start + BATCH])
            self._count(repo, len(missing) - start - BATCH)
        return True

    def _missing(self, units: list[CodeUnit]) -> list[str]:
        """The passages of `units` that have no stored vector."""
        passages = sorted({passage_of(u) for u in units if has_vector(u)})
        return [p for start in range(0, len(passages), PAGE)
                for p in self.cache.unstored_passages(passages[start : start + PAGE])]

    def _count(self, repo: object, left: int) -> None:
        with self._cond:
            self._left[repo] = max(0, left)

    def _wait_idle(self, repo: object) -> bool:
        """Until no request is served; False when the work is no longer wanted (stopped, forgotten)."""
        while True:
            with self._cond:
                if self._stop or repo not in self._wanted:
                    return False
            if self.is_idle():
                return True
            threading.Event().wait(IDLE_POLL_S)
