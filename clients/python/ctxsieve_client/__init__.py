"""ctxsieve client: typed `Client` / `AsyncClient` over the HTTP API, `wrap_tool`, and SDK tool helpers.

Imported on first use (PEP 562): a hook process Claude Code starts per tool call imports only what it sends with.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .async_client import AsyncClient
    from .calls import Call, Requests
    from .client import Client
    from .errors import CtxsieveError
    from .models import (
        CodeHit,
        CodeSearchResult,
        CollectionInfo,
        CollectionResult,
        Compaction,
        DocumentEntry,
        DocumentPage,
        DocumentsAdded,
        FileOrder,
        FilterResult,
        More,
        RefContent,
        RepoInfo,
        RepoList,
        Rerun,
        SearchPage,
        SearchResult,
        Selected,
        Selection,
        SessionRead,
        SessionReport,
        Snippet,
        ToolsetDetail,
        ToolsetInfo,
        Usage,
    )
    from .rendering import View, render
    from .tools import (
        anthropic_deferred,
        anthropic_tool_search_result,
        anthropic_tools,
        openai_deferred,
        openai_tool_search_output,
        openai_tools,
    )
    from .wrap import render_result, wrap_tool

# a public name -> the module that defines it
_HOME = {
    "AsyncClient": "async_client",
    "Call": "calls",
    "Client": "client",
    "CodeHit": "models",
    "CodeSearchResult": "models",
    "CollectionInfo": "models",
    "CollectionResult": "models",
    "Compaction": "models",
    "CtxsieveError": "errors",
    "DocumentEntry": "models",
    "DocumentPage": "models",
    "DocumentsAdded": "models",
    "FileOrder": "models",
    "FilterResult": "models",
    "More": "models",
    "RefContent": "models",
    "RepoInfo": "models",
    "RepoList": "models",
    "Requests": "calls",
    "Rerun": "models",
    "SearchPage": "models",
    "SearchResult": "models",
    "Selected": "models",
    "Selection": "models",
    "SessionRead": "models",
    "SessionReport": "models",
    "Snippet": "models",
    "ToolsetDetail": "models",
    "ToolsetInfo": "models",
    "Usage": "models",
    "View": "rendering",
    "anthropic_deferred": "tools",
    "anthropic_tool_search_result": "tools",
    "anthropic_tools": "tools",
    "openai_deferred": "tools",
    "openai_tool_search_output": "tools",
    "openai_tools": "tools",
    "render": "rendering",
    "render_result": "wrap",
    "wrap_tool": "wrap",
}

__all__ = ["AsyncClient", "Call", "Client", "CodeHit", "CodeSearchResult", "CollectionInfo", "CollectionResult",
           "Compaction", "CtxsieveError", "DocumentEntry", "DocumentPage", "DocumentsAdded", "FileOrder",
           "FilterResult", "More", "RefContent", "RepoInfo", "RepoList", "Requests", "Rerun", "SearchPage",
           "SearchResult", "Selected",
           "Selection", "SessionRead", "SessionReport", "Snippet", "ToolsetDetail", "ToolsetInfo", "Usage", "View",
           "anthropic_deferred", "anthropic_tool_search_result", "anthropic_tools", "openai_deferred",
           "openai_tool_search_output", "openai_tools", "render", "render_result", "wrap_tool"]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # once: the next lookup does not come here
    return value
