"""Turn a tool selection into the `tools` argument of the OpenAI and Anthropic SDKs."""

from __future__ import annotations

from typing import Any

from .models import Selection

FORMAT_KEYS = {"openai": "function", "anthropic": "input_schema"}  # a key each format's definitions have


def _in_format(selection: Selection, fmt: str, purpose: str) -> list[dict[str, Any]]:
    """The selection's definitions, refused with what to do when they were selected in another format."""
    if selection.tools and FORMAT_KEYS[fmt] not in selection.tools[0]:
        raise ValueError(f"select with format='{fmt}' to {purpose}")
    return list(selection.tools)


def openai_tools(selection: Selection) -> list[dict[str, Any]]:
    """For `client.chat.completions.create(tools=...)`: a selection made with format="openai"."""
    return _in_format(selection, "openai", "pass these to the OpenAI SDK")


def anthropic_tools(selection: Selection) -> list[dict[str, Any]]:
    """For `client.messages.create(tools=...)`: a selection made with format="anthropic"."""
    return _in_format(selection, "anthropic", "pass these to the Anthropic SDK")


# --- answering the providers' own tool search with ctxsieve's selection ---------------------------------------
#
# Anthropic: declare the toolset's tools with `defer_loading: true` (anthropic_deferred) next to a search tool of
# your own; when the model calls it, select with ctxsieve and answer with a tool_result whose content is
# `tool_reference` blocks (anthropic_tool_search_result). OpenAI (Responses API): declare the tools deferred
# (openai_deferred) with a client-run `tool_search` tool; answer its `tool_search_call` with a `tool_search_output`
# item carrying the chosen definitions (openai_tool_search_output). Register the toolset from the same definitions
# (format "anthropic" or "openai"), so the names the selection returns are the names the provider knows.


def anthropic_deferred(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions marked to load only when a tool search returns them."""
    return [{**t, "defer_loading": True} for t in tools]


def anthropic_tool_search_result(selection: Selection, tool_use_id: str) -> dict[str, Any]:
    """The `tool_result` block answering the model's call of your search tool: one `tool_reference` per tool."""
    return {"type": "tool_result", "tool_use_id": tool_use_id,
            "content": [{"type": "tool_reference", "tool_name": s.name} for s in selection.selected]}


def _responses_function(tool: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions definition ({"type": "function", "function": {...}}) as the Responses API's."""
    function = tool.get("function", tool)
    return {"type": "function", "name": function["name"], "description": function.get("description", ""),
            "parameters": function.get("parameters") or {"type": "object", "properties": {}},
            "strict": bool(function.get("strict", False))}


def openai_deferred(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI definitions (either API's shape) as Responses API function tools loaded only through tool search."""
    return [{**_responses_function(t), "defer_loading": True} for t in tools]


def openai_tool_search_output(selection: Selection, call_id: str) -> dict[str, Any]:
    """The `tool_search_output` input item answering a client-run `tool_search_call` (select with format="openai")."""
    tools = _in_format(selection, "openai", "answer OpenAI's tool search")
    return {"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed",
            "tools": [_responses_function(t) for t in tools]}
