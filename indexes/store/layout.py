"""Where things live: the spaces the core keeps, and the data directory's folders. Named here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Spaces (a Qdrant collection each on a server, a shard each in Qdrant Edge). Those holding vectors carry the
# model's vector name, so two models never share a vector space.
SOURCES = "sources"
SESSIONS = "sessions"
REPOS = "repos"  # repositories' heads, files and code units (no vectors)
_CHUNK_VECTORS = "chunks__"
_COLLECTIONS = "collections__"
_TOOLSETS = "toolsets__"
SERVER_PREFIX = "ctxsieve_"  # a space's collection on a Qdrant server


def chunk_vectors(vector: str) -> str:
    """The chunk-vector cache of one model (fetched by id, never searched)."""
    return _CHUNK_VECTORS + vector


def collection_chunks(vector: str) -> str:
    """Static collections' documents and chunks for one model (searched by vector)."""
    return _COLLECTIONS + vector


def toolsets(vector: str) -> str:
    """Toolset heads, tools and recorded uses for one model."""
    return _TOOLSETS + vector


def is_searched(space: str) -> bool:
    """Spaces searched by vector: the ones whose HNSW indexes `ctxsieve optimize` builds."""
    return space.startswith(_COLLECTIONS)


@dataclass(frozen=True)
class DataDir:
    """The data directory's layout: Qdrant Edge's shards, a conversion under way, and the pre-Edge files."""

    root: Path

    @property
    def edge(self) -> Path:
        return self.root / "edge"

    @property
    def edge_partial(self) -> Path:
        return self.root / "edge.partial"

    @property
    def old_qdrant(self) -> Path:
        return self.root / "qdrant"

    def holds_old_layout(self) -> bool:
        return (self.old_qdrant / "meta.json").exists() and not self.edge.exists()
