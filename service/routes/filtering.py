"""POST /v1/filter, and the ref routes: fetch a source whole or in part, filter it again."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response

from ctxsieve.indexes.errors import InvalidRequest
from ctxsieve.indexes.more import Style
from ctxsieve.indexes.sieve import FilterParams, FilterResult
from ctxsieve.indexes.sources import Source, SourceInput
from ctxsieve.ingest.normalize import Document

from ..deps import EngineDep, TenantDep
from ..observe import ReadLog, ReadLogDep
from ..presenting import presented
from ..schemas import FilterOptions, FilterRequest, FilterResponse, RefilterRequest, RefResponse, SourceOut

router = APIRouter(prefix="/v1", tags=["filter"])


def _params(body: FilterOptions) -> FilterParams:
    if body.query is None and not body.is_error and body.mode != "outline":
        raise InvalidRequest("query is required (unless is_error is true, or mode is outline)")
    return FilterParams(body.query, k=body.k, max_tokens=body.max_tokens, min_score=body.min_score, order=body.order,
                        mode=body.mode)


def _source_input(body: FilterRequest) -> SourceInput:
    if (body.content is None) == (body.documents is None):
        raise InvalidRequest("send exactly one of content or documents")
    if body.content is not None:
        documents: tuple[Document, ...] = (Document(body.content),)
    else:
        documents = tuple(Document(d.text, d.title, d.url, d.metadata) for d in body.documents or [])
    tool, args, cwd = (body.source.tool, body.source.args, body.source.cwd) if body.source else (None, {}, None)
    return SourceInput(documents, body.content is not None, body.content_type, tool, args, cwd)


def _response(result: FilterResult, log: ReadLog, route: str, style: Style) -> FilterResponse:
    log(route, [result.ref], result.usage.input_tokens, result.usage.output_tokens,
        [(result.ref, s.start, s.end) for s in result.snippets])
    return FilterResponse.model_validate(presented(result, style))


@router.post("/filter", response_model=FilterResponse, operation_id="filter_output")
def filter_output(body: FilterRequest, engine: EngineDep, tenant: TenantDep, log: ReadLogDep) -> FilterResponse:
    """Store tool output whole under a ref and return only the snippets relevant to the query."""
    inp = _source_input(body)
    params = _params(body)
    with engine.gate.admit():
        return _response(engine.sieve.filter(tenant, inp, params, is_error=body.is_error), log, "filter",
                         body.placeholder)


@router.post("/refs/{ref}/filter", response_model=FilterResponse, operation_id="refilter_ref")
def refilter_ref(ref: str, body: RefilterRequest, engine: EngineDep, tenant: TenantDep, log: ReadLogDep
                 ) -> FilterResponse:
    """Filter a stored source again with a new query; nothing already embedded is embedded again."""
    if body.is_error:  # the stored output, verbatim, under its own ref: an error is never filtered
        result = engine.sieve.refilter(tenant, ref, _params(body), is_error=True)
        return _response(result, log, "refilter", body.placeholder)
    with engine.gate.admit():
        return _response(engine.sieve.refilter(tenant, ref, _params(body)), log, "refilter", body.placeholder)


@router.delete("/refs/{ref}", status_code=204, response_class=Response, operation_id="delete_ref")
def delete_ref(ref: str, engine: EngineDep, tenant: TenantDep) -> Response:
    """Forget a source: its text and chunks, and the chunk vectors no other source uses."""
    engine.sieve.forget(tenant, ref)
    return Response(status_code=204)


@router.get("/refs/{ref}", response_model=RefResponse, operation_id="get_ref")
def get_ref(
    ref: str, engine: EngineDep, tenant: TenantDep, log: ReadLogDep,
    start: int | None = Query(None, ge=0), end: int | None = Query(None, ge=0),
    chunk: int | None = Query(None, ge=0), window: int = Query(0, ge=0, le=50),
    lines: str | None = Query(None, pattern=r"^[0-9]{1,9}(-[0-9]{1,9})?$", description="A-B: lines of the view"),
) -> RefResponse:
    """The whole source as sent, or a character range, a chunk and its neighbours, or lines A-B of its view."""
    source = engine.sieve.sources.get(tenant, ref)
    out = _whole(source)
    if lines is not None and (chunk is not None or start is not None or end is not None):
        raise InvalidRequest("use one of start/end, chunk/window or lines")
    if chunk is not None or start is not None or end is not None or lines is not None:
        out.start, out.end = source.lines_part(lines) if lines is not None else source.part(start, end, chunk, window)
        out.text = source.view.text[out.start : out.end]
        out.line_start, out.line_end = source.line_span(out.start, out.end)
    tokens = engine.tokenizer.count(out.text) if out.start is not None else source.tokens
    span = (source.ref, out.start or 0, len(source.view.text) if out.end is None else out.end)
    log("fetch", [source.ref], source.tokens, tokens, [span])
    return out


def _whole(source: Source) -> RefResponse:
    return RefResponse(
        ref=source.ref, text=source.text, documents=source.documents,
        source=SourceOut(tool=source.tool, args=source.args, cwd=source.cwd) if source.tool else None,
        content_type=source.content_type, tokens=source.tokens, chunks=len(source.chunks),
        created_at=source.created_at, view=None if source.view.text == source.text else source.view.text,
    )
