"""A request's intents: "find the hotel, then book a taxi to it" asks for two tools, not one.

Split on sentence ends and on the connectives that chain steps, in English and Chinese. A part too short
to name a task (fewer than three words, or four CJK characters) stays with its neighbour. One intent (or
none found) gives an empty list: the whole request is then the only thing retrieved for.
"""

from __future__ import annotations

import re

MAX_INTENTS = 6  # a long request rarely has more steps; beyond that each part adds cost, not tools

_BOUNDARY = re.compile(
    r"(?<=[.!?;])\s+(?=\S)"  # sentence ends (the space after keeps "3.5" and "e.g.x" whole)
    r"|[。！？；\n]+"
    r"|,?\s+(?:and\s+then|then|after\s+that|afterwards|also|additionally|as\s+well\s+as|"
    r"and\s+also|plus)\s+"
    r"|，?(?:然后|接着|之后|并且|同时|再|以及|还有|另外|此外|顺便)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _substantial(part: str) -> bool:
    return len(_WORD.findall(part)) >= 3 or len(_CJK.findall(part)) >= 4


def split_intents(query: str) -> list[str]:
    """The request's parts in order, each able to stand as a task; [] when there is only one."""
    parts: list[str] = []
    for raw in _BOUNDARY.split(query):
        part = raw.strip(" \t,，、:：")
        if not part:
            continue
        if parts and not (_substantial(part) and _substantial(parts[-1])):
            parts[-1] = f"{parts[-1]} {part}"  # a fragment joins its neighbour
        else:
            parts.append(part)
    parts = [p for p in parts if _substantial(p)]
    return parts[:MAX_INTENTS] if len(parts) > 1 else []
