"""BM25 over CJK-aware terms: words for alphabetic scripts, character bigrams for Chinese/Japanese/Korean.

Whitespace splitting finds no words in Chinese; character bigrams are the standard CJK unit (Lucene's
CJKAnalyzer) and need no dictionary. A CJK run of one character is kept as a unigram. Code has its own
analyzer (`code_terms`): an identifier is a term whole and split at underscores and case changes, so
`get_vars`, `getVars` and "get the vars" all meet.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .store import Sparse

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)  # CJK runs apart from digits and letters
_CJK_RUN = re.compile(rf"[{_CJK}]")
_STOPWORDS_TEXT = (
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "what which who whom whose when where why how did does do"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def terms(text: str) -> list[str]:
    out: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK_RUN.match(token):
            out.extend([token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)])
        elif token not in _STOPWORDS:
            out.append(token)
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CASE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def code_terms(text: str) -> list[str]:
    """Terms of code or of a request about code: the prose terms, plus each compound identifier whole and
    its parts at case changes (`URLValidator`: urlvalidator, url, validator; `get_vars`: get_vars)."""
    out = terms(text)
    for identifier in _IDENTIFIER.findall(text):
        core = identifier.strip("_")
        parts = [p.lower() for piece in core.split("_") for p in _CASE_PART.findall(piece)]
        if len(parts) > 1:
            out.append(identifier.lower())
            out.extend(p for p in parts if p not in _STOPWORDS and any(c.isupper() for c in core))
    return out


Analyzer = Callable[[str], list[str]]


@dataclass(frozen=True)
class Bm25Index:
    """Okapi BM25 with an inverted index: scoring touches only the postings of the query's terms."""

    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (document ids, term frequencies)
    lengths: np.ndarray
    k1: float = 1.2
    b: float = 0.75
    analyzer: Analyzer = field(default=terms)

    @classmethod
    def build(cls, texts: Sequence[str], analyzer: Analyzer = terms) -> Bm25Index:
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
        return cls(postings, lengths, analyzer=analyzer)

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
        for term in sorted(set(self.analyzer(query))):  # sorted: the same float sums in the same order every time
            posting = self.postings.get(term)
            if posting is None:
                continue
            docs, tf = posting
            idf = self._idf(n, len(docs))
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
