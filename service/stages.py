"""A first start serves within seconds and reaches its final stages in the background (issue 44).

On a fresh machine the dense model's ONNX export (a minute or more, through torch) and the static first stage (then
distilled: one to three minutes; now made from the model's token table in seconds) kept /readyz waiting. They are
off that path now: until the export is made the service runs the same model on torch (the export is checked against
torch at cosine MIN_COSINE: the same vectors to float noise, so the same model id and stored vectors), and until the
static table is made fast mode ranks its candidates by BM25 alone (python -m bench.recall --first-stage both measures
what that costs). Meanwhile `ctxsieve prepare` runs in a child process at low priority (the requests keep the cores,
and torch's memory for the export is the child's, given back when it exits). As it says each step done, the service
loads what it made and swaps it in whole: the dense model, then the static stage. /readyz says which stage serves
(`stages`); within a stage the same request gets the same answer.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ctxsieve.ingest.embedding import Embedder, load_embedder, resolve_model_path
from ctxsieve.ingest.embedding.factory import stand_in_needed
from ctxsieve.ingest.static_model import StaticEmbedder, static_ready
from ctxsieve.ingest.tokens import load_tokenizer

from .models import Models, Stages, SwappableEmbedder, load_static, static_wanted
from .settings import Settings

log = logging.getLogger("ctxsieve")
# What `ctxsieve prepare` says when a step is done (cli.prepare writes these lines; the service reads them).
DENSE_READY = "dense model: made for "  # (the service loads it next, and says when it serves on it)
STATIC_READY = "static first stage: ready"
PREPARED_FROM_SETTINGS = ("model_dir", "embed_model", "encoding", "tiktoken_cache_dir", "runtime", "int8",
                          "static_stage", "inference_threads")
StaticSink = Callable[[StaticEmbedder], None]  # where a static stage made in the background goes (the sieve)


def start_models(settings: Settings) -> Models:
    """What serves at once: each stage that is prepared already, a stand-in for each that is not."""
    tokenizer = load_tokenizer(settings.encoding, settings.tiktoken_cache_dir)
    folder = Path(resolve_model_path(settings.embed_model, settings.model_dir))  # converts e5 once (seconds)
    pending = []
    dense: Embedder
    if stand_in_needed(settings.embed_model, settings.model_dir, settings.int8, settings.runtime):
        from ctxsieve.ingest.embedding.torch_model import load_sentence_transformer

        log.info("serving %s on torch until its ONNX export is made in the background", folder.name)
        dense = load_sentence_transformer(settings.embed_model, settings.model_dir, settings.inference_threads)
        pending.append("dense")
    else:
        dense = load_embedder(settings.embed_model, settings.model_dir, settings.inference_threads, settings.int8,
                              settings.runtime)
    static = None
    if static_wanted(settings):
        if not pending and static_ready(folder, settings.model_dir):
            static = load_static(settings, dense)
        else:
            log.info("fast mode ranks candidates by BM25 alone until the static first stage is made")
            pending.append("first_stage")
    dense.embed_queries(["warm-up"])  # first inference allocates; do it before reporting ready
    log.info("model %s loaded (%d-d) on %s, encoding %s", dense.model_id, dense.dim,
             getattr(dense, "runtime", "torch"), tokenizer.name)
    embedder = SwappableEmbedder(dense)
    stages = Stages(embedder.runtime, "static" if static is not None else "none", pending)
    return Models(tokenizer, embedder, static, stages)


def prepare_env(settings: Settings) -> dict[str, str]:
    """The child's environment: the settings `prepare` reads, as this service has them (tests set them in code)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name in PREPARED_FROM_SETTINGS:
        value = getattr(settings, name)
        key = f"CTXSIEVE_{name.upper()}"
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


class Preparation:
    """`ctxsieve prepare --background` in a child process; each step it says done is loaded here and swapped in."""

    def __init__(self, settings: Settings, models: Models, on_static: StaticSink) -> None:
        self.settings, self.models, self.on_static = settings, models, on_static
        self.stages = models.serving()
        self.process: subprocess.Popen[str] | None = None
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctxsieve-prepare", daemon=True)

    def start(self) -> None:  # the ready line said what is prepared in the background: no line of its own
        self._thread.start()

    def _run(self) -> None:
        command = [sys.executable, "-m", "ctxsieve.service.cli", "prepare", "--background"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                                        env=prepare_env(self.settings))  # its stderr: the service's log
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                self._step(line.rstrip("\n"))
        except (OSError, RuntimeError, ValueError) as exc:  # loading what it made failed: said, the stage stays
            log.exception("the background preparation's result failed to load")
            self.stages.failed(f"{type(exc).__name__}: {exc}")
            self.process.terminate()
        code = self.process.wait()
        if self.stages.pending and not self._closing.is_set() and not self.stages.detail:
            self.stages.failed(f"ctxsieve prepare exited with {code} before {', '.join(self.stages.pending)} was "
                               "ready (its lines are in this log); run `ctxsieve prepare` to see why")
            log.error("background preparation: %s", self.stages.detail)

    def _step(self, line: str) -> None:
        log.info("background: %s", line)
        if line.startswith(DENSE_READY) and "dense" in self.stages.pending:
            self._swap_dense()
        elif line.startswith(STATIC_READY) and "first_stage" in self.stages.pending:
            embedder = self.models.embedder
            dense = embedder.current if isinstance(embedder, SwappableEmbedder) else embedder
            static = load_static(self.settings, dense)
            if static is not None:
                self.on_static(static)
                self.stages.done("first_stage", "static")
                log.info("fast mode's first stage is the static embedding now")

    def _swap_dense(self) -> None:
        slot = self.models.embedder
        if not isinstance(slot, SwappableEmbedder):
            raise RuntimeError("the dense model is not swappable here")
        final = load_embedder(self.settings.embed_model, self.settings.model_dir, self.settings.inference_threads,
                              self.settings.int8, self.settings.runtime)
        final.embed_queries(["warm-up"])
        slot.swap(final)
        self.stages.done("dense", slot.runtime)
        log.info("dense model on %s now (torch let go)", slot.runtime)

    def close(self) -> None:
        """The service stops: the child is asked to stop (it removes its partial files) and waited for briefly."""
        self._closing.set()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._thread.join(timeout=15)

