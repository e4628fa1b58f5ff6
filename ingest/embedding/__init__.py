"""Embedding as a small family without a cycle:

- `base`: the `Embedder` protocol, `vector_name`, and `HashingEmbedder` (the unit tests' stand-in);
- `loading`: which folder a model name means, the id its vectors get, loading without noise;
- `torch_model` and `onnx_model`: the backends (sentence-transformers on torch; ONNX Runtime at serve time);
- `factory`: `load_embedder`, the one place a setting becomes an embedder.

Backends are imported by the factory only when chosen (torch is not imported to serve on ONNX Runtime).
"""

from __future__ import annotations

from .base import Embedder, HashingEmbedder, Vectors, head_of, vector_name
from .factory import load_embedder
from .loading import model_id_for, quiet_loading, resolve_model_path

__all__ = ["Embedder", "HashingEmbedder", "Vectors", "head_of", "load_embedder", "model_id_for", "quiet_loading",
           "resolve_model_path", "vector_name"]
