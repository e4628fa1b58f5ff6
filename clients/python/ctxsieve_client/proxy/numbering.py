"""A file read as the client shows it to the model: each line after its number (`12\t` in Claude Code's Read, `12→`
in its older versions). Such a result is cut as the read's own text, so it is read as code, and every line shown
gets its number back in the same form. A read from the file's first line has the file's own numbers; a read with an
offset starts at its first number, and every number and heading shown is moved by it, so each is the file's line
too; its ref holds the read's text, whose lines `fetch_ref(lines=)` counts from the read's first (the placeholder
says so)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..models import FilterResult

_NUMBERED = re.compile(r" *(\d+)(\t|→)")


@dataclass(frozen=True)
class Numbered:
    text: str  # the read's own text, numbers taken off
    separator: str  # what follows each number
    first: int  # the number of its first line (the file's line)


def unnumbered(text: str) -> Numbered | None:
    """The read's text, when every line is numbered first, first+1, ... in one form."""
    lines = text.split("\n")
    plain = []
    separator, first = None, None
    for i, line in enumerate(lines):
        found = _NUMBERED.match(line)
        first = int(found.group(1)) if found and first is None else first
        if found is None or first is None or int(found.group(1)) != first + i \
                or separator not in (None, found.group(2)):
            return None
        separator = found.group(2)
        plain.append(line[found.end():])
    if separator is None or first is None or len(lines) < 2:
        return None
    return Numbered("\n".join(plain), separator, first)


def renumbered(result: FilterResult, numbered: Numbered) -> FilterResult:
    """The cut with each shown line after its file number, as the client numbered the read, and its headings and map
    moved to the file's numbers."""
    shift = numbered.first - 1
    snippets = [replace(s, text="\n".join(f"{s.line_start + shift + i}{numbered.separator}{line}"
                                          for i, line in enumerate(s.text.split("\n"))),
                        line_start=s.line_start + shift, line_end=(s.line_end or s.line_start) + shift)
                if s.line_start else s for s in result.snippets]
    lines_map = [replace(m, line=m.line + shift) for m in result.map] if result.map and shift else result.map
    note = (f" (fetch_ref's lines count from this read's first line, file line {numbered.first})" if shift else "")
    return replace(result, snippets=snippets, map=lines_map, placeholder=result.placeholder + note)
