"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..engine import EngineHolder
from ..schemas import Health, Ready

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health, operation_id="healthz")
def healthz(request: Request) -> Health:
    return Health(status="ok", instance=request.app.state.settings.instance)


@router.get("/readyz", response_model=Ready, operation_id="readyz", responses={503: {"model": Ready}})
def readyz(request: Request) -> JSONResponse:
    holder: EngineHolder = request.app.state.engine
    ready, detail = holder.status()
    body = Ready(ready=ready, model=bool(detail["model"]), store=bool(detail["store"]),
                 detail=str(detail["detail"]) if detail.get("detail") else None, stages=detail.get("stages"))
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)
