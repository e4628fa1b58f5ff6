"""`ctxsieve-mcp --url URL` (or `ctxsieve mcp`): ctxsieve's tools for any MCP client (stdio by default, or
streamable HTTP). It lives in the light client beside the other surfaces: it is only an HTTP client of the service
(`pip install 'ctxsieve-client[mcp]'`).

Each tool answers once, as text an agent can read: the relevant snippets, then the one-line placeholder
that says how to get more (no structured copy of the same text: a client that forwards both would put the
output into the model's context twice). Errors come back as MCP tool errors naming the service's URL and the
cause: its answer whole (status, type, message), or why it could not be reached (connection refused, a timeout),
so that the model and its user know what to do. Every call goes through the typed client (`ctxsieve_client`).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
from mcp.server.mcpserver.exceptions import ToolError

from .client import Client, CtxsieveError
from .fitting import fit_answer, reading_of
from .models import SearchResult
from .ref_tools import REF_TOOLS, RefTool, as_function
from .rendering import render
from .wrap import render_result

T = TypeVar("T")


class ServiceError(ToolError):
    """The service's error, or why it could not be reached, as the tool result the model reads (is_error=True)."""


def answered(url: str, call: Callable[[], T]) -> T:
    """`call`'s answer; any failure a ServiceError naming `url` (anything else would reach the model as only
    "Error executing tool <name>")."""
    try:
        return call()
    except CtxsieveError as exc:
        request = f" (request {exc.request_id})" if exc.request_id else ""
        raise ServiceError(f"the ctxsieve service at {url} answered {exc.status} {exc.type}: {exc.message}{request}"
                           ) from exc
    except httpx.TimeoutException as exc:
        raise ServiceError(f"the ctxsieve service at {url} did not answer in time ({type(exc).__name__}); it may be "
                           "busy or still loading its model: try again") from exc
    except httpx.RequestError as exc:
        raise ServiceError(f"the ctxsieve service at {url} cannot be reached: {type(exc).__name__}: {exc}; is "
                           "`ctxsieve serve` running there (or `ctxsieve mcp --url` pointing at it)?") from exc


def search_text(result: SearchResult) -> str:
    blocks = [f"## {r.title} ({r.url}) [{r.ref}]\n\n" + "\n\n".join(s.text for s in r.snippets)
              for r in result.results if r.snippets]
    return "\n\n".join([*blocks, result.placeholder])


def _ref_tool(ref_tool: RefTool, client: Client, url: str) -> Callable[..., str]:
    def run(**arguments: Any) -> str:
        answer = answered(url, lambda: client.send(ref_tool.call(arguments)))
        reading = reading_of(answer)  # a fetch over what an MCP result shows: the log's failures, to show first
        return fit_answer(answer, ref_tool.answer(answer),
                          answered(url, lambda: client.send(reading)) if reading is not None else None)

    return as_function(ref_tool, run)


def build_server(client: Client, url: str) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ctxsieve", instructions=(
        "Tool output kept whole outside your context: you see the relevant snippets and a placeholder "
        "naming the ref. Re-filter a ref with a new query, or fetch it whole or in part, instead of re-running "
        "the tool."))
    tool = server.tool

    @tool(description="Search the web; returns only the snippets relevant to the task, with refs.",
          structured_output=False)
    def search(query: str, task: str | None = None, max_tokens: int = 1200, max_results: int = 5) -> str:
        return search_text(answered(url, lambda: client.search(query, task=task or query, max_tokens=max_tokens,
                                                               max_results=max_results, placeholder="tools")))

    @tool(description="Read a file under the service's read roots; returns the parts relevant to query.",
          structured_output=False)
    def read_file(path: str, query: str, k: int = 5, max_tokens: int | None = None) -> str:
        result = answered(url, lambda: client.read(path, query, k=k, max_tokens=max_tokens, placeholder="tools"))
        return render_result(result)

    for ref_tool in REF_TOOLS:
        tool(name=ref_tool.name, description=ref_tool.description, structured_output=False)(
            _ref_tool(ref_tool, client, url))

    @tool(description="The few tool definitions relevant to a request, from the named toolsets (JSON). With "
                      "abstain, an empty list and a reason when no tool fits.", structured_output=False)
    def select_tools(query: str, toolsets: list[str], k: int = 5, format: str = "mcp",  # noqa: A002
                     abstain: bool = False) -> str:
        fmt = format if format in ("openai", "anthropic", "mcp") else "mcp"
        result = answered(url, lambda: client.select_tools(query, toolsets, k=k,
                                                           format=fmt,  # type: ignore[arg-type]
                                                           abstain=abstain))
        usage = {"tokens_all": result.usage.tokens_all, "tokens_selected": result.usage.tokens_selected,
                 "saved_ratio": result.usage.saved_ratio}
        answer: dict[str, object] = {"tools": result.tools, "usage": usage}
        if result.abstained:
            answer |= {"abstained": True, "reason": result.reason}
        return json.dumps(answer, ensure_ascii=False)

    @tool(description="Query a static collection (glossary, spec, style guide) for the relevant parts.",
          structured_output=False)
    def query_collection(collection: str, query: str, k: int = 5, max_tokens: int | None = None) -> str:
        result = answered(url, lambda: client.query_collection(collection, query, k=k, max_tokens=max_tokens,
                                                               placeholder="tools"))
        return render(result.snippets, result.placeholder)

    return server


def run(url: str, api_key: str | None, session_id: str | None, http: bool, host: str, port: int) -> None:
    server = build_server(Client(url, api_key=api_key, session_id=session_id, timeout=300), url)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        # It holds nothing of its own (what it reads is stored by the service), so Ctrl-C or an agent's SIGINT
        # ends it at once, as SIGTERM does: Python's KeyboardInterrupt would wait on the stdin read, which no
        # cancellation ends, until the client closed it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        server.run("stdio")
