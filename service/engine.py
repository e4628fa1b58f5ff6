"""Wiring: build the core (tokenizer, store, model, sieve) from settings, in the background.

The model takes seconds to load and convert on first use; the service answers /healthz at once and
/readyz only when the model is loaded, warmed and the store reachable. Requests that need the engine
before then get 503 with a clear message rather than a hung connection. On a first start what is slow to prepare
(the ONNX export, the static stage) is made in the background while a stand-in serves (`stages`).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from ctxsieve.indexes.background import BackgroundEmbedder
from ctxsieve.indexes.collections import CollectionIndex
from ctxsieve.indexes.errors import CtxsieveError
from ctxsieve.indexes.files import FileReader
from ctxsieve.indexes.repos import RepoIndex, UnitVectors
from ctxsieve.indexes.sessions import SessionLog
from ctxsieve.indexes.sieve import Sieve
from ctxsieve.indexes.sources import SourceStore, utc_stamp
from ctxsieve.indexes.store import DataDir, Store, open_store
from ctxsieve.indexes.tools import ToolIndex
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.indexes.websearch import TavilySearch, WebSearch
from ctxsieve.ingest.embedding import Embedder
from ctxsieve.ingest.static_model import StaticEmbedder
from ctxsieve.ingest.tokens import TiktokenTokenizer

from .admission import AdmissionGate
from .errors import NotReady
from .models import Models, load_models, load_static
from .settings import Settings
from .stages import Preparation, start_models

__all__ = ["Engine", "EngineHolder", "Models", "build_engine", "load_models", "load_static"]

log = logging.getLogger("ctxsieve")


@dataclass(kw_only=True)
class Engine:
    settings: Settings
    tokenizer: TiktokenTokenizer
    store: Store
    embedder: Embedder
    sieve: Sieve
    tools: ToolIndex
    collections: CollectionIndex
    sessions: SessionLog
    web: WebSearch
    files: FileReader
    repos: RepoIndex
    gate: AdmissionGate


def build_engine(settings: Settings, models: Models, store: Store | None = None) -> Engine:
    """Everything the routes use, on `store` when one is given (tests), else the one settings name."""
    if store is not None:
        return _build_on(store, settings, models)
    store = open_store(settings.data_dir, settings.qdrant_url, settings.qdrant_api_key, settings.qdrant_timeout,
                       settings.min_free_mb << 20)
    try:
        return _build_on(store, settings, models)
    except BaseException:
        store.close()  # releases the data dir for the next attempt
        raise


def old_layout(settings: Settings) -> str | None:
    """A data dir written before the move to Qdrant Edge is never silently ignored: say how to convert it."""
    folder = DataDir(settings.data_dir)
    if settings.qdrant_url or not folder.holds_old_layout():
        return None
    return (f"{folder.root} holds data in the layout of ctxsieve before Qdrant Edge (qdrant-client local mode, "
            f"{folder.old_qdrant}); convert it with `ctxsieve migrate --data-dir {folder.root}` (the old files are "
            "kept until you remove them), or point --data-dir elsewhere")


def _build_on(store: Store, settings: Settings, models: Models) -> Engine:
    tokenizer, embedder = models.tokenizer, models.embedder
    sources = SourceStore(store, tokenizer, settings.chunk_tokens, settings.source_retention_days,
                          settings.code_chunk_tokens)
    cache = EmbeddingCache(store, embedder)
    gate = AdmissionGate(settings.max_running, settings.max_queued)
    background = BackgroundEmbedder(cache, lambda: gate.depth == 0) if settings.background_embedding else None
    tools = ToolIndex(store, cache, tokenizer, settings.tool_dense_weight)
    web = TavilySearch(settings.tavily_api_key, settings.tavily_base_url, settings.tavily_timeout)
    files = FileReader(settings.read_root_paths(), settings.max_read_bytes)
    collections = CollectionIndex(store, cache, tokenizer, settings.chunk_tokens, settings.dense_weight)
    sessions = SessionLog(store, settings.session_retention_days)
    unit_vectors = UnitVectors(cache, lambda: gate.depth == 0) if settings.repo_vectors else None
    repos = RepoIndex(store, files, tokenizer, progress=_log_progress, vectors=unit_vectors)
    sieve = Sieve(sources, cache, tokenizer, dense_weight=settings.dense_weight,
                  fast_candidates=settings.fast_candidates, static=models.static, background=background,
                  fast_neighbours=settings.fast_neighbours, code_candidates=settings.code_candidates,
                  repos=repos.ranking_for)
    return Engine(settings=settings, tokenizer=tokenizer, store=store, embedder=embedder, sieve=sieve, tools=tools,
                  collections=collections, sessions=sessions, web=web, files=files, repos=repos, gate=gate)


def _log_progress(repo: str, done: int, total: int) -> None:
    if done == total or done % 1024 < 64:  # about a line per thousand files, and the last
        log.info("repository %s: %d of %d changed files indexed", repo, done, total)


class EngineHolder:
    """Starts the engine in a thread, retrying while the store is unreachable; hands it to routes."""

    def __init__(self, settings: Settings, models: Models | None = None, store: Store | None = None) -> None:
        self.settings = settings
        self.models = models  # injected (tests): nothing is loaded
        self.store = store
        self.engine: Engine | None = None
        self.error: str | None = "starting"
        self.preparation: Preparation | None = None
        self._models: Models | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctxsieve-engine", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        stranded = old_layout(self.settings)
        if stranded is not None:
            log.error("%s", stranded)
            self.error = stranded
            return
        try:
            models = self._models = self.models or start_models(self.settings)
        except Exception as exc:  # a broken model or encoding is reported by /readyz, not retried
            log.exception("model or encoding failed to load")
            self.error = f"{type(exc).__name__}: {exc}"
            return
        delay = 1.0
        while not self._stop.is_set():
            try:
                self.engine = build_engine(self.settings, models, self.store)
                self.error = None
                where = self.settings.qdrant_url or f"Qdrant Edge in {DataDir(self.settings.data_dir).edge}"
                log.info("ready: store %s; serving %s", where, _serving(models))
                self._prepare(models, self.engine)
                self._sweep_forever(self.engine)
                return
            except CtxsieveError as exc:
                self.error = str(exc)
                log.warning("store not reachable, retrying in %.0f s: %s", delay, exc)
            self._stop.wait(delay)
            delay = min(delay * 2, 30.0)

    def _prepare(self, models: Models, engine: Engine) -> None:
        """What the first start left to the background, made now (the engine serves meanwhile)."""
        if models.stages is None or not models.stages.pending or self._stop.is_set():
            return

        def use_static(static: StaticEmbedder) -> None:
            engine.sieve.static = static

        self.preparation = Preparation(self.settings, models, use_static)
        self.preparation.start()

    def _sweep_forever(self, engine: Engine) -> None:
        """Retention, in this thread: expired sources become tombstones, old session reads go."""
        while not self._stop.is_set():
            try:
                engine.sieve.expire()
                engine.sessions.expire()
            except CtxsieveError as exc:  # a store hiccup: the next sweep tries again
                log.warning("retention sweep failed: %s", exc)
            self._stop.wait(self.settings.sweep_seconds)

    def get(self) -> Engine:
        if self.engine is None:
            raise NotReady(f"ctxsieve is not ready yet ({self.error}); retry shortly, GET /readyz tells when")
        return self.engine

    def close(self) -> None:
        self._stop.set()
        if self.preparation is not None:
            self.preparation.close()
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        if self.engine is not None:
            if self.engine.sieve.background is not None:
                self.engine.sieve.background.close()  # before the store it writes to
            self.engine.repos.close()
            self.engine.store.close()

    def status(self) -> tuple[bool, dict[str, object]]:
        if self.engine is None:
            return False, {"model": False, "store": False, "detail": self.error}
        store_ok = self.engine.store.ping()
        return store_ok, {"model": True, "store": store_ok, "detail": None if store_ok else "store unreachable",
                          "checked_at": utc_stamp(), "stages": self.stages()}

    def stages(self) -> dict[str, object] | None:
        """Which stage serves, and what the background still prepares (None before the models are loaded)."""
        return self._models.serving().report() if self._models is not None else None


def _serving(models: Models) -> str:
    stages = models.serving()
    first = "the static first stage" if stages.first_stage == "static" else "BM25 alone as fast mode's first stage"
    later = f"; {' and '.join(stages.pending)} prepared in the background" if stages.pending else ""
    return f"the dense model on {stages.dense}, {first}{later}"
