"""An outline of a source: what an agent sees of a large output when it has not said what it needs.

Each entry is one chunk's first line (a span of the view, so its offsets and ref hold like any snippet's) with
what the chunk is part of (`context`: headings, the JSON record, the document title). When every chunk's entry
does not fit the budget, the entries that open a new part (a new context) come first, then the rest, spread
evenly; they are shown in document order. No model runs: an outline costs what counting tokens costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxsieve.ingest.chunking import Chunk
from ctxsieve.ingest.tokens import Tokenizer

FIRST_LINE_CHARS = 160  # an entry is a glimpse, not the chunk: the chunk itself is one fetch away


@dataclass(frozen=True, kw_only=True)
class Entry:
    chunk: Chunk
    start: int
    end: int  # view[start:end] is the chunk's first line, cut at FIRST_LINE_CHARS
    tokens: int


def first_line(view: str, chunk: Chunk) -> tuple[int, int]:
    """The span of the chunk's first non-blank line (at most FIRST_LINE_CHARS)."""
    start = chunk.start
    while start < chunk.end and view[start].isspace():
        start += 1
    newline = view.find("\n", start, chunk.end)
    end = chunk.end if newline < 0 else newline
    return start, min(end, start + FIRST_LINE_CHARS)


def outline(view: str, chunks: Sequence[Chunk], tokenizer: Tokenizer, max_tokens: int) -> list[Entry]:
    """Entries within `max_tokens` (each counted with its context), in document order."""
    entries = []
    for chunk in chunks:
        start, end = first_line(view, chunk)
        entries.append(Entry(chunk=chunk, start=start, end=end,
                             tokens=tokenizer.count(f"#{chunk.index} {chunk.context} {view[start:end]}")))
    chosen: set[int] = set()
    used = 0
    for i in _priority(chunks):
        if used + entries[i].tokens <= max_tokens:
            chosen.add(i)
            used += entries[i].tokens
    return [entries[i] for i in sorted(chosen)]


def _priority(chunks: Sequence[Chunk]) -> list[int]:
    """Chunks opening a new part first (the structure), then the others spread evenly (bisection order)."""
    opening = [i for i, c in enumerate(chunks) if i == 0 or c.context != chunks[i - 1].context
               or c.document != chunks[i - 1].document]
    rest = [i for i in range(len(chunks)) if i not in set(opening)]
    return [*_spread(opening), *_spread(rest)]


def _spread(items: list[int]) -> list[int]:
    """Items in an order that covers the whole range early: first, last, middle, then the middles between."""
    if len(items) <= 2:
        return items
    order, seen = [0, len(items) - 1], {0, len(items) - 1}
    spans = [(0, len(items) - 1)]
    while spans:
        next_spans = []
        for lo, hi in spans:
            mid = (lo + hi) // 2
            if mid not in seen:
                seen.add(mid)
                order.append(mid)
            if mid - lo > 1:
                next_spans.append((lo, mid))
            if hi - mid > 1:
                next_spans.append((mid, hi))
        spans = next_spans
    return [items[i] for i in order]
