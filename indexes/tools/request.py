"""What of a request tools are chosen for. A short request is used whole. A long one (a multi-turn conversation,
or a step with a pasted document) is mostly context: the tools it needs now follow from its latest turn, so
that turn is what is searched (its intents too), within the dense model's window. Without turn markers, the
latest turn is the request's last paragraphs."""

from __future__ import annotations

import re

from ctxsieve.ingest.tokens import Tokenizer

LONG_REQUEST = 1_000  # characters; a request this short is one ask, used whole
FOCUS_TOKENS = 400  # what of a long request is searched: within e5's 512-token window, with its prompt
_TURN = re.compile(r"^[ \t]*(?:#+\s*)?(user|human|customer|assistant|ai|bot|system|tool|用户|助手|系统)\s*[:：]",
                   re.IGNORECASE | re.MULTILINE)
_ASKER = {"user", "human", "customer", "用户"}


def focus(request: str, tokenizer: Tokenizer) -> str:
    """The part of the request to choose tools for: all of a short one; the latest user turn of a long one."""
    if len(request) <= LONG_REQUEST:
        return request
    turns = list(_TURN.finditer(request))
    asked = [i for i, m in enumerate(turns) if m.group(1).lower() in _ASKER]
    if asked:
        last = asked[-1]
        start = turns[last].end()
        end = turns[last + 1].start() if last + 1 < len(turns) else len(request)
        latest = request[start:end].strip() or request[start:].strip()
    else:
        latest = request.strip()
    return _tail(latest, tokenizer)


def _tail(text: str, tokenizer: Tokenizer) -> str:
    """The longest end of the text within FOCUS_TOKENS, starting at a line where it can, else at a word."""
    if tokenizer.count(text) <= FOCUS_TOKENS:
        return text
    lines = [0, *(m.end() for m in re.finditer(r"\n", text))]
    start = _first_fitting(text, lines, tokenizer)
    if start is None:  # the last line alone is too long: start at a word within it
        words = [m.start() for m in re.finditer(r"(?<=\s)\S", text[lines[-1]:])]
        start = _first_fitting(text, [lines[-1] + w for w in words], tokenizer)
    if start is None:  # one word longer than the window: its last piece of FOCUS_TOKENS tokens, counted
        return text[tokenizer.split_points(text, FOCUS_TOKENS)[-1]:].strip()
    return text[start:].strip()


def _first_fitting(text: str, starts: list[int], tokenizer: Tokenizer) -> int | None:
    """The earliest of these starts whose suffix fits (the count only falls as the start moves right)."""
    lo, hi, found = 0, len(starts) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if tokenizer.count(text[starts[mid]:]) <= FOCUS_TOKENS:
            found, hi = starts[mid], mid - 1
        else:
            lo = mid + 1
    return found
