"""A static (per-token) embedding made from the dense model, for a cheap first ranking stage.

Made from nothing but the converted model, in seconds: the model's token table (its input embeddings) reduced by
PCA and weighted by log rank (SentencePiece ids run roughly from frequent to rare) so that common pieces count
less. A text's vector is the mean of its tokens' vectors: ~thousands of chunks a second on a CPU, against tens for
the full encoder.
"""

from __future__ import annotations

import glob
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .prepared import current, record, record_path, recorded_version, writing

log = logging.getLogger("ctxsieve")
STATIC_VERSION = "2:token-table"  # 1: every token run through the encoder


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


def make_table(model_folder: Path, dim: int = 256) -> np.ndarray:
    """The model's own token table (its input embeddings, read from its weights), centred, PCA to `dim`, weighted
    by log rank, as stored (float16). No token is run through the encoder: the model2vec recipe's forward pass over
    250k pieces took 2-3 CPU minutes on torch int8 and ranked no better here (fast mode's evidence recall on SQuAD
    and CMRC within 0.007 either way: bench/README.md, "The static first stage"); this takes seconds."""
    table = token_table(model_folder)
    vocab, dim = len(table), min(dim, table.shape[1])  # a model narrower than `dim` keeps all its axes
    mean = table.mean(axis=0, dtype=np.float64)
    # The principal axes from the covariance of a sample (exact eigenvectors, a tenth of a second) rather than an
    # SVD of the sample itself (seconds): the same axes, up to sign.
    sample = table[:: max(1, vocab // 50_000)] - mean
    _, axes = np.linalg.eigh(sample.T @ sample)
    top = axes[:, ::-1][:, :dim].astype(np.float32)
    weight = np.log1p(np.arange(vocab, dtype=np.float32))[:, None]
    # By blocks of rows, into the stored type: a centred copy of the whole table is 384 MB more to fault in.
    reduced = np.empty((vocab, dim), dtype=np.float16)
    for start in range(0, vocab, 16_384):
        rows = slice(start, start + 16_384)
        reduced[rows] = ((table[rows] - mean.astype(np.float32)) @ top) * weight[rows]
    return reduced


def token_table(model_folder: Path) -> np.ndarray:
    """The input embeddings in `model.safetensors`: the tensor named as BERT-like models name it, or else the one
    2-D tensor with a row per piece of the model's vocabulary."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(model_folder / "tokenizer.json")).get_vocab_size()
    with safe_open(str(model_folder / "model.safetensors"), "np") as weights:
        names = list(weights.keys())
        named = [n for n in names if n.endswith(("word_embeddings.weight", "embed_tokens.weight"))]
        shaped = [n for n in names if weights.get_slice(n).get_shape()[:1] == [vocab]
                  and len(weights.get_slice(n).get_shape()) == 2]
        if not (named or shaped):
            raise ValueError(f"{model_folder.name}: no token embeddings with {vocab} rows in model.safetensors")
        chosen = (named or shaped)[0]
        if weights.get_slice(chosen).get_dtype() != "BF16":
            return np.asarray(weights.get_tensor(chosen)[:vocab], dtype=np.float32)
    with safe_open(str(model_folder / "model.safetensors"), "pt") as weights:  # numpy has no bfloat16: via torch
        return np.asarray(weights.get_tensor(chosen)[:vocab].float().numpy(), dtype=np.float32)


def static_table(model_folder: Path, cache_dir: Path) -> tuple[Path, list[Path], str]:
    """Where the table is kept, what it is made from and the version of its step."""
    target = cache_dir / f"static-{model_folder.name}-{hashlib.sha256(STATIC_VERSION.encode()).hexdigest()[:12]}.npy"
    return target, [model_folder / "model.safetensors", model_folder / "tokenizer.json"], STATIC_VERSION


def static_ready(model_folder: Path, cache_dir: Path) -> bool:
    """The table is made already: `ensure_static` only loads it (a second)."""
    return current(*static_table(model_folder, cache_dir))


def ensure_static(model_folder: Path, cache_dir: Path, tokenizer: Any = None) -> StaticEmbedder:
    """Make the table once (seconds) into cache_dir, recognised by the content of the model's weights and
    vocabulary; then load it in a second.

    `tokenizer`, the dense model's own `tokenizers.Tokenizer` when it is loaded, lends its vocabulary:
    a second copy of the 250k-piece model costs ~290 MB of RSS.
    """
    target, inputs, version = static_table(model_folder, cache_dir)
    if not current(target, inputs, version):
        _make(model_folder, target, inputs, version)
    own = sharing(tokenizer) if tokenizer is not None else _from_folder(model_folder)
    special = {*own.encode("").ids, *(own.token_to_id(t) for t in ("<pad>", "[PAD]", "<unk>", "[UNK]"))}
    # Kept as stored (float16) and mapped, not copied to float32: 128 MB of file pages the kernel can
    # drop, against 256 MB of heap. Rows are widened per text, so the vectors are the same as before.
    try:
        table = np.load(target, mmap_mode="r")
    except (ValueError, OSError, EOFError) as exc:  # cut short by a power loss after its record was written: made again
        log.warning("%s unreadable (%s): making it again", target.name, exc)
        _make(model_folder, target, inputs, version)
        table = np.load(target, mmap_mode="r")
    return StaticEmbedder(table, own, frozenset(i for i in special if i is not None))


def _make(model_folder: Path, target: Path, inputs: list[Path], version: str) -> None:
    log.info("making the static first stage of %s from its token embeddings once (seconds)...", model_folder.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with writing(target) as partial:
        np.save(partial, make_table(model_folder))
    record(target, inputs, version)
    _drop_older(model_folder, target)


def _drop_older(model_folder: Path, kept: Path) -> None:
    """The model's tables made by an earlier version of the step: 123 MB each that nothing reads any more. A newer
    version's table is left (an older deployment sharing the cache must not undo it), and a table that cannot be
    removed is only reported: the one just made is what matters."""
    digest = "[0-9a-f]" * 12  # static_table's name: not another model's whose name begins with this one's
    for older in kept.parent.glob(f"static-{glob.escape(model_folder.name)}-{digest}.npy"):
        if older == kept or _version_number(recorded_version(older)) >= _version_number(STATIC_VERSION):
            continue
        try:
            older.unlink(missing_ok=True)
            record_path(older).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s, made by an earlier version of this step: %s", older.name, exc)
            continue
        log.info("removed %s, made by an earlier version of this step", older.name)


def _version_number(version: str | None) -> int:
    """A step version's number (`2:token-table` -> 2); a table without a readable record counts as the oldest."""
    head = (version or "").split(":", 1)[0]
    return int(head) if head.isdigit() else 0


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
