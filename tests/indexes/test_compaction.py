"""Compaction: nothing under the trigger; over it the oldest results cleared in steps, never the last few, an
excluded tool's or an error; each cleared result stored first (its ref gives it back byte for byte); the earlier
part of a growing history stays byte-identical between steps; compacting twice changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxsieve.indexes.compaction import CompactParams, compact
from ctxsieve.indexes.errors import InvalidInput
from ctxsieve.indexes.sources import SourceInput, SourceStore
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.tokens import Tokenizer


def output(i: int) -> str:
    return "\n".join(f"file {i} line {n}: value {n * i} for record {n}" for n in range(120))


def openai_history(steps: int, error_at: int | None = None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Summarise every file."}]
    for i in range(steps):
        tool = "grep" if i == 1 else "read_file"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": tool, "arguments": json.dumps(
                {"path": f"f{i}.txt"})}}], "x_trace": i})
        body = "Traceback (most recent call last):\n" + output(i) if i == error_at else output(i)
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": body})
    return messages


@pytest.fixture
def stored(sources: SourceStore) -> Any:
    def store(text: str, tool: str | None, args: dict[str, Any]) -> str:
        return sources.put("t", SourceInput((Document(text),), True, "auto", tool, args)).ref
    return store


def test_under_the_trigger_nothing_changes(words: Tokenizer, stored: Any) -> None:
    history = openai_history(3)
    result = compact(history, CompactParams(trigger_tokens=10**6), words, stored)
    assert not result.compacted and result.messages == history and result.input_tokens == result.output_tokens


def test_the_oldest_results_are_cleared_and_every_one_comes_back(words: Tokenizer, stored: Any,
                                                                   sources: SourceStore) -> None:
    history = openai_history(10, error_at=2)
    params = CompactParams(trigger_tokens=5_000, keep_tool_results=3, clear_at_least=2_000, exclude_tools=("grep",))
    result = compact(history, params, words, stored)
    assert result.compacted and result.output_tokens < result.input_tokens
    assert result.output_tokens == sum(words.count(json.dumps(m, ensure_ascii=False, separators=(",", ":")))
                                       for m in result.messages), "the projection's tokens, counted as sent"
    cleared = {c.message for c in result.cleared}
    tool_messages = [i for i, m in enumerate(history) if m["role"] == "tool"]
    assert not cleared & set(tool_messages[-3:]), "never the last keep_tool_results"
    assert history[4]["role"] == "tool" and 4 not in cleared, "never an excluded tool's (grep)"
    assert 6 not in cleared and result.messages[6] == history[6], "never an error"
    for c in result.cleared:
        line = result.messages[c.message]["content"]
        assert line.startswith(f"[ctxsieve {c.ref}:") and f"GET /v1/refs/{c.ref}" in line
        assert 're-run: read_file(path="f' in line and "\n" not in line
        assert sources.get("t", c.ref).text == history[c.message]["content"], "byte for byte"
    untouched = [i for i in range(len(history)) if i not in cleared]
    assert all(result.messages[i] == history[i] for i in untouched), "everything else as sent, unknown fields too"
    again = compact(result.messages, params, words, stored)
    assert not again.compacted and again.messages == result.messages, "compacting a compacted history"


def test_a_growing_history_keeps_its_prefix_between_steps(words: Tokenizer, stored: Any) -> None:
    # Each turn adds a ~1.9k-token result; a step clears at least 8k: a step every four or five turns.
    params = CompactParams(trigger_tokens=6_000, keep_tool_results=2, clear_at_least=8_000)
    projections = [compact(openai_history(n), params, words, stored).messages for n in range(4, 30)]
    stable = 0
    for before, after in zip(projections, projections[1:], strict=False):
        stable += after[: len(before)] == before
    assert stable / (len(projections) - 1) >= 0.7, "clearing happens in steps, not on every turn"
    assert any(p != openai_history(len(p) // 2)[: len(p)] for p in projections), "and it does clear"


def test_anthropic_blocks_errors_images_inputs_and_orphans(words: Tokenizer, stored: Any) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(6):
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"step {i}"}, {
            "type": "tool_use", "id": f"tu_{i}", "name": "write_file",
            "input": {"path": f"f{i}", "text": output(i)}}]})
        result_block: dict[str, Any] = {"type": "tool_result", "tool_use_id": f"tu_{i}", "content": output(i)}
        if i == 1:
            result_block["is_error"] = True
        if i == 2:
            result_block["content"] = [{"type": "image", "source": {"type": "base64", "data": "AA=="}}]
        history.append({"role": "user", "content": [result_block]})
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nobody", "content": output(9)},
                                                {"type": "mystery", "x": 1}]})
    params = CompactParams(trigger_tokens=2_000, keep_tool_results=1, clear_at_least=1_000, clear_tool_inputs=True,
                           placeholder="tools")
    result = compact(history, params, words, stored)
    assert result.format == "anthropic" and result.compacted
    by_position = {(c.message, c.block): c for c in result.cleared}
    assert (4, 0) not in by_position and result.messages[4] == history[4], "the error stays"
    assert result.messages[6] == history[6], "a result of an image is kept as it is"
    cleared_input = next(c for c in result.cleared if c.input)
    block = result.messages[cleared_input.message]["content"][cleared_input.block]
    assert set(block["input"]) == {"ctxsieve_cleared"} and "fetch_ref(" in block["input"]["ctxsieve_cleared"]
    assert result.messages[-1]["content"][1] == {"type": "mystery", "x": 1}, "unknown blocks are kept"
    orphan = [c for c in result.cleared if c.tool is None]
    assert all("re-run" not in result.messages[c.message]["content"][c.block]["content"] for c in orphan)


def test_not_a_history(words: Tokenizer, stored: Any) -> None:
    with pytest.raises(InvalidInput, match="messages"):
        compact({"role": "user"}, CompactParams(), words, stored)
