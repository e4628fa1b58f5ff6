"""doctor's rows for Claude Code: its version (an http hook needs 2.1.63+), the hook answering a sample large
output as Claude Code would send it, the capture prefix running commands as written, and ctxsieve's MCP server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from .checks import Check, Row, mcp_row, read_json
from .claude_code import CAPTURE_NAME, EVENTS, PREFIX_VARIABLE, check_prefix, files, is_our_server, is_ours
from .state import CAPTURE_VARIABLE, capture_dir

HTTP_HOOKS_FROM = (2, 1, 63)  # Claude Code's first version with `type: "http"` hooks
SAMPLE = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} synced shard {i}"
                   for i in range(1500)) + "\n2026-11-30 11:00:00 ERROR shard 1234 checksum mismatch\n"


def _scopes() -> list[tuple[str, Path, Path]]:
    cwd = Path.cwd()
    return [("user", *files(False, cwd))] + ([("project", *files(True, cwd))] if cwd != Path.home() else [])


def checks() -> list[Check]:
    checks: list[Check] = []
    for scope, settings_path, servers_path in _scopes():
        settings, servers = read_json(settings_path), read_json(servers_path)
        hooks = {event: [h for e in settings.get("hooks", {}).get(event, []) for h in e.get("hooks", [])
                         if is_ours(h)] for event in EVENTS}
        server = servers.get("mcpServers", {}).get("ctxsieve")
        if any(hooks.values()):
            checks += [partial(_claude, hooks), partial(_hook, hooks, settings_path, scope),
                       partial(_prefix, settings, scope)]
        if is_our_server(server):
            checks.append(partial(mcp_row, f"claude-code {scope}: MCP server", servers_path, server))
    return checks


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
    prefix = str(settings.get("env", {}).get(PREFIX_VARIABLE, ""))
    if Path(prefix).name != CAPTURE_NAME:
        return [Row(part, "warn", f"{PREFIX_VARIABLE} is {prefix or 'unset'}: the hooks see Claude Code's "
                    "2 KB preview of a large or failing Bash output, not the whole", "ctxsieve install")]
    try:
        check_prefix(Path(prefix))
    except (SystemExit, OSError) as exc:
        return [Row(part, "FAIL", f"{prefix}: {exc}", "ctxsieve install (it copies the script again)")]
    written, read_by_hooks = settings.get("env", {}).get(CAPTURE_VARIABLE), str(capture_dir())
    if written is not None and str(written) != read_by_hooks:
        return [Row(part, "FAIL", f"Claude Code saves whole outputs in {written} ({CAPTURE_VARIABLE} in its "
                    f"settings), the hooks read {read_by_hooks}: a failing run's failures would not reach the model",
                    f"ctxsieve install (or the same {CAPTURE_VARIABLE} for the service)")]
    return [Row(part, "ok", f"{PREFIX_VARIABLE}={prefix}: each Bash output reaches the hooks whole (captures in "
                f"{written or read_by_hooks})")]


