"""Finish embedding a source's chunks while the service is idle, so re-filtering it costs no inference.

Fast mode embeds only the first stage's candidates. A re-filter with a new query picks other candidates,
and embedding those is what made re-filtering slow. After answering, the rest of the source is queued
here; a single low-priority thread embeds it a few chunks at a time, only while no request is admitted,
so a request that arrives waits for at most one small batch. Output does not depend on how far this got:
candidates come from the first stage alone and vectors are deterministic, so it only changes latency.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

log = logging.getLogger("ctxsieve")


class PassageCache(Protocol):
    def passages(self, passages: Sequence[str]) -> object: ...


class BackgroundEmbedder:
    def __init__(self, cache: PassageCache, is_idle: Callable[[], bool], batch: int = 4, max_jobs: int = 64,
                 poll: float = 0.02) -> None:
        self.cache = cache
        self.is_idle = is_idle
        self.batch = batch
        self.max_jobs = max_jobs
        self.poll = poll
        self._jobs: OrderedDict[str, list[str]] = OrderedDict()
        self._cond = threading.Condition()
        self._busy = False
        self._stop = False
        self.embedded = 0  # passages embedded or found cached here (for metrics)
        self.dropped = 0  # jobs dropped because the queue was full (only latency is lost)
        self._thread = threading.Thread(target=self._run, name="ctxsieve-background", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        """Passages queued and not yet embedded."""
        with self._cond:
            return sum(len(p) for p in self._jobs.values())

    def submit(self, key: str, passages: Sequence[str]) -> None:
        """Queue a source's passages (newest first out of the queue when it is full: the oldest is dropped)."""
        with self._cond:
            if key in self._jobs or self._stop:
                return
            self._jobs[key] = list(passages)
            while len(self._jobs) > self.max_jobs:
                self._jobs.popitem(last=False)
                self.dropped += 1
            self._cond.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until every queued passage is embedded (benchmarks and tests); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._jobs.clear()
            self._cond.notify_all()
        self._thread.join(timeout=30)

    def _next_batch(self) -> list[str] | None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._jobs or self._stop)
            if self._stop:
                return None
            key, passages = next(iter(self._jobs.items()))
            batch, rest = passages[: self.batch], passages[self.batch :]
            if rest:
                self._jobs[key] = rest
            else:
                del self._jobs[key]
            self._busy = True
            return batch

    def _wait_for_idle(self) -> bool:
        while not self.is_idle():
            with self._cond:
                if self._cond.wait_for(lambda: self._stop, self.poll):
                    return False
        return True

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            if not self._wait_for_idle():
                return
            try:
                self.cache.passages(batch)
                self.embedded += len(batch)
            except Exception:  # a store hiccup costs only latency: the next request embeds what it needs
                log.warning("background embedding failed; continuing", exc_info=True)
