"""The dense model on ONNX Runtime: the same weights and vectors as torch, sooner (`python -m bench.speed`).

`ctxsieve prepare` exports the converted model's encoder once (torch's exporter, fp32, graph optimised by
ONNX Runtime when loaded) into the model cache, recognised by the content of the weights it was made from
(`ingest.prepared`), and checks the exported graph against torch on probe texts before keeping it (cosine >=
MIN_COSINE, else it is refused).
At serve time inference runs in onnxruntime and tokenizing in `tokenizers`, from the tokenizer transformers
builds for the folder, saved once beside the export: neither torch nor transformers is imported. The vectors
equal torch's to float noise, so the model id is the same: a data dir's vectors stay valid whichever runtime
wrote them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..prepared import current, record, writing
from .loading import quiet_loading

log = logging.getLogger("ctxsieve")
ONNX_VERSION = "1"
INT8_VERSION = "1"
MIN_COSINE = 0.9999
MAX_TOKENS = 512
PROBES = ("passage: The Eiffel Tower is in Paris.", "query: 谁设计了埃菲尔铁塔？",
          "passage: " + "A long paragraph about rivers, bridges and the towns along them. " * 20)


def onnx_path(model_folder: Path, cache_dir: Path) -> Path:
    return cache_dir / f"onnx-{model_folder.name}.onnx"


def export_inputs(model_folder: Path) -> list[Path]:
    """What the export is made from: the weights and the architecture."""
    return [model_folder / "model.safetensors", model_folder / "config.json"]


def mean_pooled(model_folder: Path) -> bool:
    """Only mean-pooled models are exported (both models offered here are); others stay on torch."""
    config = model_folder / "1_Pooling" / "config.json"
    return config.exists() and bool(json.loads(config.read_text()).get("pooling_mode_mean_tokens"))


def ensure_onnx(model_folder: Path, cache_dir: Path) -> Path:
    """Export once (about a minute on 2 cores) and verify against torch; then it only loads."""
    target, inputs = onnx_path(model_folder, cache_dir), export_inputs(model_folder)
    if current(target, inputs, ONNX_VERSION):
        return target
    log.info("exporting %s to ONNX once (about a minute)...", model_folder.name)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with writing(target) as partial:
        _export(model_folder, partial)
    record(target, inputs, ONNX_VERSION)
    return target


def _export(model_folder: Path, partial: Path) -> None:
    """torch's exporter into `partial`, refused unless the graph gives torch's vectors on the probe texts."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    with quiet_loading():
        # Eager attention: traced, the SDPA path bakes the sample's mask shape into the graph.
        model = AutoModel.from_pretrained(str(model_folder), local_files_only=True,
                                          attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # type: ignore

    sample = tokenizer(list(PROBES[:2]), return_tensors="pt", padding=True)
    axes = {0: "batch", 1: "tokens"}
    with torch.inference_mode():  # before the export, which can leave the model in training mode (dropout)
        batch = tokenizer(list(PROBES), return_tensors="pt", padding=True, truncation=True, max_length=MAX_TOKENS)
        hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
        expected = _pool(hidden.numpy(), batch["attention_mask"].numpy())
    # The tracer warns that Python-side branches are frozen into the graph and that advanced indexing breaks
    # on negative indices; what counts is whether the graph gives torch's vectors, checked below on a padded
    # batch of mixed lengths. The warnings would only alarm a first `make run`.
    with quiet_loading(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Encoder(), (sample["input_ids"], sample["attention_mask"]), str(partial),
                          input_names=["input_ids", "attention_mask"], output_names=["hidden"], opset_version=17,
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "hidden": axes}, dynamo=False)
    session = _session(partial, threads=None)
    got = _pool(session.run(None, {"input_ids": batch["input_ids"].numpy().astype(np.int64),
                                   "attention_mask": batch["attention_mask"].numpy().astype(np.int64)})[0],
                batch["attention_mask"].numpy())
    cosine = float((expected * got).sum(axis=1).min())
    if cosine < MIN_COSINE:
        raise RuntimeError(f"the ONNX export of {model_folder.name} differs from torch (cosine {cosine:.6f}); "
                           "set CTXSIEVE_RUNTIME=torch")


def ensure_onnx_int8(model_folder: Path, cache_dir: Path) -> Path:
    """int8 weights, per output channel, activations quantised at run time (onnxruntime's dynamic
    quantisation) from the fp32 export: faster, at a recall cost outside the quality gate (bench/README.md: int8)."""
    source = ensure_onnx(model_folder, cache_dir)
    target = source.with_name(source.stem + "-int8.onnx")
    if current(target, [source], INT8_VERSION):
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    log.info("quantising the ONNX export of %s to int8 once...", model_folder.name)
    with writing(target) as partial:
        quantize_dynamic(str(source), str(partial), weight_type=QuantType.QInt8, per_channel=True)
    record(target, [source], INT8_VERSION)
    return target


def tokenizer_path(model_folder: Path, cache_dir: Path) -> Path:
    digest = hashlib.sha256((model_folder / "tokenizer.json").read_bytes()).hexdigest()[:12]
    return cache_dir / f"tokenizer-{model_folder.name}-{digest}.json"


def ensure_tokenizer(model_folder: Path, cache_dir: Path) -> Path:
    """The tokenizer transformers builds for the folder, as sentence-transformers uses it, saved whole so that
    serving needs only `tokenizers`. The folder's own tokenizer.json, read raw, is not it: it gives other ids
    for fullwidth and CJK punctuation (`？`, `！`, `，`), which would change every vector of such a text."""
    target = tokenizer_path(model_folder, cache_dir)
    if target.exists():
        return target
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    log.info("saving the tokenizer of %s for serving without transformers, once...", model_folder.name)
    with quiet_loading():
        built = AutoTokenizer.from_pretrained(str(model_folder), local_files_only=True).backend_tokenizer
    cache_dir.mkdir(parents=True, exist_ok=True)
    with writing(target) as partial:
        built.save(str(partial))
        saved = Tokenizer.from_file(str(partial))
        if any(saved.encode(text).ids != built.encode(text).ids for text in PROBES):
            raise RuntimeError(f"the saved tokenizer of {model_folder.name} does not reproduce transformers' ids")
    return target


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask[..., None].astype(np.float32)
    vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def _session(path: Path, threads: int | None) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its warnings about unused initialisers are noise here
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@dataclass
class OnnxEmbedder:
    """Texts sorted by length into batches (a batch pads to its longest text), prompts as sentence-
    transformers applies them, mean pooling, unit length."""

    session: Any
    tokenizer: Any  # tokenizers.Tokenizer, truncating at MAX_TOKENS
    model_id: str
    dim: int
    prompts: dict[str, str]
    runtime: str = "onnx-fp32"  # what runs `session`
    batch_size: int = 8
    width_step: int = 1  # batches pad to a multiple of this many tokens (masked out): fewer shapes to compile
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def backend_tokenizer(self) -> Any:
        return self.tokenizer

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage")

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        prefix = self.prompts.get(prompt, "")
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(texts)), key=lambda i: (len(encodings[i].ids), i))
        with self._lock:  # one inference at a time: a session already uses every core
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                longest = max(len(encodings[i].ids) for i in rows)
                width = min(-(-longest // self.width_step) * self.width_step, max(longest, MAX_TOKENS))
                ids = np.zeros((len(rows), width), dtype=np.int64)  # the pad id is 1 for e5, but masked out
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for r, i in enumerate(rows):
                    n = len(encodings[i].ids)
                    ids[r, :n], mask[r, :n] = encodings[i].ids, 1
                out[rows] = _pool(self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0], mask)
        return out


def load_onnx(model_folder: Path, cache_dir: Path, model_id: str, threads: int | None, int8: bool = False
              ) -> OnnxEmbedder:
    """Built by `ctxsieve prepare` (export and tokenizer); at serve time only loaded, without torch."""
    path = ensure_onnx_int8(model_folder, cache_dir) if int8 else ensure_onnx(model_folder, cache_dir)
    tokenizer, dim, prompts = model_parts(model_folder, cache_dir)
    # int8 vectors differ from fp32 ones (and from torch's int8 ones), so they are another model id: they
    # never mix in a store.
    return OnnxEmbedder(_session(path, threads), tokenizer, model_id + ("-onnx-int8" if int8 else ""), dim,
                        prompts, "onnx-int8" if int8 else "onnx-fp32")


def model_parts(model_folder: Path, cache_dir: Path) -> tuple[Any, int, dict[str, str]]:
    """What every runtime of the export shares: its tokenizer (truncating at MAX_TOKENS), its width and prompts."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(ensure_tokenizer(model_folder, cache_dir)))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    config = model_folder / "config_sentence_transformers.json"
    prompts = json.loads(config.read_text()).get("prompts", {}) if config.exists() else {}
    dim = int(json.loads((model_folder / "config.json").read_text())["hidden_size"])
    return tokenizer, dim, dict(prompts)
