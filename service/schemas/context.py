"""Compaction of an agent's history."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .common import Placeholder, Strict

MAX_MESSAGES = 20_000


class CompactRequest(Strict):
    messages: Annotated[list[dict[str, Any]], Field(max_length=MAX_MESSAGES, description=(
        "OpenAI chat messages, or Anthropic messages with tool_use / tool_result blocks, as about to be sent"))]
    format: Literal["auto", "openai", "anthropic", "responses"] = "auto"
    trigger_tokens: int = Field(100_000, ge=0, le=100_000_000)
    keep_tool_results: int = Field(3, ge=0, le=10_000)
    clear_at_least: int = Field(20_000, ge=1, le=100_000_000)
    exclude_tools: Annotated[list[str], Field(max_length=1_000)] = Field(default_factory=list)
    clear_tool_inputs: bool = False
    placeholder: Placeholder = "http"


class ClearedOut(BaseModel):
    message: int
    block: int | None
    tool: str | None
    ref: str
    tokens: int
    input: bool = Field(False, description="a tool call's input (clear_tool_inputs), not its result")


class CompactUsage(BaseModel):
    input_tokens: int
    output_tokens: int
    saved_ratio: float


class Tuned(BaseModel):
    keep_tool_results: int
    trigger_tokens: int
    reason: str


class CompactResponse(BaseModel):
    messages: list[dict[str, Any]]
    compacted: bool
    cleared: list[ClearedOut]
    usage: CompactUsage
    tuned: Tuned | None
    format: Literal["openai", "anthropic", "responses"]
