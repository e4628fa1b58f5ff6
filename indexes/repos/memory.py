"""One repository's units in memory, ranked by the code ranker: the state searches read.

A file's units are swapped in whole (its new units added, then its old ones removed, under one lock), so a search
during an update sees each file either as it was or as it is now, never half of it.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath

import numpy as np

from ctxsieve.ingest.analyzers import code_terms, is_cjk, terms
from ctxsieve.ingest.coderank.lexical import K3, UnitIndex, stem, stems_of, unit_terms
from ctxsieve.ingest.coderank.query import CodeQuery, code_shaped, file_keys
from ctxsieve.ingest.coderank.ranker import (
    SIGNALS,
    WEIGHTS,
    Cosines,
    Weights,
    at_places,
    declaration_in,
    declares,
    defined_or_declared,
    frame_targets,
    frames_elsewhere,
    looked_up,
    order_of,
    overload_signature,
    place_in,
    rerank,
    score,
    shipped_path,
    signals,
    unmarked,
    written_names,
)
from ctxsieve.ingest.coderank.units import SINGLETON, CodeUnit, last_part, module_name, operator_of
from ctxsieve.ingest.kinds.code import comment_lines, language_of
from ctxsieve.ingest.request import Frame, file_name, files_named, scoped_parts, sources_of

__all__ = ["Hit", "RepoMemory", "matches", "own_words"]

POOL = 400  # units re-scored with every signal: the lexical best, plus every unit the request names


@dataclass(frozen=True)
class Hit:
    unit: CodeUnit
    score: float
    focus: int = 0  # a line of the unit the request points at (`tree.go:452`, a traceback's frame): shown around it


@dataclass(frozen=True)
class _Spellings:
    """A repository's definitions' names in lower case (`_names_a_definition`), and, for a look-up's respelling
    (`RepoMemory._respelled`), those of the code it ships (not its tests', examples' or vendored code's) with their
    own spellings, and those lower cases by their first letter and length."""

    defined: frozenset[str]
    shipped: dict[str, list[str]]
    by_shape: dict[tuple[str, int], list[str]]


@dataclass
class _File:
    hash: str
    ids: list[int]
    lines: int  # how many lines the file has (0: not known, its definitions' last line taken instead)


class RepoMemory:
    def __init__(self, k3: float = K3) -> None:
        self._lock = threading.RLock()
        self._lexical = UnitIndex(k3)
        self._units: dict[int, CodeUnit] = {}
        self._files: dict[str, _File] = {}
        self._by_leaf: dict[str, set[int]] = {}
        self._by_path: dict[str, list[int]] = {}
        self._by_file_key: dict[str, set[str]] = {}  # a file name, a module path's last part -> the paths
        self._live: np.ndarray | None = None  # the unit ids in insertion order, until the next change
        self.version = 0  # one more at every change: what a pass over every unit (the vectors') covered
        self._package: tuple[int, frozenset[str]] = (-1, frozenset())  # `package_words` at a version
        self._spelled: tuple[int, _Spellings] = (-1, _Spellings(frozenset(), {}, {}))  # `_spellings` at a version

    # --- state --------------------------------------------------------------------------------------------

    def hashes(self) -> dict[str, str]:
        with self._lock:
            return {path: f.hash for path, f in self._files.items()}

    def holds(self, path: str) -> bool:
        with self._lock:
            return path in self._files

    def defines(self, name: str, path_glob: str | None = None) -> bool:
        """Some definition (of the files `path_glob` matches) is named `name` as a look-up means it (`looked_up`)."""
        return bool(self.defining(frozenset((name,)), path_glob))

    def defining(self, lookup: frozenset[str], path_glob: str | None = None) -> list[CodeUnit]:
        """The definitions (of the files `path_glob` matches) named as a look-up means them (`looked_up`)."""
        with self._lock:
            units = {i: self._units[i] for name in lookup for key in dict.fromkeys((last_part(name),
                                                                                    unmarked(last_part(name))))
                     for i in self._by_leaf.get(key, ())}
        return [u for u in units.values() if looked_up(u, lookup) and (not path_glob or matches(u.path, path_glob))]

    def foreign_words(self, query: CodeQuery) -> bool:
        """The request writes words in Chinese, Japanese or Korean and no unit holds any of them (an English code
        base asked in Chinese): its words cannot find what they say, only its identifiers and English words can."""
        written = [t for t in query.terms if is_cjk(t)]
        with self._lock:
            return bool(written) and not any(self._lexical.frequency(t) for t in written)

    def absent_words(self, query: CodeQuery) -> tuple[str, ...]:
        """The English words of a short search of words that no definition holds in any form (a trial asked faraday
        "how does the retry middleware decide to retry": its retries are another gem's, and the answer looked like any
        other); not a look-up's, a listing's, a place's, a trace's or a pasted message's, which say so otherwise."""
        if not query.short or query.lookup or query.paths_only or query.at_lines or query.trace or query.phrases:
            return ()
        words = dict.fromkeys(w for w in terms(query.text) if len(w) > 2 and w.isascii() and w.isalpha()
                              and not w.endswith(_VERB_FORMS))  # (a question's "computed", "turned" say little)
        absent = [w for w in words if not self._lexical.holds(w)]
        return tuple(w for w in absent if not self._lexical.inside_a_name(w))

    def names_only_itself(self, query: CodeQuery, own: Collection[str]) -> bool:
        """`foreign_words`, and its other words are the project's own name alone (`own`: the words of the
        repository's and its folder's names) that a tenth of the units or more hold: "httpx 的超时配置在哪里定义" was
        answered from the definitions `httpx` picked, the word in nearly every path of httpx, none of them about
        timeouts (hono's name is in a fifth of its definitions, viper's in three quarters), or that names no
        definition ("jinja 的沙箱在哪里检查属性访问" found the docstrings whose examples are `.. sourcecode:: jinja`). A
        name for the whole project says nowhere in it; a repository named by a definition's name that few
        definitions hold (a checkout in `main/` and its `def main()`) still finds them by it."""
        words = [t for t in query.terms if not is_cjk(t)]
        if words and any(t not in own for t in words) and any(is_cjk(t) for t in query.terms):
            own = {*own, *self.package_words()}  # ("jinja2 的沙箱...": jinja's package)
        if not words or any(t not in own for t in words) or not self.foreign_words(query):
            return False
        with self._lock:
            common = all(OWN_NAME_SHARE * len(self._units) <= self._lexical.frequency(t) for t in words)
        return common or not any(self._names_a_definition(t) for t in words)

    def package_words(self) -> frozenset[str]:
        """The words of the package that holds the shipped files' modules (`PACKAGE_SHARE` of them or more): a project
        is called by its package's name as often as by its repository's (jinja's `jinja2`, Json.NET's
        `Newtonsoft.Json`, retrofit's `retrofit2`); none where no one package holds them (axios's `lib/` folders)."""
        with self._lock:
            if self._package[0] != self.version:
                self._package = (self.version, frozenset(code_terms(_package_of(
                    [module_name(p).split(".") for p in self._files if shipped_path(p)]))))
            return self._package[1]

    def _names_a_definition(self, word: str) -> bool:
        """Some definition is named `word`, in any case (`type Server` for `server`)."""
        return word in self._spellings().defined

    def _widened(self, lookup: frozenset[str], path_glob: str | None) -> frozenset[str]:
        """A look-up's names, and the last part of a qualified one no definition has: `Sinatra::Base#render` is
        `Templates#render`, mixed into Base; a method a subclass inherits is its base class's."""
        return lookup | {name.rsplit(".", 1)[-1] for name in lookup
                         if "." in name and not operator_of(name) and not self.defines(name, path_glob)}

    def _respelled(self, lookup: frozenset[str], pool: Sequence[CodeUnit], path_glob: str | None) -> frozenset[str]:
        """The names a look-up asks for that no definition has nor a `pool` unit declares (a Ruby `attr_reader`'s),
        as the code it ships spells them: in another case (`APIview`, `walkparallel`: `APIView`, `WalkParallel`), or a
        code-shaped name written nowhere in the repository a letter off, a typo (`Task.retyr`,
        `PageNumberPagniation`). Two trials' look-ups so written showed a class's methods before the class, or missed
        it; a name the code uses is no typo (`BigDecimal` is not a test's `bigDecimals`, `onReady` not `onRead`), a
        plain word is respelled only in case (`parse` never becomes `sparse`), and never into a test's definition."""
        missed = [name for name in lookup if not operator_of(name) and not self.defines(name, path_glob)
                  and not any(declares(unit, name) for unit in pool)]
        if not missed:
            return frozenset()
        spelled = self._spellings()
        cased, by_shape = spelled.shipped, spelled.by_shape
        found: set[str] = set()
        for name in missed:
            leaf = last_part(name)
            alike = cased.get(leaf.lower(), [])
            if not alike and code_shaped(name) and len(leaf) >= TYPO_LEAST and not self._lexical.frequency(
                    leaf.lower()):
                asked = leaf.lower()
                alike = [other for size in (len(asked) - 1, len(asked), len(asked) + 1)
                         for key in by_shape.get((asked[0], size), ()) if _a_typo_apart(asked, key)
                         for other in cased[key]]
            found.update(name[: len(name) - len(leaf)] + other for other in sorted(alike)[:RESPELLED_MOST])
        return frozenset(found)

    def _spellings(self) -> _Spellings:
        """The names of the definitions, by their lower case: made once per version."""
        with self._lock:
            if self._spelled[0] != self.version:
                defined: set[str] = set()
                shipped: dict[str, list[str]] = {}
                for leaf, held in self._by_leaf.items():
                    units = [self._units[i] for i in held if self._units[i].defines_name]
                    if units and leaf:
                        defined.add(leaf.lower())
                    if any(shipped_path(u.path) for u in units) and leaf:
                        shipped.setdefault(leaf.lower(), []).append(leaf)
                by_shape: dict[tuple[str, int], list[str]] = {}
                for key in shipped:
                    by_shape.setdefault((key[0], len(key)), []).append(key)
                self._spelled = (self.version, _Spellings(frozenset(defined), shipped, by_shape))
            return self._spelled[1]

    def any_file(self, path_glob: str) -> bool:
        """Some file it holds matches `path_glob`."""
        with self._lock:
            return any(matches(path, path_glob) for path in self._by_path)

    @property
    def file_count(self) -> int:
        return len(self._files)

    @property
    def unit_count(self) -> int:
        return len(self._units)

    def put_file(self, path: str, digest: str, units: list[CodeUnit], lines: int = 0) -> None:
        bags = [unit_terms(u) for u in units]  # outside the lock: the costly part
        stems = stems_of(bags)
        with self._lock:
            old = self._files.get(path)
            ids = self._lexical.add(bags, stems)
            for unit_id, unit in zip(ids, units, strict=True):
                self._units[unit_id] = unit
                if unit.answers_to_name:
                    self._by_leaf.setdefault(unit.leaf, set()).add(unit_id)
            self._files[path] = _File(digest, ids, lines)
            self._by_path[path] = ids
            self._live = None
            self.version += 1
            for key in file_keys(path):
                self._by_file_key.setdefault(key, set()).add(path)
            if old is not None:
                self._forget(old.ids)

    def drop_file(self, path: str) -> None:
        with self._lock:
            old = self._files.pop(path, None)
            self._by_path.pop(path, None)
            self._live = None
            self.version += 1
            for key in file_keys(path):
                paths = self._by_file_key.get(key)
                if paths is not None:
                    paths.discard(path)
                    if not paths:
                        del self._by_file_key[key]
            if old is not None:
                self._forget(old.ids)

    def _forget(self, ids: list[int]) -> None:
        self._lexical.remove(ids)
        for unit_id in ids:
            unit = self._units.pop(unit_id)
            leaf = self._by_leaf.get(unit.leaf)
            if leaf is not None:
                leaf.discard(unit_id)
                if not leaf:
                    del self._by_leaf[unit.leaf]

    def snapshot(self) -> tuple[int, list[CodeUnit]]:
        """Every unit now, and the version it is of."""
        with self._lock:
            return self.version, list(self._units.values())

    def units_of(self, path: str) -> list[CodeUnit]:
        with self._lock:
            return [self._units[i] for i in self._by_path.get(path, [])]

    # --- search -------------------------------------------------------------------------------------------

    def search(self, query: CodeQuery, k: int, path_glob: str | None = None, weights: Weights = WEIGHTS,
               cosines: Cosines | None = None, within: Collection[str] | None = None, focused: bool = False
               ) -> list[Hit]:
        """The best k units (of the files `within` names, if given), ties broken by path and line so the same request
        gives the same order; with `cosines` (the units' vectors against the request's), the best re-ranked by them
        too. With `focused` (a client shown windows), a long module run's hit says its best-matching line."""
        units, rows, targets = self._scored_pool(query, path_glob, within)
        if query.lookup and (respelled := self._respelled(query.lookup, units, path_glob)):
            query = replace(query, lookup=query.lookup | respelled,
                            names=query.names | {last_part(name) for name in respelled})
            units, rows, targets = self._scored_pool(query, path_glob, within)
        if not units:
            return []
        scores = score(rows, units, weights, query)
        if cosines is not None:
            scores = rerank(rows, units, scores, cosines, weights, query)
        order = [j for j in order_of(scores, units) if scores[j] > 0]
        if query.lookup or query.at_lines or query.paths_only:  # (a stable sort: the rule's order otherwise)
            asked = replace(query, lookup=self._widened(query.lookup, path_glob))
            written = written_names(asked.lookup) if any(defined_or_declared(units[j], asked.lookup)
                                                         for j in order) else None
            at = at_places(query, units) if query.at_lines else {}
            order = sorted(order, key=lambda j: _asked_first(asked, units[j], written, query.lookup, at.get(j)))
            if query.paths_only and (listed := [j for j in order if query.names_file(units[j].path)]):
                order = listed  # a listing is of the files named, nothing after them (a short file's listing ended
                # with another file's definitions, under "in their files' order")
        elif query.short:
            order = _files_first(order, units, scores, weights.later, _subject_files(query, units),
                                 rows[:, SIGNALS.index("phrase")])
        if query.trace and not query.at_lines:  # (an issue's traceback is one clue among its words: not so)
            order = _frames_first(order, targets)
        placed = bool(query.frames)
        matched = focused and not (query.paths_only or query.at_lines or query.lookup)
        declared = focused and bool(query.lookup)
        return [Hit(units[j], float(scores[j]), (place_in(query, units[j]) if placed else 0)
                    or (self.matched_line(query, units[j]) if matched else 0)
                    or (_declared_line(query.lookup, units[j]) if declared else 0)) for j in order[:k]]

    def matched_line(self, query: CodeQuery, unit: CodeUnit) -> int:
        """A long run of a module's code (no definition of its own: its first lines are imports) or a long function is
        shown around its line of code that holds the most of the request's words, by their idf, when that is below its
        first lines (an Express module of 900 lines was shown from line 1, `res.redirect` at 815 never reached;
        date-fns's `getOverlappingDaysInIntervals` showed 31 lines of its JSDoc, the two lines of the bug cut)."""
        if unit.kind not in FOCUSED_KINDS or unit.end_line - unit.start_line < MODULE_FOCUS_LINES or not query.terms:
            return 0
        weights = self.line_weights(query, unit.text, unit.path)
        best = max(range(len(weights)), key=lambda i: (weights[i], _around(weights, i), -i))
        return unit.start_line + best if weights[best] > 0 and best >= MODULE_FOCUS_LINES else 0

    def line_weights(self, query: CodeQuery, text: str, path: str, rarest: int | None = None,
                     stems: bool = False) -> list[float]:
        """Per line of `text` (code of the file at `path`), the idf of the request's words it holds; 0 for a comment
        line (a doc comment says in its words what the code does: the code that does it is what is pointed at).
        With `rarest`, only that many of the request's words, the rarest in the code among those `text` may hold;
        with `stems`, each word met by its stem (a short search's `retries` in `self._retry_connection`)."""
        lowered = _folded(text)
        with self._lock:
            counts = {t: self._lexical.stem_frequency(t) if stems else self._lexical.frequency(t)
                      for t in set(query.terms) if len(t) > 1 or is_cjk(t)}  # (a name's one letter, fastify's
            # `k` of `kReplyIsError`, pointed at every `kX` symbol's line as "the request's words most at")
            idf = {t: self._lexical.idf_of(n) for t, n in counts.items() if n}
        forms = {t: stem(t) if stems else t for t in idf}
        probes = {t: _probe(t, forms[t]) for t in forms}  # (a line holding none of them holds none of the words:
        # not split into terms)
        if rarest is not None:  # (the rarest first, looked for in the text until that many are found or four
            # times that many looked for: an issue's 80 words were 80 scans of a 2,000-line module per result)
            ordered = sorted(forms, key=lambda t: (-idf[t], t))[:4 * rarest]
            forms = {t: forms[t] for t in [t for t in ordered if probes[t] in lowered][:rarest]}
        held = tuple({probes[t] for t in forms})

        def weight(line: str, folded: str) -> float:
            if not any(probe in folded for probe in held):
                return 0.0
            written = {stem(w) for w in code_terms(line)} if stems else set(code_terms(line))
            return sum(idf[t] for t, form in forms.items() if form in written)

        lines, folded_lines = text.split("\n"), lowered.split("\n")
        if len(folded_lines) != len(lines):  # (no NFKC form is known to break a line: each folded alone if one did)
            folded_lines = [_folded(line) for line in lines]
        return [0.0 if comment else weight(line, folded) for line, folded, comment in
                zip(lines, folded_lines, comment_lines(text, language_of(path)), strict=True)]

    def candidates(self, query: CodeQuery, path_glob: str | None = None, within: Collection[str] | None = None
                   ) -> tuple[list[CodeUnit], np.ndarray]:
        """The units worth scoring (the lexical best, and every unit the request names) and their signals."""
        units, rows, _ = self._scored_pool(query, path_glob, within)
        return units, rows

    def _scored_pool(self, query: CodeQuery, path_glob: str | None, within: Collection[str] | None
                     ) -> tuple[list[CodeUnit], np.ndarray, list[list[int]]]:
        """`candidates`, and the units each of the request's frames points at (`frame_targets`: its signal, and a
        pasted trace's order; found once, they were a third of a trace's search twice over)."""
        with self._lock:
            lexical = self._lexical.scores(query.terms, stems=query.short)
            pool = self._pool(query, lexical, path_glob, within)
            units = [self._units[i] for i in pool]
            counts = {u.leaf: len(self._by_leaf.get(u.leaf, ())) for u in units}
            targets = frame_targets(query, units)
            return units, signals(query, units, lexical[pool], name_counts=counts, targets=targets), targets

    def _pool(self, query: CodeQuery, lexical: np.ndarray, path_glob: str | None,
              within: Collection[str] | None) -> list[int]:
        if within is not None:  # the named files' units, a file at a time in path order
            matched = sorted(p for p in within if p in self._by_path and (not path_glob or matches(p, path_glob)))
            live = np.array([i for path in matched for i in self._by_path[path]], dtype=np.int64)
        elif path_glob:  # each file's path matched once, not once per unit; the units kept in their order
            globbed = {path for path in self._by_path if matches(path, path_glob)}
            live = np.array([i for i in self._live_ids() if self._units[i].path in globbed], dtype=np.int64)
        else:
            live = self._live_ids()
        if len(live) == 0:
            return []
        best = live[_best(lexical[live], POOL)]
        named = {i for name in query.names for i in self._by_leaf.get(name, ())}
        named |= {i for path in self._named_paths(query) for i in self._by_path[path]}
        if query.at_lines:  # places alone: their files, written as another checkout or an installed copy has them
            named |= {i for path in self._placed_paths(query) for i in self._by_path[path]}
        allowed = set(live.tolist()) if path_glob or within is not None else None
        pool = set(best.tolist()) | {i for i in named if allowed is None or i in allowed}
        return sorted(pool)

    def listed_units(self, query: CodeQuery, path_glob: str | None = None) -> list[CodeUnit]:
        """The units of the files a request of file paths alone lists (none for any other request): those it names
        (`CodeQuery.names_file`), as `search` lists them (axios's `lib/core/Axios.js` also counted
        `test/unit/core/Axios.js`, whose path shares its last two parts, and the answer said "10 more found are not
        shown" under the whole file)."""
        if not query.paths_only:
            return []
        with self._lock:
            return [self._units[i] for written in query.files for p in self._paths_at(written)
                    if (not path_glob or matches(p, path_glob)) and query.names_file(p) for i in self._by_path[p]]

    def missing(self, query: CodeQuery) -> tuple[str, ...]:
        """What a request of files or places alone names that the repository has nothing at: a file no path of it
        ends with (`src/requests/nosuchfile.py`) or an empty one, a line past the end of the file named
        (`hooks.py:4000`). (A line of
        the file in none of its definitions, a blank line between two methods, is there: those either side come
        first, `at_places`, their lines saying where it is.)"""
        with self._lock:
            if query.paths_only:  # (an empty file holds nothing either: `tests/__init__.py` was answered with ten
                # `__init__` methods of other files, and nothing said it is empty)
                return tuple(w for w in query.files if not any(self._by_path[p] for p in self._paths_at(w)))
            if query.at_lines:
                return tuple(f"{frame.path}:{frame.line}" for frame in query.frames if not self._having_line(frame))
            return ()

    def _having_line(self, frame: Frame) -> list[str]:
        """The files a place names that have its line (not a compiled `.js`'s TypeScript source, which has none of
        its lines: a place alone there is nothing the search can point at)."""
        line = frame.line or 0
        return [path for path in self._paths_at(frame.path, sources=False) if 1 <= line <= self._lines_of(path)]

    def between(self, query: CodeQuery) -> tuple[str, ...]:
        """What a request of places alone names that is a line of its file in no definition (a blank line or a
        comment between two functions; not one between two methods, which is in their class): answered with the
        definitions either side (`at_places`), for the answer to say the line itself is in none of them."""
        if not query.at_lines:
            return ()
        with self._lock:
            return tuple(f"{frame.path}:{frame.line}" for frame in query.frames if any(
                not any(u.start_line <= (frame.line or 0) <= u.last_line
                        for u in self.units_of(path)) for path in self._having_line(frame)))

    def elsewhere(self, query: CodeQuery, shown: Collection[tuple[str, str]]) -> tuple[str, ...]:
        """The request's frames that name a definition their line is not in here (a trace from another version of
        the file: the search points them at the definition they name), of those definitions `shown` (path, name),
        each said with where its line and that definition are, for the answer to say: the lines shown are not the
        frame's."""
        with self._lock:
            units = [self._units[i] for path in self._placed_paths(query) for i in self._by_path[path]]
        said = []
        for frame, named, at_line in frames_elsewhere(query, units):
            if (named.path, named.name) not in shown:
                continue
            there = "in no definition" if at_line is None else (
                "in the module's own code" if at_line.kind == "module" else f"in {at_line.name}")
            last = named.last_line
            said.append(f"{named.path}:{frame.line} in {frame.function} (line {frame.line} is {there} here; "
                        f"{named.name} is lines {named.start_line}-{last})")
        return tuple(dict.fromkeys(said))

    def _lines_of(self, path: str) -> int:
        known = self._files[path].lines
        return known or max((u.last_line for u in self.units_of(path)), default=0)

    def _paths_at(self, written: str, sources: bool = True) -> list[str]:
        """The files a path as written names (`paths_meet`), looked up by their file names; for a compiled `.js`
        that names none, with `sources`, the TypeScript sources it may come from (`sources_of`)."""
        for form in (written, *(sources_of(written) if sources else ())):
            if found := files_named(form, self._by_file_key.get(file_name(form), ())):
                return found
        return []

    def _live_ids(self) -> np.ndarray:
        if self._live is None:
            self._live = np.fromiter(self._units.keys(), dtype=np.int64, count=len(self._units))
        return self._live

    def _placed_paths(self, query: CodeQuery) -> list[str]:
        """The files the request's places (`path:line`) name, by their file names."""
        return sorted({p for frame in query.frames for p in self._paths_at(frame.path)})

    def _named_paths(self, query: CodeQuery) -> list[str]:
        """The files the request names (`names_file`), looked up by their names instead of asking every file."""
        names, modules = query.file_keys()
        paths = {p for key in names | modules for p in self._by_file_key.get(key, ())}
        return [p for p in paths if query.names_file(p)]



FOCUSED_KINDS = frozenset({"module", "function", "method", "constructor"})
MODULE_FOCUS_LINES = 20  # a module's run this long is shown around its best line, when that is below its first lines
NEIGHBOURS = 5  # lines either side of a focus line whose words break a tie between lines of the same words


_VERB_FORMS = ("ed", "ing")
OWN_NAME_SHARE = 0.1  # of the units a project's name is held by, to be read as the project's and no code's
PACKAGE_SHARE = 0.8  # (at half, monolog's package was `Monolog.Handler`: its handlers are most of its files)


def _package_of(modules: list[list[str]]) -> str:
    """The longest dotted package that `PACKAGE_SHARE` of the modules are inside (not the module itself)."""
    package: list[str] = []
    while inside := [m for m in modules if m[:len(package)] == package and len(m) > len(package) + 1]:
        part, count = Counter(m[len(package)] for m in inside).most_common(1)[0]
        if count < PACKAGE_SHARE * len(modules):
            break
        package.append(part)
    return ".".join(package)


@lru_cache(maxsize=256)
def own_words(name: str, path: str) -> frozenset[str]:
    """The words of a repository's name and of its folder's (`httpx`; `pvlib-python`: `pvlib`, `python`)."""
    return frozenset(code_terms(name)) | frozenset(code_terms(PurePosixPath(path).name))


def _folded(text: str) -> str:
    """Text as the analyzers fold it before their terms (NFKC, lower case): a term of it is a part of this."""
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower()


def _probe(term: str, form: str) -> str:
    """A piece of every line a term (met as `form`, its stem or itself) may be found in, folded: the first four
    characters the term and its form share (`body` and its stem `bodi`: `bod`; `HTTPServer`: `http`)."""
    word, met = _folded(term), _folded(form)
    shared = next((i for i, (a, b) in enumerate(zip(word, met, strict=False)) if a != b), min(len(word), len(met)))
    return word[:max(1, min(4, shared))]


def _around(weights: Sequence[float], line: int) -> float:
    """What the lines around one hold of the request: of two lines alike (nvm's `leads to an infinite loop` message,
    once in `nvm use` and once in `nvm which`), the one among more of the request's words is the one it means."""
    return sum(weights[max(0, line - NEIGHBOURS) : line + NEIGHBOURS + 1]) - weights[line]


def _frames_first(order: list[int], targets: list[list[int]]) -> list[int]:
    """A pasted trace's definitions first, its innermost frame's first (where the error was raised, then who called
    it), each frame's in the rule's order; then the rest. Scored, a frame's definition could fall below its file's
    others that only share the request's words and read like it (a Go panic's `node.addRoute` came 13th, below
    every method of routergroup.go, whose file two frames name). Within an issue, frames are one clue among its words:
    on the localization dev split, frames first lost two cases whose fix is in an outer frame or no frame at all."""
    depth: dict[int, int] = {}
    for d, held in enumerate(targets):
        for j in held:
            depth.setdefault(j, d)
    return sorted(order, key=lambda j: depth.get(j, len(targets)))


def _subject_files(query: CodeQuery, units: list[CodeUnit]) -> frozenset[str]:
    """Where a search for tests names what they test as code, the test files whose group is titled by it (RSpec's
    `describe Rack::Lint do`, `describe('Router')`): their tests are the answer, not one each among other files'."""
    if not query.tests or not query.names:
        return frozenset()
    return frozenset(u.path for u in units if u.kind == "test" and _titled_by(u.name.split(".", 1)[0], query))


def _titled_by(title: str, query: CodeQuery) -> bool:
    parts = scoped_parts(title)
    if len(parts) == 1:
        return parts[0] in query.names
    return all(pair in query.pairs for pair in zip(parts, parts[1:], strict=False))


def _files_first(order: list[int], units: list[CodeUnit], scores: np.ndarray, later: float,
                 subjects: frozenset[str] = frozenset(), phrased: np.ndarray | None = None) -> list[int]:
    """A short search's hits, each file's best first: an agent's few words ask where something is, and ten
    definitions of one file hide the other files that answer them (python -m bench.short_queries, dev split: NDCG@10
    over the files 0.709 -> 0.811 with each file's best first, 0.775 with its best two). A file's later hits count
    `later` of their score against the other files' best (0: after every file's best, so a second definition that
    outscores all but one never showed, even at k 50); a file of the tests asked for (`subjects`) all of it."""
    first: dict[str, int] = {}
    for j in order:
        first.setdefault(units[j].path, j)
    lead = _leads(order, units, scores, first, phrased)
    ranked: list[tuple[float, int, int]] = []
    for at, j in enumerate(order):
        path = units[j].path
        shown_first = lead.get(path, first[path]) == j
        value = float(scores[first[path]] if shown_first else scores[j])
        discounted = not shown_first and path not in subjects
        ranked.append((-value * (later if discounted else 1.0), at, j))
    return [j for _, _, j in sorted(ranked)]


MODULE_TIE = 0.9  # of a file's best, a module run: a definition of the file this near it is shown in its stead


def _leads(order: list[int], units: list[CodeUnit], scores: np.ndarray, first: dict[str, int],
           phrased: np.ndarray | None = None) -> dict[str, int]:
    """Per file whose best hit is a run of module code (imports, a module docstring), its best definition within
    MODULE_TIE of it, shown first in the file's place: drf's "where are serializer field errors collected" was
    answered first by serializers.py's 85 lines of docstring and imports, 908 of the 2,000 tokens. Not a run that
    holds the search as a message (`phrased`, its phrase signal: a module's docstring pasted whole, four words or
    more of it; the review's three-word "Task execution strategy (optimization)." has none, and shows celery's
    `strategy.default` first, the file in its place)."""
    lead: dict[str, int] = {}
    for j in order:
        path, best = units[j].path, first[units[j].path]
        if path not in lead and units[best].module_run and not units[j].module_run \
                and scores[j] >= MODULE_TIE * scores[best] and not (phrased is not None and phrased[best] > 0):
            lead[path] = j
    return lead


TYPO_LEAST = 5  # letters of a name a typo is read in (`retyr`); a shorter one is another name more often than not
RESPELLED_MOST = 3  # names a misspelled one may be


def _a_typo_apart(asked: str, other: str) -> bool:
    """One letter apart: one changed, added, left out, or two swapped (`retyr`, `retry`); the first one as written."""
    if asked == other or abs(len(asked) - len(other)) > 1 or asked[0] != other[0]:
        return False
    if len(asked) == len(other):
        apart = [i for i, (a, b) in enumerate(zip(asked, other, strict=True)) if a != b]
        return len(apart) == 1 or (len(apart) == 2 and apart[1] == apart[0] + 1
                                   and asked[apart[0]] == other[apart[1]] and asked[apart[1]] == other[apart[0]])
    short, long = sorted((asked, other), key=len)
    at = next((i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short))
    return short[at:] == long[at + 1:]


def _declared_line(lookup: frozenset[str], unit: CodeUnit) -> int:
    """The line of a module's code or a type's own lines that declares a name looked up (date-fns's
    `millisecondsInDay` at line 84 of src/constants/index.ts, shown from line 1 to 11), when below its first lines."""
    found = next((m for m in (declaration_in(unit, name) for name in sorted(lookup)) if m is not None), None)
    if found is None:
        return 0
    line = unit.text.count("\n", 0, found.start())
    return unit.start_line + line if line >= MODULE_FOCUS_LINES else 0


def _asked_first(query: CodeQuery, unit: CodeUnit, written: re.Pattern[str] | None = None,
                 exact: frozenset[str] = frozenset(), placed: int | None = None
                 ) -> tuple[bool, bool, bool, bool, bool, bool, bool, bool, bool, bool, int, int, str, int]:
    """What a request of names, places or paths alone asks to see first: the definitions of the names
    (`looked_up`, then those declared as a constant, field or alias: `declares`; a Python `@overload` signature after
    the definition with its body), then the code that writes a
    name (`written`, where a definition has one: its uses, before a line that only shares a word with the name, such
    as its folder's; with none, a file of that name is nearer than code importing another project's), what lies
    at the places (`placed`: how many lines it is from one, `at_places`; the nearer first), each named file's units
    in its order, the path as written before a file name alone (`names_file`). A name as asked (`exact`:
    `HttpUrl.isHttps`) before its last part alone where a look-up was widened to it (`isHttps`, which okhttp's
    `Request` declares too). A type's constructor after the type, when the type's name alone is asked (fmt's `file`
    showed `file.file` and, at k 1, not the class); a C++ template's specializations after the template, unless the
    look-up names one (`formatter` is fmt's `struct formatter`, `formatter<bytes>` its specialization for `bytes`); of
    one name's definitions, the one in the file named after it first (`_in_its_own_file`)."""
    named = query.names_file(unit.path) if query.paths_only else 0
    return (bool(exact) and not defined_or_declared(unit, exact),
            bool(query.lookup) and not defined_or_declared(unit, query.lookup),
            bool(query.lookup) and not looked_up(unit, query.lookup),  # (a definition before an alias or a field
            # of that name: celery's `Task` holds `MaxRetriesExceededError = MaxRetriesExceededError`)
            written is not None and not written.search(unit.text),
            bool(query.lookup) and overload_signature(unit),
            unit.within == SINGLETON and "#" in query.text,  # (Ruby's `Client#push` is the instance method)
            _constructor(unit) and unit.leaf in query.lookup,
            bool(query.lookup) and _specialization_of(unit, query.text) != _asks_specialization(query.text),
            bool(query.lookup) and defined_or_declared(unit, query.lookup) and not _in_its_own_file(unit,
                                                                                                    query.lookup),
            query.at_lines and placed is None, placed or 0, -named, unit.path if named else "",
            unit.start_line if named else 0)


def _in_its_own_file(unit: CodeUnit, lookup: frozenset[str]) -> bool:
    """The file is named after the definition, or after the type a look-up names it by (`lib/faraday/utils.rb` for
    `Faraday::Utils`, `render.go` for `Render`, `Retrofit.java` for `Retrofit.create`): of a Ruby module or class
    reopened in many files, a C# partial class, the one its own file holds (a trial's `Faraday::Utils` came from
    `utils/headers.rb`'s one-line wrapper first); of a method asked with its type, the type's own before an extension
    elsewhere (`Retrofit#create` found the Kotlin extension `Retrofit.create` in KotlinExtensions.kt first). Not the
    type a bare name's method is of (gin's `Engine` is the struct in gin.go, not `defaultValidator.Engine` of
    default_validator.go)."""
    if unit.module_run:  # (a run is named by its file)
        return False
    own = _folded_name(module_name(unit.path).rsplit(".", 1)[-1])
    owners = {_folded_name(name.rsplit(".", 2)[-2]) for name in lookup if "." in name}
    return own == _folded_name(unit.leaf) or own in owners and _folded_name(unit.name.split(".")[-2:][0]) == own


def _folded_name(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


_DOC_LINES = 60  # a unit's first lines looked through for its header, below its doc comment
_HEADER_LINES = 4  # of a unit's code lines (its doc comment's left out), where its header is: `template <...>` over
# a line or two, then `struct formatter<bytes> {`


def _specialization_of(unit: CodeUnit, asked: str) -> bool:
    """A C++ class template's specialization (`template <> struct formatter<bytes>`), or with `asked` naming one,
    that one; never another language's generic type (Rust's `pub struct Router<S = ()>`, Java's `class Foo<T>`),
    which has no `template` before it."""
    if unit.kind not in ("class", "struct", "union"):
        return False
    code = [line for line in unit.text.split("\n", _DOC_LINES)[:_DOC_LINES]
            if not line.lstrip().startswith(("//", "/*", "*"))]
    header = re.sub(r"\s+", "", " ".join(code[:_HEADER_LINES]))
    if "template<" not in header:  # (after an export macro's line too, fmt's `FMT_EXPORT`)
        return False
    if _asks_specialization(asked):
        return "".join(asked.split()).rsplit("::", 1)[-1] in header
    return re.search(rf"(?:class|struct|union)(?:\w+::)*{re.escape(unit.leaf)}<", header) is not None


def _asks_specialization(asked: str) -> bool:
    return "<" in asked and ">" in asked


def _constructor(unit: CodeUnit) -> bool:
    """A C++, Java or C# constructor: named as its type is, within it (`file.file`, `ostream.ostream`)."""
    parts = unit.name.rsplit(".", 2)
    return unit.kind in ("method", "constructor") and len(parts) > 1 and parts[-1] == parts[-2]


def _best(values: np.ndarray, n: int) -> np.ndarray:
    """The positions a stable sort by descending value puts first n (ties at the cut: the earlier positions), in
    one partition instead of a sort."""
    if len(values) <= n:
        return np.arange(len(values))
    cut = np.partition(-values, n - 1)[n - 1]
    above = np.flatnonzero(-values < cut)
    ties = np.flatnonzero(-values == cut)[: n - len(above)]
    return np.concatenate([above, ties])


def matches(path: str, glob: str) -> bool:
    """A glob over the relative path (`lib/**/*.py`, `*.py`: any Python file), or a folder prefix (`lib/ansible`). In
    a glob with a `/`, `*` and `?` stay within a folder and `**` crosses folders, as git and ripgrep read one (a
    trial's `packages/zod/src/v4/*.ts` had matched `v4/classic/schemas.ts`); a leading `/` holds it to the
    repository's top, as git reads one too (`/*.go`: the top folder's Go files)."""
    return _glob(glob).fullmatch(path) is not None or path.startswith(glob.strip("/") + "/")


@lru_cache(maxsize=256)
def _glob(glob: str) -> re.Pattern[str]:
    """`matches`' glob as a regular expression over the whole relative path."""
    if "/" not in glob:  # (`*.py`: any Python file, in any folder)
        return re.compile(fnmatch.translate(glob))
    return re.compile(_glob_parts(glob.lstrip("/")), re.DOTALL)  # (`/*.go`: from the top)


_GLOB_PART = re.compile(r"\*\*/|\*\*|\*|\?|\[!?\]?[^\]]*\]|.", re.DOTALL)


def _glob_parts(glob: str) -> str:
    out = []
    for part in _GLOB_PART.findall(glob):
        if part in ("**/", "**", "*", "?"):
            out.append({"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}[part])
        elif part.startswith("[") and len(part) > 2:  # a class (`[a-z]`, `[!a]`), as fnmatch reads it
            out.append(fnmatch.translate(part).removeprefix("(?s:").removesuffix(")\\Z"))
        else:
            out.append(re.escape(part))
    return "".join(out)
