"""`wrap_tool`: a tool's output goes through ctxsieve; the agent sees snippets and a placeholder."""

from __future__ import annotations

import functools
import inspect
import json
import traceback
from collections.abc import Callable
from typing import Any

from .client import JSON, AsyncClient, Call, Client, FilterOptions, Requests
from .models import FilterResult
from .rendering import PLAIN, render


def render_result(result: FilterResult, placeholder: str | None = None) -> str:
    """A filter or re-filter answer as one text: its map of the file, its snippets (as its kind shows them: the
    response's `view`), then its placeholder (or the one given: the same facts in a surface's own tool names)."""
    return render(result.snippets, result.placeholder if placeholder is None else placeholder,
                  result.view or PLAIN, result.map)


def _as_content(output: Any, source: JSON, k: int, max_tokens: int | None) -> tuple[str, FilterOptions]:
    """Text as it is; anything else as JSON (so it is flattened per record, not stringified)."""
    options: FilterOptions = {"source": source, "k": k, "max_tokens": max_tokens}
    if isinstance(output, str):
        return output, options
    return json.dumps(output, ensure_ascii=False, default=str), {**options, "content_type": "json"}


def _call(tool: Callable[..., Any], arguments: dict[str, Any]) -> JSON:
    """The call that produced the output, for the placeholder's re-run hint (scalar arguments only)."""
    scalars = {k: v for k, v in arguments.items() if isinstance(v, str | int | float | bool)}
    return {"tool": tool.__name__, "args": scalars}


def _empty(tool: Callable[..., Any]) -> str:
    return f"[ctxsieve: {tool.__name__} returned nothing]"


def _failure(exc: BaseException, source: JSON) -> Call[FilterResult]:
    """The whole traceback, as an error: stored and returned verbatim, never filtered."""
    return Requests.filter(None, "".join(traceback.format_exception(exc)), is_error=True, source=source)


def _filtering(output: Any, query: str, source: JSON, k: int, max_tokens: int | None) -> Call[FilterResult] | None:
    """The filter request for a tool's output; None when it returned nothing (nothing to store)."""
    if output is None or output == "":
        return None
    content, options = _as_content(output, source, k, max_tokens)
    return Requests.filter(query, content, **options)


def wrap_tool(client: Client | AsyncClient, query_from: Callable[..., str] | str, max_tokens: int | None = 800,
              k: int = 5, reraise: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a tool (a function or a coroutine function; an `AsyncClient` for the latter): its output is
    filtered against the query; its failures pass through verbatim.

    `query_from` is the name of the tool argument holding the agent's intent, or a function of the tool's
    arguments that returns it. Output that is not a string is sent as JSON. Empty output is returned as a
    one-line note (nothing to store). An exception is sent whole with `is_error` (stored and referenced,
    never shortened) and then re-raised, or returned as text when `reraise` is false.
    """

    def decorate(tool: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(tool)

        def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, JSON]:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            query = arguments[query_from] if isinstance(query_from, str) else query_from(**arguments)
            return str(query), _call(tool, arguments)

        if inspect.iscoroutinefunction(tool):
            if not isinstance(client, AsyncClient):
                raise TypeError(f"{tool.__name__} is async: wrap it with an AsyncClient")
            async_client = client

            @functools.wraps(tool)
            async def async_wrapper(*args: Any, **kwargs: Any) -> str:
                query, source = prepare(args, kwargs)
                try:
                    output = await tool(*args, **kwargs)
                except Exception as exc:
                    failure = await async_client.send(_failure(exc, source))
                    if reraise:
                        raise
                    return render_result(failure)
                call = _filtering(output, query, source, k, max_tokens)
                return _empty(tool) if call is None else render_result(await async_client.send(call))

            return async_wrapper
        if not isinstance(client, Client):
            raise TypeError(f"{tool.__name__} is not async: wrap it with a Client")
        sync_client = client

        @functools.wraps(tool)
        def wrapper(*args: Any, **kwargs: Any) -> str:
            query, source = prepare(args, kwargs)
            try:
                output = tool(*args, **kwargs)
            except Exception as exc:
                failure = sync_client.send(_failure(exc, source))
                if reraise:
                    raise
                return render_result(failure)
            call = _filtering(output, query, source, k, max_tokens)
            return _empty(tool) if call is None else render_result(sync_client.send(call))

        return wrapper

    return decorate
