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
Three formats: OpenAI chat messages, Anthropic messages, and the OpenAI Responses API's input items
(`function_call` / `custom_tool_call` and their `*_output` items).
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxsieve.ingest.tokens import Tokenizer

from .errors import InvalidInput
from .more import More, Rerun, Style

Format = Literal["openai", "anthropic", "responses"]
ERROR_STARTS = ("Traceback (most recent call last):", "Error", "error:", "Exception")
MARK = "[ctxsieve "  # a cleared result begins so: it is never cleared again
SIZES_KEPT = 65_536  # messages whose token counts are remembered (about 6 MB)
_SIZES: OrderedDict[bytes, int] = OrderedDict()
_SIZES_LOCK = threading.Lock()
RESPONSES_CALLS = ("function_call", "custom_tool_call")
RESPONSES_OUTPUTS = ("function_call_output", "custom_tool_call_output")


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
    format: Format
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
    extra: dict[str, Any] = field(default_factory=dict)


Store = Callable[[str, str | None, dict[str, Any]], str]  # (text, tool, args) -> ref, the text stored whole


def detect(messages: Sequence[Any]) -> Format:
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("type") in RESPONSES_CALLS + RESPONSES_OUTPUTS:
            return "responses"
        if message.get("role") == "tool" or "tool_calls" in message:
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                                             for b in content):
            return "anthropic"
    return "openai"


def compact(messages: Any, params: CompactParams, tokenizer: Tokenizer, store: Store) -> Compaction:
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise InvalidInput("messages: a list of message objects (OpenAI chat or Anthropic messages)")
    fmt: Format = detect(messages) if params.format == "auto" else params.format
    sizes = [_size(m, tokenizer) for m in messages]
    total = sum(sizes)
    if total <= params.trigger_tokens:
        return Compaction(messages=messages, compacted=False, cleared=[], input_tokens=total, output_tokens=total,
                          format=fmt, kept=params.keep_tool_results, trigger=params.trigger_tokens)
    results = _results(messages, fmt, tokenizer, params)
    protected: set[int] = set()
    for kind in (False, True):  # the last keep_tool_results results, and as many tool inputs
        same = [r for r in results if r.is_input is kind]
        protected |= {id(r) for r in same[len(same) - params.keep_tool_results:]} if params.keep_tool_results else set()
    candidates = [r for r in results if id(r) not in protected and not r.is_error
                  and (r.tool or "") not in set(params.exclude_tools) and not r.text.startswith(MARK)]
    chosen = _in_steps(candidates, total - params.trigger_tokens, params.clear_at_least)
    projected = copy.deepcopy(messages)
    cleared = []
    for result in chosen:
        ref = store(result.text, result.tool, result.args)
        line = _placeholder(ref, result, params.placeholder)
        _replace(projected, result, line, fmt)
        cleared.append(Cleared(message=result.message, block=result.block, tool=result.tool, ref=ref,
                               tokens=result.tokens, input=result.is_input))
    touched = {c.message for c in cleared}  # only these changed: the rest keep their counts
    output = total + sum(_size(projected[i], tokenizer) - sizes[i] for i in touched)
    return Compaction(messages=projected if cleared else messages, compacted=bool(cleared), cleared=cleared,
                      input_tokens=total, output_tokens=output if cleared else total, format=fmt,
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


def _results(messages: list[dict[str, Any]], fmt: Format, tokenizer: Tokenizer, params: CompactParams
             ) -> list[_Result]:
    if fmt == "responses":
        return _responses(messages, tokenizer)
    return _anthropic(messages, tokenizer, params) if fmt == "anthropic" else _openai(messages, tokenizer, params)


def _openai(messages: list[dict[str, Any]], tokenizer: Tokenizer, params: CompactParams) -> list[_Result]:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            args = _arguments(function.get("arguments"))
            calls[str(call.get("id"))] = (str(function.get("name") or ""), args)
            raw = function.get("arguments")
            if params.clear_tool_inputs and isinstance(raw, str) and not raw.startswith('{"ctxsieve_cleared"'):
                out.append(_Result(message=i, block=None, text=raw, tool=function.get("name"), args={},
                                   tokens=_count(raw, tokenizer), is_error=False, is_input=True,
                                   extra={"call": call.get("id")}))
        if message.get("role") == "tool":
            text = _text(message.get("content"))
            if text is None:
                continue
            tool, args = calls.get(str(message.get("tool_call_id")), (message.get("name"), {}))
            out.append(_Result(message=i, block=None, text=text, tool=tool or None, args=args,
                               tokens=_count(text, tokenizer), is_error=text.lstrip().startswith(ERROR_STARTS)))
    return sorted(out, key=lambda r: (r.message, r.is_input))


def _anthropic(messages: list[dict[str, Any]], tokenizer: Tokenizer, params: CompactParams) -> list[_Result]:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for i, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                given = block.get("input")
                args: dict[str, Any] = given if isinstance(given, dict) else {}
                calls[str(block.get("id"))] = (str(block.get("name") or ""), args)
                raw = json.dumps(args, ensure_ascii=False)
                if params.clear_tool_inputs and "ctxsieve_cleared" not in args:
                    out.append(_Result(message=i, block=b, text=raw, tool=block.get("name"), args={},
                                       tokens=_count(raw, tokenizer), is_error=False, is_input=True))
            elif block.get("type") == "tool_result":
                text = _text(block.get("content"))
                if text is None:  # images or other blocks in the result: kept as they are
                    continue
                tool, args = calls.get(str(block.get("tool_use_id")), (None, {}))
                out.append(_Result(message=i, block=b, text=text, tool=tool or None, args=args,
                                   tokens=_count(text, tokenizer), is_error=block.get("is_error") is True))
    return sorted(out, key=lambda r: (r.message, r.block or 0))


def _responses(items: list[dict[str, Any]], tokenizer: Tokenizer) -> list[_Result]:
    """The Responses API's call outputs (tool inputs are not cleared in this format)."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for i, item in enumerate(items):
        if item.get("type") in RESPONSES_CALLS:
            raw = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
            calls[str(item.get("call_id"))] = (str(item.get("name") or ""), _arguments(raw))
        elif item.get("type") in RESPONSES_OUTPUTS:
            text = _text(item.get("output"), ("input_text", "output_text"))
            if text is None:
                continue
            tool, args = calls.get(str(item.get("call_id")), ("", {}))
            out.append(_Result(message=i, block=None, text=text, tool=tool or None, args=args,
                               tokens=_count(text, tokenizer), is_error=text.lstrip().startswith(ERROR_STARTS)))
    return out


def _text(content: Any, types: tuple[str, ...] = ("text",)) -> str | None:
    """A result's text when it is text only (a string, or text blocks); None when it holds anything else."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(b, dict) and b.get("type") in types
                                                     for b in content):
        return "\n".join(str(b.get("text", "")) for b in content)
    return None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _replace(messages: list[dict[str, Any]], result: _Result, line: str, fmt: Format) -> None:
    message = messages[result.message]
    if result.is_input:
        cleared = {"ctxsieve_cleared": line}
        if fmt == "anthropic":
            assert result.block is not None
            message["content"][result.block]["input"] = cleared
        else:
            for call in message.get("tool_calls") or []:
                if call.get("id") == result.extra.get("call"):
                    call["function"]["arguments"] = json.dumps(cleared, ensure_ascii=False)
        return
    if fmt == "anthropic":
        assert result.block is not None
        message["content"][result.block]["content"] = line
    elif fmt == "responses":
        message["output"] = line
    else:
        message["content"] = line
