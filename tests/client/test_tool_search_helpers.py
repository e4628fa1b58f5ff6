"""Answering Anthropic's and OpenAI's own tool search with ctxsieve's selection: the blocks the helpers build
are checked against the types the providers' SDKs declare, for a toolset registered from the same definitions."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic.types import ToolParam, ToolReferenceBlockParam, ToolResultBlockParam
from openai.types.responses import FunctionToolParam
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)

from ctxsieve_client import (
    Client,
    anthropic_deferred,
    anthropic_tool_search_result,
    openai_deferred,
    openai_tool_search_output,
)

TOOLS = [{"name": "refund_order", "description": "Refund a customer's order and return the money",
          "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
         {"name": "update_address", "description": "Change a customer's shipping address",
          "input_schema": {"type": "object", "properties": {"address": {"type": "string"}}}}]


def conforms(value: dict[str, Any], declared: Any) -> None:
    """Every key is one the type declares, and every required key is there."""
    assert set(value) <= set(typing.get_type_hints(declared)), (sorted(value), declared.__name__)
    assert set(declared.__required_keys__) <= set(value), (declared.__required_keys__, declared.__name__)


@pytest.fixture
def client(stub_url: str) -> Iterator[Client]:
    with Client(stub_url) as c:
        c.register_toolset("search-helpers", TOOLS)
        yield c


def test_anthropic_tool_references(client: Client) -> None:
    for tool in anthropic_deferred(TOOLS):
        conforms(tool, ToolParam)
        assert tool["defer_loading"] is True
    selection = client.select_tools("refund my order", ["search-helpers"], k=1, format="anthropic")
    block = anthropic_tool_search_result(selection, "toolu_01")
    conforms(block, ToolResultBlockParam)
    for reference in block["content"]:
        conforms(reference, ToolReferenceBlockParam)
    assert [r["tool_name"] for r in block["content"]] == ["refund_order"]


def test_openai_tool_search_output(client: Client) -> None:
    selection = client.select_tools("refund my order", ["search-helpers"], k=1, format="openai")
    item = openai_tool_search_output(selection, "call_01")
    conforms(item, ResponseToolSearchOutputItemParamParam)
    for tool in [*item["tools"], *openai_deferred(selection.tools)]:
        conforms(tool, FunctionToolParam)
    assert [t["name"] for t in item["tools"]] == ["refund_order"]
    with pytest.raises(ValueError, match="format='openai'"):
        openai_tool_search_output(client.select_tools("refund", ["search-helpers"], format="anthropic"), "c")
