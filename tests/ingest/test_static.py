"""The static first stage: sharing the dense model's vocabulary must not change a single vector."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ctxsieve.ingest.embedding import resolve_model_path
from ctxsieve.ingest.static_model import ensure_static
from tests.conftest import CACHE

TEXTS = [
    "白尾雀鲷的生活习性是什么样的？本鱼多栖息于低潮线下有碎礁或圆石之海底。",
    "The <mask> token and <s>markers</s> stay literal text; so do tabs\tand\nnewlines, ﬁ ligatures and ①.",
    "résumé " * 400,  # longer than the dense model's 512-token window: never truncated here
    "",
]


def _folder() -> Path:
    return Path(resolve_model_path("multilingual-e5-small", CACHE / "models"))


def test_shared_vocabulary_gives_the_same_vectors_as_its_own_copy() -> None:
    own = ensure_static(_folder(), CACHE / "models")
    lender = Tokenizer.from_file(str(_folder() / "tokenizer.json"))
    shared = ensure_static(_folder(), CACHE / "models", lender)
    # The dense model's wrapper turns these on in its tokenizer; the static stage must not inherit them.
    lender.enable_truncation(16)
    lender.enable_padding()
    assert shared.special == own.special
    assert np.array_equal(shared.embed(TEXTS), own.embed(TEXTS))
    assert np.linalg.norm(shared.embed(TEXTS[:1])) > 0.99


def test_table_is_mapped_not_copied() -> None:
    static = ensure_static(_folder(), CACHE / "models")
    assert isinstance(static.vectors, np.memmap) and static.vectors.dtype == np.float16
