"""What every content kind provides, and the parts kinds hand each other.

A kind is the answer to "what is this output, and how is it cut and shown": it recognises its text (`detect`),
turns it into the view chunks point into (`view`), cuts the view (`chunk`), names the terms BM25 indexes
(`terms`), sets the budget a request that gives none gets (`budget`), says which chunks a request puts first
(`priorities`) and which are never cut away (`must_show`), and may choose its chunks itself (`select`: grep's
single lines). `Prose` holds the defaults every kind starts from; a kind overrides only what it does its own way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

__all__ = ["DEFAULT_K", "LINED_K", "ByLines", "Chunk", "Cutting", "Failure", "Kind", "Leaf", "Piece", "Prose",
           "Verdict", "Viewed", "lines_budget"]

import numpy as np

from ctxsieve_client.rendering import View

from ..analyzers import code_terms, terms
from ..coderank.ranker import RepoRanking
from ..packing import Block, Piece, pack, paragraphs
from ..tokens import Tokenizer

LineSpanOf = Callable[[int, int], "tuple[int, int]"]  # a character span of the view -> its 1-based lines

DEFAULT_K, LINED_K = 5, 50  # chunks when a request leaves k out: any output; a kind read by lines (its budget binds)


@dataclass(frozen=True)
class Leaf:
    """One flattened JSON value: `path: value` at [start, end) of the view (the value may span lines)."""

    start: int
    end: int
    path: str


@dataclass(frozen=True)
class Failure:
    """One failure of a test or build log, as its kind reads it: what failed, where, and the line that says why."""

    test: str  # the failing test's id (pytest's node id), or "" (a compiler error, a traceback)
    where: str  # `path:line` it failed at, or ""
    message: str  # the assertion or error line, verbatim (pytest's `E` marker and indent left off)
    line_start: int  # the 1-based lines of the log it spans (its traceback, or its one line)
    line_end: int


@dataclass(frozen=True)
class Verdict:
    """A test or build log's failures, its result lines and where it lists every failure one a line."""

    failures: list[Failure]
    outcome: list[tuple[int, str]]  # the run's result lines with their 1-based numbers (`4 failed, 900 passed ...`)
    listing: tuple[int, int] | None  # the lines listing each failure on one (pytest's short test summary), if any


class Viewed(NamedTuple):
    """A document's view text, the kind that made it (JSON that does not parse is text), a title it holds."""

    text: str
    kind: str
    title: str | None = None
    leaves: tuple[Leaf, ...] = ()


@dataclass(frozen=True)
class Cutting:
    """How a view is cut: the tokenizer, prose's chunk size, whole-line kinds' chunk size, the file the call named."""

    tokenizer: Tokenizer
    target: int
    line_target: int
    path: str | None = None


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int
    tokens: int
    document: int
    context: str  # heading path, JSON record, definition path or document title: what the span is part of
    role: str = ""  # the part it plays in its output, as its kind names it (a log's failures and summary)

    def text(self, view: str) -> str:
        return view[self.start : self.end]


class Kind(Protocol):
    name: str
    shown_as: View  # how its snippets are shown (a response's `view`); by lines: cut into whole lines, shown
    # with their line numbers, a chunk's definition completed
    map_share: int  # the share (1/N) of a view's budget given to a map of the file's definitions; 0: none
    dense: bool  # ranked with the embedding model too (else on its own terms only)
    blank_edges: bool  # a snippet is shown with the blank lines either side of it, where the budget leaves room
    repeated: float  # BM25's k3: how much more a word the request repeats counts (0: each word once)

    def detect(self, text: str) -> bool: ...
    def view(self, text: str) -> Viewed: ...
    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]: ...
    def terms(self, text: str) -> list[str]: ...
    def budget(self, view: str, view_tokens: int) -> int | None: ...
    def default_k(self, max_tokens: int | None) -> int: ...
    def cost(self, tokens: int, first: int, last: int) -> int: ...
    def priorities(self, query: str, view: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf,
                   budget: int | None, whole: bool = True) -> np.ndarray | None: ...
    def must_show(self, chunks: Sequence[Chunk]) -> list[int]: ...
    def rescore(self, query: str, view: str, chunks: Sequence[Chunk], lexical: np.ndarray, path: str | None,
                line_span: LineSpanOf, repo: RepoRanking | None = None) -> np.ndarray: ...
    def map_lines(self, view: str, path: str | None) -> list[int]: ...
    # per line, the header line of the definition a snippet starting there is a later part of (code's), else None
    def heads(self, view: str, path: str | None) -> Callable[[int], int | None]: ...
    def verdict(self, view: str) -> Verdict | None: ...
    def select(self, view: str, chunks: Sequence[Chunk], scores: np.ndarray, tokenizer: Tokenizer,
               line_span: LineSpanOf, budget: int, k: int) -> list[tuple[Chunk, float]] | None: ...


def _no_head(line: int) -> None:  # noqa: ARG001
    return None


class Prose:
    """The defaults: the text is its own view, ranked dense and lexical alike, no chunk put first, bound by k."""

    name = "text"
    shown_as = View()
    map_share = 0
    dense = True
    blank_edges = False
    repeated = 0.0

    def detect(self, text: str) -> bool:  # noqa: ARG002
        return True

    def view(self, text: str) -> Viewed:
        return Viewed(text, self.name)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del leaves
        blocks = [Block(s, e, title, False) for s, e in paragraphs(view, start, end)]
        return list(pack(view, blocks, how.tokenizer, how.target))

    def terms(self, text: str) -> list[str]:
        return terms(text)

    def budget(self, view: str, view_tokens: int) -> int | None:  # noqa: ARG002
        return None

    def default_k(self, max_tokens: int | None) -> int:  # noqa: ARG002
        return DEFAULT_K

    def cost(self, tokens: int, first: int, last: int) -> int:  # noqa: ARG002
        """What a chunk of `tokens` tokens on lines first..last costs as the agent is shown it."""
        return tokens

    def priorities(self, query: str, view: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf,
                   budget: int | None, whole: bool = True) -> np.ndarray | None:
        """What goes first, for this request, of a source's chunks (`whole`: its text runs to its file's end, not a
        window of it); None when nothing does."""
        del query, view, chunks, path, line_span, budget, whole
        return None

    def must_show(self, chunks: Sequence[Chunk]) -> list[int]:  # noqa: ARG002
        return []

    def rescore(self, query: str, view: str, chunks: Sequence[Chunk], lexical: np.ndarray, path: str | None,
                line_span: LineSpanOf, repo: RepoRanking | None = None) -> np.ndarray:
        """The chunks' first-stage scores from their BM25 scores: the same, but for code's kinds, which the code
        ranker scores (ctxsieve.ingest.coderank); `repo`, what an indexed repository holding the cut's files says."""
        del query, view, chunks, path, line_span, repo
        return lexical

    def map_lines(self, view: str, path: str | None) -> list[int]:  # noqa: ARG002
        return []

    def heads(self, view: str, path: str | None) -> Callable[[int], int | None]:  # noqa: ARG002
        return _no_head

    def verdict(self, view: str) -> Verdict | None:  # noqa: ARG002
        """A log's failures, in the order it prints them, and its result: none but a log has them."""
        return None

    def select(self, view: str, chunks: Sequence[Chunk], scores: np.ndarray, tokenizer: Tokenizer,
               line_span: LineSpanOf, budget: int, k: int) -> list[tuple[Chunk, float]] | None:
        del view, chunks, scores, tokenizer, line_span, budget, k
        return None


# The budget of a log, a diff or grep output when the request sets none: a third of the output, at least
# LINES_MIN_TOKENS, at most LINES_MAX_TOKENS (source code has its own: ingest/kinds/code.py).
LINES_SHARE, LINES_MIN_TOKENS, LINES_MAX_TOKENS = 3, 1500, 6000


def lines_budget(view_tokens: int) -> int:
    return max(LINES_MIN_TOKENS, min(view_tokens // LINES_SHARE, LINES_MAX_TOKENS))


class ByLines(Prose):
    """Kinds cut into whole lines (code, logs, diffs, grep): identifier-aware terms, a third of the output when no
    budget is given, and bound by that budget rather than by five chunks."""

    shown_as = View(by_lines=True)

    def terms(self, text: str) -> list[str]:
        return code_terms(text)

    def budget(self, view: str, view_tokens: int) -> int | None:  # noqa: ARG002
        return lines_budget(view_tokens)

    def default_k(self, max_tokens: int | None) -> int:  # noqa: ARG002
        return LINED_K
