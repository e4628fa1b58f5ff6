"""The one place that turns a model setting into an embedder: it resolves the name to a folder and an id, then
picks the backend."""

from __future__ import annotations

import logging
from pathlib import Path

from threadpoolctl import threadpool_limits

from .base import Embedder
from .loading import model_id_for, resolve_model_path

log = logging.getLogger("ctxsieve")


def choose_runtime(runtime: str, int8: bool = False) -> str:
    """The one rule: `auto` is OpenVINO bf16 where the CPU computes bf16 natively (AMX or AVX-512 BF16) and
    OpenVINO is installed, else ONNX Runtime fp32; int8 weights stay on ONNX Runtime."""
    if runtime != "auto":
        return runtime
    if int8:
        return "onnx"
    from .openvino_model import native_bf16

    try:
        import openvino  # noqa: F401 - only whether it is there
    except ImportError:
        return "onnx"
    return "openvino" if native_bf16() else "onnx"



def load_embedder(name: str, model_dir: Path, threads: int | None = None, int8: bool = False,
                  runtime: str = "auto") -> Embedder:
    """The dense model as the service runs it (`choose_runtime`): OpenVINO bf16 where the CPU has native bf16, ONNX
    Runtime fp32 otherwise (the same vectors, within the probe gate: `python -m bench.speed`), torch on request or
    for a model that is not mean-pooled. A runtime that fails its gate on this machine falls back, said in a line."""
    folder = Path(resolve_model_path(name, model_dir))
    chosen = choose_runtime(runtime, int8)
    if chosen in ("onnx", "openvino") and folder.is_dir():
        from .onnx_model import load_onnx, mean_pooled

        if mean_pooled(folder):
            threadpool_limits(1, user_api="blas")  # as for torch: our numpy products are small
            model_id = model_id_for(name, folder)
            if chosen == "openvino":
                from .openvino_model import load_openvino

                try:
                    return load_openvino(folder, model_dir, model_id, threads)
                except RuntimeError as exc:  # its gate (RuntimeRefused), or OpenVINO failing to compile
                    log.warning("OpenVINO refused, serving on ONNX Runtime fp32: %s", exc)
            return load_onnx(folder, model_dir, model_id, threads, int8)
    from .torch_model import load_sentence_transformer

    return load_sentence_transformer(name, model_dir, threads, int8)


def stand_in_needed(name: str, model_dir: Path, int8: bool = False, runtime: str = "auto") -> bool:
    """Whether `load_embedder` would first export the model through torch (a minute or more) because the ONNX export
    or its tokenizer is not made yet, while torch could serve the same vectors meanwhile. Never for int8: torch's
    int8 vectors are another model id than ONNX Runtime's, so one could not stand in for the other."""
    folder = Path(resolve_model_path(name, model_dir))
    if int8 or choose_runtime(runtime, int8) not in ("onnx", "openvino") or not folder.is_dir():
        return False
    from ..prepared import current
    from .onnx_model import ONNX_VERSION, export_inputs, mean_pooled, onnx_path, tokenizer_path

    if not mean_pooled(folder):
        return False
    made = current(onnx_path(folder, model_dir), export_inputs(folder), ONNX_VERSION)
    return not (made and tokenizer_path(folder, model_dir).exists())
