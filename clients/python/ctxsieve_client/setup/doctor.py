"""`ctxsieve doctor`: one row per part of what is wired (the service, each agent's config entries, the commands in
them, the hook answering a sample, the MCP server listing its tools, the agent's own output limits, its instruction
file), each saying what to do when it is not right. Exit status 1 when something wired is broken; a warning alone
is not. The rows of each agent are its own (family.Agent.checks); this loops over the registry."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from . import instructions
from .checks import Check, Row
from .family import Agent
from .manifest import Manifest
from .registry import AGENTS, detect
from .state import state_dir


def run(service_url: str) -> int:
    by_agent = {agent.name: _rows_of(agent) for agent in AGENTS}
    wired = [check for checks in by_agent.values() for check in checks]
    if not wired:
        wired = [lambda: [Row("agents", "warn", "none wired to ctxsieve here", "ctxsieve install")]]
    checks = [lambda: _service(service_url), *wired, _missing, partial(_unwired, {n for n, c in by_agent.items() if c})]
    with ThreadPoolExecutor(max_workers=4) as pool:  # the slow ones start a process each
        rows = [row for found in pool.map(lambda check: check(), checks) for row in found]
    sys.stdout.write(f"ctxsieve doctor (service: {service_url})\n")
    width = max(len(r.part) for r in rows)
    for row in rows:
        sys.stdout.write(f"{row.state:<5} {row.part:<{width}}  {row.detail}\n")
        if row.fix:
            sys.stdout.write(f"{'':<5} {'':<{width}}  fix: {row.fix}\n")
    return 1 if any(r.state == "FAIL" for r in rows) else 0


def _rows_of(agent: Agent) -> list[Check]:
    """The agent's own checks, then its instruction files' rows, when it is wired."""
    checks = agent.checks()
    if not checks:
        return []
    recorded = [Path(e.path) for e in Manifest.load(state_dir()).entries.values()
                if e.agent == agent.name and e.kind == instructions.KIND]
    own = agent.instructions("user")
    paths = recorded or ([own] if own is not None else [])
    return [*checks, *(partial(instructions.row, agent.name, path) for path in paths)]


def _service(url: str) -> list[Row]:
    try:
        answer = httpx.get(f"{url.rstrip('/')}/readyz", timeout=5)
        body: dict[str, Any] = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        fix = "ctxsieve service start (or `ctxsieve wrap AGENT`, which starts it for the run)"
        return [Row("service", "FAIL", f"nothing answers at {url}: {type(exc).__name__}", fix),
                Row("model", "warn", "not checked: the service is not running", "ctxsieve prepare readies it ahead")]
    if body.get("ready"):
        return [Row("service", "ok", f"ready at {url}"), Row("model", "ok", "loaded and warm"),
                *_stages(body.get("stages")), *_repositories(url)]
    detail = body.get("detail") or "starting"
    return [Row("service", "FAIL", f"answers at {url} but is not ready: {detail}", "ctxsieve service status; its log "
                "says what it is doing"),
            Row("model", "ok" if body.get("model") else "warn", "loaded" if body.get("model") else "not loaded yet")]


def _stages(stages: Any) -> list[Row]:
    """Which stage serves, and whether a first start's background preparation is done (an older service says nothing
    of stages: no row)."""
    if not isinstance(stages, dict):
        return []
    first = "static + BM25" if stages.get("first_stage") == "static" else "BM25 alone"
    serving = f"dense model on {stages.get('dense')}, fast mode's first stage {first}"
    seconds = stages.get("background_seconds", 0)
    if stages.get("background") == "failed":
        return [Row("stages", "warn", f"{serving}; the background preparation failed: {stages.get('detail')}",
                    "ctxsieve prepare (it says why), then ctxsieve service stop && ctxsieve service start")]
    if stages.get("pending"):
        return [Row("stages", "ok", f"{serving}; preparing {' and '.join(stages['pending'])} in the background for "
                    f"{seconds:.0f} s (a first start: a few minutes; correct answers meanwhile, the final stages "
                    "then)")]
    done = f" (background preparation done in {seconds:.0f} s)" if seconds else ""
    return [Row("stages", "ok", f"{serving}{done}")]


SHOWN_REPOS = 5  # repositories a row names, then how many more


def _repositories(url: str) -> list[Row]:
    """The repositories code search has, each with its state (a trial user looked for them here); one that failed
    to index, with what to do."""
    from ..client import Client
    from ..errors import CtxsieveError

    try:
        with Client(url, timeout=5) as client:
            repos = client.repos().repos
    except (CtxsieveError, httpx.HTTPError) as exc:
        return [Row("repositories", "warn", f"not listed: {exc}")]
    if not repos:
        return [Row("repositories", "ok", "none indexed yet: `ctxsieve index` in a repository's folder (or a search "
                    "there) indexes it")]
    failed = [r for r in repos if r.error]
    named = ", ".join(f"{r.name} ({r.state}, {r.files:,} file{'' if r.files == 1 else 's'})"
                      for r in repos[:SHOWN_REPOS])
    more = f" and {len(repos) - SHOWN_REPOS} more" if len(repos) > SHOWN_REPOS else ""
    rows = [Row("repositories", "ok", f"{len(repos)} indexed: {named}{more}")]
    return rows + [Row(f"repository {r.name}", "warn", f"{r.path}: {r.error}", f"ctxsieve index {r.path} --name "
                       f"{r.name}") for r in failed]


def _missing() -> list[Row]:
    """A file install wrote that is gone: its agent is no longer wired."""
    manifest = Manifest.load(state_dir())
    return [Row(f"{e.agent}: config", "FAIL", f"{e.path}: written by ctxsieve install, now gone", "ctxsieve install")
            for e in manifest.entries.values() if not Path(e.path).exists()]


def _unwired(wired: set[str]) -> list[Row]:
    return [Row(a.name, "warn", f"found ({a.where()}), not wired to ctxsieve", f"ctxsieve install --agent {a.name}")
            for a in detect() if a.found and a.name not in wired]
