"""The store protocol every adapter implements, and what all of them share: error wording and paging."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from ..errors import StoreUnavailable
from .types import Found, IndexKind, PointData, Search, SpaceSpec, Where

T = TypeVar("T")


class Store(Protocol):
    def ensure(self, spec: SpaceSpec) -> None: ...
    def index(self, space: str, field: str, kind: IndexKind) -> None: ...
    def upsert(self, space: str, points: Sequence[PointData]) -> None: ...
    def get(self, space: str, keys: Sequence[str], *, payload: bool | tuple[str, ...] = True,
            vectors: tuple[str, ...] = ()) -> dict[str, Found]: ...
    def delete(self, space: str, keys: Sequence[str]) -> None: ...
    def delete_where(self, space: str, condition: Where) -> None: ...
    def search(self, space: str, searches: Sequence[Search]) -> list[list[Found]]: ...
    def scroll(self, space: str, condition: Where | None, *, limit: int, offset: str | None = None,
               payload: bool | tuple[str, ...] = True, vectors: tuple[str, ...] = (),
               order_by: str | None = None, descending: bool = False) -> tuple[list[Found], str | None]: ...
    def count(self, space: str, condition: Where | None) -> int: ...
    def tally(self, space: str, key: str, value: str) -> int: ...
    def set_where(self, space: str, condition: Where, payload: Mapping[str, Any]) -> None: ...
    def facet(self, space: str, key: str, condition: Where | None, limit: int) -> dict[Any, int]: ...
    def ping(self) -> bool: ...
    def close(self) -> None: ...


def scroll_all(store: Store, space: str, condition: Where | None, *, payload: bool | tuple[str, ...] = True,
               vectors: tuple[str, ...] = (), page: int = 1024, most: int | None = None) -> Iterator[Found]:
    """Every point matching, page by page (listings and exports; never a query's hot path)."""
    offset: str | None = None
    seen = 0
    while True:
        found, offset = store.scroll(space, condition, limit=page, offset=offset, payload=payload, vectors=vectors)
        for item in found:
            yield item
            seen += 1
            if most is not None and seen >= most:
                return
        if offset is None:
            return


def explain_store_error(exc: BaseException) -> str:
    """Say what the operator can do: a full or read-only disk is fixed outside, and writes then resume."""
    detail = f"{type(exc).__name__}: {exc}"
    errno_ = getattr(exc, "errno", None)
    lowered = detail.lower()
    if errno_ == 28 or "disk is full" in lowered or "no space left" in lowered or "storagefull" in lowered:
        return (f"the data directory is full ({detail}); free some space: writes resume without a restart, "
                "and nothing already acknowledged was lost")
    if errno_ == 30 or "read-only" in lowered or "readonly" in lowered:
        return (f"the data directory is read-only ({detail}); make it writable: writes resume without a "
                "restart, and nothing already acknowledged was lost")
    return f"vector store error: {detail}"


def guarded(fn: Callable[[], T]) -> T:
    """Run one engine call; whatever the engine raises becomes StoreUnavailable with the operator's wording."""
    try:
        return fn()
    except (StoreUnavailable, ValueError):
        raise
    except Exception as exc:  # both engines raise many types (RuntimeError, OSError, their own)
        raise StoreUnavailable(explain_store_error(exc)) from exc
