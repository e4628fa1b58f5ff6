"""A cut's chunks as the code ranker's units, so a file read and a grep are ranked by the same rule as a search.

A source file's chunk is a unit of that file named by its definition path (`class URLValidator > def __call__` ->
`URLValidator.__call__`); a grep line is a unit of the file it names, named by what it defines (`def ones(` ->
`ones`), so the definition of a name the request writes ranks first among that name's matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .query import read_code_query
from .ranker import SIGNALS, WEIGHTS, RepoRanking, Weights, combine, signals
from .units import CodeUnit, kind_of

__all__ = ["DEFINING", "context_unit", "definition_boost", "file_boost", "line_unit", "rank_units"]

# a line that defines a name, in the languages the code kind reads
DEFINING = re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?"
                      r"(?:def|class|function|func|fn|struct|interface|enum|trait|type|module)\s+"
                      r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")


def context_unit(path: str, context: str, text: str, first: int, last: int) -> CodeUnit:
    """A source file's chunk: its definition path made a qualified name, module code where it has none."""
    labels = [label for label in context.split(" > ") if label]
    if not labels:
        return CodeUnit(path, "", "module", first, last, text)
    names = [label.rsplit(" ", 1)[-1] for label in labels]
    kinds: list[str | None] = [None]
    for label in labels:  # each label's kind under its parent's, as the repository index names them
        kinds.append(kind_of(label.split(" ", 1)[0], kinds[-1]))
    kind = kinds[-1] or "function"
    return CodeUnit(path, ".".join(names), kind, first, last, text)


def line_unit(path: str, line: str, number: int) -> CodeUnit:
    """A grep line of `path` at its line `number`: the name it defines, if it defines one."""
    defined = DEFINING.match(line)
    if defined is None:
        return CodeUnit(path, "", "module", number, number, line)
    return CodeUnit(path, defined.group(1), "function", number, number, line)


def rank_units(query: str, units: Sequence[CodeUnit], lexical: np.ndarray, *, one_file: bool = False,
               boost: np.ndarray | None = None, weights: Weights = WEIGHTS) -> np.ndarray:
    """The code ranker's score of each unit from its BM25 score, kept on BM25's scale (a chunk the request names
    counts as much more as the ranker says, relative to the best lexical match). `one_file`: the units are one
    file's, so naming the file tells none of them apart. `boost`: what an indexed repository adds to each
    (`file_boost`, `definition_boost`)."""
    if not len(units):
        return lexical
    top = float(lexical.max()) if len(lexical) else 0.0
    read = read_code_query(query)
    rows = signals(read, units, lexical)
    if one_file:
        rows[:, SIGNALS.index("path")] = 0.0
    scores = combine(rows, units, weights, read)
    if boost is not None:
        scores = scores + boost
    return np.asarray(scores * (top if top > 0 else 1.0), dtype=np.float64)


def file_boost(units: Sequence[CodeUnit], repo: RepoRanking | None, weights: Weights = WEIGHTS) -> np.ndarray | None:
    """A grep's lines: the `repo` weight times the share of each line's file in the repository's ranking."""
    if repo is None or not weights.repo or not units:
        return None
    ranked = repo.files(sorted({u.path for u in units}))
    return weights.repo * np.fromiter((ranked.get(u.path, 0.0) for u in units), dtype=np.float64, count=len(units))


def definition_boost(units: Sequence[CodeUnit], text: str, repo: RepoRanking | None,
                     weights: Weights = WEIGHTS) -> np.ndarray | None:
    """A source file's chunks (`units`, of the read whose text is `text`): the `definition` weight times the
    place in the repository's ranking of the innermost of its definitions holding each chunk's first line."""
    if repo is None or not weights.definition or not units or not units[0].path:
        return None
    spans = sorted(repo.units(units[0].path, text), key=lambda span: span[1] - span[0])
    if not spans:
        return None
    shares = [next((share for first, last, share in spans if first <= u.start_line <= last), 0.0) for u in units]
    return weights.definition * np.asarray(shares, dtype=np.float64)
