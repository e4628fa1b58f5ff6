"""`ctxsieve mcp --url URL`: ctxsieve's tools for any MCP client (stdio by default, or streamable HTTP).

Each tool returns text an agent can read: the relevant snippets, then the one-line placeholder that
says how to get more. Errors from the service come back as MCP tool errors carrying its message whole.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp.server.mcpserver.exceptions import ToolError


class ServiceError(ToolError):
    """The service's error, whole, as the tool result the model reads (is_error=True)."""


class Service:
    def __init__(self, url: str, api_key: str | None, session_id: str | None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if session_id:
            headers["X-Session-Id"] = session_id
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=300)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.http.request(method, path, json=body, params=params)
        data = response.json()
        if response.status_code >= 400:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise ServiceError(f"{response.status_code} {error.get('type', 'error')}: {error.get('message', data)}")
        return data  # type: ignore[no-any-return]


def snippets_text(result: dict[str, Any]) -> str:
    parts = [s["text"] for s in result.get("snippets", [])]
    return "\n\n---\n\n".join([*parts, result["placeholder"]])


def _clean(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def build_server(service: Service) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ctxsieve", instructions=(
        "Tool output kept whole outside your context: you see the relevant snippets and a placeholder "
        "naming the ref. Re-filter a ref with a new query, or fetch it whole or in part, instead of re-running "
        "the tool."))

    @server.tool(description="Search the web; returns only the snippets relevant to the task, with refs.")
    def search(query: str, task: str | None = None, max_tokens: int = 1200, max_results: int = 5) -> str:
        result = service.call("POST", "/v1/search", _clean({"query": query, "task": task, "max_tokens": max_tokens,
                                                            "max_results": max_results}))
        blocks = []
        for r in result["results"]:
            if r["snippets"]:
                blocks.append(f"## {r['title']} ({r['url']}) [{r['ref']}]\n\n"
                              + "\n\n".join(s["text"] for s in r["snippets"]))
        return "\n\n".join([*blocks, result["placeholder"]])

    @server.tool(description="Read a file under the service's read roots; returns the parts relevant to query.")
    def read_file(path: str, query: str, k: int = 5, max_tokens: int | None = None) -> str:
        return snippets_text(service.call("POST", "/v1/read", _clean({"path": path, "query": query, "k": k,
                                                                       "max_tokens": max_tokens})))

    @server.tool(description="Filter a stored output (by ref) again with a new query.")
    def filter_ref(ref: str, query: str, k: int = 5, max_tokens: int | None = None) -> str:
        return snippets_text(service.call("POST", f"/v1/refs/{ref}/filter",
                                          _clean({"query": query, "k": k, "max_tokens": max_tokens})))

    @server.tool(description="Fetch a stored output whole, a character range, or chunk N with W neighbours.")
    def fetch_ref(ref: str, start: int | None = None, end: int | None = None, chunk: int | None = None,
                  window: int = 0) -> str:
        params = _clean({"start": start, "end": end, "chunk": chunk, "window": window if chunk is not None else None})
        return str(service.call("GET", f"/v1/refs/{ref}", params=params)["text"])

    @server.tool(description="The few tool definitions relevant to a request, from the named toolsets (JSON).")
    def select_tools(query: str, toolsets: list[str], k: int = 5, format: str = "mcp") -> str:  # noqa: A002
        result = service.call("POST", "/v1/tools/select", {"query": query, "toolsets": toolsets, "k": k,
                                                           "format": format})
        return json.dumps({"tools": result["tools"], "usage": result["usage"]}, ensure_ascii=False)

    @server.tool(description="Query a static collection (glossary, spec, style guide) for the relevant parts.")
    def query_collection(collection: str, query: str, k: int = 5, max_tokens: int | None = None) -> str:
        return snippets_text(service.call("POST", f"/v1/collections/{collection}/query",
                                          _clean({"query": query, "k": k, "max_tokens": max_tokens})))

    return server


def run(url: str, api_key: str | None, session_id: str | None, http: bool, host: str, port: int) -> None:
    server = build_server(Service(url, api_key, session_id))
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
