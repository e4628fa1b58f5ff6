"""The proxy as an ASGI app: a model API request in, the projected request upstream, the answer back as it comes.

Anthropic's `POST /v1/messages` (and `/v1/messages/count_tokens`), OpenAI's `POST /v1/chat/completions` and
`POST /v1/responses` are projected (`projection`); every other request is forwarded as it is. The client's own
headers go upstream (its key included: the proxy holds none and logs none), less the hop-by-hop ones; the answer
comes back byte for byte as the upstream streams it, status and headers included, with one header added
(`x-ctxsieve-session`, the conversation's ctxsieve session). An upstream that cannot be reached answers 502 in the
API's own error shape.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..client import AsyncClient
from ..dialects import DIALECTS, Dialect
from .formats import dumps
from .projection import Projection, Projector, ProxyOptions
from .serving import ToolServer

log = logging.getLogger("ctxsieve.proxy")
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
SendASGI = Callable[[MutableMapping[str, Any]], Awaitable[None]]
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length"})
PROJECTED: dict[str, Dialect] = {  # path (after the API's /v1, if the client's base URL left it out) -> dialect
    "/v1/messages": DIALECTS["anthropic"], "/v1/messages/count_tokens": DIALECTS["anthropic"],
    "/v1/chat/completions": DIALECTS["openai"], "/chat/completions": DIALECTS["openai"],
    "/v1/responses": DIALECTS["responses"], "/responses": DIALECTS["responses"]}
OTHER_PATHS = DIALECTS["openai"]  # whose error shape a path not projected gets
UPSTREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=900.0, write=300.0, pool=30.0)  # a model may think for long


@dataclass(frozen=True, kw_only=True)
class Upstreams:
    anthropic: str = "https://api.anthropic.com"  # as ANTHROPIC_BASE_URL takes it (paths begin /v1/)
    openai: str = "https://api.openai.com/v1"  # as OPENAI_BASE_URL takes it (paths after /v1)

    def url(self, path: str, query: bytes, headers: httpx.Headers) -> str:
        """Anthropic's paths and any request in Anthropic's headers go to its API; the rest to OpenAI's."""
        if path.startswith("/v1/messages") or "anthropic-version" in headers:
            base, rest = self.anthropic.rstrip("/"), path
        else:
            base, rest = self.openai.rstrip("/"), path[3:] if path.startswith("/v1/") else path
        return base + rest + (f"?{query.decode('latin-1')}" if query else "")


class ProxyApp:
    def __init__(self, service_url: str, api_key: str | None, upstreams: Upstreams, options: ProxyOptions,
                 serve_tools: bool = False, upstream_transport: httpx.AsyncBaseTransport | None = None,
                 agent: str | None = None) -> None:
        self.service = AsyncClient(service_url, api_key=api_key, timeout=max(options.budget_s, 1.0) + 60,
                                   agent=agent)  # the sessions' agent (X-Agent): `ctxsieve stats` groups by it
        self.upstreams = upstreams
        self.projector = Projector(self.service.send, options, serve_tools=serve_tools)
        self.tools = ToolServer(self.service.send, self.projector.partials) if serve_tools else None
        self._transport = upstream_transport
        self._http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT, transport=self._transport,
                                           follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        await self.service.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: SendASGI) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self.aclose)
            return
        if scope["type"] != "http":
            return
        if dict(scope["headers"]).get(b"upgrade", b"").lower() == b"websocket":
            await _no_websocket(send)
            return
        body = await _body(receive)
        headers = httpx.Headers([(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]])
        forwarded = [(k, v) for k, v in headers.multi_items() if k.lower() not in HOP_BY_HOP]
        url = self.upstreams.url(scope["path"], scope.get("query_string", b""), headers)
        dialect = PROJECTED.get(scope["path"]) if scope["method"] == "POST" else None
        parsed = _json_object(body) if dialect is not None else None
        added: list[tuple[str, str]] = []
        if dialect is not None and parsed is not None:
            projection = await self.projector.project(dialect, parsed)
            _say(projection, scope["path"])
            added.append(("x-ctxsieve-session", projection.session))
            if projection.body is not None:
                parsed, body = projection.body, dumps(projection.body)
            if self.tools is not None and not scope["path"].endswith("count_tokens"):
                await self._answer_tools(dialect, parsed, projection.session, url, forwarded, send, added)
                return
        await self._relay(scope["method"], url, forwarded, body, send, added, dialect or OTHER_PATHS)

    async def _answer_tools(self, dialect: Dialect, body: dict[str, Any], session: str, url: str,
                            headers: list[tuple[str, str]], send: SendASGI, added: list[tuple[str, str]]) -> None:
        """`--serve-tools`: the tool server's last upstream answer, read whole (its body decoded: sent without its
        content encoding)."""
        assert self.tools is not None
        try:
            response = await self.tools.answer(dialect, body, session, lambda content: self.http.request(
                "POST", url, headers=headers, content=content))
        except httpx.HTTPError as exc:
            await self._unreachable(send, dialect, url, exc)
            return
        kept = [(k, v) for k, v in _kept(response.headers) if k.lower() != "content-encoding"]
        await _answer(send, response.status_code, response.content, [*kept, *added])

    async def _relay(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes, send: SendASGI,
                     added: list[tuple[str, str]], dialect: Dialect) -> None:
        request = self.http.build_request(method, url, headers=headers, content=body)
        try:
            response = await self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            await self._unreachable(send, dialect, url, exc)
            return
        try:
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": _raw([*_kept(response.headers), *added])})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()


    @staticmethod
    async def _unreachable(send: SendASGI, dialect: Dialect, url: str, exc: Exception) -> None:
        log.warning("ctxsieve proxy: the upstream %s could not be reached (%s)", url.split("?")[0],
                    type(exc).__name__)
        await _answer(send, 502, _unreachable_body(dialect, url, exc), [("content-type", "application/json")])


def _kept(headers: httpx.Headers) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers.multi_items() if k.lower() not in HOP_BY_HOP]


def _raw(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def _answer(send: SendASGI, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _raw(headers)})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _unreachable_body(dialect: Dialect, url: str, exc: Exception) -> bytes:
    return dumps(dialect.unreachable(
        f"ctxsieve proxy: the upstream {url.split('?')[0]} could not be reached ({type(exc).__name__})"))


def _say(projection: Projection, path: str) -> None:
    for failure in projection.failures:
        log.warning("ctxsieve proxy: %s; sent upstream whole (%s, session %s)", failure, path, projection.session)


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None  # not JSON: the upstream answers it
    return value if isinstance(value, dict) else None


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _lifespan(receive: Receive, send: SendASGI, close: Callable[[], Awaitable[None]]) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _no_websocket(send: SendASGI) -> None:
    """Codex first asks for the Responses API over a WebSocket and retries five times (about 5 s) on any other
    answer before it falls back to HTTPS; 426 Upgrade Required sends it to HTTPS at once (Codex's own tests answer
    so). The proxy speaks HTTP only."""
    await send({"type": "http.response.start", "status": 426, "headers": [(b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})
