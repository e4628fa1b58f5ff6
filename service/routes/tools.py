"""Toolsets (register once) and tool selection (each request gets only the tools it needs)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ctxsieve.indexes.tools import SelectParams, Toolset
from ctxsieve.indexes.tools.formats import render
from ctxsieve.indexes.usage import saved_ratio

from ..deps import EngineDep, NamePath, TenantDep
from ..engine import Engine
from ..schemas import (
    Deleted,
    FeedbackRequest,
    FeedbackResponse,
    SelectedOut,
    SelectRequest,
    SelectResponse,
    SelectUsage,
    ToolFormat,
    ToolsetDetail,
    ToolsetInfo,
    ToolsetList,
    ToolsetPut,
)

router = APIRouter(prefix="/v1", tags=["tools"])


def _info(engine: Engine, toolset: Toolset) -> ToolsetInfo:
    return ToolsetInfo(toolset=toolset.name, count=len(toolset.tools),
                       tokens=engine.tools.tokens(toolset.tools, "openai"))


@router.put("/toolsets/{toolset}", response_model=ToolsetInfo, operation_id="put_toolset")
def put_toolset(toolset: NamePath, body: ToolsetPut, engine: EngineDep, tenant: TenantDep) -> ToolsetInfo:
    """Replace a toolset (idempotent); only new or changed tools are embedded."""
    with engine.gate.admit():
        return _info(engine, engine.tools.put(tenant, toolset, body.tools))


@router.get("/toolsets", response_model=ToolsetList, operation_id="list_toolsets")
def list_toolsets(engine: EngineDep, tenant: TenantDep) -> ToolsetList:
    return ToolsetList(toolsets=[_info(engine, t) for t in engine.tools.all(tenant)])


@router.get("/toolsets/{toolset}", response_model=ToolsetDetail, operation_id="get_toolset")
def get_toolset(toolset: NamePath, engine: EngineDep, tenant: TenantDep,
                format: Annotated[ToolFormat, Query()] = "openai") -> ToolsetDetail:
    found = engine.tools.get(tenant, toolset)
    info = _info(engine, found)
    return ToolsetDetail(**info.model_dump(), tools=[render(t, format) for t in found.tools])


@router.delete("/toolsets/{toolset}", response_model=Deleted, operation_id="delete_toolset")
def delete_toolset(toolset: NamePath, engine: EngineDep, tenant: TenantDep) -> Deleted:
    engine.tools.delete(tenant, toolset)
    return Deleted(deleted=toolset)


@router.post("/tools/select", response_model=SelectResponse, operation_id="select_tools")
def select_tools(body: SelectRequest, engine: EngineDep, tenant: TenantDep) -> SelectResponse:
    """The few tool definitions relevant to this request, ready to send, in the requested format."""
    with engine.gate.admit():
        params = SelectParams(k=body.k, always=tuple(body.always), format=body.format, min_score=body.min_score,
                              max_tokens=body.max_tokens, abstain=body.abstain)
        result = engine.tools.select(tenant, body.query, body.toolsets, params)
    return SelectResponse(
        tools=result.tools,
        selected=[SelectedOut(name=s.name, toolset=s.toolset, score=s.score) for s in result.selected],
        usage=SelectUsage(tokens_all=result.tokens_all, tokens_selected=result.tokens_selected,
                          saved_ratio=saved_ratio(result.tokens_all, result.tokens_selected)),
        abstained=result.abstained, reason=result.reason,
    )


@router.post("/tools/feedback", response_model=FeedbackResponse, operation_id="tools_feedback")
def tools_feedback(body: FeedbackRequest, engine: EngineDep, tenant: TenantDep) -> FeedbackResponse:
    """Record that these queries led to calling these tools (one, or many imported from logs); later
    selections use them as evidence. All or nothing: an unknown tool in any use rejects the request."""
    with engine.gate.admit():
        return FeedbackResponse(recorded=engine.tools.record_many(tenant, body.records(), body.toolsets))

