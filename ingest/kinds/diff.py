"""Unified diffs: one chunk per hunk, the file's header lines going with its first hunk, each named by its file."""

from __future__ import annotations

import re

from ..lines import LineSpan, line_chunks
from .base import ByLines, Cutting, Leaf, Piece

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


class Diff(ByLines):
    name = "diff"

    def detect(self, text: str) -> bool:
        return looks_like_diff(text)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del title, leaves
        text = view[start:end]
        return line_chunks(text, start, diff_spans(text), how.tokenizer, how.line_target)


def looks_like_diff(text: str) -> bool:
    head = text[:20000]
    return head.startswith("diff --git ") or bool(re.search(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d", head, re.M))


def diff_spans(text: str) -> list[LineSpan]:
    """A span per hunk, named by its file; a file's header lines go with its first hunk."""
    lines = text.split("\n")
    spans: list[LineSpan] = []
    path, start = "", 0
    for i, line in enumerate(lines):
        header = _DIFF_FILE.match(line)
        if header or _HUNK.match(line):
            if i > start and any(lines[j].strip() for j in range(start, i)):
                spans.append(LineSpan(start, i - 1, f"file {path}" if path else ""))
            if header:
                path = header.group(2)
            elif line.startswith("@@") and i > 0 and lines[i - 1].startswith("+++ ") and spans and \
                    spans[-1].last == i - 1:
                start = spans.pop().first  # the header goes with the file's first hunk
                continue
            start = i
        elif line.startswith("+++ ") and not path:
            path = line[4:].split("\t")[0].removeprefix("b/")
    if start < len(lines) and any(lines[j].strip() for j in range(start, len(lines))):
        spans.append(LineSpan(start, len(lines) - 1, f"file {path}" if path else ""))
    return spans
