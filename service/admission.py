"""Admission control for work that runs the model: a bounded number running, a bounded queue, then 429.

Unbounded queueing turns a burst into minutes of latency for everyone; refusing early with Retry-After
lets the agent back off while requests already admitted finish on time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ctxsieve.indexes.errors import Overloaded


class AdmissionGate:
    def __init__(self, running: int, waiting: int, retry_after: float = 1.0) -> None:
        self._running = threading.Semaphore(running)
        self._admitted = threading.Semaphore(running + waiting)
        self._lock = threading.Lock()
        self._depth = 0
        self.retry_after = retry_after

    @property
    def depth(self) -> int:
        """Requests admitted and not finished (running or queued)."""
        return self._depth

    @contextmanager
    def admit(self) -> Iterator[None]:
        if not self._admitted.acquire(blocking=False):
            raise Overloaded("too many requests in flight; retry after a moment", self.retry_after)
        with self._lock:
            self._depth += 1
        try:
            with self._running:
                yield
        finally:
            with self._lock:
                self._depth -= 1
            self._admitted.release()
