"""POST /v1/context/compact: an agent's history with its oldest tool results as placeholders naming their refs."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from fastapi import APIRouter

from ctxsieve.indexes.compaction import CompactParams, compact
from ctxsieve.indexes.more import cut_from
from ctxsieve.indexes.sessions import COMPACT, REPEAT_WARNING, Read
from ctxsieve.indexes.sources import SourceInput
from ctxsieve.indexes.usage import saved_ratio
from ctxsieve.ingest.normalize import Document

from ..deps import EngineDep, TenantDep
from ..observe import ReadLogDep
from ..schemas import ClearedOut, CompactRequest, CompactResponse, CompactUsage, Tuned

router = APIRouter(prefix="/v1/context", tags=["context"])


@router.post("/compact", response_model=CompactResponse, operation_id="compact_context")
def compact_context(body: CompactRequest, engine: EngineDep, tenant: TenantDep, log: ReadLogDep
                    ) -> CompactResponse:
    """The same messages, the oldest tool results cleared in steps (each stored first: its ref gives it back)."""
    params = CompactParams(format=body.format, trigger_tokens=body.trigger_tokens,
                           keep_tool_results=body.keep_tool_results, clear_at_least=body.clear_at_least,
                           exclude_tools=tuple(body.exclude_tools), clear_tool_inputs=body.clear_tool_inputs,
                           placeholder=body.placeholder)
    tuned = None
    if log.session is not None:
        thrash = engine.sessions.thrash(tenant, log.session)
        if thrash.rate > REPEAT_WARNING:  # the session keeps coming back for what was cleared: keep more
            tuned = Tuned(keep_tool_results=max(2 * params.keep_tool_results, params.keep_tool_results + 1),
                          trigger_tokens=params.trigger_tokens * 5 // 4,
                          reason=f"{thrash.refetched} of {thrash.cleared} cleared results were fetched again "
                                 f"({thrash.rate:.0%}, over 15%): keeping more")
            params = replace(params, keep_tool_results=tuned.keep_tool_results, trigger_tokens=tuned.trigger_tokens)

    def store(text: str, tool: str | None, args: dict[str, Any]) -> str:
        cut = cut_from(text)  # a surface's cut: cleared, it names the whole output it was taken from
        if cut is not None and engine.sieve.sources.holds(tenant, cut):
            return cut
        source = engine.sieve.sources.put(tenant, SourceInput((Document(text),), True, "auto", tool, args))
        return source.ref

    result = compact(body.messages, params, engine.tokenizer, store)
    refs = [c.ref for c in result.cleared]
    engine.sieve.sources.touch(sorted(set(refs)))
    if log.session is not None:  # every call: the session's token curve shows the sawtooth (or its absence)
        engine.sessions.record(tenant, log.session, Read(route=COMPACT, refs=refs, input_tokens=result.input_tokens,
                                                         output_tokens=result.output_tokens),
                               event=log.request_id)
    return CompactResponse(messages=result.messages, compacted=result.compacted,
                           cleared=[ClearedOut(**asdict(c)) for c in result.cleared],
                           usage=CompactUsage(input_tokens=result.input_tokens, output_tokens=result.output_tokens,
                                              saved_ratio=saved_ratio(result.input_tokens, result.output_tokens)),
                           tuned=tuned, format=result.format)

