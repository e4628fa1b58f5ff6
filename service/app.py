"""The app factory: everything is built in the lifespan and kept on app.state (no import-time state)."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .engine import EngineHolder
from .errors import ERROR_TABLE, envelope, install_error_handlers
from .metrics import Metrics
from .routes import collections, filtering, health, sessions, tools, wrapped
from .schemas import ErrorResponse
from .settings import Settings


class BodyLimit:
    """Refuse bodies over the limit with 413 as soon as they pass it, without reading them whole."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        request.state.request_id = scope.get("state", {}).get("request_id", uuid.uuid4().hex)
        response = envelope(request, 413, "payload_too_large", f"request body over {self.limit} bytes")
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        holder = EngineHolder(settings)
        app.state.engine = holder
        holder.start()
        yield
        holder.close()

    errors = {status: {"model": ErrorResponse} for status, _ in ERROR_TABLE.values()}
    app = FastAPI(title="ctxsieve", version="1", lifespan=lifespan, responses=errors)  # type: ignore[arg-type]
    app.state.settings = settings
    app.state.api_keys = settings.key_table()
    app.state.metrics = Metrics.create(lambda: getattr(getattr(app.state, "engine", None), "engine", None))
    install_error_handlers(app)

    @app.middleware("http")
    async def assign_request_id(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        request.state.request_id = uuid.uuid4().hex
        started = time.perf_counter()
        response = await call_next(request)
        response.headers["X-Request-Id"] = request.state.request_id
        route = getattr(request.scope.get("route"), "path", "unmatched")
        app.state.metrics.requests.labels(route, str(response.status_code)).inc()
        app.state.metrics.latency.labels(route).observe(time.perf_counter() - started)
        return response

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.include_router(health.router)
    app.include_router(filtering.router)
    app.include_router(tools.router)
    app.include_router(wrapped.router)
    app.include_router(collections.router)
    app.include_router(sessions.router)
    return app
