"""`ctxsieve doctor`: one row per part of what is wired (the service, each agent's config entries, the commands in
them, the hook answering a sample, the MCP server listing its tools, the agent's own output limits), each saying
what to do when it is not right. Exit status 1 when something wired is broken; a warning alone is not."""

from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

import httpx

from ..hooks import cli as hook_cli
from . import codex, gateway_entry
from .agents import detect
from .changes import read
from .claude_code import is_our_server
from .json_agents import JSON_AGENTS
from .manifest import Manifest
from .mcp_json import JsonAgent, is_ours
from .state import state_dir

HTTP_HOOKS_FROM = (2, 1, 63)  # Claude Code's first version with `type: "http"` hooks
SAMPLE = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} synced shard {i}"
                   for i in range(1500)) + "\n2026-11-30 11:00:00 ERROR shard 1234 checksum mismatch\n"


@dataclass(frozen=True)
class Row:
    part: str
    state: str  # ok, warn or FAIL
    detail: str
    fix: str = ""


Check = Callable[[], list[Row]]


def run(service_url: str) -> int:
    by_agent = {"claude-code": _claude_checks(), "codex": _codex_checks(),
                **{name: _json_checks(agent) for name, agent in JSON_AGENTS.items()}}
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
                *_stages(body.get("stages"))]
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


def _claude_files() -> list[tuple[str, Path, Path]]:
    home, cwd = Path.home(), Path.cwd()
    scopes = [("user", home / ".claude" / "settings.json", home / ".claude.json")]
    if cwd != home:
        scopes.append(("project", cwd / ".claude" / "settings.json", cwd / ".mcp.json"))
    return scopes


def _claude_checks() -> list[Check]:
    checks: list[Check] = []
    for scope, settings_path, servers_path in _claude_files():
        settings, servers = _json(settings_path), _json(servers_path)
        hooks = {event: [h for e in settings.get("hooks", {}).get(event, []) for h in e.get("hooks", [])
                         if hook_cli.is_ours(h)] for event in hook_cli.EVENTS}
        server = servers.get("mcpServers", {}).get("ctxsieve")
        if any(hooks.values()):
            checks += [partial(_claude, hooks), partial(_hook, hooks, settings_path, scope),
                       partial(_prefix, settings, scope)]
        if is_our_server(server):
            checks.append(partial(_mcp, f"claude-code {scope}: MCP server", servers_path, server))
    return checks


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read(path) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _claude(hooks: dict[str, list[Any]]) -> list[Row]:
    found = shutil.which("claude")
    if found is None:
        return [Row("claude-code: claude", "warn", "not on PATH: its config is wired for when it is")]
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
    version = (done.stdout.split() or ["?"])[0]
    http = any(h.get("type") == "http" for hs in hooks.values() for h in hs)
    if http and _version(version) < HTTP_HOOKS_FROM:
        return [Row("claude-code: claude", "FAIL", f"{version} at {found}: http hooks need 2.1.63 or later",
                    "update Claude Code, or `ctxsieve install --command` for the command hook")]
    if done.returncode != 0:
        return [Row("claude-code: claude", "FAIL", f"{found} --version exited {done.returncode}", "reinstall it")]
    return [Row("claude-code: claude", "ok", f"{version} at {found}")]


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in text.split(".")[:3])
    except ValueError:
        return (0,)


def _hook(hooks: dict[str, list[Any]], path: Path, scope: str) -> list[Row]:
    part = f"claude-code {scope}: hook"
    missing = [event for event, found in hooks.items() if not found]
    if missing:
        return [Row(part, "FAIL", f"{path}: no ctxsieve hook on {', '.join(missing)}", f"ctxsieve install "
                    f"--scope {scope}")]
    hook = hooks["PostToolUse"][0]
    try:
        answer = _hook_answer(hook)
    except (httpx.HTTPError, OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return [Row(part, "FAIL", f"{_said(hook)}: a sample large output was not cut: {exc}",
                    "ctxsieve service start; then ctxsieve doctor again")]
    cut = json.dumps(answer.get("hookSpecificOutput", {}).get("updatedToolOutput", ""))
    if "[ctxsieve src_" not in cut or len(cut) >= len(SAMPLE):
        return [Row(part, "FAIL", f"{_said(hook)}: a sample large output came back uncut", "ctxsieve service "
                    "status; its log says why")]
    return [Row(part, "ok", f"{_said(hook)} ({path}): a {len(SAMPLE):,}-character output came back as "
                f"{len(cut):,}")]


def _said(hook: dict[str, Any]) -> str:
    return f"http hook to {hook.get('url')}" if hook.get("type") == "http" else f"command {hook.get('command')}"


def _hook_answer(hook: dict[str, Any]) -> dict[str, Any]:
    """The hook's answer to a Bash call with a large output, sent as Claude Code sends it."""
    payload = {"session_id": "ctxsieve-doctor", "transcript_path": "/nonexistent", "cwd": str(Path.cwd()),
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cat sync.log"},
               "tool_response": {"stdout": SAMPLE, "stderr": "", "interrupted": False, "isImage": False},
               "tool_use_id": "toolu_doctor", "permission_mode": "default"}
    if hook.get("type") == "http":
        key = os.environ.get("CTXSIEVE_API_KEY", "")
        answer = httpx.post(str(hook["url"]), json=payload, timeout=60,
                            headers={"Authorization": f"Bearer {key}"} if key else {})
        answer.raise_for_status()
        body: dict[str, Any] = answer.json()
        return body
    done = subprocess.run(["/bin/sh", "-c", str(hook["command"])], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0 or not done.stdout.strip():
        raise ValueError(f"exit {done.returncode}, {done.stderr.strip()[-300:] or 'no answer'}")
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def _prefix(settings: dict[str, Any], scope: str) -> list[Row]:
    part = f"claude-code {scope}: output limits"
    prefix = str(settings.get("env", {}).get(hook_cli.PREFIX_VARIABLE, ""))
    if Path(prefix).name != hook_cli.CAPTURE_NAME:
        return [Row(part, "warn", f"{hook_cli.PREFIX_VARIABLE} is {prefix or 'unset'}: the hooks see Claude Code's "
                    "2 KB preview of a large or failing Bash output, not the whole", "ctxsieve install")]
    try:
        hook_cli.check_prefix(Path(prefix))
    except (SystemExit, OSError) as exc:
        return [Row(part, "FAIL", f"{prefix}: {exc}", "ctxsieve install (it copies the script again)")]
    return [Row(part, "ok", f"{hook_cli.PREFIX_VARIABLE}={prefix}: each Bash output reaches the hooks whole")]


def _mcp(part: str, path: Path, entry: dict[str, Any]) -> list[Row]:
    command = [str(entry.get("command")), *map(str, entry.get("args", []))]
    try:
        names = _listed(tuple(command), None).result()
    except (OSError, ValueError, TimeoutError) as exc:
        return [Row(part, "FAIL", f"{shlex.join(command)} ({path}): {type(exc).__name__}: {exc}",
                    "ctxsieve install (it writes the command found now)")]
    if "fetch_ref" not in names:
        return [Row(part, "FAIL", f"{shlex.join(command)}: lists {', '.join(names)}, no fetch_ref", "ctxsieve install")]
    return [Row(part, "ok", f"{shlex.join(command)} ({path}) lists {len(names)} tools: {', '.join(sorted(names))}")]


_LISTINGS: dict[tuple[str, ...], Future[list[str]]] = {}
_LISTING = threading.Lock()


def _listed(command: tuple[str, ...], env: dict[str, str] | None) -> Future[list[str]]:
    """One listing per distinct command (every agent runs the same `ctxsieve mcp`)."""
    with _LISTING:
        if command not in _LISTINGS:
            _LISTINGS[command] = Future()
            first = True
        else:
            first = False
    future = _LISTINGS[command]
    if first:
        try:
            future.set_result(tools(list(command), env=env))
        except (OSError, ValueError, TimeoutError) as exc:
            future.set_exception(exc)
    return future


HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ctxsieve-doctor", "version": "1"}}


def tools(command: list[str], timeout: float = 60.0, env: dict[str, str] | None = None) -> list[str]:
    """The tools an MCP server over stdio lists, asked as a client asks (initialize, initialized, tools/list) in
    JSON-RPC lines: without the MCP SDK, whose import alone takes a second."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env)
    assert server.stdin is not None and server.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_pump, args=(server.stdout, lines), daemon=True).start()
    try:
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        server.stdin.flush()
        return _tool_names(lines, time.monotonic() + timeout)
    finally:
        server.kill()
        server.wait()


def _pump(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)


def _tool_names(lines: queue.Queue[bytes], deadline: float) -> list[str]:
    while True:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            raise TimeoutError("no tools/list answer") from None
        answer = json.loads(line) if line.strip().startswith(b"{") else {}
        if answer.get("id") == 2:
            if "error" in answer:
                raise ValueError(f"tools/list: {answer['error']}")
            return [str(t.get("name")) for t in answer.get("result", {}).get("tools", [])]


def _codex_checks() -> list[Check]:
    path = codex.config_path()
    try:
        config = codex.read_config()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        broken = Row("codex: config", "FAIL", f"{path}: {exc}", "mend the line it names; Codex will not start either")
        return [lambda: [broken]]
    servers = config.get("mcp_servers", {})
    server, gateway = servers.get("ctxsieve"), servers.get(gateway_entry.NAME)
    words = [str(gateway.get("command")), *map(str, gateway.get("args", []))] if isinstance(gateway, dict) else None
    checks: list[Check] = [lambda: _gateway("codex", path, words, {})] if gateway_entry.is_ours(words) else []
    if is_our_server(server):
        checks.append(lambda: _mcp("codex: MCP server", path, server))
    return [_codex, *checks, lambda: _codex_limit(config)] if checks else []


def _codex() -> list[Row]:
    found = shutil.which("codex")
    if found is None:
        return [Row("codex: codex", "warn", "not on PATH: its config is wired for when it is")]
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return [Row("codex: codex", "FAIL", f"{found} --version exited {done.returncode}", "reinstall it")]
    return [Row("codex: codex", "ok", f"{done.stdout.strip()} at {found}")]


def _codex_limit(config: dict[str, Any]) -> list[Row]:
    limit = config.get("tool_output_token_limit")
    if not isinstance(limit, int) or limit < codex.OUTPUT_LIMIT:
        return [Row("codex: output limits", "warn", f"tool_output_token_limit is {limit or 'unset'}: Codex cuts each "
                    "tool output in its history before ctxsieve sees it", "ctxsieve install")]
    return [Row("codex: output limits", "ok", f"tool_output_token_limit = {limit}; {codex.PER_CALL_NOTE}")]


def _missing() -> list[Row]:
    """A file install wrote that is gone: its agent is no longer wired."""
    manifest = Manifest.load(state_dir())
    return [Row(f"{e.agent}: config", "FAIL", f"{e.path}: written by ctxsieve install, now gone", "ctxsieve install")
            for e in manifest.entries.values() if not Path(e.path).exists()]


def _json_checks(agent: JsonAgent) -> list[Check]:
    """An agent whose config install writes as JSON: its rows, when ctxsieve's servers are in it."""
    path = agent.path()
    data = _json(path)
    at = agent.servers_at(data)
    servers: Any = data
    for key in at:
        servers = servers.get(key, {}) if isinstance(servers, dict) else {}
    if not isinstance(servers, dict):
        return []
    checks: list[Check] = []
    gateway = servers.get(gateway_entry.NAME)
    if isinstance(gateway, dict) and is_ours(agent, gateway_entry.NAME, gateway):
        env = gateway.get("env") or gateway.get("environment") or {}
        checks.append(partial(_gateway, agent.name, path, agent.command_of(gateway), env))
    words = agent.command_of(servers.get("ctxsieve"))
    if is_ours(agent, "ctxsieve", servers.get("ctxsieve")) and words:
        checks.append(partial(_mcp, f"{agent.name}: MCP server", path, {"command": words[0], "args": words[1:]}))
    if not checks:
        return []
    state, detail = agent.limits(data)
    return [partial(_executable, agent.name), *checks, lambda: [Row(f"{agent.name}: output limits", state, detail)]]


def _executable(name: str) -> list[Row]:
    """The agent's command, found as install finds it, answers --version."""
    found = next((a.executable for a in detect() if a.name == name), None)
    part = f"{name}: {Path(found).name if found else 'command'}"
    if found is None:
        return [Row(part, "warn", "not on PATH: its config is wired for when it is")]
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [Row(part, "FAIL", f"{found} --version: {exc}", "reinstall it")]
    if done.returncode != 0:
        return [Row(part, "FAIL", f"{found} --version exited {done.returncode}", "reinstall it")]
    version = (done.stdout.strip().splitlines() or ["?"])[-1]
    return [Row(part, "ok", f"{version} at {found}")]


def _gateway(agent: str, path: Path, words: list[str] | None, env: dict[str, Any]) -> list[Row]:
    """The gateway's entry starts and lists the tools of the servers behind it (not only its own)."""
    part = f"{agent}: gateway"
    held = sorted(gateway_entry.moved_names(agent) or [])
    if not words:
        return [Row(part, "FAIL", f"{path}: its {gateway_entry.NAME} entry has no command", "ctxsieve install")]
    try:
        names = _listed(tuple(words), gateway_entry.environment(env)).result()
    except (OSError, ValueError, TimeoutError) as exc:
        return [Row(part, "FAIL", f"{shlex.join(words)} ({path}): {type(exc).__name__}: {exc}",
                    "ctxsieve install (it writes the command found now)")]
    theirs = [n for n in names if n not in gateway_entry.OWN_TOOLS]
    if held and not theirs:
        return [Row(part, "FAIL", f"{shlex.join(words)} lists only its own tools: none of {', '.join(held)} "
                    "started behind it (their stderr: /tmp/ctxsieve-gateway-*/)",
                    f"run the server's command by hand; `ctxsieve uninstall --agent {agent}` puts them back")]
    return [Row(part, "ok", f"{gateway_entry.NAME} in front of {', '.join(held) or 'no server'} ({path}) lists "
                f"{len(names)} tools: {', '.join(sorted(names))}")]


def _unwired(wired: set[str]) -> list[Row]:
    return [Row(a.name, "warn", f"found ({a.where()}), not wired to ctxsieve", f"ctxsieve install --agent {a.name}")
            for a in detect() if a.found and a.name not in wired]
