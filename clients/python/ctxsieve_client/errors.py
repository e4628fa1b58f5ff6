"""The one error a call raises for an answer that is not 2xx.

    CtxsieveError          a non-2xx answer: status, and the envelope's type, message and request_id
                           (retry_after on 429)

Transport failures are httpx's own (`httpx.HTTPError`), raised as they come.
"""

from __future__ import annotations

from typing import Any


class CtxsieveError(Exception):
    """A non-2xx answer: `status`, and the envelope's `type`, `message` and `request_id`."""

    def __init__(self, status: int, body: Any, retry_after: str | None = None) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.type: str = error.get("type", "http_error")
        self.message: str = error.get("message", str(body))
        self.request_id: str | None = error.get("request_id")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.type}: {self.message} (request {self.request_id})")
