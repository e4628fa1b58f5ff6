"""`ctxsieve service start` on a first start: each of the service's own step lines said as its log gets them, and a
step that runs long (the ONNX export: minutes on a busy machine) not left silent."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ctxsieve.service import lifecycle


def test_start_says_each_step_and_that_a_long_one_still_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = lifecycle.Paths(tmp_path)
    paths.log.write_text("--- the start line\n")
    began = time.monotonic()
    steps = [(0.0, "ctxsieve: converting the model once...\n"), (0.1, "INFO: uvicorn's own line\n"),
             (0.2, "ctxsieve: exporting the ONNX model once (about a minute)...\n")]

    def ready(_url: str, timeout: float = 2.0) -> dict[str, Any]:
        elapsed = time.monotonic() - began
        with paths.log.open("a") as log:
            while steps and steps[0][0] <= elapsed:
                log.write(steps.pop(0)[1])
        return {"ready": elapsed > 1.2}

    monkeypatch.setattr(lifecycle, "ready", ready)
    monkeypatch.setattr(lifecycle, "_alive", lambda _pid: True)
    monkeypatch.setattr(lifecycle, "STILL_EVERY", 0.5)
    pause = time.sleep
    monkeypatch.setattr(lifecycle.time, "sleep", lambda _s: pause(0.02))
    said: list[str] = []
    assert lifecycle._wait_ready("http://127.0.0.1:9", 1, paths, 10, said.append) == 0
    assert said[0] == "ctxsieve service: converting the model once..."
    assert said[1] == "ctxsieve service: exporting the ONNX model once (about a minute)..."
    still = [line for line in said if line.startswith("ctxsieve service: still on the step above (")]
    assert 1 <= len(still) <= 2, said
    assert said[-1].startswith("ctxsieve service: ready at http://127.0.0.1:9 (")
