"""Claude Code: the hook on PostToolUse and PostToolUseFailure (Claude Code's `type: "http"` hook to the service's
/v1/hooks/claude-code by default, a command hook with --command), its CLAUDE_CODE_SHELL_PREFIX set to ctxsieve's
capture script (copied where it outlives this package) with the capture folder beside it, and `ctxsieve-mcp` as the
MCP server `ctxsieve`: in the user's settings (or this project's .claude/settings.json and .mcp.json); uninstall's
way to take them out again; how `wrap` points it at the proxy.

Each command written runs first; a settings file that is not a JSON object is the user's to mend, and nothing is
written. `ctxsieve hook claude-code --install` is `install_hook` here."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..hooks.whole import capture_script
from .changes import Change, read
from .checks import Check
from .commands import HOOK_COMMAND, check_runs, dumps, executable, write_bytes
from .family import Context, Kind, Plan, Pointing, pointed_by_environment
from .jsontext import patched
from .state import CAPTURE_VARIABLE, capture_dir

HOOK_PATH = "/v1/hooks/claude-code"
EVENTS = ("PostToolUse", "PostToolUseFailure")  # a failing command fires the second, not the first
PREFIX_VARIABLE = "CLAUDE_CODE_SHELL_PREFIX"
CAPTURE_NAME = "claude-code-capture.sh"
SETTINGS, SERVERS, CAPTURE = "claude-settings", "claude-servers", "file"  # the manifest's kinds (as installs wrote)


def user_folder() -> Path:
    """Claude Code's own folder: CLAUDE_CONFIG_DIR, else ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def files(project: bool, cwd: Path) -> tuple[Path, Path]:
    """(its settings, its MCP servers' file): the user's, or this project's."""
    if project:
        return cwd / ".claude" / "settings.json", cwd / ".mcp.json"
    return user_folder() / "settings.json", Path.home() / ".claude.json"


def capture_target() -> Path:
    """Where the capture script is copied: outside this package's folder, which an upgrade replaces."""
    return Path.home() / ".local" / "share" / "ctxsieve" / CAPTURE_NAME


class ClaudeCode:
    name = "claude-code"
    title = "Claude Code"
    commands: tuple[str, ...] = ("claude",)
    scopes: tuple[str, ...] = ("user", "project")

    def folder(self) -> Path:
        return user_folder()

    def instructions(self, scope: str) -> Path | None:
        return Path.cwd() / ".claude" / "CLAUDE.md" if scope == "project" else user_folder() / "CLAUDE.md"

    def plan(self, context: Context) -> Plan:
        return Plan(planned(context)[0])

    def kinds(self) -> dict[str, Kind]:
        return {SETTINGS: Kind(json.loads, lambda now, before: remove_settings(now, before)),
                SERVERS: Kind(json.loads, lambda now, _: remove_server(now)),
                CAPTURE: Kind(verify=check_prefix, shown="ctxsieve's capture script")}

    def checks(self) -> list[Check]:
        from .claude_code_checks import checks

        return checks()

    def point(self, argv: list[str]) -> Pointing:
        """Claude Code's settings put their env over its environment: where they set the base URL, the proxy's is
        given as `--settings`, the one thing above a settings file."""
        own = settings_url()
        pointing = pointed_by_environment(argv)
        if own is None:
            return pointing
        pointing.anthropic = own
        pointing.flags = lambda proxy: ["--settings", json.dumps({"env": {"ANTHROPIC_BASE_URL": proxy}})]
        return pointing


def planned(context: Context) -> tuple[list[Change], list[tuple[Path, str]]]:
    """The files install writes (the capture script first), each from the one there, and a line per thing set."""
    settings_path, servers_path = files(context.scope == "project", context.cwd)
    settings, servers = _object_at(settings_path), _object_at(servers_path)
    hook = _hook(context)
    if hook["type"] == "command":
        check_runs(shlex.split(hook["command"]))
    server = context.server()
    for event in EVENTS:
        entries = settings.setdefault("hooks", {}).setdefault(event, [])
        entries[:] = [e for e in ({**e, "hooks": [h for h in e.get("hooks", []) if not is_ours(h)]}
                                  for e in entries) if e["hooks"]]  # a ctxsieve hook (either kind) is replaced
        entries.append({"matcher": "*", "hooks": [hook]})
    script, prefix = _capture_prefix(settings, context)
    servers.setdefault("mcpServers", {})["ctxsieve"] = {"type": "stdio", "command": server[0], "args": server[1:]}
    changes = [_capture_change(script)] if script is not None else []
    changes += [_json_change(settings_path, settings, SETTINGS), _json_change(servers_path, servers, SERVERS)]
    said = hook.get("command") or f"http hook to {hook['url']}"
    return changes, [(settings_path, f"{' and '.join(EVENTS)} {said}"), (settings_path, prefix),
                     (servers_path, f"MCP server ctxsieve: {shlex.join(server)}")]


def _hook(context: Context) -> dict[str, Any]:
    if context.command_hook:
        command = shlex.join([executable(HOOK_COMMAND), "claude-code", "--url", context.url])
        return {"type": "command", "command": command, "timeout": 30}
    return {"type": "http", "url": context.url.rstrip("/") + HOOK_PATH, "timeout": 30,
            "headers": {"Authorization": "Bearer ${CTXSIEVE_API_KEY}"}, "allowedEnvVars": ["CTXSIEVE_API_KEY"]}


def _capture_prefix(settings: dict[str, Any], context: Context) -> tuple[Path | None, str]:
    """CLAUDE_CODE_SHELL_PREFIX set to the capture script and CTXSIEVE_CAPTURE_DIR to the folder every process reads
    (the hooks get a failing or large command's whole output); a prefix or a folder the user set is kept."""
    env = settings.setdefault("env", {})
    current = env.get(PREFIX_VARIABLE)
    if current and Path(str(current)).name != CAPTURE_NAME:
        return None, f"{PREFIX_VARIABLE} left as {current} (yours): failing commands' whole outputs are not captured"
    target = capture_target()
    env[PREFIX_VARIABLE] = str(target)
    context.capture_dir = str(env.setdefault(CAPTURE_VARIABLE, context.capture_dir or str(capture_dir())))
    return target, (f"env {PREFIX_VARIABLE}={target} (each Bash command's whole output saved for the hooks, in "
                    f"{context.capture_dir})")


def _capture_change(script: Path) -> Change:
    content = capture_script().read_bytes()
    with tempfile.TemporaryDirectory() as folder:  # checked on a copy before anything is written
        copy = Path(folder) / CAPTURE_NAME
        copy.write_bytes(content)
        copy.chmod(0o755)
        check_prefix(copy)
    return Change(script, read(script), content, ClaudeCode.name, CAPTURE, 0o755)


def _json_change(path: Path, value: dict[str, Any], kind: str) -> Change:
    """The value written into the user's own text: only what changes is rewritten."""
    before = read(path)
    after = dumps(value) if before is None else patched(before.decode("utf-8"), value).encode("utf-8")
    return Change(path, before, after, ClaudeCode.name, kind)


def _object_at(path: Path) -> dict[str, Any]:
    """A settings file that is not JSON is the user's to mend: said, and nothing is written."""
    try:
        return _object(read(path) or b"{}")
    except ValueError as exc:
        raise SystemExit(f"ctxsieve install: {path} is not a JSON object ({exc}); nothing written") from None


def check_prefix(prefix: Path) -> None:
    """The prefix runs a command as Claude Code hands it (one argument), with its output and exit status."""
    done = subprocess.run([str(prefix), "echo ctxsieve-prefix-ok; exit 3"], capture_output=True, text=True,
                          timeout=30)
    if done.returncode != 3 or "ctxsieve-prefix-ok" not in done.stdout:
        raise SystemExit(f"ctxsieve install: {prefix} does not run commands as written ({done.returncode}: "
                         f"{done.stderr.strip()[-200:]}); nothing written")


def is_ours(hook: Any) -> bool:
    """A ctxsieve hook written by any install: the command by bare name or by path, or the http hook."""
    if not isinstance(hook, dict):
        return False
    try:
        words = shlex.split(str(hook.get("command", "")))
    except ValueError:  # not a command line this install wrote
        words = []
    ours = len(words) > 1 and Path(words[0]).name == HOOK_COMMAND and words[1] == "claude-code"
    return ours or str(hook.get("url", "")).endswith(HOOK_PATH)


def remove_settings(content: bytes, before: bytes | None = None) -> bytes:
    """Settings without ctxsieve's hooks, prefix and capture folder (unless the settings before install had it);
    everything else as it is."""
    data = _object(content)
    hooks = data.get("hooks", {})
    for event in EVENTS:
        entries = [{**e, "hooks": [h for h in e.get("hooks", []) if not is_ours(h)]} for e in hooks.get(event, [])]
        hooks[event] = [e for e in entries if e["hooks"]]
        if not hooks[event]:
            hooks.pop(event)
    env = data.get("env", {})
    if Path(str(env.get(PREFIX_VARIABLE, ""))).name == CAPTURE_NAME:
        env.pop(PREFIX_VARIABLE)
        if CAPTURE_VARIABLE not in _object(before or b"{}").get("env", {}):
            env.pop(CAPTURE_VARIABLE, None)
    _drop_empty(data, "hooks", "env")
    return patched(content.decode("utf-8"), data).encode("utf-8")


def remove_server(content: bytes) -> bytes:
    """The MCP servers without `ctxsieve mcp`."""
    data = _object(content)
    if is_our_server(data.get("mcpServers", {}).get("ctxsieve")):
        data["mcpServers"].pop("ctxsieve")
    _drop_empty(data, "mcpServers")
    return patched(content.decode("utf-8"), data).encode("utf-8")


def is_our_server(entry: Any) -> bool:
    """`ctxsieve-mcp ...`, or `ctxsieve mcp ...` as installs before it wrote; by path or bare name."""
    if not isinstance(entry, dict):
        return False
    name, args = Path(str(entry.get("command", ""))).name, entry.get("args") or []
    return name == "ctxsieve-mcp" or (name == "ctxsieve" and isinstance(args, list) and args[:1] == ["mcp"])


def settings_url() -> str | None:
    """ANTHROPIC_BASE_URL from Claude Code's settings (local, project, user: the first that sets it), which Claude
    Code puts over its environment's."""
    for path in (Path(".claude") / "settings.local.json", Path(".claude") / "settings.json",
                 user_folder() / "settings.json"):
        try:
            env = json.loads(path.read_text()).get("env") or {}
        except (OSError, ValueError, AttributeError):  # none there, or not settings Claude Code could read either
            continue
        if env.get("ANTHROPIC_BASE_URL"):
            return str(env["ANTHROPIC_BASE_URL"])
    return None


def install_hook(url: str, http: bool, project: bool) -> int:
    """`ctxsieve hook claude-code --install`: Claude Code's part of `ctxsieve install`, written at once (no plan
    shown, no record for uninstall), one line per thing set."""
    changes, said = planned(Context(url, "project" if project else "user", command_hook=not http))
    for change in changes:
        write_bytes(change.path, change.after)
        if change.kind == CAPTURE:
            change.path.chmod(0o755)
    sys.stdout.writelines(f"wrote {path}: {what}\n" for path, what in said)
    return 0


def _object(content: bytes) -> dict[str, Any]:
    data = json.loads(content)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _drop_empty(data: dict[str, Any], *keys: str) -> None:
    for key in keys:
        if key in data and not data[key]:
            data.pop(key)
