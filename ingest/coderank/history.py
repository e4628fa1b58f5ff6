"""The repository's own history as a signal: the past commits whose messages read most like the request, and the
files they changed.

A fix often lands where earlier fixes of the same thing did: an issue about `become` with `su` meets the commits
that said so, and those commits name their files. The messages are indexed with the same BM25 as the code
(`UnitIndex`, `code_terms`); the request's best COMMITS commits each share their score among the files they
changed, and a file's share is its sum over them, scaled to the best file's (1). Each word of the request counts
once: a message is a line or two, and the words an issue repeats about its own code (which the code's BM25 counts
more, `K3`) matched commits by their repetition (on dev, file Acc@1 0.416 against 0.442 with each word once).
Chosen on the localization dev split (python -m bench.localize_tune --history; see bench/README.md).

Only a request that describes a problem at length (MIN_TERMS distinct words or more: an issue, a bug report, a
traceback) is matched against the history. A search's few words meet commits by chance: on 36 short searches in six
languages (at most 10 distinct words each; every dev issue has 33 or more) the signal moved ranks both ways, one to
30th from 2nd.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..analyzers import code_terms
from .lexical import UnitIndex

__all__ = ["COMMITS", "HISTORY_DEPTH", "MIN_TERMS", "Commit", "CommitIndex"]

HISTORY_DEPTH = 5000  # the newest commits (merges left out) read from a repository's history
COMMITS = 10  # of them, the request's best, whose files share their scores
MIN_TERMS = 20  # distinct words a request needs for the history to speak (see above)


@dataclass(frozen=True)
class Commit:
    message: str
    files: tuple[str, ...]  # the paths it changed, as the repository's index names them


class CommitIndex:
    """The messages of a repository's commits under BM25, each with the files it changed."""

    def __init__(self, commits: Iterable[Commit]) -> None:
        kept = [c for c in commits if c.files and c.message.strip()]
        self._files = [c.files for c in kept]
        self._lexical = UnitIndex()
        self._lexical.add(Counter(code_terms(c.message)) for c in kept)

    def __len__(self) -> int:
        return len(self._files)

    def shares(self, terms: Iterable[str]) -> Mapping[str, float]:
        """Each file the request's best commits changed: its share of the best file's score (0 to 1]; none for a
        request of fewer than MIN_TERMS distinct words."""
        asked = set(terms)
        if not self._files or len(asked) < MIN_TERMS:
            return {}
        scores = self._lexical.scores(asked)[: len(self._files)]
        best = sorted(np.flatnonzero(scores > 0), key=lambda i: (-scores[i], i))[:COMMITS]
        found: dict[str, float] = {}
        for i in best:
            share = float(scores[i]) / len(self._files[i])  # a commit of many files says little of each
            for path in self._files[i]:
                found[path] = found.get(path, 0.0) + share
        top = max(found.values(), default=0.0)
        return {path: value / top for path, value in sorted(found.items())} if top > 0 else {}
