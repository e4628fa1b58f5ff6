"""The one error table: domain errors and framework errors to the API.md envelope.

Every error body is `{"error": {"type", "message", "request_id"}}`. A 500 says only "internal error";
the details go to the log with the request id.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ctxsieve.indexes.errors import (
    CtxsieveError,
    Forbidden,
    Gone,
    InvalidInput,
    InvalidRequest,
    NotFound,
    Overloaded,
    StoreUnavailable,
    TooLarge,
    UnsupportedMedia,
    UpstreamFailed,
    UpstreamTimeout,
)
from ctxsieve_client.names import NAME_PATTERN

log = logging.getLogger("ctxsieve")


class Unauthorized(CtxsieveError):
    pass


class NotReady(CtxsieveError):
    pass


ERROR_TABLE: dict[type[CtxsieveError], tuple[int, str]] = {
    InvalidRequest: (400, "invalid_request"),
    Unauthorized: (401, "unauthorized"),
    Forbidden: (403, "forbidden"),
    NotFound: (404, "not_found"),
    Gone: (410, "gone"),
    TooLarge: (413, "payload_too_large"),
    UnsupportedMedia: (415, "unsupported_media_type"),
    InvalidInput: (422, "invalid_field"),
    Overloaded: (429, "overloaded"),
    UpstreamFailed: (502, "upstream_failed"),
    StoreUnavailable: (503, "store_unavailable"),
    UpstreamTimeout: (504, "upstream_timeout"),
    NotReady: (503, "not_ready"),
}


def request_id(request: Request) -> str:
    return str(getattr(request.state, "request_id", ""))


def envelope(request: Request, status: int, kind: str, message: str, headers: dict[str, str] | None = None
             ) -> JSONResponse:
    body = {"error": {"type": kind, "message": message, "request_id": request_id(request)}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    status, kind = next((v for k, v in ERROR_TABLE.items() if isinstance(exc, k)), (500, "internal_error"))
    headers = {"Retry-After": str(max(1, round(exc.retry_after)))} if isinstance(exc, Overloaded) else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return envelope(request, status, kind, _in_service_terms(exc), headers)


def _in_service_terms(exc: Exception) -> str:
    """The core names its options as Settings fields; the operator sets them as CTXSIEVE_ environment variables."""
    if isinstance(exc, Gone):
        return f"{exc} (setting: CTXSIEVE_{exc.setting.upper()})"
    return str(exc)


def _describe(errors: list[Any]) -> str:
    return "; ".join(_one_error(err) for err in errors[:5])


def _one_error(err: dict[str, Any]) -> str:
    """A field's error as a user reads it: where the field is (the body's own path, the URL's name, a query
    parameter), the value given when short, and what was wrong; the body that is no JSON said so (a validator's
    `5: JSON decode error` named a character offset as if it were a field)."""
    where, *inside = err.get("loc", ()) or ("body",)
    if err.get("type") == "json_invalid":
        at = f" at character {inside[0]}" if inside and isinstance(inside[0], int) else ""
        return f"the body is not valid JSON{at}: {err.get('ctx', {}).get('error', 'decode error')}"
    field = ".".join(str(p) for p in inside)
    named = {"path": f"{field} (in the URL)", "query": f"{field} (query parameter)",
             "header": f"{field} (header)"}.get(str(where), field or "body")
    given = err.get("input")
    shown = f" {given!r}" if isinstance(given, str) and str(where) != "body" and len(given) <= 80 else ""
    return f"{named}{shown}: {_plain(err)}"


_PATTERNS = {NAME_PATTERN: "a name is letters, digits, `_`, `-` and `.`, not dots alone"}


def _plain(err: dict[str, Any]) -> str:
    pattern = err.get("ctx", {}).get("pattern") if err.get("type") == "string_pattern_mismatch" else None
    return _PATTERNS.get(pattern, str(err.get("msg", "invalid"))) if pattern else str(err.get("msg", "invalid"))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return envelope(request, 422, "invalid_field", _describe(list(exc.errors())))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    kinds = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large", 400: "invalid_request"}
    return envelope(request, exc.status_code, kinds.get(exc.status_code, "http_error"), str(exc.detail))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error (request %s)", request_id(request), exc_info=exc)
    return envelope(request, 500, "internal_error", "internal error")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(CtxsieveError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
