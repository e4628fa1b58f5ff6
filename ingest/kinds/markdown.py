"""Markdown: cut by its sections (a chunk never runs across a heading), each chunk named by its heading path; a
fenced block is kept together and, when too long, cut between its lines."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..packing import Block, Piece, join_context, lines, pack, stripped
from .base import Cutting, Leaf, Prose

_MD_HINT = re.compile(r"^(#{1,6} \S|```|\* \S|- \S|\d+\. \S|\|.+\|)", re.M)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


class Markdown(Prose):
    name = "markdown"

    def detect(self, text: str) -> bool:
        return len(_MD_HINT.findall(text[:20000])) >= 2

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del leaves
        return list(pack(view, list(markdown_blocks(view, start, end, title)), how.tokenizer, how.target))


def markdown_blocks(text: str, start: int, end: int, title: str) -> Iterator[Block]:
    headings: list[tuple[int, str]] = []
    para_start: int | None = None
    fence_start: int | None = None
    new_section = False

    def flush(stop: int) -> Iterator[Block]:
        nonlocal para_start, new_section
        if para_start is not None:
            for s, e in stripped(text, para_start, stop):
                yield Block(s, e, join_context(title, *(h for _, h in headings)), new_section)
                new_section = False
        para_start = None

    for line_start, line_end in lines(text, start, end):
        line = text[line_start:line_end]
        if fence_start is not None:
            if _FENCE.match(line):
                yield Block(fence_start, line_end, join_context(title, *(h for _, h in headings)), new_section,
                            split_by_lines=True)
                fence_start, new_section = None, False
            continue
        if _FENCE.match(line):
            yield from flush(line_start)
            fence_start = line_start
            continue
        heading = _HEADING.match(line)
        if heading:
            yield from flush(line_start)
            level = len(heading.group(1))
            headings = [(lv, h) for lv, h in headings if lv < level] + [(level, heading.group(2).strip())]
            new_section, para_start = True, line_start
        elif not line.strip():
            yield from flush(line_start)
        elif para_start is None:
            para_start = line_start
    if fence_start is not None:
        yield Block(fence_start, end, join_context(title, *(h for _, h in headings)), new_section, True)
    yield from flush(end)
