"""Unified diffs: one chunk per hunk, the file's header lines going with its first hunk, each named by its file.

A request puts first the hunks of the files it names (`priorities`), all of a file's hunks together, so the budget
goes to one file's whole change before it spreads across the tests, changelog entries and stubs that repeat the same
identifiers. A file is named when the request writes its path, its file name or its stem as a word (`more.py`,
`README`, "the options docs"), or the name of a definition its hunks touch (the `@@ ... @@ def name` heading's, or a
`def`/`class` line in a hunk) as code or as a word of four
characters or more. Tests, changelogs and `.pyi` stubs named only through a definition go after the source files
named; named by their own path or name, they count as source. The files named go first in order: a file whose path or
file name the request writes, then the ones named most ways, then as the diff lists them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import numpy as np

from ..lines import LineSpan, line_chunks
from ..request import read_request
from .base import ByLines, Chunk, Cutting, Leaf, LineSpanOf, Piece

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)")
_DIFF_START = re.compile(r"^diff (?:--git|-\S+) ")  # any file's header line (`--no-prefix`, `diff -ruN a b`)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_DEFINES = re.compile(r"\b(?:def|class|function|func|fn)\s+([A-Za-z_$][\w$]*)")
_WORD = re.compile(r"[A-Za-z_][\w$]*")
_FILE_PREFIX = "file "
MIN_WORD = 4  # a definition's name written as a plain word counts from this many characters (`get` does not)
MIN_STEM = 3  # a file's stem written as a word counts from this many characters (`dev.txt`: dev)
# tiers of a named file: source (or a file named by its own path or name), and a test, changelog or stub named only
# through a definition it touches
SOURCE, SECONDARY = 2, 1
_CHANGELOG = re.compile(r"^(changes|changelog|history|news|releases?|whatsnew)\b", re.I)


class Diff(ByLines):
    name = "diff"

    def detect(self, text: str) -> bool:
        return looks_like_diff(text)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del title, leaves
        text = view[start:end]
        return line_chunks(text, start, diff_spans(text), how.tokenizer, how.line_target)

    def priorities(self, query: str, view: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf,
                   budget: int | None, whole: bool = True) -> np.ndarray | None:
        del path, line_span, budget, whole
        return named_files(query, view, chunks)


def looks_like_diff(text: str) -> bool:
    head = text[:20000]
    return head.startswith("diff --git ") or bool(re.search(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d", head, re.M))


def diff_spans(text: str) -> list[LineSpan]:
    """A span per hunk, named by its file; a file's header lines go with its first hunk."""
    lines = text.split("\n")
    spans: list[LineSpan] = []
    path, start = "", 0

    def close(last: int) -> None:
        if last >= start and any(lines[j].strip() for j in range(start, last + 1)):
            spans.append(LineSpan(start, last, f"{_FILE_PREFIX}{path}" if path else ""))

    in_header = False  # between a file's header line and its first hunk
    for i, line in enumerate(lines):
        header = _DIFF_FILE.match(line)
        started = header is not None or bool(_DIFF_START.match(line))
        plain = not started and not in_header and line.startswith("--- ") and i + 2 < len(lines) \
            and lines[i + 1].startswith("+++ ") and bool(_HUNK.match(lines[i + 2]))
        if started or plain:
            close(i - 1)
            path = header.group(2) if header else _new_path(lines, i, line)
            start, in_header = i, True
        elif _HUNK.match(line):
            if not in_header:  # the header goes with the file's first hunk
                close(i - 1)
                start = i
            in_header = False
    close(len(lines) - 1)
    return spans


def _new_path(lines: list[str], i: int, line: str) -> str:
    """The path a file's header gives after `+++ ` (before its first hunk), else its header line's last word."""
    for j in range(i, min(i + 8, len(lines))):
        if lines[j].startswith("+++ "):
            return lines[j][4:].split("\t")[0].removeprefix("b/")
        if j > i and (_HUNK.match(lines[j]) or _DIFF_START.match(lines[j])):
            break
    return line.split()[-1]


def _touched(lines: list[str]) -> list[str]:
    """The definitions a hunk touches: its `@@` heading's and the `def`/`class` lines in it."""
    names: dict[str, None] = {}
    for line in lines:
        if _HUNK.match(line):
            names.update(dict.fromkeys(_DEFINES.findall(line[line.index("@@", 2) + 2:])))
        elif line[:1] in ("+", "-", " ") and not line.startswith(("+++ ", "--- ")):
            names.update(dict.fromkeys(_DEFINES.findall(line[1:])))
    return list(names)


@dataclass
class _File:
    path: str
    first: int  # its first chunk
    chunks: list[int] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


def named_files(query: str, view: str, chunks: Sequence[Chunk]) -> np.ndarray | None:
    """Per chunk, how far first its file goes (0: not named; each named file's chunks one step above the next named
    file's, source files above tests, changelogs and stubs named only through a definition), None when the request
    names no file of the diff."""
    files: dict[str, _File] = {}
    for i, chunk in enumerate(chunks):
        if not chunk.context.startswith(_FILE_PREFIX):
            continue
        found = files.setdefault(chunk.context, _File(chunk.context.removeprefix(_FILE_PREFIX), i))
        found.chunks.append(i)
        found.names.update(_touched(chunk.text(view).split("\n")))
    if not files:
        return None
    code = read_request(query).names
    words = set(_WORD.findall(query))
    lowered = {w.lower().rstrip(".-") for w in re.findall(r"[\w.$/-]+", query)} | {w.lower() for w in words}
    ranked: list[tuple[int, int, int, int, _File]] = []
    for found in files.values():
        own = _named_itself(found.path, query, lowered)
        hits = {n for n in found.names if n in code or len(n) >= MIN_WORD and n in words}
        if not own and not hits:
            continue
        tier = SOURCE if own or not _secondary(found.path) else SECONDARY
        ranked.append((tier, own // 2, min(own, 1) + len(hits), -found.first, found))
    if not ranked:
        return None
    boost = np.zeros(len(chunks))
    ranked.sort(key=lambda r: r[:4], reverse=True)
    for place, (*_, found) in enumerate(ranked):
        boost[found.chunks] = float(len(ranked) - place)  # a step of 1 or more: fused scores lie in [0, 1]
    return boost


def _named_itself(path: str, query: str, lowered: set[str]) -> int:
    """2 when the request writes the file's path (or its end) or its file name, 1 its stem as a word, else 0."""
    pure = PurePosixPath(path)
    name = pure.name.lower()
    if name in lowered or any(w.endswith("/" + name) for w in lowered) \
            or re.search(rf"(?<![\w/.-]){re.escape(path)}(?![\w/-])", query, re.I):
        return 2
    stem = pure.stem.lower()
    return int(len(stem.strip("_")) >= MIN_STEM and stem in lowered)


def _secondary(path: str) -> bool:
    """A test, a changelog or a type stub: it repeats the names the source defines."""
    pure = PurePosixPath(path.lower())
    return pure.suffix == ".pyi" or bool(_CHANGELOG.match(pure.name)) or any(
        part in ("test", "tests", "testing", "__tests__", "spec", "changes", "changelog.d") for part in pure.parts[:-1]
    ) or pure.stem.startswith("test_") or pure.stem.endswith(("_test", "_tests", ".test", ".spec", "_spec"))
