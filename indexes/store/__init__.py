"""The store: what retrieval needs from Qdrant, as one protocol with two adapters.

- `types`: points, vectors, the filter tree and space specs (what goes in and comes out);
- `base`: the `Store` protocol, paging, and the operator's wording of engine errors;
- `translate`: the one translation to a library's types both adapters share;
- `edge`: Qdrant Edge in-process, the embedded default; `server`: qdrant-client, for a server by URL;
- `layout`: the names of the spaces and the data directory's folders.

`open_store` is the only constructor the rest of the code uses.
"""

from __future__ import annotations

from pathlib import Path

from .base import Store, explain_store_error, guarded, scroll_all
from .edge import EdgeStore
from .layout import DataDir
from .server import ClientStore
from .types import (
    Condition,
    Found,
    HasIds,
    IndexKind,
    IsEmpty,
    Match,
    MatchAny,
    PointData,
    Range,
    Search,
    SpaceSpec,
    Sparse,
    Where,
    point_id,
    where,
)

__all__ = ["ClientStore", "Condition", "DataDir", "EdgeStore", "Found", "HasIds", "IndexKind", "IsEmpty", "Match",
           "MatchAny", "PointData", "Range", "Search", "SpaceSpec", "Sparse", "Store", "Where", "explain_store_error",
           "guarded", "open_store", "open_edge", "point_id", "scroll_all", "where"]


def open_store(data_dir: Path | None = None, url: str | None = None, api_key: str | None = None,
               timeout: float = 10.0, min_free_bytes: int = 256 << 20) -> Store:
    """A URL reaches Qdrant through qdrant-client; otherwise Qdrant Edge under data_dir. Neither: qdrant-client's
    in-memory mode (tests and benchmarks that keep nothing)."""
    if url or data_dir is None:
        return ClientStore.connect(url or ":memory:", api_key, timeout)
    return open_edge(Path(data_dir), min_free_bytes=min_free_bytes)


def open_edge(data_dir: Path, *, staging: bool = False, min_free_bytes: int = 256 << 20) -> EdgeStore:
    """Qdrant Edge itself, for what only it does (offline optimize; a conversion written to a staging folder
    that becomes the data dir's store once complete)."""
    layout = DataDir(Path(data_dir))
    return EdgeStore(layout.edge_partial if staging else layout.edge, min_free_bytes)
