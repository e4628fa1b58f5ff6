"""What the agent sees of a filter answer, written once: its snippets (under their line ranges where the view is read
by lines), the file's map, an outline's entries, then the placeholder. Pure and standard-library only: every surface
renders with it, and the service counts what it shows with the same functions (ingest.kinds.grep, indexes.sieve).

How a view's snippets are shown is a fact of its kind that travels in the response (`View`), so no surface keeps
a list of kind names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

SEPARATOR = "\n\n---\n\n"  # between snippets (and before the placeholder)
MAP_HEADING = "Map of the file (its other definitions, by line):"


@dataclass(frozen=True, kw_only=True)
class View:
    """How a kind's snippets are shown (a response's `view`)."""

    by_lines: bool = False  # whole lines of the view: each snippet under its line range and what it is part of
    headed: bool = True  # with by_lines; False: its lines name their own file and line (grep's `path:N:`), so a
    # snippet is headed only where its context names what they do not (rg --heading's file)
    numbered: bool = True  # the view's line N is the source's own line N (not a rendering of it: JSON, HTML)


PLAIN = View()


class Shown(Protocol):
    """A snippet as rendering reads it (the client's `models.Snippet`, the service's `filtering.Snippet`)."""

    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def context(self) -> str: ...
    @property
    def line_start(self) -> int | None: ...
    @property
    def line_end(self) -> int | None: ...


class Numbered(Protocol):
    """A map line: a definition's line and its number."""

    @property
    def line(self) -> int: ...
    @property
    def text(self) -> str: ...


def heading(first: int | None, last: int | None, context: str) -> str:
    """`── lines 100-131 · class URLValidator > def __call__ ──`, then the lines (a form no file line takes)."""
    where = f" · {context}" if context else ""
    return f"── lines {first}-{last}{where} ──\n" if first else ""


def snippet_heading(first: int | None, last: int | None, context: str, view: View) -> str:
    """What goes above a snippet's lines: its heading where the view is read by lines (and its lines do not name
    themselves), else nothing."""
    return heading(first, last, context) if view.by_lines and (view.headed or context) else ""


def snippet(shown: Shown, view: View) -> str:
    """A snippet as the agent sees it: by whole lines under its heading where the view is read by lines."""
    return snippet_heading(shown.line_start, shown.line_end, shown.context, view) + shown.text


def numbered_line(line: int, text: str) -> str:
    """`100│    def __call__(self, value):`: a line after its true number, as a file's map and a code search show it
    and as the service counts its tokens."""
    return f"{line}│{text}"


def render_map(lines_map: Sequence[Numbered], offset: int = 0) -> str:
    """The map's heading and its lines; `offset`: the lines the text the service read starts after (a Read from
    line offset+1)."""
    return "\n".join([MAP_HEADING, *(numbered_line(m.line + offset, m.text) for m in lines_map)])


def render(snippets: Sequence[Shown], placeholder: str, view: View = PLAIN,
           lines_map: Sequence[Numbered] | None = None) -> str:
    """The map of the file (if any), the snippets, then the placeholder, as one text an agent can read."""
    parts = [render_map(lines_map)] if lines_map else []
    return SEPARATOR.join([*parts, *(snippet(s, view) for s in snippets), placeholder])


def render_outline(entries: Sequence[Shown], placeholder: str, title: str) -> str:
    """An outline (filter mode outline): one line per entry, its chunk number (for fetching that part), what it is
    part of, and its first line; then the placeholder."""
    lines = [title]
    for entry in entries:
        where = f" [{entry.context}]" if entry.context else ""
        lines.append(f"#{entry.id.rsplit('#', 1)[-1]}{where} {entry.text}")
    return "\n".join([*lines, placeholder])
