"""The model APIs' wire formats as dialects (no service): one conversation in each reads as the same call and
result, a result and a call's input are written where they were read, what the proxy writes reads back, and the
family's names are the ones `/v1/context/compact` takes."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest

from ctxsieve_client.dialects import DIALECTS, detect

ROOT = Path(__file__).resolve().parents[3]
LINES = ["line 1", "line 2"]
ASKED = {"pattern": "checksum"}
# (name, the same step in each format, where its result is: turn and block)
CONVERSATIONS: list[tuple[str, list[dict[str, Any]], tuple[int, int | None]]] = [
    ("anthropic", [
        {"role": "user", "content": "Why does the sync fail?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching the log."},
                                          {"type": "tool_use", "id": "c1", "name": "Grep", "input": ASKED}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                      "content": [{"type": "text", "text": t} for t in LINES]}]}], (2, 0)),
    ("openai", [
        {"role": "user", "content": "Why does the sync fail?"},
        {"role": "assistant", "content": "Searching the log.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "Grep", "arguments": json.dumps(ASKED)}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": t} for t in LINES]}], (2, None)),
    ("responses", [
        {"role": "user", "content": [{"type": "input_text", "text": "Why does the sync fail?"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Searching the log."}]},
        {"type": "function_call", "call_id": "c1", "name": "Grep", "arguments": json.dumps(ASKED)},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": t}
                                                                     for t in LINES]}], (3, None)),
]
# the model's answer calling fetch_ref, whole and as its stream's events
ANSWERS: dict[str, dict[str, Any]] = {
    "anthropic": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "k1", "name": "fetch_ref", "input": {"ref": "src_1"}}]},
    "openai": {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "k1", "type": "function", "function": {"name": "fetch_ref", "arguments": '{"ref": "src_1"}'}}]}}]},
    "responses": {"output": [{"type": "function_call", "call_id": "k1", "name": "fetch_ref",
                              "arguments": '{"ref": "src_1"}'}]},
}
STREAMS: dict[str, list[dict[str, Any]]] = {
    "anthropic": [
        {"type": "message_start", "message": {"role": "assistant", "content": []}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "k1", "name": "fetch_ref", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"ref"'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ':"src_1"}'}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}],
    "openai": [
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "k1", "function": {"name": "fetch_ref",
                                                                                     "arguments": '{"ref"'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ': "src_1"}'}}]}}]}],
    "responses": [{"type": "response.created"}, {"type": "response.completed", "response": ANSWERS["responses"]}],
}


@pytest.mark.parametrize(("name", "turns", "place"), CONVERSATIONS, ids=[c[0] for c in CONVERSATIONS])
def test_the_same_step_reads_alike_in_every_format(name: str, turns: list[dict[str, Any]],
                                                   place: tuple[int, int | None]) -> None:
    turns = copy.deepcopy(turns)
    dialect = DIALECTS[name]
    assert detect(turns) is dialect
    (result,) = dialect.results(turns)
    assert result.call is not None and (result.tool, result.call.arguments) == ("Grep", ASKED)
    assert (result.call.request, result.call.said) == ("Why does the sync fail?", "Searching the log.")
    assert (result.turn, result.block) == place
    assert result.flagged is (False if name == "anthropic" else None), "only Anthropic flags an error itself"
    assert result.text() == "\n".join(LINES) and [text for text, _ in result.parts()] == LINES
    _, put = next(result.parts())
    put("first")
    assert result.text() == "first\nline 2", "a part is written in its place"
    result.put("cleared")
    assert next(dialect.results(turns)).text() == "cleared"


def test_a_result_whose_call_is_not_in_the_history_still_reads() -> None:
    chat = [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "gone", "name": "shell",
                                                 "content": "out"}]
    (result,) = DIALECTS["openai"].results(chat)
    assert (result.call, result.tool, result.request, result.text()) == (None, "shell", "go", "out")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    anthropic = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "is_error": True,
                                               "content": [{"type": "text", "text": "shot"}, image]}]}]
    (shot,) = DIALECTS["anthropic"].results(anthropic)
    assert (shot.tool, shot.flagged, shot.text(), [t for t, _ in shot.parts()]) == (None, True, None, ["shot"])


def test_a_custom_tools_free_form_input_is_its_input_argument() -> None:
    items = [{"type": "custom_tool_call", "call_id": "c", "name": "exec", "input": "tools.exec_command()"},
             {"type": "custom_tool_call_output", "call_id": "c", "output": "done"}]
    (result,) = DIALECTS["responses"].results(items)
    assert result.call is not None and result.call.arguments == {"input": "tools.exec_command()"}
    assert result.call.raw == "tools.exec_command()"


def test_a_calls_input_is_replaced_by_an_object_as_the_format_carries_it() -> None:
    anthropic, chat, responses = (copy.deepcopy(turns) for _, turns, _ in CONVERSATIONS)
    (given,) = DIALECTS["anthropic"].inputs(anthropic)
    assert (given.turn, given.block, given.text) == (1, 1, json.dumps(ASKED))
    given.put({"ctxsieve_cleared": "x"})
    assert anthropic[1]["content"][1]["input"] == {"ctxsieve_cleared": "x"}
    (given,) = DIALECTS["openai"].inputs(chat)
    assert (given.turn, given.block, given.text, given.call.tool) == (1, None, json.dumps(ASKED), "Grep")
    given.put({"ctxsieve_cleared": "x"})
    assert chat[1]["tool_calls"][0]["function"]["arguments"] == '{"ctxsieve_cleared": "x"}'
    assert list(DIALECTS["responses"].inputs(responses)) == [], "the Responses format's inputs stay as sent"


@pytest.mark.parametrize("name", list(DIALECTS))
def test_what_the_proxy_writes_reads_back(name: str) -> None:
    dialect = DIALECTS[name]
    (_, turns, _), = (c for c in CONVERSATIONS if c[0] == name)
    body = dialect.with_turns({"model": "m"}, copy.deepcopy(turns))
    answer = ANSWERS[name]
    assert dialect.answer_calls(answer) == [("k1", "fetch_ref", {"ref": "src_1"})]
    assert dialect.answer_calls(dialect.streamed_answer(STREAMS[name])) == dialect.answer_calls(answer)
    continued = dialect.continued(body, answer, [("k1", "the stored text")])
    *_, last = dialect.results(dialect.turns(continued) or [])
    assert (last.tool, last.text()) == ("fetch_ref", "the stored text")
    assert dialect.turns(body) == turns, "the request given is not changed"
    definition = json.dumps(dialect.tool_definition("fetch_ref", "Fetch.", {"type": "object"}))
    assert '"fetch_ref"' in definition and '"Fetch."' in definition


def test_the_system_prompt_and_tools_offered_among_the_turns() -> None:
    assert DIALECTS["anthropic"].system({"system": "be brief", "instructions": "x"}) == "be brief"
    assert DIALECTS["responses"].system({"system": "x", "instructions": "be brief"}) == "be brief"
    assert DIALECTS["openai"].system({"messages": [{"role": "system", "content": "be brief"}]}) is None
    codex = {"input": [{"type": "additional_tools", "tools": [{"type": "function", "name": "wait"}]}]}
    assert DIALECTS["responses"].turn_tools(codex) == [{"type": "function", "name": "wait"}]
    assert DIALECTS["responses"].turn_tools({"input": "hi"}) is None
    assert DIALECTS["anthropic"].turn_tools(codex) is None


def test_detection_of_a_history_without_tools_is_chat() -> None:
    assert detect([{"role": "user", "content": "hi"}]).name == "openai"
    assert detect([]).name == "openai"


def test_the_family_is_named_as_compaction_names_formats() -> None:
    from ctxsieve.service.schemas import CompactRequest, CompactResponse

    assert set(DIALECTS) == set(get_args(CompactResponse.model_fields["format"].annotation))
    assert set(DIALECTS) | {"auto"} == set(get_args(CompactRequest.model_fields["format"].annotation))
    assert all(DIALECTS[name].name == name for name in DIALECTS)


def test_nothing_outside_the_dialects_branches_on_a_formats_name() -> None:
    users = [*(ROOT / "clients/python/ctxsieve_client/proxy").glob("*.py"), ROOT / "indexes/compaction.py"]
    branch = re.compile(r'[=!]=\s*"(?:anthropic|openai|chat|responses)"|"(?:anthropic|openai|chat|responses)"\s*[=!]=')
    assert [path.name for path in users if branch.search(path.read_text())] == []
