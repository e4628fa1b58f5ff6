"""`ctxsieve stats [--since 1d]`: per agent, and per session the service kept (GET /v1/sessions) with the agent its
surface named (X-Agent) and the surface it came through, the tokens its tools produced and the tokens the model was
sent of them, the refs it fetched back and its repeated-read rate (over 15%: the budget is too tight, the agent is
thrashing); a line per agent sums its sessions."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

SURFACES = {"cc-": "hook", "px-": "proxy", "gw-": "gateway"}  # how each surface names its sessions
UNNAMED = {"cc-": "claude-code"}  # the agent of a session kept before sessions named theirs
REFETCHES = ("fetch", "refilter")  # a ref fetched back: indexes.sessions.REFETCHES
DOCTOR = "cc-ctxsieve-doctor"  # doctor's sample call, not an agent's
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", default="1d", help="sessions active in this long: 30m, 12h, 1d, 2w (default 1d)")


def since_seconds(text: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([mhdw])", text.strip())
    if found is None:
        raise SystemExit(f"ctxsieve stats: --since {text}: give a number and m, h, d or w (1d, 12h)")
    return float(found.group(1)) * UNITS[found.group(2)]


@dataclass(frozen=True)
class Row:
    agent: str
    session: str
    surface: str
    reads: int
    produced: int  # tokens the tools' outputs held
    sent: int  # tokens of them the model was sent
    fetched: int
    repeated: float

    def line(self) -> str:
        saved = f"{1 - self.sent / self.produced:.0%}" if self.produced else "-"
        return (f"{self.agent[:16]:<16} {self.session[:40]:<40} {self.surface:<7} {self.reads:>5} "
                f"{self.produced:>11,} {self.sent:>9,} "
                f"{saved:>5} {self.fetched:>7} {self.repeated:>8.0%}")


HEAD = (f"{'agent':<16} {'session':<40} {'through':<7} {'reads':>5} {'tool tokens':>11} {'sent':>9} {'saved':>5} "
        f"{'fetched':>7} {'repeated':>8}")


def run(args: argparse.Namespace, service_url: str) -> int:
    key = os.environ.get("CTXSIEVE_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    cutoff = time.time() - since_seconds(args.since)
    try:
        with httpx.Client(base_url=service_url, headers=headers, timeout=30) as http:
            listed = http.get("/v1/sessions").raise_for_status().json()["sessions"]
            rows = [_row(s, http.get(f"/v1/sessions/{quote(s['session'])}").raise_for_status().json())
                    for s in listed if s["updated"] >= cutoff and s["session"] != DOCTOR]
    except httpx.HTTPError as exc:
        sys.stderr.write(f"ctxsieve stats: the service at {service_url}: {exc} (ctxsieve service start?)\n")
        return 1
    sys.stdout.write(f"ctxsieve stats ({service_url}, sessions active in the last {args.since}): {len(rows)}\n")
    if rows:
        sys.stdout.writelines(line + "\n" for line in [HEAD, *_by_agent(rows), _total("total", rows).line()])
    return 0


def _row(summary: dict[str, Any], report: dict[str, Any]) -> Row:
    session = summary["session"]
    reads = [r for r in report["requests"] if r["route"] != "compact"]
    first = [r for r in reads if r["route"] not in REFETCHES]
    surface = next((name for prefix, name in SURFACES.items() if session.startswith(prefix)), "api")
    agent = summary.get("agent") or next((a for prefix, a in UNNAMED.items() if session.startswith(prefix)), "-")
    return Row(agent, session, surface, len(reads), sum(r["input_tokens"] for r in first),
               sum(r["output_tokens"] for r in first), len(reads) - len(first), float(report["repeated_read_rate"]))


def _by_agent(rows: list[Row]) -> list[str]:
    """Each agent's sessions, most recent first as listed, then a line summing them."""
    lines = []
    for agent in sorted({r.agent for r in rows}):
        own = [r for r in rows if r.agent == agent]
        lines += [r.line() for r in own]
        lines.append(_total(agent, own, f"{len(own)} session{'s' * (len(own) != 1)}").line())
    return lines


def _total(agent: str, rows: list[Row], session: str = "") -> Row:
    reads = sum(r.reads for r in rows)
    repeated = sum(r.repeated * r.reads for r in rows) / reads if reads else 0.0
    return Row(agent, session, "all", reads, sum(r.produced for r in rows), sum(r.sent for r in rows),
               sum(r.fetched for r in rows), repeated)
