"""`wrap_tool`: a tool's text output goes through ctxsieve; the agent sees snippets and a placeholder."""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable
from typing import Any

from .client import Client


def render(result: dict[str, Any]) -> str:
    """Snippets then the placeholder, as one text an agent can read."""
    parts = [s["text"] for s in result.get("snippets", [])]
    parts.append(result["placeholder"])
    return "\n\n---\n\n".join(parts)


def wrap_tool(client: Client, query_from: Callable[..., str] | str, max_tokens: int | None = 800, k: int = 5,
              reraise: bool = True) -> Callable[[Callable[..., Any]], Callable[..., str]]:
    """Decorate a tool: its output is filtered against the query; its failures pass through verbatim.

    `query_from` is the name of the tool argument holding the agent's intent, or a function of the
    tool's arguments that returns it. An exception is sent whole with `is_error` (so it is stored and
    referenced, never shortened) and then re-raised, or returned as text when `reraise` is false.
    """

    def decorate(tool: Callable[..., Any]) -> Callable[..., str]:
        signature = inspect.signature(tool)

        @functools.wraps(tool)
        def wrapper(*args: Any, **kwargs: Any) -> str:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            source = {"tool": tool.__name__, "args": {k: v for k, v in arguments.items()
                                                      if isinstance(v, str | int | float | bool)}}
            query = arguments[query_from] if isinstance(query_from, str) else query_from(**arguments)
            try:
                output = tool(*args, **kwargs)
            except Exception as exc:
                trace = "".join(traceback.format_exception(exc))
                result = client.filter(content=trace, is_error=True, source=source)
                if reraise:
                    raise
                return render(result)
            return render(client.filter(query=str(query), content=str(output), source=source, k=k,
                                        max_tokens=max_tokens))

        return wrapper

    return decorate
