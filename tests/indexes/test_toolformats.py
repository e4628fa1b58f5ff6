"""Tool definitions: every format round-trips through every other; bad definitions are refused by name."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxsieve.indexes.tools.formats import FORMATS, InvalidTool, index_text, parse_tool, parse_toolset, render

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {"$ref": "#/$defs/customer", "description": "who the ticket is for"},
        "priority": {"type": "string", "enum": ["low", "normal", "urgent"], "description": "how fast"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["billing", "bug"]}},
        "notes": {"type": "object", "properties": {"internal": {"type": "boolean"}}},
    },
    "required": ["customer"],
    "$defs": {"customer": {"type": "object", "properties": {"id": {"type": "string"}}}},
}


def as_format(fmt: str) -> dict[str, Any]:
    tool = parse_tool({"name": "create_ticket", "description": "Open a support ticket.", "inputSchema": SCHEMA,
                       "annotations": {"destructiveHint": False}, "title": "Create ticket"}, 0)
    return render(tool, fmt)  # type: ignore[arg-type]


@pytest.mark.parametrize(("source", "target"), list(itertools.product(FORMATS, FORMATS)))
def test_round_trip_between_every_pair_of_formats(source: str, target: str) -> None:
    original = as_format(source)
    back = render(parse_tool(render(parse_tool(original, 0), target), 0), source)  # type: ignore[arg-type]
    if source == "mcp" and target != "mcp":
        original = {k: v for k, v in original.items() if k not in ("annotations", "title")}  # no place for them
    assert back == original


def test_openai_bare_and_wrapped_forms_are_the_same_tool() -> None:
    wrapped = {"type": "function", "function": {"name": "f", "description": "d", "parameters": SCHEMA,
                                                "strict": True}}
    bare = {"name": "f", "description": "d", "parameters": SCHEMA}
    assert parse_tool(wrapped, 0).input_schema == parse_tool(bare, 0).input_schema
    assert render(parse_tool(wrapped, 0), "openai") == wrapped


@pytest.mark.parametrize(("definition", "reason"), [
    ({"description": "no name"}, "name"),
    ({"name": "bad name!", "description": "x"}, "name"),
    ({"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "nonsense"}}}}, "Schema"),
    ({"name": "t", "parameters": {"type": "string"}}, "type 'object'"),
    ({"name": "t", "parameters": {}, "input_schema": {}}, "one of"),
    ("not an object", "object"),
])
def test_invalid_definitions_name_the_tool_and_reason(definition: Any, reason: str) -> None:
    with pytest.raises(InvalidTool, match=reason):
        parse_tool(definition, 3)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(InvalidTool, match="duplicate"):
        parse_toolset([{"name": "a"}, {"name": "a"}])


def test_index_text_splits_names_and_reads_parameters() -> None:
    text = index_text(parse_tool(as_format("mcp"), 0))
    assert text.startswith("create ticket: Open a support ticket.")
    assert "urgent" in text and "billing" in text and "who the ticket is for" in text
    assert index_text(parse_tool({"name": "getWeatherForecast"}, 0)).startswith("get weather forecast")


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=10)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                       st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "boolean"]),
                                              "description": st.text(max_size=30)},
                                             optional={"default": json_values}), max_size=5),
       st.sampled_from(FORMATS), st.sampled_from(FORMATS))
def test_any_schema_round_trips(properties: dict[str, Any], source: str, target: str) -> None:
    schema = {"type": "object", "properties": properties}
    tool = parse_tool({"name": "t", "description": "d", "input_schema": schema}, 0)
    there = render(tool, target)  # type: ignore[arg-type]
    assert parse_tool(there, 0).input_schema == schema
    assert render(parse_tool(render(tool, source), 0), target) == there  # type: ignore[arg-type]


def test_a_schema_is_checked_until_it_passes_and_only_then_remembered() -> None:
    bad = {"name": "broken", "description": "x", "input_schema": {"type": "object", "properties": {"a": 5}}}
    for _ in range(2):  # a refused schema is never remembered as valid
        with pytest.raises(InvalidTool):
            parse_toolset([bad])
    good = {"name": "fine", "description": "x", "input_schema": {"type": "object", "properties": {"a": {}}}}
    assert parse_toolset([good]) == parse_toolset([good])
