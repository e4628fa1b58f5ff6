"""The static first stage: sharing the dense model's vocabulary must not change a single vector."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from ctxsieve.ingest.embedding import load_embedder, resolve_model_path
from ctxsieve.ingest.static_model import distil, distiller, ensure_static
from tests.conftest import CACHE

TEXTS = [
    "白尾雀鲷的生活习性是什么样的？本鱼多栖息于低潮线下有碎礁或圆石之海底。",
    "The <mask> token and <s>markers</s> stay literal text; so do tabs\tand\nnewlines, ﬁ ligatures and ①.",
    "résumé " * 400,  # longer than the dense model's 512-token window: never truncated here
    "",
]


def _folder() -> Path:
    return Path(resolve_model_path("multilingual-e5-small", CACHE / "models"))


@pytest.fixture(scope="module")
def serving() -> Any:
    """The dense model on the runtime the service chooses here: the static table is distilled through it."""
    return load_embedder("multilingual-e5-small", CACHE / "models")


def test_shared_vocabulary_gives_the_same_vectors_as_its_own_copy(serving: Any) -> None:
    own = ensure_static(_folder(), CACHE / "models", embedder=serving)
    lender = Tokenizer.from_file(str(_folder() / "tokenizer.json"))
    shared = ensure_static(_folder(), CACHE / "models", lender, serving)
    # The dense model's wrapper turns these on in its tokenizer; the static stage must not inherit them.
    lender.enable_truncation(16)
    lender.enable_padding()
    assert shared.special == own.special
    assert np.array_equal(shared.embed(TEXTS), own.embed(TEXTS))
    assert np.linalg.norm(shared.embed(TEXTS[:1])) > 0.99


def test_table_is_mapped_not_copied(serving: Any) -> None:
    static = ensure_static(_folder(), CACHE / "models", embedder=serving)
    assert isinstance(static.vectors, np.memmap) and static.vectors.dtype == np.float16


def test_distilling_through_the_serving_runtime_gives_the_table_it_stores(serving: Any) -> None:
    """Distilled anew through the same runtime, the table matches the stored one within float16 rounding (how it
    is stored): replicas on one runtime distil one table. OpenVINO distils through the dense model itself."""
    name, encode = distiller(serving)
    if name != "openvino-bf16":
        pytest.skip("this CPU serves on ONNX Runtime: the table is distilled on torch, as before")
    static = ensure_static(_folder(), CACHE / "models", embedder=serving)
    again = distil(_folder(), encode)
    stored = np.asarray(static.vectors, dtype=np.float32)
    assert again.shape == stored.shape
    assert np.allclose(again, stored, rtol=1e-3, atol=1e-3 * float(np.abs(stored).max()))
