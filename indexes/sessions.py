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
    agent: str | None = None  # the agent the read came from (X-Agent), when its surface says

    @property
    def ref(self) -> str | None:
        return self.refs[0] if self.refs else None

    def point(self, event: str) -> PointData:
        return PointData(key=f"read:{self.tenant}:{self.session}:{event}", payload={
            "tenant": self.tenant, "session": self.session, "route": self.route, "ref": self.ref,
            "refs": self.refs, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "repeated": self.repeated, "at": self.at, "shown": self.shown, "agent": self.agent})

    @classmethod
    def of(cls, found: Found) -> SessionRead:
        p = found.payload
        refs = p.get("refs") or ([p["ref"]] if p.get("ref") else [])
        return cls(tenant=p["tenant"], session=p["session"], route=p["route"], refs=list(refs),
                   input_tokens=p["input_tokens"], output_tokens=p["output_tokens"], repeated=p["repeated"],
                   at=p["at"], shown=p.get("shown") or [], agent=p.get("agent"))


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
    compactions: int = 0
    cleared_results: int = 0
    cleared_refetched: int = 0  # cleared refs the session later fetched or re-filtered
    agent: str | None = None  # the agent its latest read named


@dataclass(frozen=True, kw_only=True)
class Thrash:
    """A session's compactions so far: how many results were cleared, and how many of those it came back for."""

    compactions: int
    cleared: int
    refetched: int

    @property
    def rate(self) -> float:
        return self.refetched / self.cleared if self.cleared else 0.0


COMPACT = "compact"  # the route of a compaction record (not a read: it is left out of the repeated-read rate)
REFETCHES = ("fetch", "refilter")


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    session: str
    requests: int
    updated: float
    agent: str | None = None


class SessionLog:
    def __init__(self, store: Store, retention_days: float) -> None:
        self.store = store
        self.retention = retention_days * 86400
        store.ensure(SESSIONS)

    def _live(self, tenant: str, now: float) -> Where:
        return where(tenant=tenant).and_(Range("at", gte=now - self.retention))

    def record(self, tenant: str, session: str, read: Read, event: str | None = None, agent: str | None = None
               ) -> bool:
        """Append one read (`event` names it, e.g. the request id, so a retry is not counted twice; `agent` the
        agent it came from); True when it touched a ref this session was already served. A compaction (route
        COMPACT) is recorded the same way, its refs the results it cleared, and is never a repeat."""
        now = time.time()
        served = self._live(tenant, now).and_(where(session=session), MatchAny("refs", tuple(read.refs)))
        repeated = read.route != COMPACT and bool(read.refs) and self.store.count(SESSIONS.name, served) > 0
        stored = SessionRead(tenant=tenant, session=session, route=read.route, refs=list(read.refs),
                             input_tokens=read.input_tokens, output_tokens=read.output_tokens, repeated=repeated,
                             at=now, shown=[list(s) for s in read.shown], agent=agent)
        self.store.upsert(SESSIONS.name, [stored.point(event or uuid.uuid4().hex)])
        return repeated

    def _records(self, tenant: str, session: str) -> list[SessionRead]:
        """The session's records inside the retention, in time order."""
        found = scroll_all(self.store, SESSIONS.name, self._live(tenant, time.time()).and_(where(session=session)))
        return sorted(map(SessionRead.of, found), key=lambda r: (r.at, r.route))

    def report(self, tenant: str, session: str) -> SessionReport:
        ordered = self._records(tenant, session)[-MAX_REQUESTS:]
        if not ordered:
            raise NotFound(f"unknown session {session!r}")
        requests = [ReportedRead(route=r.route, ref=r.ref, refs=r.refs, input_tokens=r.input_tokens,
                                 output_tokens=r.output_tokens, repeated=r.repeated, at=utc_stamp(r.at), shown=r.shown)
                    for r in ordered]
        reads = [r for r in requests if r.route != COMPACT]
        rate = sum(r.repeated for r in reads) / len(reads) if reads else 0.0
        thrash = thrash_of(ordered)
        warnings = []
        if rate > REPEAT_WARNING:
            warnings.append(f"{rate:.0%} of reads re-read a ref this session was already served (over 15%): the "
                            "budget is too tight; raise k or max_tokens")
        if thrash.rate > REPEAT_WARNING:
            warnings.append(f"{thrash.rate:.0%} of the results compaction cleared were fetched again (over 15%): "
                            "compaction keeps too little; later compactions in this session keep more")
        return SessionReport(session=session, requests=requests, repeated_read_rate=round(rate, 4),
                             warning=" ".join(warnings) or None, compactions=thrash.compactions,
                             cleared_results=thrash.cleared, cleared_refetched=thrash.refetched)

    def thrash(self, tenant: str, session: str) -> Thrash:
        return thrash_of(self._records(tenant, session))

    def sessions(self, tenant: str, most: int = 1000) -> list[SessionSummary]:
        """The tenant's sessions with reads inside the retention, most recently active first."""
        now = time.time()
        counts = self.store.facet(SESSIONS.name, "session", self._live(tenant, now), most)
        out = []
        for session, requests in counts.items():
            last, _ = self.store.scroll(SESSIONS.name, self._live(tenant, now).and_(where(session=session)), limit=1,
                                        payload=("at", "agent"), order_by="at", descending=True)
            out.append(SessionSummary(session=session, requests=requests,
                                      updated=last[0].payload["at"] if last else 0.0,
                                      agent=last[0].payload.get("agent") if last else None))
        return sorted(out, key=lambda s: (-s.updated, s.session))

    def expire(self, now: float | None = None) -> None:
        """Retention: reads older than it are deleted, in the engine, by filter."""
        cutoff = (time.time() if now is None else now) - self.retention
        self.store.delete_where(SESSIONS.name, Where((Range("at", lt=cutoff),)))


def thrash_of(ordered: Sequence[SessionRead]) -> Thrash:
    """From a session's records in time order: its compactions, the distinct results they cleared, and how many
    of those a later fetch or re-filter came back for."""
    cleared: dict[str, float] = {}
    refetched: set[str] = set()
    compactions = 0
    for record in ordered:
        if record.route == COMPACT:
            compactions += bool(record.refs)
            for ref in record.refs:
                cleared.setdefault(ref, record.at)
        elif record.route in REFETCHES:
            refetched.update(ref for ref in record.refs if ref in cleared and cleared[ref] <= record.at)
    return Thrash(compactions=compactions, cleared=len(cleared), refetched=len(refetched))
