"""The terms BM25 indexes: words for alphabetic scripts, character bigrams for Chinese/Japanese/Korean.

Whitespace splitting finds no words in Chinese; character bigrams are the standard CJK unit (Lucene's
CJKAnalyzer) and need no dictionary. A CJK run of one character is kept as a unigram. Code has its own
analyzer (`code_terms`): an identifier is a term whole and split at underscores and case changes, so
`get_vars`, `getVars` and "get the vars" all meet. Each content kind names its analyzer (ingest/kinds).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

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


def is_cjk(term: str) -> bool:
    """A term of Chinese, Japanese or Korean text (a character bigram, or a character alone)."""
    return bool(_CJK_RUN.match(term))


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CASE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def code_terms(text: str) -> list[str]:
    """Terms of code or of a request about code: the prose terms, plus each compound identifier whole and
    its parts at case changes (`URLValidator`: urlvalidator, url, validator; `get_vars`: get_vars)."""
    out = terms(text)
    for identifier in _IDENTIFIER.findall(text):
        out.extend(_identifier_terms(identifier))
    return out


@lru_cache(maxsize=1 << 16)  # a repository repeats its identifiers: split each once
def _identifier_terms(identifier: str) -> tuple[str, ...]:
    core = identifier.strip("_")
    parts = [p.lower() for piece in core.split("_") for p in _CASE_PART.findall(piece)]
    if len(parts) <= 1:
        return ()
    cased = any(c.isupper() for c in core)
    return (identifier.lower(), *(p for p in parts if cased and p not in _STOPWORDS))
