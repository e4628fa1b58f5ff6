"""Names the agent sees, the arguments that say what a call is for, and the arguments never written down.

- Tool names stay as the upstream spells them. A name two servers share, or one the gateway uses itself,
  becomes `server__tool` (for every server that has it): deterministic, and stable while the servers' tools are.
- Intent: the call's `intent` argument (added to every listed tool), else its first query-like argument
  (intent.CALL_WORDS, in that order), else none (the output comes back as an outline).
- Secrets: arguments whose name has a credential word (SECRET_WORDS) are masked in what is stored, in
  placeholders and in logs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from . import ref_tools
from .intent import first_text

OWN_TOOLS = (*ref_tools.NAMES, "find_tools", "call_tool")  # the gateway's own
SEPARATOR = "__"
INTENT = "intent"
INTENT_SCHEMA = {"type": "string", "description": "What you need from this tool's output for your current step "
                                                  "(a large output is cut to that); leave it out for an outline."}
SECRET_WORDS = frozenset({"token", "key", "apikey", "password", "passwd", "secret", "authorization", "auth",
                          "credential", "credentials", "cookie", "bearer"})
MASK = "***"
# a toolset's, a collection's or a repository's name: one segment of a URL path (no `.` or `..`) and a key
NAME_PATTERN = r"^[A-Za-z0-9_.\-]*[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$"  # (no look-ahead: pydantic's regex has none)
MAX_NAME_CHARS = 64
MAX_K = 50  # the most results a request's `k` asks for (the service's limit, checked by the CLI before it sends)


def usable_name(name: str) -> bool:
    """A name the service takes for a toolset, a collection or a repository."""
    return len(name) <= MAX_NAME_CHARS and re.match(NAME_PATTERN, name) is not None


def exposed_names(tools_by_server: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, str]]:
    """Exposed name -> (server, upstream name)."""
    owners: dict[str, list[str]] = {}
    for server, names in tools_by_server.items():
        for name in dict.fromkeys(names):
            owners.setdefault(name, []).append(server)
    out: dict[str, tuple[str, str]] = {}
    for name, servers in sorted(owners.items()):
        shared = len(servers) > 1 or name in OWN_TOOLS
        for server in servers:
            out[f"{server}{SEPARATOR}{name}" if shared else name] = (server, name)
    return out


def intent_of(arguments: Mapping[str, Any], own_intent: bool) -> tuple[str | None, dict[str, Any]]:
    """(what the call is for, the arguments to forward): `intent` is removed unless the tool has its own."""
    forwarded = dict(arguments)
    intent = forwarded.get(INTENT) if own_intent else forwarded.pop(INTENT, None)
    return first_text({**forwarded, INTENT: intent}), forwarded


def is_secret(name: str) -> bool:
    """A word of the name (snake, kebab or camel case) is a credential word: `api_key`, `accessToken`,
    `X-Auth-Token`, `password`; `keyword` and `tokens_used` are not."""
    words = re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", name)
    return any(word.lower() in SECRET_WORDS for word in words)


def masked(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as they may be stored and shown: credentials replaced, nested objects too."""
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if is_secret(key):
            out[key] = MASK
        elif isinstance(value, Mapping):
            out[key] = masked(value)
        else:
            out[key] = value
    return out
