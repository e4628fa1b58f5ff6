"""The app factory: everything is built in the lifespan and kept on app.state (no import-time state)."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ctxsieve.indexes.store import Store

from .engine import EngineHolder, Models
from .errors import ERROR_TABLE, envelope, install_error_handlers
from .metrics import Metrics
from .routes import collections, context, filtering, health, hooks, repos, sessions, tools, wrapped
from .schemas import ErrorResponse
from .settings import Settings


class BodyLimit:
    """Refuse bodies over the limit with 413, from this layer itself, whether or not they declare a length.

    A declared length over the limit is refused before reading. Otherwise the body is read here, up to the
    limit, and handed on whole: raising from inside the app's `receive` instead would be caught by the HTTP
    middleware and turned into a 400 "error parsing the body" for chunked uploads.
    """

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
        parts: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            seen += len(message.get("body", b""))
            if seen > self.limit:
                await self._refuse(scope, receive, send)
                return
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(parts), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        request.state.request_id = scope.get("state", {}).get("request_id", uuid.uuid4().hex)
        response = envelope(request, 413, "payload_too_large", f"request body over {self.limit} bytes")
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read by BodyLimit, then whatever the server sends next (a disconnect)."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def create_app(settings: Settings | None = None, models: Models | None = None, store: Store | None = None) -> FastAPI:
    """The app; `models` and `store` may be given (tests use a small stand-in model and an in-memory store),
    otherwise both are built from `settings` in the lifespan, off the event loop."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        holder = EngineHolder(settings, models, store)
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
    app.include_router(repos.router)
    app.include_router(sessions.router)
    app.include_router(context.router)
    app.include_router(hooks.router)
    return app
