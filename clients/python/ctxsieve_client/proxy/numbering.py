"""A file read as the client shows it to the model: each line after its number (`12\t` in Claude Code's Read, `12→`
in its older versions). Such a result is cut as the file's own text, so it is read as code, and every line shown
gets its number back in the same form; its ref holds the file's text, whose line numbers are the ones shown. Only a
read from the file's first line qualifies: then the numbers are the file's own."""

from __future__ import annotations

import re
from dataclasses import replace

from ..models import FilterResult

_NUMBERED = re.compile(r" *(\d+)(\t|→)")


def unnumbered(text: str) -> tuple[str, str] | None:
    """(the file's text, the separator after each number), when every line is numbered 1, 2, 3, ... in one form."""
    lines = text.split("\n")
    plain = []
    separator = None
    for expected, line in enumerate(lines, start=1):
        found = _NUMBERED.match(line)
        if found is None or int(found.group(1)) != expected or separator not in (None, found.group(2)):
            return None
        separator = found.group(2)
        plain.append(line[found.end():])
    return ("\n".join(plain), separator) if separator is not None and len(lines) > 1 else None


def renumbered(result: FilterResult, separator: str) -> FilterResult:
    """The cut with each shown line after its number, as the client numbered the file."""
    snippets = [replace(s, text="\n".join(f"{s.line_start + i}{separator}{line}"
                                          for i, line in enumerate(s.text.split("\n"))))
                if s.line_start else s for s in result.snippets]
    return replace(result, snippets=snippets)
