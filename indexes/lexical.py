"""BM25 over CJK-aware terms: words for alphabetic scripts, character bigrams for Chinese/Japanese/Korean.

Whitespace splitting finds no words in Chinese; character bigrams are the standard CJK unit (Lucene's
CJKAnalyzer) and need no dictionary. A CJK run of one character is kept as a unigram.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_]+", re.UNICODE)
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


@dataclass(frozen=True)
class Bm25Index:
    """Okapi BM25 over a small corpus (one source's chunks), held as term counts per chunk."""

    counts: tuple[Counter[str], ...]
    lengths: np.ndarray
    doc_freq: Counter[str]
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(cls, texts: Sequence[str]) -> Bm25Index:
        counts = tuple(Counter(terms(t)) for t in texts)
        doc_freq: Counter[str] = Counter()
        for c in counts:
            doc_freq.update(c.keys())
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        return cls(counts, lengths, doc_freq)

    def scores(self, query: str) -> np.ndarray:
        n = len(self.counts)
        out = np.zeros(n, dtype=np.float64)
        if n == 0:
            return out
        avg = float(self.lengths.mean()) or 1.0
        norm = self.k1 * (1 - self.b + self.b * self.lengths / avg)
        for term in set(terms(query)):
            df = self.doc_freq.get(term, 0)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = np.array([c.get(term, 0) for c in self.counts], dtype=np.float64)
            out += idf * tf * (self.k1 + 1) / (tf + norm)
        return out
