"""A static (per-token) embedding distilled from the dense model, for a cheap first ranking stage.

The model2vec recipe, done here so it needs nothing but the converted model: every vocabulary token is
run through the encoder alone, the outputs are reduced by PCA, and weighted by log rank (SentencePiece
ids run roughly from frequent to rare) so that common pieces count less. A text's vector is the mean of
its tokens' vectors: ~thousands of chunks a second on a CPU, against tens for the full encoder.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .embedding.loading import quiet_loading
from .prepared import current, record, writing

log = logging.getLogger("ctxsieve")
STATIC_VERSION = "1"


@dataclass
class StaticEmbedder:
    vectors: np.ndarray  # (vocab, dim) float16, memory-mapped: only rows in use are resident
    tokenizer: Any  # tokenizers.Tokenizer
    special: frozenset[int]

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # The fast variant skips character offsets, which are not needed here (most of the tokenizing time).
        for row, encoding in enumerate(self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)):
            ids = [i for i in encoding.ids if i not in self.special and i < len(self.vectors)]
            if ids:
                out[row] = self.vectors[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


Encode = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (ids, mask) -> hidden states (batch, tokens, dim)


def session_encoder(session: Any) -> Encode:
    """The dense model's own inference (ONNX Runtime, or OpenVINO behind the same `run` call) as an encoder."""
    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.asarray(session.run(None, {"input_ids": ids, "attention_mask": mask})[0])
    return encode


def _torch_encoder(model_folder: Path) -> Encode:
    """Without an exported model (torch serving it): the model on torch, its linear layers in int8 to shorten
    the minutes this takes; the vectors stay close to fp32's, plenty for a stage that only picks candidates."""
    import torch
    from transformers import AutoModel

    with quiet_loading():
        model = AutoModel.from_pretrained(str(model_folder), local_files_only=True).eval()
        model = torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
            model, {torch.nn.Linear}, dtype=torch.qint8)

    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)  # type: ignore
                         ).last_hidden_state.float().numpy()
    return encode


def distil(model_folder: Path, encode: Encode | None = None, dim: int = 256, batch: int = 4096) -> np.ndarray:
    """Run every token through the encoder alone (`encode`: the dense model's runtime; torch int8 without one);
    PCA to `dim`; weight by log rank."""
    from tokenizers import Tokenizer

    encode = encode or _torch_encoder(model_folder)
    tokenizer = Tokenizer.from_file(str(model_folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab_size()
    frame = tokenizer.encode("").ids  # the model's own start and end tokens, e.g. <s> </s> or [CLS] [SEP]
    bos, eos = frame[0], frame[-1]
    rows = []
    for start in range(0, vocab, batch):
        ids = np.arange(start, min(start + batch, vocab), dtype=np.int64)[:, None]
        inputs = np.concatenate([np.full_like(ids, bos), ids, np.full_like(ids, eos)], axis=1)
        rows.append(encode(inputs, np.ones_like(inputs)).mean(axis=1, dtype=np.float32))
    embeddings = np.concatenate(rows)
    embeddings -= embeddings.mean(axis=0)
    _, _, components = np.linalg.svd(embeddings[:: max(1, vocab // 50_000)], full_matrices=False)
    reduced = embeddings @ components[:dim].T
    reduced *= np.log1p(np.arange(vocab, dtype=np.float32))[:, None]
    return np.asarray(reduced, dtype=np.float32)


def distiller(embedder: Any) -> tuple[str, Encode | None]:
    """Which runtime distils, named (the name keys the table): the dense model's own when it runs on OpenVINO,
    torch int8 otherwise (on this machine torch int8 distils in 105 s, ONNX Runtime fp32 in 152 s and OpenVINO
    bf16 in 65 s: `python -m bench.speed --distil`, bench/results/distil.txt)."""
    runtime = getattr(embedder, "runtime", "")
    if runtime.startswith("openvino"):
        return runtime, session_encoder(embedder.session)
    return "torch-int8", None


def static_table(model_folder: Path, cache_dir: Path, embedder: Any = None) -> tuple[Path, list[Path], str]:
    """Where the table distilled through `embedder`'s runtime (`distiller`) is kept, what it is made from and the
    version of its step: the file the runtime compiled changes the table too (OpenVINO's IR, its weights' type)."""
    name, encode = distiller(embedder)
    if encode is not None:
        name += f":{getattr(embedder, 'compiled_from', '')}"
    version = f"{STATIC_VERSION}:{name}"
    target = cache_dir / f"static-{model_folder.name}-{hashlib.sha256(version.encode()).hexdigest()[:12]}.npy"
    return target, [model_folder / "model.safetensors", model_folder / "tokenizer.json"], version


def static_ready(model_folder: Path, cache_dir: Path, embedder: Any = None) -> bool:
    """The table is distilled already: `ensure_static` only loads it (a second)."""
    return current(*static_table(model_folder, cache_dir, embedder))


def ensure_static(model_folder: Path, cache_dir: Path, tokenizer: Any = None, embedder: Any = None) -> StaticEmbedder:
    """Distil once (a minute or two on a CPU) into cache_dir, recognised by the content of the model's weights and
    vocabulary and named by the runtime that distils it (`distiller`); then load in a second.

    `tokenizer`, the dense model's own `tokenizers.Tokenizer` when it is loaded, lends its vocabulary:
    a second copy of the 250k-piece model costs ~290 MB of RSS. `embedder`, the dense model as loaded, lends
    its inference when that is the faster way to distil.
    """
    target, inputs, version = static_table(model_folder, cache_dir, embedder)
    if not current(target, inputs, version):
        name = version.split(":", 1)[1]
        log.info("distilling the static first stage of %s through %s once (a minute or two)...", model_folder.name,
                 name)
        cache_dir.mkdir(parents=True, exist_ok=True)
        with writing(target) as partial:
            np.save(partial, distil(model_folder, distiller(embedder)[1]).astype(np.float16))
        record(target, inputs, version)
    own = sharing(tokenizer) if tokenizer is not None else _from_folder(model_folder)
    special = {*own.encode("").ids, *(own.token_to_id(t) for t in ("<pad>", "[PAD]", "<unk>", "[UNK]"))}
    # Kept as stored (float16) and mapped, not copied to float32: 128 MB of file pages the kernel can
    # drop, against 256 MB of heap. Rows are widened per text, so the vectors are the same as before.
    table = np.load(target, mmap_mode="r")
    return StaticEmbedder(table, own, frozenset(i for i in special if i is not None))


def _from_folder(model_folder: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(model_folder / "tokenizer.json"))


def sharing(tokenizer: Any) -> Any:
    """A tokenizer over the same vocabulary model (shared, not copied) with its own settings.

    The dense model's wrapper turns truncation and padding on in its tokenizer; this one must not
    see them (and must not race them), so it gets its own pipeline around the shared model.
    """
    from tokenizers import Tokenizer

    own = Tokenizer(tokenizer.model)
    for part in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        if getattr(tokenizer, part) is not None:
            setattr(own, part, getattr(tokenizer, part))
    added = tokenizer.get_added_tokens_decoder()  # <s>, <mask>...: the vocabulary outside the model
    own.add_special_tokens([added[i] for i in sorted(added)])
    return own
