"""Session diagnostics: one agent's reads, its token curve, and how often it re-reads what it was served.

Each read is one point (append-only: two replicas recording reads of one session at once both keep
theirs); retention deletes old reads by filter. A read is repeated when it touches a ref this session was
already served. Past 15% the budget is too tight (the agent is thrashing: raise k or max_tokens).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import NotFound
from .sources import utc_stamp
from .store import Found, MatchAny, PointData, Range, SpaceSpec, Store, Where, layout, scroll_all, where

SESSIONS = SpaceSpec(name=layout.SESSIONS, indexes={"tenant": "tenant", "session": "keyword", "refs": "keyword",
                                               "at": "float"})
REPEAT_WARNING = 0.15
MAX_REQUESTS = 10_000


@dataclass(frozen=True, kw_only=True)
class Read:
    """One read as a route reports it: which refs, the tokens in and out, the spans shown (ref, start, end)."""

    route: str
    refs: Sequence[str]
    input_tokens: int
    output_tokens: int
    shown: Sequence[tuple[str, int, int]] = ()


@dataclass(frozen=True, kw_only=True)
class SessionRead:
    """A read as stored: one point each, keyed by the request that made it (a retry is not counted twice)."""

    tenant: str
    session: str
    route: str
    refs: list[str]
    input_tokens: int
    output_tokens: int
    repeated: bool
    at: float
    shown: list[list[Any]]

    @property
    def ref(self) -> str | None:
        return self.refs[0] if self.refs else None

    def point(self, event: str) -> PointData:
        return PointData(key=f"read:{self.tenant}:{self.session}:{event}", payload={
            "tenant": self.tenant, "session": self.session, "route": self.route, "ref": self.ref,
            "refs": self.refs, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "repeated": self.repeated, "at": self.at, "shown": self.shown})

    @classmethod
    def of(cls, found: Found) -> SessionRead:
        p = found.payload
        refs = p.get("refs") or ([p["ref"]] if p.get("ref") else [])
        return cls(tenant=p["tenant"], session=p["session"], route=p["route"], refs=list(refs),
                   input_tokens=p["input_tokens"], output_tokens=p["output_tokens"], repeated=p["repeated"],
                   at=p["at"], shown=p.get("shown") or [])


@dataclass(frozen=True, kw_only=True)
class ReportedRead:
    route: str
    ref: str | None
    refs: list[str]
    input_tokens: int
    output_tokens: int
    repeated: bool
    at: str  # ISO 8601
    shown: list[list[Any]]


@dataclass(frozen=True, kw_only=True)
class SessionReport:
    session: str
    requests: list[ReportedRead]
    repeated_read_rate: float
    warning: str | None


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    session: str
    requests: int
    updated: float


class SessionLog:
    def __init__(self, store: Store, retention_days: float) -> None:
        self.store = store
        self.retention = retention_days * 86400
        store.ensure(SESSIONS)

    def _live(self, tenant: str, now: float) -> Where:
        return where(tenant=tenant).and_(Range("at", gte=now - self.retention))

    def record(self, tenant: str, session: str, read: Read, event: str | None = None) -> bool:
        """Append one read (`event` names it, e.g. the request id, so a retry is not counted twice);
        True when it touched a ref this session was already served."""
        now = time.time()
        served = self._live(tenant, now).and_(where(session=session), MatchAny("refs", tuple(read.refs)))
        repeated = bool(read.refs) and self.store.count(SESSIONS.name, served) > 0
        stored = SessionRead(tenant=tenant, session=session, route=read.route, refs=list(read.refs),
                             input_tokens=read.input_tokens, output_tokens=read.output_tokens, repeated=repeated,
                             at=now, shown=[list(s) for s in read.shown])
        self.store.upsert(SESSIONS.name, [stored.point(event or uuid.uuid4().hex)])
        return repeated

    def report(self, tenant: str, session: str) -> SessionReport:
        found = scroll_all(self.store, SESSIONS.name, self._live(tenant, time.time()).and_(where(session=session)))
        ordered = sorted(map(SessionRead.of, found), key=lambda r: (r.at, r.route))[-MAX_REQUESTS:]
        if not ordered:
            raise NotFound(f"unknown session {session!r}")
        requests = [ReportedRead(route=r.route, ref=r.ref, refs=r.refs, input_tokens=r.input_tokens,
                                 output_tokens=r.output_tokens, repeated=r.repeated, at=utc_stamp(r.at), shown=r.shown)
                    for r in ordered]
        rate = sum(r.repeated for r in requests) / len(requests)
        warning = None
        if rate > REPEAT_WARNING:
            warning = (f"{rate:.0%} of reads re-read a ref this session was already served (over 15%): the budget "
                       "is too tight; raise k or max_tokens")
        return SessionReport(session=session, requests=requests, repeated_read_rate=round(rate, 4), warning=warning)

    def sessions(self, tenant: str, most: int = 1000) -> list[SessionSummary]:
        """The tenant's sessions with reads inside the retention, most recently active first."""
        now = time.time()
        counts = self.store.facet(SESSIONS.name, "session", self._live(tenant, now), most)
        out = []
        for session, requests in counts.items():
            last, _ = self.store.scroll(SESSIONS.name, self._live(tenant, now).and_(where(session=session)), limit=1,
                                        payload=("at",), order_by="at", descending=True)
            out.append(SessionSummary(session=session, requests=requests,
                                      updated=last[0].payload["at"] if last else 0.0))
        return sorted(out, key=lambda s: (-s.updated, s.session))

    def expire(self, now: float | None = None) -> None:
        """Retention: reads older than it are deleted, in the engine, by filter."""
        cutoff = (time.time() if now is None else now) - self.retention
        self.store.delete_where(SESSIONS.name, Where((Range("at", lt=cutoff),)))
