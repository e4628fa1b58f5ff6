"""The one place that turns a model setting into an embedder: it resolves the name to a folder and an id, then
picks the backend."""

from __future__ import annotations

from pathlib import Path

from threadpoolctl import threadpool_limits

from .base import Embedder
from .loading import model_id_for, resolve_model_path


def load_embedder(name: str, model_dir: Path, threads: int | None = None, int8: bool = False,
                  runtime: str = "onnx") -> Embedder:
    """The dense model as the service runs it: ONNX Runtime by default (faster than torch on CPU with the same
    vectors: `python -m bench.speed`; int8 weights on request), torch for a model that is not mean-pooled."""
    folder = Path(resolve_model_path(name, model_dir))
    if runtime == "onnx" and folder.is_dir():
        from .onnx_model import load_onnx, mean_pooled

        if mean_pooled(folder):
            threadpool_limits(1, user_api="blas")  # as for torch: our numpy products are small
            return load_onnx(folder, model_dir, model_id_for(name, folder), threads, int8)
    from .torch_model import load_sentence_transformer

    return load_sentence_transformer(name, model_dir, threads, int8)


