"""The models the engine runs on: the tokenizer, the dense model (behind a slot the background preparation can swap
it in), the static first stage, and which stage of each serves."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxsieve.ingest.embedding import Embedder, Vectors, load_embedder, resolve_model_path
from ctxsieve.ingest.static_model import StaticEmbedder, ensure_static
from ctxsieve.ingest.tokens import TiktokenTokenizer, load_tokenizer

from .settings import Settings

log = logging.getLogger("ctxsieve")


class SwappableEmbedder:
    """The dense model as the engine holds it: one embedder now, another of the same vector space later (torch
    until the ONNX export is made, then ONNX Runtime or OpenVINO). A swap is one assignment: a call already
    running finishes on the model it started on, the next one runs on the new one."""

    def __init__(self, embedder: Embedder) -> None:
        self.current = embedder

    @property
    def model_id(self) -> str:
        return self.current.model_id

    @property
    def dim(self) -> int:
        return self.current.dim

    @property
    def runtime(self) -> str:
        return str(getattr(self.current, "runtime", "torch"))

    @property
    def backend_tokenizer(self) -> Any:
        return getattr(self.current, "backend_tokenizer", None)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.current.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self.current.embed_passages(texts)

    def swap(self, embedder: Embedder) -> None:
        """Only a model of the same vector space (model id and width) takes the place: stored vectors stay valid."""
        if (embedder.model_id, embedder.dim) != (self.model_id, self.dim):
            raise ValueError(f"{embedder.model_id} ({embedder.dim}-d) cannot stand in for {self.model_id} "
                             f"({self.dim}-d): another vector space")
        self.current = embedder


@dataclass
class Stages:
    """Which stage serves: the dense model's runtime, fast mode's first stage (`static`, or `none`: BM25 alone), and
    what the background preparation still makes (`pending`); `detail` says why it stopped, if it failed."""

    dense: str
    first_stage: str
    pending: list[str] = field(default_factory=list)
    detail: str | None = None
    began: float = field(default_factory=time.monotonic)
    finished: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def done(self, part: str, value: str) -> None:
        with self._lock:
            setattr(self, part, value)
            self.pending = [p for p in self.pending if p != part]
            if not self.pending:
                self.finished = time.monotonic()

    def failed(self, why: str) -> None:
        with self._lock:
            self.detail, self.finished = why, time.monotonic()

    def report(self) -> dict[str, object]:
        """/readyz's `stages`: `background_seconds` is how long the background work has run, or ran."""
        with self._lock:
            until = self.finished if self.finished is not None else time.monotonic()
            return {"dense": self.dense, "first_stage": self.first_stage, "pending": list(self.pending),
                    "background": "failed" if self.detail else "running" if self.pending else "done",
                    "background_seconds": round(until - self.began, 1) if self.pending or self.finished else 0.0,
                    "detail": self.detail}


@dataclass
class Models:
    tokenizer: TiktokenTokenizer
    embedder: Embedder
    static: StaticEmbedder | None
    stages: Stages | None = None  # None: injected (tests), nothing prepared in the background

    def serving(self) -> Stages:
        return self.stages or Stages(str(getattr(self.embedder, "runtime", "torch")),
                                     "static" if self.static is not None else "none")


def load_models(settings: Settings) -> Models:
    """Everything in its final stage, waiting for what is not prepared yet (`ctxsieve ingest`, `migrate`)."""
    tokenizer = load_tokenizer(settings.encoding, settings.tiktoken_cache_dir)
    embedder = load_embedder(settings.embed_model, settings.model_dir, settings.inference_threads,
                             settings.int8, settings.runtime)
    embedder.embed_queries(["warm-up"])  # first inference allocates; do it before reporting ready
    log.info("model %s loaded (%d-d), encoding %s", embedder.model_id, embedder.dim, tokenizer.name)
    return Models(tokenizer, embedder, load_static(settings, embedder))


def static_wanted(settings: Settings) -> bool:
    folder = Path(resolve_model_path(settings.embed_model, settings.model_dir))
    return settings.static_stage and (folder / "tokenizer.json").exists()


def load_static(settings: Settings, embedder: Embedder | None = None) -> StaticEmbedder | None:
    """The fast mode's first stage; made once from the model's token embeddings, sharing its vocabulary."""
    if not static_wanted(settings):
        log.info("no static first stage: fast mode ranks candidates by BM25 alone")
        return None
    folder = Path(resolve_model_path(settings.embed_model, settings.model_dir))
    return ensure_static(folder, settings.model_dir, getattr(embedder, "backend_tokenizer", None))
