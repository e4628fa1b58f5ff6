"""One bounded cache for everything kept in memory across requests (prepared refs, sources, query vectors)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A map that forgets its least recently used entries past `size` entries or past `max_bytes` (each
    entry weighed once, by `weigh`, when put); safe across request threads. A count alone let a few dozen large
    prepared refs hold hundreds of MB (`make loadtest` watches RSS); a byte bound keeps the service's memory
    flat whatever the callers send. The newest entry is always kept, however large: the request that made it
    is using it."""

    def __init__(self, size: int, max_bytes: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        if (max_bytes is None) != (weigh is None):
            raise ValueError("max_bytes and weigh go together")
        self.size = size
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: K, value: V) -> V:
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, weight)
            self._bytes += weight
            while len(self._items) > 1 and (len(self._items) > self.size or self._over_bytes()):
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
        return value

    def pop(self, key: K) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    def drop_where(self, doomed: Callable[[K], bool]) -> None:
        """Forget every entry whose key matches (a deleted ref's prepared projections)."""
        with self._lock:
            for key in [k for k in self._items if doomed(k)]:
                self._bytes -= self._items.pop(key)[1]

    def _over_bytes(self) -> bool:
        return self.max_bytes is not None and self._bytes > self.max_bytes
