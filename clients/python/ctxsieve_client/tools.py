"""Turn a tool selection into the `tools` argument of the OpenAI and Anthropic SDKs."""

from __future__ import annotations

from typing import Any

from .models import Selection


def openai_tools(selection: Selection) -> list[dict[str, Any]]:
    """For `client.chat.completions.create(tools=...)`: a selection made with format="openai"."""
    if selection.tools and "function" not in selection.tools[0]:
        raise ValueError("select with format='openai' to pass these to the OpenAI SDK")
    return list(selection.tools)


def anthropic_tools(selection: Selection) -> list[dict[str, Any]]:
    """For `client.messages.create(tools=...)`: a selection made with format="anthropic"."""
    if selection.tools and "input_schema" not in selection.tools[0]:
        raise ValueError("select with format='anthropic' to pass these to the Anthropic SDK")
    return list(selection.tools)
