"""ctxsieve client: `Client` / `AsyncClient` over the HTTP API, `wrap_tool`, and SDK tool helpers."""

from .client import AsyncClient, Client, CtxsieveError
from .tools import anthropic_tools, openai_tools
from .wrap import wrap_tool

__all__ = ["AsyncClient", "Client", "CtxsieveError", "anthropic_tools", "openai_tools", "wrap_tool"]
