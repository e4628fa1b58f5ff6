"""Prepared model files are recognised by the content they were made from: a model cache copied without its
timestamps (`cp -r`) is reused, not prepared again for minutes; a changed input is prepared again."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, processors

from ctxsieve.ingest.embedding.onnx_model import ensure_onnx, export_inputs, onnx_path
from ctxsieve.ingest.prepared import current, record, record_path
from ctxsieve.ingest.static_model import ensure_static, make_table

VOCAB = ["<s>", "</s>", "<pad>", "<unk>", *(f"piece{i}" for i in range(60))]


def small_model(folder: Path) -> Path:
    """A model folder as the preparing steps read it: weights with a token table, architecture, a 64-piece
    vocabulary."""
    folder.mkdir(parents=True)
    table = np.random.default_rng(0).standard_normal((len(VOCAB), 300)).astype(np.float32)
    save_file({"embeddings.word_embeddings.weight": table}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text('{"hidden_size": 300}')
    tokenizer = Tokenizer(models.WordLevel({p: i for i, p in enumerate(VOCAB)}, unk_token="<unk>"))
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0),
                                                                                                    ("</s>", 1)])
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def copied(source: Path, to: Path) -> Path:
    """`cp -r`: new files, new inodes and new timestamps, the same contents."""
    subprocess.run(["cp", "-r", str(source), str(to)], check=True)
    return to


def test_a_copied_cache_reuses_the_static_table(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    small_model(tmp_path / "a" / "models" / "small")
    table = ensure_static(tmp_path / "a" / "models" / "small", tmp_path / "a" / "models")
    assert record_path(Path(table.vectors.filename)).exists()
    cache = copied(tmp_path / "a", tmp_path / "b") / "models"
    (stored,) = cache.glob("static-*.npy")
    before = stored.stat()
    with caplog.at_level(logging.INFO, logger="ctxsieve"):
        reused = ensure_static(cache / "small", cache)
    assert not any("making the static first stage" in m for m in caplog.messages), "not made again"
    assert (stored.stat().st_ino, stored.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert f"{stored.name}: made from the same contents, reused" in caplog.messages
    assert np.array_equal(np.asarray(reused.vectors), np.asarray(table.vectors))


def test_the_static_table_is_the_token_tables_principal_axes(tmp_path: Path) -> None:
    """Made from the weights' token table alone: a row per piece, 256 columns in order of variance (the first
    piece's row is zero: log rank weighs it 0), and the same table when made again from the same weights."""
    folder = small_model(tmp_path / "small")
    table = make_table(folder)
    assert table.shape == (len(VOCAB), 256) and not table[0].any()
    weights = np.random.default_rng(0).standard_normal((len(VOCAB), 300))  # as small_model wrote them
    centred = weights - weights.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2][:8]  # the first principal axes by another route
    unweighted = table[1:, :8].astype(np.float64) / np.log1p(np.arange(1, len(VOCAB)))[:, None]
    expected = centred[1:] @ axes.T
    norms = np.linalg.norm(unweighted, axis=0) * np.linalg.norm(expected, axis=0)
    cosines = (unweighted * expected).sum(axis=0) / norms
    assert np.all(np.abs(cosines) > 0.999), cosines  # the same axes in the same order, up to sign
    assert np.array_equal(make_table(folder), table)


def test_a_narrow_model_in_bf16_keeps_every_axis(tmp_path: Path) -> None:
    """A custom model stored in bfloat16 (numpy has no such type) and narrower than 256: its table is read through
    torch and keeps all of its 96 axes."""
    import torch
    from safetensors.torch import save_file as save_torch

    folder = small_model(tmp_path / "narrow")
    weights = torch.from_numpy(np.random.default_rng(1).standard_normal((len(VOCAB), 96)).astype(np.float32))
    save_torch({"embeddings.word_embeddings.weight": weights.to(torch.bfloat16)}, str(folder / "model.safetensors"))
    table = make_table(folder)
    assert table.shape == (len(VOCAB), 96) and np.isfinite(table).all() and table[1:].any(axis=1).all()


def test_a_table_cut_short_after_its_record_is_made_again(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    """A power loss can leave the renamed file empty while its record says it is made: the load fails, and the
    table is made again rather than failing every start."""
    folder = small_model(tmp_path / "models" / "small")
    made = np.array(ensure_static(folder, tmp_path / "models").vectors)
    (stored,) = (tmp_path / "models").glob("static-*.npy")
    stored.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="ctxsieve"):
        again = ensure_static(folder, tmp_path / "models")
    assert any("unreadable" in m for m in caplog.messages)
    assert np.array_equal(np.array(again.vectors), made)


def test_a_new_table_removes_the_ones_an_earlier_version_made(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    folder = small_model(cache / "small")
    older = cache / "static-small-0123456789ab.npy"
    other = cache / "static-small-int8-0123456789ab.npy"  # another model whose name begins with this one's
    newer = cache / "static-small-fedcba987654.npy"  # a later version's, from a newer deployment sharing the cache
    for stale, version in ((older, "1"), (other, "1"), (newer, "9:later")):
        np.save(stale, np.zeros((2, 2)))
        record(stale, [folder / "tokenizer.json"], version)
    table = ensure_static(folder, cache)
    assert not older.exists() and not record_path(older).exists()
    assert other.exists() and newer.exists() and Path(table.vectors.filename).exists()


def test_a_copied_onnx_export_is_recognised_without_torch(tmp_path: Path) -> None:
    """The export's record names its inputs by content: the copy loads as is (the weights here are no model, so
    exporting again would fail)."""
    folder = small_model(tmp_path / "a" / "small")
    target = onnx_path(folder, tmp_path / "a")
    target.write_bytes(b"an exported graph")
    record(target, export_inputs(folder), "1")
    copy = copied(tmp_path / "a", tmp_path / "b")
    assert ensure_onnx(copy / "small", copy) == onnx_path(copy / "small", copy)
    assert (copy / target.name).read_bytes() == b"an exported graph"


def test_what_is_not_the_same_is_prepared_again(tmp_path: Path) -> None:
    made, inputs = tmp_path / "made.bin", [tmp_path / "weights", tmp_path / "config"]
    for path in (made, *inputs):
        path.write_bytes(path.name.encode())
    record(made, inputs, "1")
    assert current(made, inputs, "1")
    assert not current(made, inputs, "2"), "another version of the step"
    assert not current(made, inputs[:1], "1"), "other inputs"
    inputs[0].write_bytes(b"weights, retrained")
    assert not current(made, inputs, "1"), "an input's content changed"
    inputs[0].write_bytes(b"weights")  # the same content again, new mtime: recognised, and recorded anew
    assert current(made, inputs, "1") and current(made, inputs, "1")
    record_path(made).unlink()
    assert not current(made, inputs, "1"), "no record: not known what it was made from"
