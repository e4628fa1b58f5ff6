"""Retrieval core over Qdrant: sources and refs, chunk vectors, lexical index, ranking, packing."""
