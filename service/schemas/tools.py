"""Toolsets, tool selection and feedback."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, model_validator

from .common import MAX_NAME_CHARS, MAX_TEXT_CHARS, NAME_PATTERN, Query, Shallow, Strict, valid_unicode

# --- tools ------------------------------------------------------------------------------------------

ToolFormat = Literal["openai", "anthropic", "mcp"]
MAX_TOOLS = 10_000


class ToolsetPut(Strict):
    tools: Annotated[list[dict[str, Any]], Field(max_length=MAX_TOOLS), Shallow]


class ToolsetInfo(BaseModel):
    toolset: str
    count: int
    tokens: int = Field(description="tiktoken tokens of all definitions, OpenAI format, compact JSON")


class ToolsetDetail(ToolsetInfo):
    tools: list[dict[str, Any]]


class ToolsetList(BaseModel):
    toolsets: list[ToolsetInfo]


ToolsetName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=NAME_PATTERN)]


class SelectRequest(Strict):
    query: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS, description=(
        "the request or the current step, of any length up to the body limit: a long one (a conversation) is "
        "chosen for by its latest user turn and that turn's intents, within the model's window")),
        AfterValidator(valid_unicode)]
    toolsets: Annotated[list[ToolsetName], Field(min_length=1, max_length=100)]
    k: int = Field(5, ge=1, le=128)
    always: Annotated[list[str], Field(max_length=128)] = Field(default_factory=list)
    format: ToolFormat = "openai"
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    abstain: bool = Field(False, description="answer with only the `always` tools when no tool fits")


class SelectedOut(BaseModel):
    name: str
    toolset: str
    score: float


class SelectUsage(BaseModel):
    tokens_all: int
    tokens_selected: int
    saved_ratio: float


class SelectResponse(BaseModel):
    tools: list[dict[str, Any]]
    selected: list[SelectedOut]
    usage: SelectUsage
    abstained: bool = False
    reason: str | None = Field(None, description="why no tool fits, when abstained")


Used = Annotated[list[str], Field(min_length=1, max_length=64)]
MAX_USES = 1000  # per bulk request (one batch of query embeddings); the client sends larger logs in parts


class RecordedUse(Strict):
    query: Query
    used: Used


class FeedbackRequest(Strict):
    """One use (`query` + `used`) or many (`uses`, e.g. imported from logs), for the named toolsets."""

    query: Query | None = None
    used: Used | None = None
    uses: Annotated[list[RecordedUse], Field(min_length=1, max_length=MAX_USES)] | None = None
    toolsets: Annotated[list[ToolsetName], Field(min_length=1, max_length=100)]

    @model_validator(mode="after")
    def _one_form(self) -> FeedbackRequest:
        single = self.query is not None or self.used is not None
        if single == (self.uses is not None) or (single and (self.query is None or self.used is None)):
            raise ValueError("send either `query` with `used`, or `uses`: a list of {query, used}")
        return self

    def records(self) -> list[tuple[str, list[str]]]:
        if self.uses is not None:
            return [(u.query, u.used) for u in self.uses]
        assert self.query is not None and self.used is not None
        return [(self.query, self.used)]


class FeedbackResponse(BaseModel):
    recorded: int
