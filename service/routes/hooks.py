"""POST /v1/hooks/claude-code: Claude Code's `type: "http"` hook, answering what `ctxsieve hook claude-code` prints.

The command hook's own code (`ctxsieve_client.hooks.claude_code.handle`) runs here, its filter call sent to this
service's `/v1/filter` route in-process instead of over HTTP, so both hooks give the same answer for the same
payload, without a process started per call. A payload it does not handle (another event, no text, a small
output), or one whose filter fails, answers `200 {}`: Claude Code then gives the model the tool's own output.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ValidationError

from ctxsieve.indexes.errors import CtxsieveError, InvalidRequest
from ctxsieve_client.client import Call
from ctxsieve_client.hooks.claude_code import AGENT as CLAUDE_CODE
from ctxsieve_client.hooks.claude_code import HookOptions, handle, session_of
from ctxsieve_client.models import Model

from ..deps import EngineDep, TenantDep
from ..engine import Engine
from ..observe import ReadLog, ReadLogDep, valid_session
from ..schemas import FilterRequest
from ..schemas.repos import FileRankQuery
from .filtering import filter_output
from .repos import rank_files

router = APIRouter(prefix="/v1/hooks", tags=["hooks"])
log = logging.getLogger("ctxsieve")
M = TypeVar("M")


@dataclass(frozen=True)
class _InProcess:
    """Sends the hook's calls (a filter, a ranking of files) to their route functions, as the typed client would over
    HTTP."""

    engine: Engine
    tenant: str
    reads: ReadLog

    def send(self, call: Call[M]) -> M:
        if call.result is None or not issubclass(call.result, Model):
            raise InvalidRequest(f"the hook reads no answer of {call.method} {call.path}")
        if (call.method, call.path) == ("POST", "/v1/filter"):
            answer: BaseModel = filter_output(FilterRequest.model_validate(call.body), self.engine, self.tenant,
                                              self.reads)
        elif (call.method, call.path) == ("POST", "/v1/repos/rank-files"):
            answer = rank_files(FileRankQuery.model_validate(call.body), self.engine, self.tenant)
        else:
            raise InvalidRequest(f"the hook sends only a filter or a ranking of files, not {call.method} {call.path}")
        result: Any = call.result.from_json(answer.model_dump(mode="json"))
        return result  # type: ignore[no-any-return]


@router.post("/claude-code", operation_id="claude_code_hook", response_model=dict[str, Any])
def claude_code_hook(
    engine: EngineDep, tenant: TenantDep, reads: ReadLogDep, payload: Annotated[Any, Body()] = None,
    passthrough_tokens: int = Query(1000, ge=0, le=1_000_000), max_tokens: int | None = Query(None, ge=50, le=32_000),
) -> dict[str, Any]:
    """Claude Code's PostToolUse / PostToolUseFailure hook over HTTP: the answer the command hook prints."""
    session = session_of(payload)
    if reads.session is None and session is not None and valid_session(session):
        reads = replace(reads, session=session)
    if reads.agent is None:  # this route is Claude Code's hook: its reads are Claude Code's
        reads = replace(reads, agent=CLAUDE_CODE)
    try:
        answer = handle(payload, _InProcess(engine, tenant, reads),
                        HookOptions(passthrough_tokens=passthrough_tokens, max_tokens=max_tokens))
    except CtxsieveError as exc:  # the tool's own output goes on; the log says why
        log.warning("claude-code hook: output left unchanged: %s: %s", type(exc).__name__, exc)
        return {}
    except ValidationError as exc:  # its text quotes the input: only where it failed is logged
        log.warning("claude-code hook: output left unchanged: invalid request at %s",
                    ", ".join(".".join(map(str, e["loc"])) for e in exc.errors()))
        return {}
    return answer or {}
