"""Packing prose into chunks: blocks (paragraphs, sections, JSON values) joined up to a token target, with exact
character offsets.

Every chunk is a span `[start, end)` of the view with no leading or trailing white space. Blocks of different
sections are never mixed in one chunk; paragraphs are packed together; oversized paragraphs are cut at sentence
ends (English and Chinese), then at token boundaries as a last resort. The prose kinds (ingest/kinds) make the
blocks; whole-line kinds are cut by ingest/lines.py instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from .tokens import Tokenizer

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+"  # English: . ! ? then closing quotes, then space
    r"|(?<=[\u3002\uff01\uff1f\uff1b\u2026])[\u201d\u2019\u300d\u300f\uff09)]*\s*"  # Chinese
    r"|\n+"
)


class Piece(NamedTuple):
    """A chunk of a section before it is numbered: [start, end) of the view, its tokens, what it is part of (its
    heading path, JSON record, definition or file) and the part it plays in its output (a log's `failure`)."""

    start: int
    end: int
    tokens: int
    context: str
    role: str = ""


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    context: str
    new_section: bool  # a chunk may not run across this block's start
    split_by_lines: bool = False


def lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        yield pos, stop
        pos = stop + 1


def paragraphs(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    for match in _PARAGRAPH_BREAK.finditer(text, start, end):
        yield from stripped(text, pos, match.start())
        pos = match.end()
    yield from stripped(text, pos, end)


def stripped(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        yield start, end


def join_context(*parts: str) -> str:
    kept: list[str] = []
    for part in parts:
        if part and (not kept or kept[-1] != part):
            kept.append(part)
    return " > ".join(kept)


# --- packing ----------------------------------------------------------------------------------------

def _pieces(text: str, block: Block, tokenizer: Tokenizer, target: int) -> Iterator[tuple[int, int, int]]:
    """(start, end, tokens) pieces of a block, none over `target` tokens."""
    tokens = tokenizer.count(text[block.start : block.end])
    if tokens <= target:
        yield block.start, block.end, tokens
        return
    for s, e in _sentences(text, block.start, block.end, block.split_by_lines):
        piece_tokens = tokenizer.count(text[s:e])
        if piece_tokens <= target:
            yield s, e, piece_tokens
            continue
        yield from _token_pieces(text, s, e, tokenizer, target)


def _token_pieces(text: str, start: int, end: int, tokenizer: Tokenizer, target: int
                  ) -> Iterator[tuple[int, int, int]]:
    """Cut at token boundaries; a slice can tokenize longer than in context, so halve what still overflows."""
    cuts = [start + c for c in tokenizer.split_points(text[start:end], target)]
    for a, b in zip([start, *cuts], [*cuts, end], strict=True):
        for ps, pe in stripped(text, a, b):
            tokens = tokenizer.count(text[ps:pe])
            if tokens <= target or pe - ps <= 1:
                yield ps, pe, tokens
            else:
                middle = (ps + pe) // 2
                yield from _token_pieces(text, ps, middle, tokenizer, target)
                yield from _token_pieces(text, middle, pe, tokenizer, target)


def _sentences(text: str, start: int, end: int, by_lines: bool) -> Iterator[tuple[int, int]]:
    pattern = re.compile(r"\n+") if by_lines else _SENTENCE_END
    pos = start
    for match in pattern.finditer(text, start, end):
        if match.end() > pos:
            yield from stripped(text, pos, match.end())
            pos = match.end()
    yield from stripped(text, pos, end)


def pack(text: str, blocks: list[Block], tokenizer: Tokenizer, target: int
          ) -> Iterator[Piece]:
    """(start, end, tokens, context) chunks: consecutive pieces joined greedily up to `target` tokens, never
    across a section start."""
    pieces: list[tuple[int, int, int]] = []
    context = ""
    used = 0
    small = target // 3
    for block in blocks:
        block_pieces = list(_pieces(text, block, tokenizer, target))
        block_tokens = sum(t for _, _, t in block_pieces)
        for index, (s, e, tokens) in enumerate(block_pieces):
            # A paragraph of its own size starts its own chunk: packing unrelated paragraphs together
            # blurs both in the embedding. Short ones (list items, one-liners, JSON fields) are joined.
            crosses = index == 0 and (block.new_section or (used >= small and block_tokens >= small))
            # +1: the white space joining two pieces may itself cost a token
            if pieces and (crosses or used + 1 + tokens > target):
                yield from _flush(text, pieces, context, tokenizer, target)
                pieces, used = [], 0
            if not pieces:
                context, used = block.context, tokens
            else:
                used += 1 + tokens
            pieces.append((s, e, tokens))
    if pieces:
        yield from _flush(text, pieces, context, tokenizer, target)


def _flush(text: str, pieces: list[tuple[int, int, int]], context: str, tokenizer: Tokenizer, target: int
           ) -> Iterator[Piece]:
    """Emit the joined pieces; in the rare case joining them costs more than the sum, emit them in halves.
    Each piece's count was taken on exactly its span, and a join is counted whole, so no count is a guess."""
    start, end = pieces[0][0], pieces[-1][1]
    if len(pieces) == 1:
        yield Piece(start, end, pieces[0][2], context)
        return
    tokens = tokenizer.count(text[start:end])
    if tokens <= target:
        yield Piece(start, end, tokens, context)
        return
    middle = len(pieces) // 2
    yield from _flush(text, pieces[:middle], context, tokenizer, target)
    yield from _flush(text, pieces[middle:], context, tokenizer, target)
