"""The one in-memory cache: bounded by entries and by bytes, recency kept, the newest entry never dropped."""

from __future__ import annotations

import pytest

from ctxsieve.indexes.lru import Lru


def test_forgets_least_recently_used_past_size() -> None:
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.put("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3


def test_byte_bound_evicts_oldest_until_it_fits() -> None:
    lru: Lru[str, bytes] = Lru(100, max_bytes=10, weigh=len)
    for key in "abcd":
        lru.put(key, b"xxxx")
    assert len(lru) == 2 and lru.nbytes == 8
    assert lru.get("a") is None and lru.get("b") is None and lru.get("d") == b"xxxx"


def test_replacing_a_key_counts_its_bytes_once() -> None:
    lru: Lru[str, bytes] = Lru(100, max_bytes=10, weigh=len)
    lru.put("a", b"xxxxxx")
    lru.put("a", b"xxxxxx")
    assert len(lru) == 1 and lru.nbytes == 6


def test_an_entry_larger_than_the_bound_is_kept_alone() -> None:
    lru: Lru[str, bytes] = Lru(100, max_bytes=10, weigh=len)
    lru.put("small", b"xx")
    lru.put("huge", b"x" * 50)
    assert lru.get("huge") is not None and lru.get("small") is None and lru.nbytes == 50


def test_bytes_need_a_weigher() -> None:
    with pytest.raises(ValueError):
        Lru(10, max_bytes=10)
