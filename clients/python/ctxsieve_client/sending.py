"""How both clients send a `Call` and read its answer: the headers and TLS they open with, a call's own
session header, and the answer read into its model or raised as `CtxsieveError`.
"""

from __future__ import annotations

import re
import typing
from typing import Any

import httpx

from .calls import Call, M
from .errors import CtxsieveError
from .models import Model


def client_headers(api_key: str | None, session_id: str | None, agent: str | None = None) -> dict[str, str]:
    """`agent` (X-Agent) names the agent the session's reads come from: `ctxsieve stats` groups by it."""
    headers = {}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    if session_id:
        headers["X-Session-Id"] = session_id
    if agent:  # any name (a wrapped command's, a client's) in the header's letters
        headers["X-Agent"] = re.sub(r"[^A-Za-z0-9_.:\-]", "-", agent)[:128]
    return headers


def session_header(call: Call[Any]) -> dict[str, str] | None:
    return {"X-Session-Id": call.session} if call.session else None


def verify_tls(base_url: str) -> bool:
    """Verify certificates for an https service; for plain http there is no TLS to set up (every request goes to
    a path under the base URL), and httpx builds its default SSL context eagerly, a large part of a short-lived
    process's start (the hook's: `python -m bench.frameworks` times it)."""
    return base_url.lower().startswith("https://")


def read_answer(response: httpx.Response, call: Call[M]) -> M:
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise CtxsieveError(response.status_code, body, response.headers.get("retry-after"))
    result: Any = body
    if call.result is None:
        result = None
    elif issubclass(call.result, Model):
        result = call.result.from_json(body)
    return typing.cast(M, result)
