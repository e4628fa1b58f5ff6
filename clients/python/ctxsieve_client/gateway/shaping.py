"""What the agent gets back from an upstream call: the rules of API.md's "MCP surfaces", as one function.

- An error result passes through verbatim while it fits what an agent shows of an error whole
  (`fitting.mcp_error_limit`: Claude Code cuts a longer one to a head and tail); a longer one is stored whole and,
  when it is a failing run's log, laid out within that limit: its failures, then its tracebacks as far as they fit,
  the calls that read the rest (`fitting.fit_error_text`); any other goes as it is. Images, audio, resource links and
  embedded resources pass through verbatim.
- Text within `passthrough_tokens` passes through byte for byte (with the upstream's structuredContent).
- Larger text is stored whole through `/v1/filter` (source: the tool as the agent calls it, its arguments with
  secrets masked) and the agent gets the snippets for the call's intent within `max_tokens`, or an outline
  when there is no intent, and a placeholder naming `filter_ref` / `fetch_ref`. No structuredContent then:
  the filtered text is all the agent gets, so the output is never sent twice.
- When the service cannot be reached, the result passes through unfiltered with one line first saying so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
import mcp_types as mt

from ..calls import Call
from ..client import AsyncClient, CtxsieveError
from ..cutting import CutOptions, cut_request, cut_text
from ..fitting import fit_error_text, fit_tool_text, fits, mcp_error_limit
from ..models import FilterResult
from .config import Options

log = logging.getLogger("ctxsieve.gateway")


@dataclass(frozen=True, kw_only=True)
class Shaped:
    content: list[Any]
    structured: dict[str, Any] | None
    is_error: bool
    tokens_in: int | None  # None: not counted (passed through without asking the service)
    tokens_out: int | None
    note: str  # passthrough, filtered, outline, error, unfiltered


@dataclass(frozen=True, kw_only=True)
class UpstreamCall:
    server: str
    tool: str  # as the agent calls it (the re-run hint names this)
    arguments: dict[str, Any]
    intent: str | None


def _as_is(content: list[Any], structured: dict[str, Any] | None, is_error: bool, note: str,
           tokens: int | None = None) -> Shaped:
    return Shaped(content=content, structured=structured, is_error=is_error, tokens_in=tokens, tokens_out=tokens,
                  note=note)


async def shape(content: list[Any], structured: dict[str, Any] | None, is_error: bool, call: UpstreamCall,
                options: Options, client: AsyncClient) -> Shaped:
    text = "\n".join(block.text for block in content if getattr(block, "type", None) == "text")
    if is_error:
        return await _error(content, structured, text, call, options, client)
    cutting = CutOptions(passthrough_tokens=options.passthrough_tokens, max_tokens=options.max_tokens)
    request = cut_request(text, call.intent, call.tool, call.arguments, cutting)
    if request is None:
        return _as_is(content, structured, False, "passthrough")
    result = await _stored(request, content, structured, False, call, client)
    if isinstance(result, Shaped):
        return result
    shown = cut_text(result, cutting)
    if shown is None:
        return _as_is(content, structured, False, "passthrough", result.usage.input_tokens)
    shown = fit_tool_text(result, shown)  # a log's failures whole within the agent's limit on an MCP result
    return _replaced(content, shown, False, result, result.usage.output_tokens,
                     "filtered" if call.intent else "outline")


async def _error(content: list[Any], structured: dict[str, Any] | None, text: str, call: UpstreamCall,
                 options: Options, client: AsyncClient) -> Shaped:
    """An error result: as it is while an agent shows it whole; else stored, and a failing run's laid out within
    that limit (fit_error_text)."""
    if fits(text, mcp_error_limit()):
        return _as_is(content, structured, True, "error")
    request = cut_request(text, call.intent, call.tool, call.arguments,
                          CutOptions(passthrough_tokens=0, max_tokens=options.max_tokens))
    assert request is not None  # (text over the limit is never within a passthrough of 0)
    result = await _stored(request, content, structured, True, call, client)
    if isinstance(result, Shaped):
        return result
    fitted = fit_error_text(result, text)
    if fitted is None:
        return _as_is(content, structured, True, "error", result.usage.input_tokens)
    return _replaced(content, fitted, True, result, None, "error laid out")


async def _stored(request: Call[FilterResult], content: list[Any], structured: dict[str, Any] | None,
                  is_error: bool, call: UpstreamCall, client: AsyncClient) -> FilterResult | Shaped:
    """The output stored and cut by the service; else the result as it is, saying why (`_unfiltered`)."""
    try:
        return await client.send(request)
    except (CtxsieveError, httpx.HTTPError) as exc:
        return _unfiltered(content, structured, is_error, call, exc)


def _replaced(content: list[Any], text: str, is_error: bool, result: FilterResult, tokens_out: int | None,
              note: str) -> Shaped:
    """The text blocks replaced by `text`; images, audio and resources kept after it."""
    others = [block for block in content if getattr(block, "type", None) != "text"]
    return Shaped(content=[mt.TextContent(type="text", text=text), *others], structured=None, is_error=is_error,
                  tokens_in=result.usage.input_tokens, tokens_out=tokens_out, note=note)


def _unfiltered(content: list[Any], structured: dict[str, Any] | None, is_error: bool, call: UpstreamCall,
                exc: CtxsieveError | httpx.HTTPError) -> Shaped:
    """The result as it is, one line first saying the service did not take it and why."""
    reason = f"{exc.status} {exc.type}" if isinstance(exc, CtxsieveError) else type(exc).__name__
    line = f"[ctxsieve: this output is unfiltered: the ctxsieve service did not take it ({reason}: {_short(exc)})]"
    log.warning("service unavailable for %s %s: %s", call.server, call.tool, exc)
    return _as_is([mt.TextContent(type="text", text=line), *content], structured, is_error, "unfiltered")


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
