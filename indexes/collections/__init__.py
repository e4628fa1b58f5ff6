"""Static collections: `index` (ingest and query), `records` (what is stored), `filters` (a query's metadata
filter as engine conditions)."""

from __future__ import annotations

from .filters import index_kind, translate_filter
from .index import CollectionHit, CollectionIndex, CollectionInfo, CollectionResult, QueryParams
from .records import ChunkRecord, CollectionHead, DocumentRecord, NewDocument

__all__ = ["ChunkRecord", "CollectionHead", "CollectionHit", "CollectionIndex", "CollectionInfo", "CollectionResult",
           "DocumentRecord", "NewDocument", "QueryParams", "index_kind", "translate_filter"]
