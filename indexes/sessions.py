"""Session diagnostics: one agent's reads, its token curve, and how often it re-reads what it was served.

A read is repeated when it touches a ref this session was already served. Past 15% the budget is too
tight (the agent is thrashing: raise k or max_tokens).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import NotFound
from .store import QdrantStore

SESSIONS = "ctxsieve_sessions"
REPEAT_WARNING = 0.15
MAX_REQUESTS = 10_000


@dataclass(frozen=True)
class SessionReport:
    session: str
    requests: list[dict[str, Any]]
    repeated_read_rate: float
    warning: str | None


class SessionLog:
    def __init__(self, store: QdrantStore, retention_days: float) -> None:
        self.store = store
        self.retention = retention_days * 86400
        self._lock = threading.Lock()
        store.ensure_collection(SESSIONS)

    @staticmethod
    def _key(tenant: str, session: str) -> str:
        return f"session:{tenant}:{session}"

    def record(self, tenant: str, session: str, route: str, refs: Sequence[str], input_tokens: int,
               output_tokens: int, shown: Sequence[tuple[str, int, int]] = ()) -> bool:
        """Append one read; True when it touched a ref this session was already served."""
        key = self._key(tenant, session)
        with self._lock:
            payload = self.store.get_payloads(SESSIONS, [key]).get(key) or {
                "tenant": tenant, "session": session, "requests": [], "served": []}
            served = set(payload["served"])
            repeated = any(r in served for r in refs)
            payload["requests"].append({
                "route": route, "ref": refs[0] if refs else None, "refs": list(refs),
                "input_tokens": input_tokens, "output_tokens": output_tokens, "repeated": repeated,
                "at": time.time(), "shown": [list(s) for s in shown]})
            payload["requests"] = payload["requests"][-MAX_REQUESTS:]
            payload["served"] = sorted(served | set(refs))
            payload["updated"] = time.time()
            self.store.put_payload(SESSIONS, key, payload)
        return repeated

    def report(self, tenant: str, session: str) -> SessionReport:
        payload = self.store.get_payloads(SESSIONS, [self._key(tenant, session)]).get(self._key(tenant, session))
        if payload is None or time.time() - payload.get("updated", 0) > self.retention:
            raise NotFound(f"unknown session {session!r}")
        requests = [dict(r, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r["at"]))) for r in payload["requests"]]
        rate = sum(r["repeated"] for r in requests) / len(requests) if requests else 0.0
        warning = None
        if rate > REPEAT_WARNING:
            warning = (f"{rate:.0%} of reads re-read a ref this session was already served (over 15%): the budget "
                       "is too tight; raise k or max_tokens")
        return SessionReport(session, requests, round(rate, 4), warning)

    def sessions(self, tenant: str) -> list[dict[str, Any]]:
        now = time.time()
        return sorted(({"session": p["session"], "requests": len(p["requests"]), "updated": p.get("updated", 0)}
                       for p in self.store.scroll_payloads(SESSIONS, "tenant", tenant)
                       if now - p.get("updated", 0) <= self.retention), key=lambda s: -s["updated"])
