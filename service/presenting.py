"""A core result as a response body: its fields, and its placeholder in the words the request asked for."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Protocol

from ctxsieve.indexes.more import More, Style


class HoldsBack(Protocol):
    @property
    def more(self) -> More: ...


def presented(result: HoldsBack, style: Style) -> dict[str, Any]:
    return {**asdict(result), "placeholder": result.more.placeholder(style)}  # type: ignore[call-overload]
