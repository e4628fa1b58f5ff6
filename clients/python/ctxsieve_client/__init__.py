"""ctxsieve client: typed `Client` / `AsyncClient` over the HTTP API, `wrap_tool`, and SDK tool helpers."""

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

__all__ = ["AsyncClient", "Call", "Client", "CodeHit", "CodeSearchResult", "CollectionInfo", "CollectionResult",
           "Compaction", "CtxsieveError", "DocumentEntry", "DocumentPage", "DocumentsAdded", "FilterResult", "More",
           "RefContent", "RepoInfo", "RepoList", "Requests", "Rerun", "SearchPage", "SearchResult", "Selected",
           "Selection", "SessionRead", "SessionReport", "Snippet", "ToolsetDetail", "ToolsetInfo", "Usage", "View",
           "anthropic_deferred", "anthropic_tool_search_result", "anthropic_tools", "openai_deferred",
           "openai_tool_search_output", "openai_tools", "render", "render_result", "wrap_tool"]
