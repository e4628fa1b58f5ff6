"""What a response cost and saved, in tiktoken tokens: one formula for filter, search, read and collections."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Usage:
    input_tokens: int
    output_tokens: int
    saved_ratio: float
    chunks_total: int
    chunks_returned: int


def saved_ratio(input_tokens: int, output_tokens: int) -> float:
    return 0.0 if input_tokens == 0 else round(max(0.0, 1.0 - output_tokens / input_tokens), 3)


def make_usage(*, input_tokens: int, output_tokens: int, chunks_total: int, chunks_returned: int) -> Usage:
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens,
                 saved_ratio=saved_ratio(input_tokens, output_tokens), chunks_total=chunks_total,
                 chunks_returned=chunks_returned)
