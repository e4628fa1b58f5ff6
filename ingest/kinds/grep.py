"""grep and ripgrep output: `path:line:text` lines (grep -rn, git grep -n, rg -n), or `line:text` lines of one file
(grep -n FILE, rg --heading under each path line). Each line is a chunk, shown as the output's own lines.

The view: the output's single lines, best first, within the budget as the agent receives them. Each line is scored
by BM25 over identifier-aware terms (analyzers.code_terms) against the request; a file's lines after its best are
worth less and less (SPREAD; less so where an indexed repository ranks the files, SPREAD_RANKED), so the budget
reaches more files (the file the fix edits is often not the one whose lines score best). Lines are taken best first
while they fit: a line next to one already taken (of the same file) joins its run and costs its own tokens, a line on
its own starts a new snippet and costs a separator too (and a heading where its lines do not name their file), as
ctxsieve_client.rendering renders each snippet. Each run of adjacent lines is one snippet, so what is shown keeps the
output's order and line numbers. No dense stage: on the dev set it
did not help single lines (`python -m bench.grep`; figures in bench/results/grep.txt).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ctxsieve_client.rendering import SEPARATOR, View, snippet_heading

from ..coderank.chunks import file_boost, line_unit, rank_units
from ..coderank.lexical import K3
from ..coderank.ranker import RepoRanking
from ..coderank.units import CodeUnit
from ..lines import LineSpan, line_chunks
from ..tokens import Tokenizer
from .base import ByLines, Chunk, Cutting, Leaf, LineSpanOf, Piece

_GREP_LINE = re.compile(r"^([^\s:][^:\n]*?)[:-](\d+)[:-]")
_GREP_MATCH = re.compile(r"^([^\s:][^:\n]*?):(\d+):")  # path:N:text (a match); path-N-text is a context line
_NUMBERED = re.compile(r"^(\d+)[:-]")  # N:text of one file (grep -n FILE, rg --heading under its path line)
_PATH = re.compile(r"^[^\s:]*[/.][^\s:]*$")  # rg --heading's line naming the file below


def looks_like_grep(text: str) -> bool:
    """Most lines are `path:line:text` (or a context line `path-line-text`), or `line:text` of one file with the
    numbers rising (grep -n of a file; rg --heading, each file's lines under its path)."""
    lines = [line for line in text[:100_000].split("\n") if line.strip() and line != "--"]
    if len(lines) < 5:
        return False
    return sum(bool(_GREP_LINE.match(line)) for line in lines) >= 0.8 * len(lines) or _numbered(lines)


def _numbered(lines: list[str]) -> bool:
    """`N:text` lines, rising between path lines (nothing else), their text rarely a number (not `10:30 ...`)."""
    numbers, last, digits = 0, 0, 0
    for line in lines:
        match = _NUMBERED.match(line)
        if match is None:
            if not _PATH.match(line):
                return False
            last = 0  # a path line: the next file's numbers start again
            continue
        if int(match.group(1)) <= last:
            return False
        last = int(match.group(1))
        numbers += 1
        digits += line[match.end() : match.end() + 1].isdigit()
    return numbers >= 0.5 * len(lines) and digits <= 0.2 * numbers


def grep_file(line: str) -> str | None:
    """The file a `path:N:text` (or context `path-N-text`) line names, else None (`N:text`, `N:M:text`)."""
    match = _GREP_MATCH.match(line) or _GREP_LINE.match(line)
    return match.group(1) if match and not match.group(1).isdigit() else None


def grep_spans(text: str) -> list[LineSpan]:
    """A span per line (a separator `--` and a blank line are none): lines are ranked one by one. A line that names
    its file needs no context; a line of rg --heading is named by the path line above it."""
    lines = text.split("\n")
    spans: list[LineSpan] = []
    heading = ""
    for i, line in enumerate(lines):
        if not line.strip() or line == "--":
            heading = "" if not line.strip() else heading
            continue
        if grep_file(line) is not None:
            spans.append(LineSpan(i, i, ""))
        elif _NUMBERED.match(line):
            spans.append(LineSpan(i, i, f"file {heading}" if heading else ""))
        else:
            heading = line if _PATH.match(line) else heading  # rg --heading's path line names the lines below
            spans.append(LineSpan(i, i, ""))
    return spans


class Grep(ByLines):
    name = "grep"
    shown_as = View(by_lines=True, headed=False)  # `path:N:` lines name themselves
    dense = False
    repeated = K3  # the code ranker's: a repository's search weighs the words a request repeats alike

    def detect(self, text: str) -> bool:
        return looks_like_grep(text)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del title, leaves
        text = view[start:end]
        return line_chunks(text, start, grep_spans(text), how.tokenizer, how.line_target)

    def select(self, view: str, chunks: Sequence[Chunk], scores: np.ndarray, tokenizer: Tokenizer,
               line_span: LineSpanOf, budget: int, k: int) -> list[tuple[Chunk, float]] | None:
        return grep_runs(view, chunks, scores, tokenizer, line_span, budget, k)

    def rescore(self, query: str, view: str, chunks: Sequence[Chunk], lexical: np.ndarray, path: str | None,
                line_span: LineSpanOf, repo: RepoRanking | None = None) -> np.ndarray:
        """Each line as a unit of the file it names, scored by the code ranker (coderank.chunks), with the ranking
        of its file by the indexed repository that holds the output's files (`repo`), if one does."""
        del path, line_span
        units = [_line_unit(c, view) for c in chunks]
        boost = file_boost(units, repo)
        ranked = boost is not None and bool(np.any(boost > 0))  # the repository knows which of its files matter
        return spread(rank_units(query, units, lexical, boost=boost), [u.path for u in units],
                      SPREAD_RANKED if ranked else SPREAD)


def _line_unit(chunk: Chunk, view: str) -> CodeUnit:
    text = chunk.text(view)
    match = _GREP_MATCH.match(text) or _GREP_LINE.match(text)
    if match is not None and not match.group(1).isdigit():
        return line_unit(match.group(1).removeprefix("./"), text[match.end():], int(match.group(2)))
    numbered = _NUMBERED.match(text)
    number = int(numbered.group(1)) if numbered else 0
    return line_unit(chunk.context.removeprefix("file "), text[numbered.end():] if numbered else text, number)


# a file's n-th best line (from 0) counts 1 / (1 + SPREAD * n) of its score: with no index of the repository, the
# budget reaches more files (the file a fix edits is often not the one whose lines score best); where the indexed
# repository ranks the output's files, the files it puts first keep more of their lines. Chosen on bench.grep's dev
# split (0.1 / 0.3 / 1.0 / 3.0 without an index: edited file 0.941 / 0.958 / 0.983 / 0.983, a line near an edit
# 0.697 / 0.697 / 0.697 / 0.672; with one, 1.0 against 0.1: 0.992 against 0.966, 0.697 against 0.739)
SPREAD, SPREAD_RANKED = 1.0, 0.1
ROUNDS, MIN_LEFT = 3, 8  # the choice is made again with what the rendered runs leave of the budget, while it is some


def heading(first: int, last: int, context: str) -> str:
    """A grep snippet's heading as the surfaces render it (what its tokens are counted on): none where its lines name
    their own file and line (no context), else its line range and file."""
    return snippet_heading(first, last, context, Grep.shown_as)


@dataclass(frozen=True)
class GrepLines:
    """Per line (chunk) of the output: its score, the file it belongs to, its tokens, and those of a run it starts."""

    scores: np.ndarray
    files: Sequence[str]
    tokens: Sequence[int]
    run_tokens: Sequence[int]


def spread(scores: np.ndarray, files: Sequence[str], step: float = SPREAD) -> np.ndarray:
    """Each line's score divided by 1 + step * (its rank among its file's lines, best first)."""
    out = np.asarray(scores, dtype=np.float64).copy()
    by_file: dict[str, list[int]] = {}
    for i, name in enumerate(files):
        by_file.setdefault(name, []).append(i)
    for found in by_file.values():
        for rank, i in enumerate(sorted(found, key=lambda i: (-scores[i], i))):
            out[i] = scores[i] / (1 + step * rank)
    return out


def choose_lines(lines: GrepLines, budget: int, most_runs: int) -> list[int]:
    """The lines best first (those the request does not match in the output's order), while they fit in `budget`
    tokens: each costs its tokens plus its run's (a heading and a separator) when it starts a run (no neighbour of
    its file taken), less that when it joins two; at most `most_runs` runs. In the output's order."""
    chosen: set[int] = set()
    used, runs = 0, 0
    for i in sorted(range(len(lines.scores)), key=lambda i: (-round(float(lines.scores[i]), 9), i)):
        joins = sum(j in chosen and lines.files[j] == lines.files[i] for j in (i - 1, i + 1))
        cost = lines.tokens[i] + (1 - joins) * lines.run_tokens[i]
        if used + cost > budget or runs + 1 - joins > most_runs:
            continue
        chosen.add(i)
        used, runs = used + cost, runs + 1 - joins
    return sorted(chosen)


def runs_of(chosen: Sequence[int], files: Sequence[str]) -> list[tuple[int, int]]:
    """Runs of adjacent indices of one file, as (first, last), in order."""
    runs: list[tuple[int, int]] = []
    for i in chosen:
        if runs and runs[-1][1] == i - 1 and files[i - 1] == files[i]:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def fit(chosen: list[int], lines: GrepLines, budget: int, measure: Callable[[list[tuple[int, int]]], int]
        ) -> list[tuple[int, int]]:
    """The runs of `chosen`, the lowest-scored line dropped while the runs as rendered (`measure`) are over
    `budget`: a run's text can count other than the sum of its lines."""
    kept = list(chosen)
    while kept:
        runs = runs_of(kept, lines.files)
        if measure(runs) <= budget:
            return runs
        kept.remove(min(kept, key=lambda i: (lines.scores[i], -i)))
    return []


def grep_runs(view: str, chunks: Sequence[Chunk], scores: np.ndarray, tokenizer: Tokenizer,
              line_span: Callable[[int, int], tuple[int, int]], budget: int, most_runs: int
              ) -> list[tuple[Chunk, float]]:
    """The snippets of a grep output's view for a request's lexical `scores` of its line chunks: each run of chosen
    lines as one chunk (whole lines, in the view's order), with its best line's share of the best score."""
    files = [grep_file(c.text(view)) or c.context.removeprefix("file ") for c in chunks]
    separator = tokenizer.count(SEPARATOR)
    starts = [tokenizer.count(heading(*line_span(c.start, c.end), c.context)) + separator for c in chunks]
    lines = GrepLines(scores, files, [c.tokens + 1 for c in chunks], starts)  # (`rescore` spread them)

    def merged(run: tuple[int, int]) -> Chunk:
        first, last = chunks[run[0]], chunks[run[1]]
        return Chunk(first.index, first.start, last.end, tokenizer.count(view[first.start : last.end]),
                     first.document, first.context)

    def measure(runs: list[tuple[int, int]]) -> int:
        shown = [heading(*line_span(c.start, c.end), c.context) + c.text(view) for c in map(merged, runs)]
        return tokenizer.count(SEPARATOR.join(shown))

    chosen, target = choose_lines(lines, budget, most_runs), budget
    for _ in range(ROUNDS):  # joined lines count less than apart (a newline and indentation merge): use what is left
        left = budget - measure(runs_of(chosen, files))
        if left < MIN_LEFT:
            break
        target += left
        chosen = choose_lines(lines, target, most_runs)
    top = float(lines.scores.max()) if len(chunks) and lines.scores.max() > 0 else 1.0
    return [(merged(run), float(lines.scores[run[0] : run[1] + 1].max()) / top)
            for run in fit(chosen, lines, budget, measure)]
