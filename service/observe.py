"""What each read tells the operator: the session's token curve and repeated reads, and the metrics."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from ctxsieve.indexes.errors import InvalidInput
from ctxsieve.indexes.sessions import Read
from ctxsieve.indexes.usage import saved_ratio

from .deps import EngineDep, TenantDep
from .engine import Engine
from .metrics import Metrics

_SESSION = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


@dataclass
class ReadLog:
    engine: Engine
    metrics: Metrics
    tenant: str
    session: str | None
    request_id: str | None = None
    agent: str | None = None  # X-Agent: the agent the session's reads came from (`ctxsieve stats` groups by it)

    def __call__(self, route: str, refs: Sequence[str], input_tokens: int, output_tokens: int,
                 shown: Sequence[tuple[str, int, int]] = ()) -> None:
        """Count the read; in a session, keep it with the spans shown (ref, start, end) for the inspector."""
        self.metrics.tokens_in.inc(input_tokens)
        self.metrics.tokens_out.inc(output_tokens)
        if input_tokens:
            self.metrics.saved.observe(saved_ratio(input_tokens, output_tokens))
        if self.session is None:
            return
        read = Read(route=route, refs=refs, input_tokens=input_tokens, output_tokens=output_tokens, shown=shown)
        repeated = self.engine.sessions.record(self.tenant, self.session, read, event=self.request_id,
                                               agent=self.agent)
        if repeated:
            self.metrics.repeated.inc()


def valid_session(session: str) -> bool:
    return _SESSION.match(session) is not None


def read_log(request: Request, engine: EngineDep, tenant: TenantDep) -> ReadLog:
    session = request.headers.get("x-session-id")
    if session is not None and not valid_session(session):
        raise InvalidInput("X-Session-Id: 1-128 letters, digits, '_', '-', '.' or ':'")
    agent = request.headers.get("x-agent")
    if agent is not None and not valid_session(agent):
        raise InvalidInput("X-Agent: 1-128 letters, digits, '_', '-', '.' or ':'")
    return ReadLog(engine, request.app.state.metrics, tenant, session, getattr(request.state, "request_id", None),
                   agent)


ReadLogDep = Annotated[ReadLog, Depends(read_log)]
