"""Codex CLI: `ctxsieve mcp` as its MCP server `ctxsieve`, its own local MCP servers behind `ctxsieve-gateway`, and
its own tool-output limit raised, in its config.toml.

The user's TOML is never re-serialised: ctxsieve's lines are added as marked blocks (the root key at the top, where
a root key must be, the servers' tables at the end), a server moved behind the gateway has its tables commented out
in place inside a marked block of its own, each step is checked with tomllib, and uninstall takes the added blocks
out and puts the moved lines back as they were. No model base URL is written: a Codex pointed at a proxy that is not
running cannot work (that is `wrap`'s job)."""

from __future__ import annotations

import copy
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from . import gateway_entry
from .changes import Change, read
from .checks import Check
from .family import OPENAI, Context, Kind, Plan, Pointing
from .gateway_entry import Kept, Moved, Syntax, stdio

CHATGPT = "https://chatgpt.com/backend-api/codex"  # Codex's own default upstream under a ChatGPT login
OUTPUT_LIMIT = 100_000  # tokens of a tool output Codex keeps in its history (it cuts to its own budget otherwise)
BEGIN = "# >>> ctxsieve: added by `ctxsieve install`; `ctxsieve uninstall` takes it out"
END = "# <<< ctxsieve"
BLOCK = re.compile(r"\n?" + re.escape(BEGIN) + r"[^\n]*\n.*?" + re.escape(END) + r"[^\n]*(?:\n|$)", re.DOTALL)
MOVED_BEGIN = (f"# >>> ctxsieve: moved behind {gateway_entry.NAME} by `ctxsieve install`; `ctxsieve uninstall` puts "
               "it back")
MOVED_END = "# <<< ctxsieve: moved"
MOVED = re.compile(re.escape(MOVED_BEGIN) + r"[^\n]*\n(.*?)" + re.escape(MOVED_END) + r"[^\n]*\n", re.DOTALL)
HEADER = re.compile(r"^[ \t]*\[\[?(.*?)\]\]?[ \t]*(?:#.*)?$")
SYNTAX = Syntax(re.compile(r"(?!)"), re.compile(r"\$\{"), "")  # Codex expands nothing; the gateway would ${...}
LOCAL_KEYS = {"command", "args", "env", "cwd", "startup_timeout_sec", "tool_timeout_sec", "enabled",
              "default_tools_approval_mode"}
PER_CALL_NOTE = ("Codex 0.169 still cuts a command's output to its call's max_output_tokens (10,000 tokens unless "
                 "the model asks for more) before anyone sees it: this setting alone does not give ctxsieve those "
                 "outputs whole")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def config_path() -> Path:
    return codex_home() / "config.toml"


class Codex:
    name = "codex"
    title = "Codex CLI"
    commands: tuple[str, ...] = ("codex",)
    scopes: tuple[str, ...] = ("user",)

    def folder(self) -> Path:
        return codex_home()

    def instructions(self, _scope: str) -> Path | None:
        return codex_home() / "AGENTS.md"  # its global instructions, read in every project

    def plan(self, context: Context) -> Plan:
        return Plan(*plan(context))

    def kinds(self) -> dict[str, Kind]:
        return {"codex": Kind(tomllib.loads, lambda now, _: remove(now)), gateway_entry.KIND: Kind(json.loads)}

    def checks(self) -> list[Check]:
        from .codex_checks import checks

        return checks()

    def point(self, argv: list[str]) -> Pointing:
        return pointing(argv)


def plan(context: Context) -> tuple[list[Change], list[str]]:
    """The config with ctxsieve's blocks (and the gateway's config when servers move behind it), and what was left
    alone because it is the user's."""
    url = context.url
    path = config_path()
    before = read(path)
    text = (before or b"").decode("utf-8")
    try:
        mine = _parsed(remove_text(text))
    except tomllib.TOMLDecodeError as exc:
        raise SystemExit(f"ctxsieve install: {path} is not valid TOML ({exc}); not changed") from None
    gateway = gateway_entry.config_path("codex")
    if gateway_entry.changed_by_user(gateway):
        return [Change(path, before, before or b"", "codex", "codex")], [gateway_entry.left_note(gateway, path,
                                                                                                  "codex")]
    server = context.server()
    moved_text, moved, notes = behind_gateway(remove_text(text), mine)
    after, said = wired(moved_text, mine, server, gateway_lines(moved, url, mine) if moved else [])
    try:
        _parsed(after)
    except tomllib.TOMLDecodeError as exc:  # e.g. mcp_servers written as an inline table
        raise SystemExit(f"ctxsieve install: {path} would not parse with ctxsieve's lines ({exc}); not changed, "
                         f"add [mcp_servers.ctxsieve] by hand: command = {json.dumps(server[0])}, args = "
                         f"{json.dumps(server[1:])}") from None
    changes = [Change(path, before, after.encode("utf-8"), "codex", "codex")]
    if moved:
        gateway_entry.check("codex", moved, url)
        changes.append(Change(gateway, read(gateway), gateway_entry.config_bytes(moved), "codex", gateway_entry.KIND))
    return changes, said + notes


def wired(text: str, mine: dict[str, Any], server: list[str], gateway: list[str]) -> tuple[str, list[str]]:
    """The user's text with ctxsieve's blocks added where the user has not set the same keys."""
    notes = [f"{config_path()}: tool_output_token_limit = {OUTPUT_LIMIT}: {PER_CALL_NOTE}"]
    head = ""
    limit = mine.get("tool_output_token_limit")
    if limit is None:
        head = _block([f"tool_output_token_limit = {OUTPUT_LIMIT}"])
    else:
        notes[0] = f"{config_path()}: tool_output_token_limit = {limit} is yours: kept. {PER_CALL_NOTE}"
    tables: list[str] = []
    if "ctxsieve" in mine.get("mcp_servers", {}):
        notes.append(f"{config_path()}: [mcp_servers.ctxsieve] is yours: kept")
    else:
        tables += ["[mcp_servers.ctxsieve]", f"command = {json.dumps(server[0])}", f"args = {json.dumps(server[1:])}",
                   'default_tools_approval_mode = "approve"']
    tables += ([""] if tables and gateway else []) + gateway
    gap = "" if not text else "\n" if text.endswith("\n") else "\n\n"
    return head + text + (gap + _block(tables) if tables else ""), notes


def _block(lines: list[str]) -> str:
    return "\n".join([BEGIN, *lines, END]) + "\n"


def behind_gateway(text: str, mine: dict[str, Any]) -> tuple[str, list[Moved], list[str]]:
    """The user's local servers that move behind the gateway, their tables commented out in place; what stays and
    why. None move when a server of the gateway's name is the user's."""
    servers = mine.get("mcp_servers", {})
    if not isinstance(servers, dict) or gateway_entry.NAME in servers:
        taken = isinstance(servers, dict) and gateway_entry.NAME in servers
        return text, [], [f"{config_path()}: [mcp_servers.{gateway_entry.NAME}] is yours: no server moved"] if taken \
            else []
    found = [translate(n, e) for n, e in servers.items() if n != "ctxsieve"]
    moved = [m for m in found if isinstance(m, Moved)]
    kept = [k for k in found if isinstance(k, Kept)]
    mode = servers[moved[0].name].get("default_tools_approval_mode") if moved else None
    for m in [m for m in moved if servers[m.name].get("default_tools_approval_mode") != mode]:
        moved.remove(m)
        kept.append(Kept(m.name, "its default_tools_approval_mode is not the other moved servers': one gateway "
                                 "entry has one"))
    for m in list(moved):
        commented = _comment_out(text, m.name)
        if commented is None:
            moved.remove(m)
            kept.append(Kept(m.name, "not written as its own [mcp_servers.NAME] table (inline or dotted keys)"))
        else:
            text = commented
    notes = [f"{config_path()}: {k.name} stays in front of Codex: {k.why}" for k in kept]
    if moved:
        notes.append(f"{config_path()}: {', '.join(m.name for m in moved)} moved behind {gateway_entry.NAME} "
                     f"({gateway_entry.config_path('codex')}): Codex names their tools mcp__ctxsieve_gateway__<tool> "
                     "now")
    return text, moved, notes


def translate(name: str, entry: Any) -> Moved | Kept:
    if not isinstance(entry, dict) or "command" not in entry:
        return Kept(name, "a remote server (url): Codex's own connection and sign-in kept")
    if entry.get("enabled") is False:
        return Kept(name, "turned off")
    extra = sorted(set(entry) - LOCAL_KEYS)
    if extra:
        return Kept(name, f"its {', '.join(extra)} is Codex's alone")
    given = [entry[k] for k in ("startup_timeout_sec", "tool_timeout_sec") if entry.get(k) is not None]
    waits = [float(w) for w in given if isinstance(w, int | float) and not isinstance(w, bool) and w > 0]
    if len(waits) != len(given):
        return Kept(name, "its timeouts are not numbers of seconds")
    # the gateway waits timeout_s for a server both to list its tools and to answer a call
    return stdio(name, entry["command"], entry.get("args"), entry.get("env"), entry.get("cwd"), SYNTAX,
                 min(max(waits), 3600.0) if waits else None)


def gateway_lines(moved: list[Moved], url: str, mine: dict[str, Any]) -> list[str]:
    """The gateway's table: Codex waits for it longer than the gateway waits for the slowest server behind it (its
    default 10 s start would drop every moved server with it), and it takes their approval mode."""
    command = gateway_entry.command("codex", url)
    longest = max(m.timeout_s or 60.0 for m in moved)
    mode = mine["mcp_servers"][moved[0].name].get("default_tools_approval_mode")
    return [f"[mcp_servers.{gateway_entry.NAME}]", f"command = {json.dumps(command[0])}",
            f"args = {json.dumps(command[1:])}", f"startup_timeout_sec = {int(longest) + 20}",
            f"tool_timeout_sec = {int(longest) + 5}", *([f"default_tools_approval_mode = {json.dumps(mode)}"]
                                                        if mode is not None else [])]


def _comment_out(text: str, name: str) -> str | None:
    """`text` with each table of the server `name` commented out in a moved block; None when the server is not only
    there (inline, dotted keys) or what is left is not the same config without it."""
    lines = text.splitlines(keepends=True)
    spans = [(a, b) for a, b, path in _tables(lines) if path[:2] == ("mcp_servers", name)]
    if not spans:
        return None
    for a, b in reversed(spans):
        body = "".join("# " + line if line.strip() else "#" + line for line in lines[a:b])
        lines[a:b] = [MOVED_BEGIN + "\n" + body + MOVED_END + "\n"]
    out = "".join(lines)
    expected = copy.deepcopy(_parsed(text))
    expected["mcp_servers"].pop(name)
    try:
        return out if _without_empty(_parsed(out)) == _without_empty(expected) else None
    except tomllib.TOMLDecodeError:
        return None


def _tables(lines: list[str]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Each table's lines [start, end) (its trailing blank and comment lines left out) and its key path."""
    found = [(i, _path(line)) for i, line in enumerate(lines) if HEADER.match(line.rstrip("\n"))]
    heads = [(i, p) for i, p in found if p is not None]
    out = []
    for n, (i, path) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        while end > i + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        out.append((i, end, path))
    return out


def _path(line: str) -> tuple[str, ...] | None:
    found = HEADER.match(line.rstrip("\n"))
    try:
        node: Any = tomllib.loads(f"[{found.group(1)}]\n") if found else None
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key, node = next(iter(node.items()))
        path.append(key)
    return tuple(path) or None


def _without_empty(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcp_servers")
    return {k: v for k, v in data.items() if not (k == "mcp_servers" and servers == {})}


def pointing(argv: list[str]) -> Pointing:
    """Codex's upstream, in the order it reads it: a `-c openai_base_url=` given (taken out: the proxy's is given
    instead), its config's custom provider or `openai_base_url`, a ChatGPT login's backend, else OpenAI's API."""
    rest, given = _without_setting(argv[1:], "openai_base_url")
    try:
        config = read_config()
    except ValueError:  # Codex will say what is wrong with its config itself
        config = {}
    provider = str(config.get("model_provider", "openai"))
    custom = config.get("model_providers", {}).get(provider, {}) if provider != "openai" else {}
    if custom.get("base_url"):
        return _pointed(str(custom["base_url"]), [argv[0], *rest], f"model_providers.{provider}.base_url")
    upstream = given or config.get("openai_base_url") or (CHATGPT if _chatgpt_login() else OPENAI)
    return _pointed(str(upstream), [argv[0], *rest], "openai_base_url")


def _pointed(upstream: str, argv: list[str], key: str) -> Pointing:
    """Codex 0.169 ignores OPENAI_BASE_URL: the proxy's URL is given as `-c KEY=...`, over its config's."""
    return Pointing(openai=upstream, argv=argv, flags=lambda proxy: ["-c", f"{key}={json.dumps(proxy + '/v1')}"],
                    by_environment=False)


def _without_setting(args: list[str], key: str) -> tuple[list[str], str | None]:
    kept: list[str] = []
    value = None
    words = iter(args)
    for word in words:
        if word in ("-c", "--config"):
            setting = next(words, "")
            if setting.split("=", 1)[0].strip() == key:
                value = _toml_value(setting.split("=", 1)[1])
                continue
            kept += [word, setting]
        else:
            kept.append(word)
    return kept, value


def _toml_value(text: str) -> str:
    import tomllib

    try:
        return str(tomllib.loads(f"v = {text}")["v"])
    except tomllib.TOMLDecodeError:  # Codex takes a value that is not TOML as a string
        return text.strip()


def _chatgpt_login() -> bool:
    try:
        auth = json.loads((codex_home() / "auth.json").read_text())
    except (FileNotFoundError, ValueError):
        return False
    return bool(auth.get("tokens")) and not auth.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_API_KEY")


def remove_text(text: str) -> str:
    """Without ctxsieve's added blocks, and with the moved servers' lines back as they were."""
    return MOVED.sub(lambda m: "".join(_uncommented(line) for line in m.group(1).splitlines(keepends=True)),
                     BLOCK.sub("", text))


def _uncommented(line: str) -> str:
    return line[2:] if line.startswith("# ") else line[1:]


def remove(content: bytes) -> bytes:
    """The config without ctxsieve's blocks, the moved servers back; the user's lines as they are."""
    return remove_text(content.decode("utf-8")).encode("utf-8")


def _parsed(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def read_config() -> dict[str, Any]:
    """Codex's config as Codex reads it; {} when there is none."""
    content = read(config_path())
    return tomllib.loads(content.decode("utf-8")) if content else {}
