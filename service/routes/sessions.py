"""Session diagnostics and Prometheus metrics."""

from __future__ import annotations

from dataclasses import asdict
from importlib import resources

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..deps import EngineDep, TenantDep
from ..schemas import SessionList, SessionResponse, SessionSummary

router = APIRouter(tags=["operations"])


@router.get("/v1/sessions/{session}", response_model=SessionResponse, operation_id="get_session")
def get_session(session: str, engine: EngineDep, tenant: TenantDep) -> SessionResponse:
    """One agent's reads: the token curve, refs served, and the repeated-read rate (warning past 15%)."""
    return SessionResponse.model_validate(asdict(engine.sessions.report(tenant, session)))


@router.get("/v1/sessions", response_model=SessionList, operation_id="list_sessions")
def list_sessions(engine: EngineDep, tenant: TenantDep) -> SessionList:
    return SessionList(sessions=[SessionSummary(**asdict(s)) for s in engine.sessions.sessions(tenant)])


@router.get("/ui", response_class=HTMLResponse, operation_id="inspector", include_in_schema=False)
def inspector() -> HTMLResponse:
    """The inspector: sessions, their token curve and repeated-read rate, and what each request showed."""
    page = resources.files("ctxsieve.service.static").joinpath("inspector.html")
    return HTMLResponse(page.read_text(encoding="utf-8"))


@router.get("/metrics", operation_id="metrics", response_class=Response)
def metrics(request: Request) -> Response:
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
