"""Prepared model files are recognised by the content they were made from: a model cache copied without its
timestamps (`cp -r`) is reused, not prepared again for minutes; a changed input is prepared again."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer, models, processors

from ctxsieve.ingest.embedding.onnx_model import ensure_onnx, export_inputs, onnx_path
from ctxsieve.ingest.prepared import current, record, record_path
from ctxsieve.ingest.static_model import ensure_static

VOCAB = ["<s>", "</s>", "<pad>", "<unk>", *(f"piece{i}" for i in range(60))]


def small_model(folder: Path) -> Path:
    """A model folder as the preparing steps read it: weights, architecture, a 64-piece vocabulary."""
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (folder / "config.json").write_text('{"hidden_size": 8}')
    tokenizer = Tokenizer(models.WordLevel({p: i for i, p in enumerate(VOCAB)}, unk_token="<unk>"))
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0),
                                                                                                    ("</s>", 1)])
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


class Session:
    """The dense model's inference as the static stage borrows it (OpenVINO's `run`), counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, _: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.calls += 1
        ids = feeds["input_ids"].astype(np.float32)
        return [np.stack([np.sin(ids * (k + 1)) for k in range(16)], axis=-1)]


class Embedder:
    runtime = "openvino-bf16"
    compiled_from = "onnx-small-f16.xml"

    def __init__(self) -> None:
        self.session = Session()


def copied(source: Path, to: Path) -> Path:
    """`cp -r`: new files, new inodes and new timestamps, the same contents."""
    subprocess.run(["cp", "-r", str(source), str(to)], check=True)
    return to


def test_a_copied_cache_reuses_the_static_table(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    small_model(tmp_path / "a" / "models" / "small")
    first = Embedder()
    table = ensure_static(tmp_path / "a" / "models" / "small", tmp_path / "a" / "models", embedder=first)
    assert first.session.calls > 0 and record_path(Path(table.vectors.filename)).exists()
    cache = copied(tmp_path / "a", tmp_path / "b") / "models"
    (stored,) = cache.glob("static-*.npy")
    before = stored.stat()
    again = Embedder()
    with caplog.at_level(logging.INFO, logger="ctxsieve"):
        reused = ensure_static(cache / "small", cache, embedder=again)
    assert again.session.calls == 0, "not distilled again"
    assert (stored.stat().st_ino, stored.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert f"{stored.name}: made from the same contents, reused" in caplog.messages
    assert np.array_equal(np.asarray(reused.vectors), np.asarray(table.vectors))


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
