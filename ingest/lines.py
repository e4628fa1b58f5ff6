"""Whole-line chunks, for every kind read by lines (code, logs, diffs, grep output).

A kind names spans of lines (a definition, a log's failure, a diff's hunk, one grep line); they become chunks of
whole lines, indentation included, so every snippet carries the output's true line numbers and can be pasted into
an edit as it is. Loose spans (the lines between definitions) join their neighbours while they fit; a long span is
cut before its statements, between any lines only when one statement overflows.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .packing import Piece
from .tokens import Tokenizer


@dataclass(frozen=True)
class LineSpan:
    first: int  # 0-based, inclusive
    last: int  # 0-based, inclusive
    context: str
    loose: bool = False  # lines between definitions (may join their neighbours), not a definition's own
    statements: tuple[int, ...] = ()  # where a long unit may be cut (its statements' first lines)
    role: str = ""  # the part it plays in its output, as its kind names it (a log's failure)


def line_chunks(text: str, offset: int, spans: list[LineSpan], tokenizer: Tokenizer, target: int
                ) -> list[Piece]:
    """Whole-line chunks of line spans (code's units, a log's failures, a diff's hunks): loose neighbours joined
    while they fit, a long span cut at its statements or lines."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out: list[Piece] = []
    for span in _joined(spans, lines, tokenizer, target):
        for first, last in _cut(span, lines, tokenizer, target):
            while last > first and not lines[last].strip():  # no trailing blank lines
                last -= 1
            start, end = starts[first], starts[last] + len(lines[last])
            if not text[start:end].strip():
                continue
            tokens = tokenizer.count(text[start:end])
            if tokens <= target or last > first:  # (lines cut by their own counts can count more together: whole)
                out.append(Piece(offset + start, offset + end, tokens, span.context, span.role))
                continue
            # one line over the target alone (minified code): the only cut that falls inside a line
            cuts = [start + c for c in tokenizer.split_points(text[start:end], target)]
            for a, b in zip([start, *cuts], [*cuts, end], strict=True):
                if text[a:b].strip():
                    out.append(Piece(offset + a, offset + b, tokenizer.count(text[a:b]), span.context, span.role))
    return out


def _joined(spans: list[LineSpan], lines: list[str], tokenizer: Tokenizer, target: int) -> Iterator[LineSpan]:
    """Blocks between definitions (imports, constants) joined with the next ones of the same context while they
    fit; definitions stay alone."""
    pending: LineSpan | None = None
    for span in spans:
        if pending is not None and span.loose and span.context == pending.context and \
                tokenizer.count("\n".join(lines[pending.first : span.last + 1])) <= target:
            pending = LineSpan(pending.first, span.last, span.context, loose=True)
            continue
        if pending is not None:
            yield pending
            pending = None
        if span.loose:
            pending = span
        else:
            yield span
    if pending is not None:
        yield pending


def _cut(span: LineSpan, lines: list[str], tokenizer: Tokenizer, target: int) -> Iterator[tuple[int, int]]:
    """A unit as one chunk, or, when it is over `target` tokens, pieces cut before its statements (from the
    parser; else the lines at its body's indentation), between any lines only when one statement overflows."""
    text = "\n".join(lines[span.first : span.last + 1])
    if tokenizer.count(text) <= target or span.first == span.last:
        yield span.first, span.last
        return
    cuts = set(span.statements) or {i for i in range(span.first + 1, span.last + 1)
                                     if lines[i].strip() and _indent(lines[i]) <= _body_indent(span, lines)}
    piece_start, used = span.first, 0
    last_cut = None
    for i in range(span.first, span.last + 1):
        cost = tokenizer.count(lines[i]) + 1
        if i in cuts and i > piece_start:
            last_cut = i
        if used + cost > target and i > piece_start:
            cut = last_cut if last_cut is not None and last_cut > piece_start else i
            yield piece_start, cut - 1
            used = sum(tokenizer.count(lines[j]) + 1 for j in range(cut, i))
            piece_start, last_cut = cut, None
        used += cost
    yield piece_start, span.last


def _body_indent(span: LineSpan, lines: list[str]) -> int:
    return min((_indent(lines[i]) for i in range(span.first + 1, span.last + 1) if lines[i].strip()), default=0)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class LineIndex:
    """1-based line numbers of a text's character offsets."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, first: int, last: int, length: int) -> tuple[int, int]:
        """The character range [start, end) of lines first..last (1-based, inclusive), clamped to the text."""
        first = max(1, min(first, len(self.starts)))
        last = max(first, min(last, len(self.starts)))
        end = self.starts[last] - 1 if last < len(self.starts) else length
        return self.starts[first - 1], end


def blank_lines_around(text: str, start: int, end: int) -> tuple[int, int]:
    """How many blank lines run just above and just below the whole lines of text[start:end] (the empty rest after
    a final newline is no line)."""
    above, at = 0, start
    while at > 0:
        previous = text.rfind("\n", 0, at - 1) + 1
        if text[previous : at - 1].strip():
            break
        above, at = above + 1, previous
    below, at = 0, end  # the newline ending the last line, or the text's end
    while at < len(text) - 1:
        following = text.find("\n", at + 1)
        following = len(text) if following < 0 else following
        if text[at + 1 : following].strip() or (following == len(text) and following == at + 1):
            break
        below, at = below + 1, following
    return above, below
