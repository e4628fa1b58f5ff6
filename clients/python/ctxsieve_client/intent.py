"""The one intent rule of every surface (the hooks, the proxy, the gateway, the LangChain middleware): what a tool's
output is wanted for now is the user's latest request, the assistant's words before the call, and the call's own
words (its first query-like argument), all of which precede the output. Harness context a client wraps in one tag
(`<system-reminder>...</system-reminder>`) is not the user's words."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

WRAPPED = re.compile(r"^\s*<([A-Za-z_][\w-]*)[^>]*>.*</\1>\s*$", re.S)
# A call's own words for what its output is wanted for, in this order: the gateway's `intent` argument, search-like
# arguments, then a shell's command and its description (Codex's shell takes `cmd`)
CALL_WORDS = ("intent", "pattern", "query", "q", "search", "question", "prompt", "keywords", "keyword", "topic",
              "search_term", "description", "command", "cmd", "text")


def first_text(arguments: Mapping[str, Any], keys: Sequence[str] = CALL_WORDS) -> str | None:
    """The first of `keys` whose value is text that is not blank, stripped: a call's own words for its intent."""
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def own_words(content: Any, text_types: tuple[str, ...]) -> str:
    """A message's own text: a string, or its text parts, leaving out harness context wrapped in one tag."""
    if isinstance(content, str):
        return "" if WRAPPED.match(content) else content.strip()
    if not isinstance(content, list):
        return ""
    texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") in text_types]
    return " ".join(t.strip() for t in texts if isinstance(t, str) and t.strip() and not WRAPPED.match(t))


def step_intent(request: str | None, said: str | None, arguments: Mapping[str, Any]) -> str | None:
    """The one intent rule of every surface: the latest user request, the assistant's words before the call, and
    the call's own words (its query-like argument), all of which precede the output."""
    words = [request, said, first_text(arguments, CALL_WORDS)]
    return " ".join(w.strip() for w in words if w and w.strip()) or None
