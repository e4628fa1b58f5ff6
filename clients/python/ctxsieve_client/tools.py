"""Turn a /v1/tools/select answer into the `tools` argument of the OpenAI and Anthropic SDKs."""

from __future__ import annotations

from typing import Any


def openai_tools(selection: dict[str, Any]) -> list[dict[str, Any]]:
    """For `client.chat.completions.create(tools=...)`: selection made with format="openai"."""
    tools = selection["tools"]
    if tools and "function" not in tools[0]:
        raise ValueError("select with format='openai' to pass these to the OpenAI SDK")
    return list(tools)


def anthropic_tools(selection: dict[str, Any]) -> list[dict[str, Any]]:
    """For `client.messages.create(tools=...)`: selection made with format="anthropic"."""
    tools = selection["tools"]
    if tools and "input_schema" not in tools[0]:
        raise ValueError("select with format='anthropic' to pass these to the Anthropic SDK")
    return list(tools)
