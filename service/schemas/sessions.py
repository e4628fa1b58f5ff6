"""Session diagnostics."""

from __future__ import annotations

from pydantic import BaseModel, Field

# --- sessions ---------------------------------------------------------------------------------------

class SessionRequest(BaseModel):
    route: str
    ref: str | None
    refs: list[str] = Field(default_factory=list)
    input_tokens: int
    output_tokens: int
    repeated: bool
    at: str
    shown: list[tuple[str, int, int]] = Field(default_factory=list, description="(ref, start, end) of each "
                                                                                 "snippet, offsets into the view")


class SessionResponse(BaseModel):
    session: str
    requests: list[SessionRequest]
    repeated_read_rate: float
    warning: str | None
    compactions: int = Field(0, description="compactions that cleared something (POST /v1/context/compact)")
    cleared_results: int = 0
    cleared_refetched: int = Field(0, description="cleared refs this session later fetched or re-filtered")
    agent: str | None = Field(None, description="the agent its latest read named (X-Agent), if any")


class SessionSummary(BaseModel):
    session: str
    requests: int
    updated: float
    agent: str | None = Field(None, description="the agent its latest read named (X-Agent), if any")


class SessionList(BaseModel):
    sessions: list[SessionSummary]
