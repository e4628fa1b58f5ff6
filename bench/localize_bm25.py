"""The baseline for bench.localize: plain BM25 over a repository's definitions.

Documents: every definition of every source file (a suffix in ctxsieve.ingest.kinds.code.LANGUAGES): functions,
methods and classes, named by their enclosing definitions joined with `.`, each one's text its own lines (a
class's header and body statements, less its methods, which are documents of their own); and each file's lines
outside its definitions as one record of kind `module`. Scored with ctxsieve.indexes.lexical.Bm25Index over
ctxsieve.ingest.analyzers.code_terms; a file ranks where its best definition does.
Files: `git ls-files --cached --others --exclude-standard` in the folder (tracked and untracked, .gitignore
respected), less vendored or build folders, symlinks and files over MAX_BYTES. Incremental: a file whose size
and mtime are unchanged is not read again; a read file's records and terms are kept by content hash, so a sync
after a checkout parses only the files that changed. The index's postings are then joined from the kept terms.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from bench.localize import Hit
from bench.localize_data import FUNCTION_WORDS
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.ingest.analyzers import code_terms
from ctxsieve.ingest.kinds.code import LANGUAGES, Definition, definitions

MAX_BYTES = 1 << 20
SKIP_DIRS = frozenset({"vendor", "vendored", "_vendor", "third_party", "thirdparty", "node_modules", "build",
                       "dist", "site-packages", "__pycache__", ".tox", ".venv", "venv", ".git", "bower_components"})


@dataclass(frozen=True)
class Record:
    name: str
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int
    terms: np.ndarray  # vocabulary ids of its distinct terms
    freqs: np.ndarray  # their counts
    length: int  # all its terms


def records(text: str, language: str | None) -> list[tuple[str, str, int, int, str]]:
    """(name, kind, start, end, text) of each definition, then the file's code outside definitions."""
    lines = text.split("\n")
    found = definitions(text, language) or []
    out: list[tuple[str, str, int, int, str]] = []

    def walk(items: tuple[Definition, ...] | list[Definition], path: list[str], in_class: bool) -> None:
        for d in items:
            word, name = d.label.split(" ", 1) if " " in d.label else (d.label, d.label)
            kind = "class" if d.container else ("method" if in_class else "function") \
                if word in FUNCTION_WORDS else word
            own = _outside(lines, d.first, d.last, d.children)
            out.append((".".join([*path, name]), kind, d.first + 1, d.last + 1, own))
            walk(d.children, [*path, name], d.container)

    walk(found, [], False)
    module = _outside(lines, 0, len(lines) - 1, tuple(found))
    if module.strip():
        out.append(("<module>", "module", 1, len(lines), module))
    return out


def _outside(lines: list[str], first: int, last: int, children: tuple[Definition, ...]) -> str:
    """The lines first..last (0-based) that no child definition holds."""
    taken: set[int] = set()
    for c in children:
        taken.update(range(c.first, c.last + 1))
    return "\n".join(lines[i] for i in range(first, last + 1) if i not in taken)


def source_files(root: Path) -> list[str]:
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode("utf-8", "replace").split("\0")
    out = []
    for name in sorted(set(filter(None, listed))):
        path = PurePosixPath(name)
        if path.suffix.lower() in LANGUAGES and not SKIP_DIRS & set(path.parts[:-1]):
            out.append(name)
    return out


class Bm25Localizer:
    def __init__(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._seen: dict[str, tuple[tuple[int, int], str]] = {}  # path -> ((size, mtime_ns), content hash)
        self._parsed: dict[tuple[str, str | None], list[Record]] = {}  # (content hash, language) -> its records
        self._docs: list[tuple[str, Record]] = []
        self._index = Bm25Index.build([], code_terms)
        self.parsed_last = 0  # files read and parsed by the last sync (the incremental work)

    def sync(self, root: Path) -> None:
        seen: dict[str, tuple[tuple[int, int], str]] = {}
        parsed: dict[tuple[str, str | None], list[Record]] = {}
        self.parsed_last = 0
        for name in source_files(root):
            path = root / name
            if path.is_symlink() or not path.is_file():
                continue
            st = path.stat()
            if st.st_size > MAX_BYTES:
                continue
            stat = (st.st_size, st.st_mtime_ns)
            known = self._seen.get(name)
            language = LANGUAGES[PurePosixPath(name).suffix.lower()]
            if known is None or known[0] != stat or (known[1], language) not in self._parsed:
                data = path.read_bytes()
                digest = hashlib.blake2b(data, digest_size=16).hexdigest()
                if (digest, language) not in self._parsed and (digest, language) not in parsed:
                    parsed[(digest, language)] = self._records(data.decode("utf-8", "replace"), language)
                    self.parsed_last += 1
                known = (stat, digest)
            seen[name] = known
            key = (known[1], language)
            parsed.setdefault(key, self._parsed.get(key, []))
        if seen != self._seen or not self._docs:
            self._docs = [(name, r) for name, (_, digest) in sorted(seen.items())
                          for r in parsed[(digest, LANGUAGES[PurePosixPath(name).suffix.lower()])]]
            self._index = self._joined()
        self._seen, self._parsed = seen, parsed  # records of files gone from the folder are dropped

    def _records(self, text: str, language: str | None) -> list[Record]:
        out = []
        for name, kind, start, end, own in records(text, language):
            counts = Counter(code_terms(own))
            ids = np.array([self._vocabulary.setdefault(t, len(self._vocabulary)) for t in counts], dtype=np.int64)
            out.append(Record(name, kind, start, end, ids, np.array(list(counts.values()), dtype=np.float64),
                              sum(counts.values())))
        return out

    def _joined(self) -> Bm25Index:
        """The postings of every document, from the kept terms (what Bm25Index.build would count again)."""
        if not self._docs:
            return Bm25Index.build([], code_terms)
        terms = np.concatenate([r.terms for _, r in self._docs])
        freqs = np.concatenate([r.freqs for _, r in self._docs])
        docs = np.repeat(np.arange(len(self._docs)), [len(r.terms) for _, r in self._docs])
        order = np.lexsort((docs, terms))
        terms, freqs, docs = terms[order], freqs[order], docs[order]
        starts = np.concatenate([[0], np.flatnonzero(np.diff(terms)) + 1]).tolist()
        ends = [*starts[1:], len(terms)]
        words = list(self._vocabulary)
        postings = {words[int(terms[a])]: (docs[a:b], freqs[a:b]) for a, b in zip(starts, ends, strict=True)}
        lengths = np.array([r.length for _, r in self._docs], dtype=np.float64)
        return Bm25Index(postings, lengths, analyzer=code_terms)

    def search(self, query: str, k: int) -> list[Hit]:
        scores = self._index.scores(query)
        if not len(scores):
            return []
        top = np.argsort(-scores, kind="stable")[:k]  # stable: ties in path order, the same every run
        return [Hit(path, r.name, r.kind, r.start_line, r.end_line, float(scores[i]))
                for i in top if scores[i] > 0 for path, r in [self._docs[i]]]
