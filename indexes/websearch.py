"""Web search through Tavily (tavily-python), asking for each page's raw content.

Failures are never turned into an empty result: the upstream message travels verbatim to the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import InvalidRequest, UpstreamFailed, UpstreamTimeout


@dataclass(frozen=True)
class SearchQuery:
    query: str
    max_results: int = 5
    search_depth: str = "basic"
    topic: str = "general"
    time_range: str | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()

    def args(self) -> dict[str, Any]:
        """The arguments that re-run this search, for the placeholder (defaults left out)."""
        out: dict[str, Any] = {"query": self.query}
        if self.max_results != 5:
            out["max_results"] = self.max_results
        if self.search_depth != "basic":
            out["search_depth"] = self.search_depth
        if self.topic != "general":
            out["topic"] = self.topic
        if self.time_range:
            out["time_range"] = self.time_range
        if self.include_domains:
            out["include_domains"] = list(self.include_domains)
        if self.exclude_domains:
            out["exclude_domains"] = list(self.exclude_domains)
        return out


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    content: str  # the raw page content when the engine gave it, else its summary snippet
    score: float | None
    metadata: dict[str, Any] = field(default_factory=dict)


class WebSearch(Protocol):
    def search(self, query: SearchQuery) -> list[Page]: ...


class TavilySearch:
    def __init__(self, api_key: str | None, base_url: str | None, timeout: float) -> None:
        self.api_key = api_key
        self.base_url = base_url
        self.timeout = timeout

    def search(self, query: SearchQuery) -> list[Page]:
        if not self.api_key:
            raise InvalidRequest("web search needs a Tavily API key: set TAVILY_API_KEY (or CTXSIEVE_TAVILY_API_KEY) "
                                 "in the service's environment")
        from tavily import TavilyClient, errors

        client = TavilyClient(api_key=self.api_key, api_base_url=self.base_url)
        try:
            response = client.search(
                query.query, search_depth=query.search_depth, topic=query.topic, time_range=query.time_range,
                max_results=query.max_results, include_domains=list(query.include_domains) or None,
                exclude_domains=list(query.exclude_domains) or None, include_raw_content="markdown",
                timeout=self.timeout,
            )
        except errors.TimeoutError as exc:
            raise UpstreamTimeout(f"Tavily did not answer within {self.timeout:g} s") from exc
        except (errors.InvalidAPIKeyError, errors.UsageLimitExceededError, errors.BadRequestError,
                errors.ForbiddenError) as exc:
            raise UpstreamFailed(f"Tavily: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # requests' HTTPError for 5xx, connection errors: all upstream failures
            raise UpstreamFailed(f"Tavily: {_describe(exc)}") from exc
        finally:
            client.close()
        return [_page(r) for r in response.get("results", [])]


def _describe(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    body = getattr(response, "text", "") if response is not None else ""
    return f"{type(exc).__name__}: {exc}" + (f" — {body}" if body else "")


def _page(result: dict[str, Any]) -> Page:
    raw = result.get("raw_content") or ""
    content = raw if raw.strip() else str(result.get("content") or "")
    score = result.get("score")
    return Page(url=str(result.get("url", "")), title=str(result.get("title") or ""), content=content,
                score=float(score) if isinstance(score, int | float) else None,
                metadata={"score": score, "summary": result.get("content")})
