"""BM25 over code units with the repository's own term statistics, updated a file at a time.

A unit's bag of terms is its text's identifier-aware terms (analyzers.code_terms), plus its qualified name's and its
file path's terms NAME_WEIGHT and PATH_WEIGHT times over: a request names code by what it is called and where it
lives more than by the words inside it. Postings are kept per term as {unit: frequency} so that replacing a file
touches only its own units' terms; the arrays a query reads are built per term on first use after a change.

A short search's words are matched by their stems too (`scores(..., stems=True)`): "rendering" finds `render/`,
"streaming" `stream/JsonReader`. The words of a stem count as one term (their frequencies summed, one idf), so a
word with many forms in the code counts no more than one with one form.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import numpy as np
import snowballstemmer  # type: ignore[import-untyped]

from ..analyzers import code_terms
from .units import CodeUnit

__all__ = ["K3", "NAME_WEIGHT", "PATH_WEIGHT", "UnitIndex", "repeated", "stem", "stems_of", "unit_terms"]

NAME_WEIGHT, PATH_WEIGHT = 3, 1
K1, B = 1.2, 0.75
# A term the request repeats counts more, saturating (BM25's k3): an issue says what it is about again and again,
# and its boilerplate once. On the localization dev split (lexical rule) k3 0 / 1 / 4 / 8 / 32 gave file Acc@1
# 0.364 / 0.364 / 0.377 / 0.390 / 0.390, Acc@5 0.727 / 0.740 (all four), MRR 0.796 / 0.843 / 0.862 / 0.877 / 0.874,
# function Acc@10 0.364 / 0.416 / 0.416 / 0.403 / 0.403 (python -m bench.localize_tune --k3 0,1,4,8,32). An agent's
# short query repeats nothing: unchanged.
K3 = 4.0


def repeated(count: int, k3: float) -> float:
    """How much a word the query holds `count` times counts, saturating (BM25's k3); exactly 1 for a word it holds
    once, and for every word when k3 is 0 (each word once)."""
    return (k3 + 1) * count / (k3 + count) if k3 and count > 1 else 1.0


_STEMMERS = threading.local()  # a Snowball stemmer keeps state between calls: one per thread


@lru_cache(maxsize=1 << 17)
def stem(term: str) -> str:
    """A term's English stem (Snowball): `rendering`, `renderer` -> `render`."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(term))


# a word and the short form code writes it in (`parameters`: `params`, `configuration`: `config`); a short search's
# word matches the other's indexed forms too, as one term
ABBREVIATIONS = (("parameter", "param"), ("argument", "arg"), ("configuration", "config"), ("context", "ctx"),
                 ("request", "req"), ("response", "resp"), ("error", "err"), ("message", "msg"),
                 ("authentication", "auth"), ("authorization", "auth"), ("initialize", "init"),
                 ("environment", "env"), ("repository", "repo"), ("directory", "dir"), ("database", "db"),
                 ("string", "str"), ("number", "num"), ("length", "len"), ("value", "val"), ("variable", "var"),
                 ("function", "func"), ("function", "fn"), ("callback", "cb"), ("index", "idx"),
                 ("temporary", "tmp"), ("destination", "dst"), ("package", "pkg"), ("utility", "util"),
                 ("attribute", "attr"), ("property", "prop"), ("element", "elem"), ("object", "obj"),
                 ("address", "addr"), ("connection", "conn"), ("information", "info"), ("command", "cmd"),
                 ("execute", "exec"), ("certificate", "cert"), ("password", "passwd"), ("reference", "ref"),
                 ("middleware", "mw"), ("sequence", "seq"), ("previous", "prev"), ("statistics", "stats"),
                 ("synchronize", "sync"), ("asynchronous", "async"), ("allocate", "alloc"), ("buffer", "buf"))


# an English verb's irregular forms a question writes ("where is the middleware stack built"), which no stem meets:
# a short search's form meets the verb's indexed forms (`build`, `builds`, `building`), as a short form does (not a
# form that is a word of its own in code: `found`, `left`, `bound`, `set`)
IRREGULAR = {"built": "build", "sent": "send", "made": "make", "written": "write", "wrote": "write",
             "thrown": "throw", "threw": "throw", "chosen": "choose", "chose": "choose", "taken": "take",
             "took": "take", "given": "give", "gave": "give", "kept": "keep", "held": "hold", "began": "begin",
             "begun": "begin", "ran": "run", "got": "get", "gotten": "get", "hidden": "hide", "shown": "show",
             "known": "know", "knew": "know", "lost": "lose", "meant": "mean", "spent": "spend", "told": "tell",
             "broken": "break", "broke": "break", "forgot": "forget", "forgotten": "forget", "frozen": "freeze",
             "froze": "freeze", "paid": "pay", "said": "say", "sought": "seek",
             "caught": "catch", "brought": "bring", "understood": "understand", "thought": "think", "stuck": "stick",
             "hung": "hang", "drawn": "draw"}


@lru_cache(maxsize=1)
def _aliases() -> dict[str, frozenset[str]]:
    """Each stem -> the stems of its other forms (found on first use: no stemming at import)."""
    by: dict[str, set[str]] = {}
    for long, short in (*ABBREVIATIONS, *((verb, form) for form, verb in IRREGULAR.items())):
        by.setdefault(stem(long), set()).add(stem(short))
        by.setdefault(stem(short), set()).add(stem(long))
    return {key: frozenset(found) for key, found in by.items()}


def stems_of(bags: Sequence[Counter[str]]) -> dict[str, str]:
    """Each term of the bags -> its stem."""
    return {term: stem(term) for bag in bags for term in bag}


def unit_terms(unit: CodeUnit) -> Counter[str]:
    """The unit's weighted bag of terms (see the module's docstring)."""
    bag = Counter(code_terms(unit.text))
    for term in code_terms(unit.name.replace(".", " ")):
        bag[term] += NAME_WEIGHT
    for term in _path_terms(unit.path):
        bag[term] += PATH_WEIGHT
    return bag


@lru_cache(maxsize=1 << 14)  # every unit of a file has its path's terms
def _path_terms(path: str) -> tuple[str, ...]:
    return tuple(code_terms(path.replace("/", " ").replace(".", " ")))


class UnitIndex:
    """Units by integer id (ids are reused after a removal), with BM25 postings kept in step."""

    def __init__(self, k3: float = K3) -> None:
        self.k3 = k3
        self._lock = threading.Lock()
        self._postings: dict[str, dict[int, int]] = {}
        self._by_stem: dict[str, set[str]] = {}  # a stem -> the indexed terms that have it
        self._stem_of: dict[str, str] = {}  # an indexed term -> its stem (a removal stems nothing, under the lock)
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._bags: dict[int, Counter[str]] = {}
        self._lengths = np.zeros(0, dtype=np.float64)
        self._free: list[int] = []
        self._total_length = 0.0

    def __len__(self) -> int:
        return len(self._bags)

    def add(self, bags: Sequence[Counter[str]], stems: Mapping[str, str] | None = None) -> list[int]:
        """Index these bags; their ids, in order. Their terms' stems (`stems_of`) are found before any lock is
        taken: a search waits for no stemming."""
        stems = stems_of(bags) if stems is None else stems
        with self._lock:
            return [self._add_one(bag, stems) for bag in bags]

    def remove(self, ids: Sequence[int]) -> None:
        with self._lock:
            for unit in ids:
                bag = self._bags.pop(unit, None)
                if bag is None:
                    continue
                for term in bag:
                    posting = self._postings[term]
                    del posting[unit]
                    if not posting:
                        del self._postings[term]
                        self._forget_stem(term)
                    self._arrays.pop(term, None)
                self._total_length -= self._lengths[unit]
                self._lengths[unit] = 0.0
                self._free.append(unit)

    def scores(self, query_terms: Iterable[str], stems: bool = False) -> np.ndarray:
        """BM25 of every id slot (a free slot scores 0) against the query's terms, a repeated one counting more;
        with `stems`, each term as the indexed terms of its stem together."""
        with self._lock:
            size = len(self._lengths)
            out = np.zeros(size, dtype=np.float64)
            n = len(self._bags)
            if n == 0:
                return out
            norm = K1 * (1 - B + B * self._lengths / (self._total_length / n or 1.0))
            asked = Counter(query_terms)
            groups = self._stem_groups(asked) if stems else {term: (term,) for term in asked}
            for key in sorted(groups):  # sorted: the same float sums in the same order every time
                arrays = self._group_arrays(groups[key])
                if arrays is None:
                    continue
                docs, tf = arrays
                count = sum(asked[t] for t in groups[key] if t in asked) if stems else asked[key]
                weight = self._idf_of(len(docs)) * repeated(count, self.k3)
                out[docs] += weight * tf * (K1 + 1) / (tf + norm[docs])
            return out

    def _stem_groups(self, asked: Counter[str]) -> dict[str, tuple[str, ...]]:
        """The asked terms by stem, each with the indexed terms of its stem (sorted: the same sums every time)."""
        groups: dict[str, set[str]] = {}
        aliases = _aliases()
        for term in asked:
            key = stem(term)
            groups.setdefault(key, set()).update({term, *self._by_stem.get(key, ())})
            for alias in aliases.get(key, ()):
                groups[key].update(self._by_stem.get(alias, ()))
        return {key: tuple(sorted(terms)) for key, terms in groups.items()}

    def _group_arrays(self, terms: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        found = [a for t in terms if (a := self._posting_arrays(t)) is not None]
        if len(found) <= 1:
            return found[0] if found else None
        docs, inverse = np.unique(np.concatenate([d for d, _ in found]), return_inverse=True)
        return docs, np.bincount(inverse, weights=np.concatenate([f for _, f in found]), minlength=len(docs))

    def _idf_of(self, containing: int) -> float:
        n = len(self._bags)
        return math.log(1 + (n - containing + 0.5) / (containing + 0.5))

    def idf(self, term: str) -> float:
        return self._idf_of(len(self._postings.get(term, ())))

    def frequency(self, term: str) -> int:
        """In how many units the term occurs."""
        return len(self._postings.get(term, ()))

    def holds(self, term: str) -> bool:
        """Some unit holds the term, a term of its stem, or one of its other forms' (`_aliases`: `parameters` by
        `params`, `built` by `build`)."""
        key = stem(term)
        with self._lock:
            return bool(self._postings.get(term)) or any(self._postings.get(t) for k in (key, *_aliases().get(key, ()))
                                                         for t in self._by_stem.get(k, ()))

    def inside_a_name(self, word: str) -> bool:
        """Some unit's identifier holds the word across its parts (`querystring` in `SkipQueryString`, whose terms are
        `skip`, `query`, `string` and the whole): a scan of the terms, for the few words nothing else holds."""
        with self._lock:
            return any(word in term for term in self._postings if len(term) > len(word) and self._postings[term])

    def stem_frequency(self, term: str) -> int:
        """In how many units the commonest indexed term of its stem occurs (`retries` over code of `retry`)."""
        return max((len(self._postings.get(t, ())) for t in self._by_stem.get(stem(term), ())), default=0)

    def idf_of(self, containing: int) -> float:
        """The idf of a term that `containing` units hold."""
        return self._idf_of(containing)

    # --- inside the lock --------------------------------------------------------------------------------

    def _add_one(self, bag: Counter[str], stems: Mapping[str, str]) -> int:
        unit = self._free.pop() if self._free else len(self._lengths)
        if unit == len(self._lengths):
            grown = np.zeros(max(16, 2 * len(self._lengths)), dtype=np.float64)
            grown[: len(self._lengths)] = self._lengths
            self._free.extend(range(len(grown) - 1, unit, -1))
            self._lengths = grown
        self._bags[unit] = bag
        length = float(sum(bag.values()))
        self._lengths[unit] = length
        self._total_length += length
        for term, tf in bag.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = {}
                self._stem_of[term] = stems[term]
                self._by_stem.setdefault(stems[term], set()).add(term)
            posting[unit] = tf
            self._arrays.pop(term, None)
        return unit

    def _forget_stem(self, term: str) -> None:
        key = self._stem_of.pop(term)
        terms = self._by_stem[key]
        terms.discard(term)
        if not terms:
            del self._by_stem[key]

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            ordered = sorted(posting.items())
            arrays = (np.fromiter((u for u, _ in ordered), dtype=np.int64, count=len(ordered)),
                      np.fromiter((f for _, f in ordered), dtype=np.float64, count=len(ordered)))
            self._arrays[term] = arrays
        return arrays
