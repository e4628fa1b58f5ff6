"""What an embedder is (one long-lived model; queries and passages in batches; unit-length float32 rows), the
name of its vector space, and the deterministic stand-in for unit tests."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

Vectors = np.ndarray  # shape (n, dim), float32, each row L2-normalised


class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...  # names the vector space; two models never share one

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors: ...


def head_of(embedder: object, text: str, tokens: int) -> str:
    """`text` up to its first `tokens` tokens as the model reads them (its own tokenizer): what a request is about
    is said first, and the rest of a long one costs inference time without changing the ranking measurably. A
    model without a readable tokenizer (the stand-in) gets the text whole."""
    tokenizer = getattr(embedder, "backend_tokenizer", None)
    if tokenizer is None:
        return text
    offsets = tokenizer.encode(text, add_special_tokens=False).offsets
    return text if len(offsets) <= tokens else text[: offsets[tokens - 1][1]]


def vector_name(model_id: str) -> str:
    """A Qdrant-safe vector name per model, e.g. `multilingual-e5-small-384`."""
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", model_id.rsplit("/", 1)[-1]).strip("-").lower()
    digest = hashlib.sha1(model_id.encode()).hexdigest()[:6]
    return f"{slug}-{digest}"


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
