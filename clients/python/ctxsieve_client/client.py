"""Synchronous and asynchronous clients; errors carry the service's error envelope."""

from __future__ import annotations

from typing import Any

import httpx

JSON = dict[str, Any]


class CtxsieveError(Exception):
    """A non-2xx answer: `status`, and the envelope's `type`, `message` and `request_id`."""

    def __init__(self, status: int, body: Any) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.type = error.get("type", "http_error")
        self.message = error.get("message", str(body))
        self.request_id = error.get("request_id")
        self.retry_after = None
        super().__init__(f"{status} {self.type}: {self.message} (request {self.request_id})")


def _drop_none(body: JSON) -> JSON:
    return {k: v for k, v in body.items() if v is not None}


class _Calls:
    """Request shapes shared by both clients; each returns (method, path, params, json)."""

    @staticmethod
    def filter(query: str | None = None, content: str | None = None, documents: list[JSON] | None = None,
               **options: Any) -> tuple[str, str, JSON | None, JSON]:
        return "POST", "/v1/filter", None, _drop_none({"query": query, "content": content, "documents": documents,
                                                        **options})

    @staticmethod
    def refilter(ref: str, query: str, **options: Any) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", f"/v1/refs/{ref}/filter", None, _drop_none({"query": query, **options})

    @staticmethod
    def fetch_ref(ref: str, start: int | None = None, end: int | None = None, chunk: int | None = None,
                  window: int | None = None) -> tuple[str, str, JSON | None, JSON | None]:
        params = _drop_none({"start": start, "end": end, "chunk": chunk, "window": window})
        return "GET", f"/v1/refs/{ref}", params, None

    @staticmethod
    def search(query: str, **options: Any) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", "/v1/search", None, _drop_none({"query": query, **options})

    @staticmethod
    def read(path: str, query: str, **options: Any) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", "/v1/read", None, _drop_none({"path": path, "query": query, **options})

    @staticmethod
    def register_toolset(name: str, tools: list[JSON]) -> tuple[str, str, JSON | None, JSON | None]:
        return "PUT", f"/v1/toolsets/{name}", None, {"tools": tools}

    @staticmethod
    def select_tools(query: str, toolsets: list[str], **options: Any) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", "/v1/tools/select", None, _drop_none({"query": query, "toolsets": toolsets, **options})

    @staticmethod
    def tools_feedback(query: str, used: list[str], toolsets: list[str]) -> tuple[str, str, JSON | None, JSON]:
        return "POST", "/v1/tools/feedback", None, {"query": query, "used": used, "toolsets": toolsets}

    @staticmethod
    def create_collection(name: str, description: str = "") -> tuple[str, str, JSON | None, JSON | None]:
        return "PUT", f"/v1/collections/{name}", None, {"description": description}

    @staticmethod
    def add_documents(name: str, documents: list[JSON]) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", f"/v1/collections/{name}/documents", None, {"documents": documents}

    @staticmethod
    def query_collection(name: str, query: str, **options: Any) -> tuple[str, str, JSON | None, JSON | None]:
        return "POST", f"/v1/collections/{name}/query", None, _drop_none({"query": query, **options})

    @staticmethod
    def session(session_id: str) -> tuple[str, str, JSON | None, JSON | None]:
        return "GET", f"/v1/sessions/{session_id}", None, None


_CALLS = [name for name in vars(_Calls) if not name.startswith("_")]


def _headers(api_key: str | None, session_id: str | None) -> dict[str, str]:
    headers = {}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    if session_id:
        headers["X-Session-Id"] = session_id
    return headers


def _result(response: httpx.Response) -> JSON:
    try:
        body = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        error = CtxsieveError(response.status_code, body)
        error.retry_after = response.headers.get("retry-after")
        raise error
    return body  # type: ignore[no-any-return]


class Client:
    """`Client("http://127.0.0.1:8000", api_key=None, session_id=None)`; every API call is a method."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url.rstrip("/"), headers=_headers(api_key, session_id),
                                  timeout=timeout, transport=transport)

    def _send(self, method: str, path: str, params: JSON | None, body: JSON | None) -> JSON:
        return _result(self._http.request(method, path, params=params, json=body))

    def __getattr__(self, name: str) -> Any:
        if name not in _CALLS:
            raise AttributeError(name)
        shape = getattr(_Calls, name)
        return lambda *args, **kwargs: self._send(*shape(*args, **kwargs))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """The same calls, awaitable."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=_headers(api_key, session_id),
                                       timeout=timeout, transport=transport)

    async def _send(self, method: str, path: str, params: JSON | None, body: JSON | None) -> JSON:
        return _result(await self._http.request(method, path, params=params, json=body))

    def __getattr__(self, name: str) -> Any:
        if name not in _CALLS:
            raise AttributeError(name)
        shape = getattr(_Calls, name)
        return lambda *args, **kwargs: self._send(*shape(*args, **kwargs))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
