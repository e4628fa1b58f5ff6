"""BM25 with an inverted index over the terms a kind's analyzer gives (ctxsieve.ingest.analyzers)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ctxsieve.ingest.analyzers import code_terms, terms
from ctxsieve.ingest.coderank.lexical import repeated

from .store import Sparse

__all__ = ["Analyzer", "Bm25Index", "code_terms", "sparse_document", "sparse_query", "term_id", "terms"]

Analyzer = Callable[[str], list[str]]


@dataclass(frozen=True)
class Bm25Index:
    """Okapi BM25 with an inverted index: scoring touches only the postings of the query's terms."""

    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (document ids, term frequencies)
    lengths: np.ndarray
    k1: float = 1.2
    b: float = 0.75
    analyzer: Analyzer = field(default=terms)
    k3: float = 0.0  # how much a word the query repeats counts (coderank.lexical.repeated); 0: each word once

    @classmethod
    def build(cls, texts: Sequence[str], analyzer: Analyzer = terms, k3: float = 0.0) -> Bm25Index:
        ids: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        lengths = np.zeros(len(texts), dtype=np.float64)
        for doc, text in enumerate(texts):
            counts = Counter(analyzer(text))
            lengths[doc] = sum(counts.values())
            for term, tf in counts.items():
                ids.setdefault(term, []).append(doc)
                freqs.setdefault(term, []).append(tf)
        postings = {t: (np.array(ids[t], dtype=np.int64), np.array(freqs[t], dtype=np.float64)) for t in ids}
        return cls(postings, lengths, analyzer=analyzer, k3=k3)

    @property
    def nbytes(self) -> int:
        """About what it holds: the arrays, plus each term's key and two array headers (~300 bytes)."""
        return int(self.lengths.nbytes) + sum(d.nbytes + f.nbytes + 300 for d, f in self.postings.values())

    def ceiling(self, query: str) -> float:
        """What a document holding every one of the query's indexed terms would score, at most: the sum of their
        IDF times (k1 + 1), the limit of BM25's saturation."""
        n = len(self.lengths)
        return sum(self._idf(n, len(self.postings[t][0])) * (self.k1 + 1)
                   for t in sorted(set(self.analyzer(query))) if t in self.postings)

    @staticmethod
    def _idf(n: int, containing: int) -> float:
        return math.log(1 + (n - containing + 0.5) / (containing + 0.5))

    def scores(self, query: str) -> np.ndarray:
        n = len(self.lengths)
        out = np.zeros(n, dtype=np.float64)
        if n == 0:
            return out
        avg = float(self.lengths.mean()) or 1.0
        norm = self.k1 * (1 - self.b + self.b * self.lengths / avg)
        asked = Counter(self.analyzer(query))
        for term in sorted(asked):  # sorted: the same float sums in the same order every time
            posting = self.postings.get(term)
            if posting is None:
                continue
            docs, tf = posting
            idf = self._idf(n, len(docs)) * repeated(asked[term], self.k3)
            out[docs] += idf * tf * (self.k1 + 1) / (tf + norm[docs])
        return out


# BM25 as engine sparse vectors: the document side carries the saturated term frequency, the engine applies
# IDF (its Modifier.Idf) over the collection at query time. Lengths are normalised against a fixed average,
# since a stored vector cannot follow a collection's changing mean: ~64 terms is a 96-token chunk.
K1, B, AVG_TERMS = 1.2, 0.75, 64.0


def term_id(term: str) -> int:
    """A stable 31-bit index per term (the same on every replica and across restarts)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big") & 0x7FFFFFFF


def sparse_document(text: str) -> Sparse:
    counts = Counter(term_id(t) for t in terms(text))
    norm = K1 * (1 - B + B * sum(counts.values()) / AVG_TERMS)
    ordered = sorted(counts.items())
    return Sparse(tuple(i for i, _ in ordered), tuple(tf * (K1 + 1) / (tf + norm) for _, tf in ordered))


def sparse_query(text: str) -> Sparse:
    ids = sorted({term_id(t) for t in terms(text)})
    return Sparse(tuple(ids), tuple(1.0 for _ in ids))
