"""Compaction of an agent's history, reversibly: the oldest tool results become placeholders naming their refs.

The client keeps its whole history (storage) and asks before each model call for the projection to send
(presentation). The rule is a function of the history and the options alone, so two replicas agree:
- Under `trigger_tokens` nothing changes.
- Over it, the candidates (not among the last `keep_tool_results`, not of an `exclude_tools` tool, not an error,
  not already a placeholder), oldest first, are cut into steps of at least `clear_at_least` tokens, and the
  fewest whole steps that bring the history under the trigger are cleared (`_in_steps`). The steps depend only
  on the older part of the history, so as it grows the same results are cleared until one more step is needed:
  between steps the projection of the earlier part stays byte-identical (the prompt cache keeps hitting) and
  the token curve is a sawtooth. Compacting a compacted history changes nothing (it is under the trigger, or
  has no whole step left to clear).
- Each cleared result is stored as a source first (the same content gets the same ref as `/v1/filter` gives it),
  so its ref gives it back byte for byte.
Errors are never cleared: an Anthropic `tool_result` with `is_error`, or an OpenAI tool message (or Responses API
call output) whose text begins like an error (ERROR_STARTS).
Three formats, read and written by their dialects (`ctxsieve_client.dialects`, the proxy's too): OpenAI chat
messages, Anthropic messages, and the OpenAI Responses API's input items.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ctxsieve.ingest.tokens import Tokenizer
from ctxsieve_client.dialects import DIALECTS, ERROR_STARTS, Dialect, Name, ToolInput, ToolResult, detect, json_object

from .errors import InvalidInput
from .more import More, Rerun, Style

MARK = "[ctxsieve "  # a cleared result begins so: it is never cleared again
SIZES_KEPT = 65_536  # messages whose token counts are remembered (about 6 MB)
_SIZES: OrderedDict[bytes, int] = OrderedDict()
_SIZES_LOCK = threading.Lock()
CLEARED_INPUT = "ctxsieve_cleared"  # a cleared tool input is {CLEARED_INPUT: placeholder}


@dataclass(frozen=True, kw_only=True)
class CompactParams:
    format: Literal["auto", "openai", "anthropic", "responses"] = "auto"
    trigger_tokens: int = 100_000
    keep_tool_results: int = 3
    clear_at_least: int = 20_000
    exclude_tools: Sequence[str] = ()
    clear_tool_inputs: bool = False
    placeholder: Style = "http"


@dataclass(frozen=True, kw_only=True)
class Cleared:
    message: int
    block: int | None  # the content block (Anthropic), None for an OpenAI tool message
    tool: str | None
    ref: str
    tokens: int
    input: bool = False  # a tool call's input, not its result


@dataclass(frozen=True, kw_only=True)
class Compaction:
    messages: list[Any]
    compacted: bool
    cleared: list[Cleared]
    input_tokens: int
    output_tokens: int
    format: Name
    kept: int = 0  # keep_tool_results as applied (it may have been tuned)
    trigger: int = 0


@dataclass(kw_only=True)
class _Result:
    """One tool result (or, with clear_tool_inputs, one large tool input) that could be cleared."""

    message: int
    block: int | None
    text: str
    tool: str | None
    args: dict[str, Any]
    tokens: int
    is_error: bool
    is_input: bool = False
    put: Callable[[str], None]  # writes the placeholder in its place


Store = Callable[[str, str | None, dict[str, Any]], str]  # (text, tool, args) -> ref, the text stored whole


def compact(messages: Any, params: CompactParams, tokenizer: Tokenizer, store: Store) -> Compaction:
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise InvalidInput("messages: a list of message objects (OpenAI chat or Anthropic messages)")
    dialect = detect(messages) if params.format == "auto" else DIALECTS[params.format]
    sizes = [_size(m, tokenizer) for m in messages]
    total = sum(sizes)
    if total <= params.trigger_tokens:
        return Compaction(messages=messages, compacted=False, cleared=[], input_tokens=total, output_tokens=total,
                          format=dialect.name, kept=params.keep_tool_results, trigger=params.trigger_tokens)
    projected = copy.deepcopy(messages)  # read from the copy: each result is written where it was read
    results = _results(projected, dialect, tokenizer, params)
    protected: set[int] = set()
    for kind in (False, True):  # the last keep_tool_results results, and as many tool inputs
        same = [r for r in results if r.is_input is kind]
        protected |= {id(r) for r in same[len(same) - params.keep_tool_results:]} if params.keep_tool_results else set()
    candidates = [r for r in results if id(r) not in protected and not r.is_error
                  and (r.tool or "") not in set(params.exclude_tools) and not r.text.startswith(MARK)]
    chosen = _in_steps(candidates, total - params.trigger_tokens, params.clear_at_least)
    cleared = []
    for result in chosen:
        ref = store(result.text, result.tool, result.args)
        result.put(_placeholder(ref, result, params.placeholder))
        cleared.append(Cleared(message=result.message, block=result.block, tool=result.tool, ref=ref,
                               tokens=result.tokens, input=result.is_input))
    touched = {c.message for c in cleared}  # only these changed: the rest keep their counts
    output = total + sum(_size(projected[i], tokenizer) - sizes[i] for i in touched)
    return Compaction(messages=projected if cleared else messages, compacted=bool(cleared), cleared=cleared,
                      input_tokens=total, output_tokens=output if cleared else total, format=dialect.name,
                      kept=params.keep_tool_results, trigger=params.trigger_tokens)


def _size(message: Any, tokenizer: Tokenizer) -> int:
    """A message's tokens as sent: its compact JSON."""
    return _count(json.dumps(message, ensure_ascii=False, separators=(",", ":")), tokenizer)


def _count(text: str, tokenizer: Tokenizer) -> int:
    """tiktoken's count, remembered by the text's hash: a growing history is sent again with every model call, so
    a call counts only the messages and results it has not seen."""
    key = hashlib.sha256(f"{tokenizer.name}\0{text}".encode()).digest()
    with _SIZES_LOCK:
        known = _SIZES.get(key)
        if known is not None:
            _SIZES.move_to_end(key)
            return known
    counted = tokenizer.count(text)
    with _SIZES_LOCK:
        _SIZES[key] = counted
        while len(_SIZES) > SIZES_KEPT:
            _SIZES.popitem(last=False)
    return counted


def _in_steps(candidates: list[_Result], overshoot: int, step: int) -> list[_Result]:
    """The oldest candidates, whole steps at a time. The candidates are cut, oldest first, into steps of at least
    `step` tokens; the steps are fixed by the history's older part alone (a growing history only adds candidates
    at the end), and the fewest whole steps that bring the history under the trigger are cleared (all the whole
    steps there are when none do). So a longer history clears the same results until it needs one more step;
    until a step is whole the history may stay over the trigger by less than a step (the cache is worth it)."""
    chosen: list[_Result] = []
    whole = cleared = in_step = 0  # results in whole steps, their tokens, the open step's tokens
    for result in candidates:
        if cleared >= overshoot:
            break
        chosen.append(result)
        in_step += result.tokens
        if in_step >= step:  # a whole step: it stays cleared
            whole, cleared, in_step = len(chosen), cleared + in_step, 0
    return chosen[:whole]  # the open step, not whole yet, is not cleared


def _placeholder(ref: str, result: _Result, style: Style) -> str:
    more = More(ref=ref, chunks_shown=0, chunks_total=0, input_tokens=result.tokens, output_tokens=0,
                rerun=Rerun(tool=result.tool, args=result.args) if result.tool and not result.is_input else None,
                shown="cleared")
    return more.placeholder(style)


def _results(turns: list[dict[str, Any]], dialect: Dialect, tokenizer: Tokenizer, params: CompactParams
             ) -> list[_Result]:
    """The history's tool results, and with clear_tool_inputs its tool inputs, oldest first."""
    out = [_result(r, text, tokenizer) for r in dialect.results(turns) if (text := r.text()) is not None]
    if params.clear_tool_inputs:
        out += [_input(given, tokenizer) for given in dialect.inputs(turns)
                if CLEARED_INPUT not in given.call.arguments]
    return sorted(out, key=lambda r: (r.message, r.block or 0, r.is_input))


def _result(result: ToolResult, text: str, tokenizer: Tokenizer) -> _Result:
    """A result whose text is text only (images or other blocks in a result: kept as they are); its call's JSON
    arguments only (a free-form input stays out of the placeholder)."""
    is_error = result.flagged if result.flagged is not None else text.lstrip().startswith(ERROR_STARTS)
    return _Result(message=result.turn, block=result.block, text=text, tool=result.tool,
                   args=json_object(result.call.raw) if result.call is not None else {},
                   tokens=_count(text, tokenizer), is_error=is_error, put=result.put)


def _input(given: ToolInput, tokenizer: Tokenizer) -> _Result:
    return _Result(message=given.turn, block=given.block, text=given.text, tool=given.call.tool, args={},
                   tokens=_count(given.text, tokenizer), is_error=False, is_input=True,
                   put=lambda line: given.put({CLEARED_INPUT: line}))
