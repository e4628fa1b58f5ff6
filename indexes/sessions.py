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
from .store import MatchAny, PointData, Range, SpaceSpec, Store, Where, layout, scroll_all, where

SESSIONS = SpaceSpec(name=layout.SESSIONS, indexes={"tenant": "tenant", "session": "keyword", "refs": "keyword",
                                               "at": "float"})
REPEAT_WARNING = 0.15
MAX_REQUESTS = 10_000


@dataclass(frozen=True, kw_only=True)
class SessionReport:
    session: str
    requests: list[dict[str, Any]]
    repeated_read_rate: float
    warning: str | None


class SessionLog:
    def __init__(self, store: Store, retention_days: float) -> None:
        self.store = store
        self.retention = retention_days * 86400
        store.ensure(SESSIONS)

    def _live(self, tenant: str, now: float) -> Where:
        return where(tenant=tenant).and_(Range("at", gte=now - self.retention))

    def record(self, tenant: str, session: str, route: str, refs: Sequence[str], input_tokens: int,
               output_tokens: int, shown: Sequence[tuple[str, int, int]] = (), event: str | None = None) -> bool:
        """Append one read (`event` names it, e.g. the request id, so a retry is not counted twice);
        True when it touched a ref this session was already served."""
        now = time.time()
        served = self._live(tenant, now).and_(where(session=session), MatchAny("refs", tuple(refs)))
        repeated = bool(refs) and self.store.count(SESSIONS.name, served) > 0
        key = f"read:{tenant}:{session}:{event or uuid.uuid4().hex}"
        self.store.upsert(SESSIONS.name, [PointData(key=key, payload={
            "tenant": tenant, "session": session, "route": route, "ref": refs[0] if refs else None,
            "refs": list(refs), "input_tokens": input_tokens, "output_tokens": output_tokens, "repeated": repeated,
            "at": now, "shown": [list(s) for s in shown]})])
        return repeated

    def report(self, tenant: str, session: str) -> SessionReport:
        reads = scroll_all(self.store, SESSIONS.name, self._live(tenant, time.time()).and_(where(session=session)))
        ordered = sorted((r.payload for r in reads), key=lambda p: (p["at"], p["route"]))[-MAX_REQUESTS:]
        if not ordered:
            raise NotFound(f"unknown session {session!r}")
        requests = [{k: v for k, v in dict(p, at=utc_stamp(p["at"])).items() if k not in ("tenant", "session")}
                    for p in ordered]
        rate = sum(r["repeated"] for r in requests) / len(requests)
        warning = None
        if rate > REPEAT_WARNING:
            warning = (f"{rate:.0%} of reads re-read a ref this session was already served (over 15%): the budget "
                       "is too tight; raise k or max_tokens")
        return SessionReport(session=session, requests=requests, repeated_read_rate=round(rate, 4), warning=warning)

    def sessions(self, tenant: str, most: int = 1000) -> list[dict[str, Any]]:
        """The tenant's sessions with reads inside the retention, most recently active first."""
        now = time.time()
        counts = self.store.facet(SESSIONS.name, "session", self._live(tenant, now), most)
        out = []
        for session, requests in counts.items():
            last, _ = self.store.scroll(SESSIONS.name, self._live(tenant, now).and_(where(session=session)), limit=1,
                                        payload=("at",), order_by="at", descending=True)
            out.append({"session": session, "requests": requests, "updated": last[0].payload["at"] if last else 0.0})
        return sorted(out, key=lambda s: (-s["updated"], s["session"]))

    def expire(self, now: float | None = None) -> None:
        """Retention: reads older than it are deleted, in the engine, by filter."""
        cutoff = (time.time() if now is None else now) - self.retention
        self.store.delete_where(SESSIONS.name, Where((Range("at", lt=cutoff),)))
