"""Wrapped tools: web search and file reads that store the raw output and return only what is relevant."""

from __future__ import annotations

from fastapi import APIRouter

from ctxsieve.indexes.sieve import FilterParams
from ctxsieve.indexes.sources import SourceInput
from ctxsieve.indexes.websearch import SearchQuery
from ctxsieve.ingest.normalize import Document

from ..deps import EngineDep, TenantDep
from ..observe import ReadLogDep
from ..presenting import presented
from ..schemas import ReadRequest, ReadResponse, SearchRequest, SearchResponse

router = APIRouter(prefix="/v1", tags=["wrapped tools"])


@router.post("/search", response_model=SearchResponse, operation_id="search_web")
def search_web(body: SearchRequest, engine: EngineDep, tenant: TenantDep, log: ReadLogDep) -> SearchResponse:
    """Run a web search, keep every page whole as a source, return the snippets relevant to the task."""
    query = SearchQuery(body.query, body.max_results, body.search_depth, body.topic, body.time_range,
                        tuple(body.include_domains), tuple(body.exclude_domains))
    pages = engine.web.search(query)  # upstream errors surface as 502/504 with the upstream message
    params = FilterParams(body.task or body.query, k=body.k, max_tokens=body.max_tokens, min_score=body.min_score,
                          order="document", mode=body.mode)
    with engine.gate.admit():
        result = engine.sieve.search_results(tenant, pages, query, params)
    log("search", [r.ref for r in result.results], result.usage.input_tokens, result.usage.output_tokens,
        [(r.ref, s.start, s.end) for r in result.results for s in r.snippets])
    return SearchResponse.model_validate(presented(result, body.placeholder))


@router.post("/read", response_model=ReadResponse, operation_id="read_file")
def read_file(body: ReadRequest, engine: EngineDep, tenant: TenantDep, log: ReadLogDep) -> ReadResponse:
    """Read a file under the read roots; an unchanged file keeps its ref, a changed one gets a new ref."""
    found = engine.files.read(body.path)
    inp = SourceInput((Document(found.text),), True, found.content_type, "read", {"path": body.path})
    params = FilterParams(body.query, k=body.k, max_tokens=body.max_tokens, min_score=body.min_score, order=body.order,
                        mode=body.mode)
    with engine.gate.admit():
        result = engine.sieve.filter(tenant, inp, params)
    log("read", [result.ref], result.usage.input_tokens, result.usage.output_tokens,
        [(result.ref, s.start, s.end) for s in result.snippets])
    return ReadResponse.model_validate({**presented(result, body.placeholder), "path": found.path, "size": found.size,
                                        "mtime": found.mtime})
