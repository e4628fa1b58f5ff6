"""`ctxsieve prepare` (`make prepare`, and what a first start runs in the background): one line per step, and the
runtime that will serve named."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ctxsieve.ingest.embedding.factory import choose_runtime


@pytest.mark.slow
def test_prepare_says_each_step_and_the_runtime_it_chose() -> None:
    done = subprocess.run([sys.executable, "-m", "ctxsieve.service.cli", "prepare"], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=True)
    lines = done.stdout.splitlines()
    runtime = {"openvino": "openvino-bf16", "onnx": "onnx-fp32"}[choose_runtime("auto")]
    assert lines[0].startswith("encoding o200k_base: ok") and lines[1].startswith("model multilingual-e5-small:")
    assert lines[2:] == ["ONNX model: exporting once if needed (about a minute)...", f"dense model: made for {runtime}",
                         "static first stage: made once if needed from the model's token embeddings...",
                         "static first stage: ready"]
