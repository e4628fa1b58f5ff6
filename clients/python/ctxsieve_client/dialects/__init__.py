"""The model APIs' wire formats as one family of dialects, read and written alike by the proxy (`proxy`) and by the
service's compaction (`ctxsieve.indexes.compaction`); nothing else branches on a format's name:

- `base`: the `Dialect` protocol and what a dialect reads (`Call`, `ToolResult`, `ToolInput`), `ERROR_STARTS`;
- `anthropic`, `chat` (Chat Completions, named `openai`) and `responses`: one module per format;
- here: `DIALECTS`, by the names `/v1/context/compact` takes, and `detect`.

It lives in the light client, pure functions over dicts with nothing but the standard library, so that the proxy of
`ctxsieve-client` alone has it, and the core (whose wheel carries `ctxsieve_client`) imports it from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .anthropic import ANTHROPIC
from .base import ERROR_STARTS, Call, Dialect, Name, ToolCall, ToolInput, ToolResult, json_object
from .chat import CHAT
from .responses import RESPONSES

DIALECTS: dict[Name, Dialect] = {d.name: d for d in (ANTHROPIC, CHAT, RESPONSES)}
_DETECTION = (RESPONSES, CHAT, ANTHROPIC)  # the order compaction has always asked a turn in


def detect(turns: Sequence[Any]) -> Dialect:
    """The dialect of the first turn that only one writes so (a tool call or result); Chat Completions when none
    does."""
    for turn in turns:
        if isinstance(turn, dict):
            for dialect in _DETECTION:
                if dialect.recognizes(turn):
                    return dialect
    return CHAT


__all__ = ["DIALECTS", "ERROR_STARTS", "Call", "Dialect", "Name", "ToolCall", "ToolInput", "ToolResult", "detect",
           "json_object"]
