"""The dense model on torch through sentence-transformers: any model name or path, and the reference the other
runtimes are checked against."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .base import Vectors
from .loading import model_id_for, quiet_loading, resolve_model_path


@dataclass
class SentenceTransformerEmbedder:
    """Any sentence-transformers model; `query: `/`passage: ` prompts when the model declares them."""

    model: Any
    model_id: str
    batch_size: int = 8  # small batches pad less (the lengths differ); chosen with `python -m bench.speed`
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def dim(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def backend_tokenizer(self) -> Any:
        """The model's `tokenizers.Tokenizer` (None for a slow tokenizer), for others to share."""
        return getattr(self.model.tokenizer, "backend_tokenizer", None)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, "passage")

    def _encode(self, texts: Sequence[str], prompt: str) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        prompt_name = prompt if prompt in (self.model.prompts or {}) else None
        # One inference at a time: torch already uses every core for a single batch.
        with self._lock:
            vectors = self.model.encode(
                list(texts), prompt_name=prompt_name, batch_size=self.batch_size,
                normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def load_sentence_transformer(name: str, model_dir: Path, threads: int | None = None, int8: bool = False
                              ) -> SentenceTransformerEmbedder:
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    # Our numpy products are small (a query against 10k vectors); OpenBLAS's own threads spin-wait after
    # each one and took the cores torch needed (a query embedding took twice as long with them).
    threadpool_limits(1, user_api="blas")
    path = resolve_model_path(name, model_dir)
    with quiet_loading():
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
    model_id = model_id_for(name, path)
    if int8:
        # Dynamic int8 linear layers: faster on CPU, but its vectors differ from fp32 ones (bench/README.md: int8), so
        # it is another model id and its vectors never mix with the fp32 model's.
        with quiet_loading():
            torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
                model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        model_id += "-int8"
    return SentenceTransformerEmbedder(model=model, model_id=model_id)


