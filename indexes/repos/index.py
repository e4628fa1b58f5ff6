"""Repositories as collections of their code's definitions, kept in step with the files by content hash.

`register` names a folder inside the read roots and queues its first sync; `sync` brings it up to date with the
files on disk (a changed file re-read, a deleted one dropped, a moved HEAD is just files that changed). One worker
thread runs the syncs, a repository at a time; searches read each repository's memory (`RepoMemory`) meanwhile, so
they answer from each file's last complete state and never "not indexed". The store keeps every unit, so a restart
(or a kill -9 mid-sync) loads what was complete and the next sync re-reads only what changed since. After each sync
the units' vectors are made behind it (`UnitVectors`): `state` is `lexical` until every unit has one, then `ready`,
and only a ready repository's searches re-rank by them.
"""

from __future__ import annotations

import functools
import logging
import os
import posixpath
import queue
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TypeVar

from ctxsieve.ingest.coderank.query import CodeQuery, code_shaped, read_code_query
from ctxsieve.ingest.coderank.ranker import (
    SIGNALS,
    RepoRanking,
    combine,
    declares,
    defined_or_declared,
    in_tests,
    looked_up,
    place_in,
)
from ctxsieve.ingest.coderank.units import CodeUnit, units_of
from ctxsieve.ingest.tokens import Tokenizer
from ctxsieve_client.code_search import Caveats, closing_line, render_answer

from ..errors import CtxsieveError, InvalidInput, InvalidRequest, NotFound
from ..files import FileReader
from ..sources import utc_stamp
from ..store import Match, Store, Where, scroll_all
from .memory import Hit, RepoMemory, own_words
from .records import SPEC, RepoHead, current_units, file_key, file_point, head_of, head_point, scope, units_of_point
from .results import DEFAULT_TOKENS, CodeResult, pack_hits, trimmed
from .vectors import UnitVectors
from .walk import SKIPPED_NAMED, FileState, Skipped, nested, read_source, walk
from .walk import head_of as git_head

__all__ = ["CodeSearch", "FileOrder", "RepoIndex", "RepoStatus"]

log = logging.getLogger("ctxsieve")
T = TypeVar("T")
CATCH_UP_S = 10.0  # at most one sync in this time queued by reads and file lists that differ from a repository's index
MIN_SPREAD = 0.1  # of the best score: a file's definitions closer than this are told apart in proportion only
BATCH_FILES = 64  # files whose units go to the store in one write
FIRST_INDEX_WAIT_S = 20.0  # a search naming a new repository's folder waits this long for its first index
# shown whole in any search (`_whole_hits`): a class is not, being its methods' container
WHOLE_KINDS = frozenset({"function", "method", "constructor"})
FRESH_WAIT_S = 5.0  # a search naming a known repository's folder waits this long for the files changed since
Progress = Callable[[str, int, int], None]  # (repository, files done, files to read)


@dataclass(frozen=True)
class RepoStatus:
    name: str
    path: str
    files: int
    definitions: int
    state: str  # indexing (a sync under way) | lexical (searchable by its words and names) | ready (and vectors)
    head: str | None
    indexed_at: str | None
    skipped: dict[str, int]
    done: int = 0  # files read by the sync under way, of `total`
    total: int = 0
    dropped: int = 0  # files that sync dropped, gone from the folder
    error: str | None = None
    vectors_left: int | None = None  # units still without a vector (None: not counted yet, or no vector stage)
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)  # the first SKIPPED_NAMED of each why
    read_paths: list[str] = field(default_factory=list)  # the first SKIPPED_NAMED of the files that sync read
    dropped_paths: list[str] = field(default_factory=list)  # and of those it dropped
    vectors_off: bool = False  # the service makes no vectors (`repo_vectors` off): `lexical` is final, not a wait


@dataclass(frozen=True)
class FileOrder:
    repo: str | None  # the repository that ranked them (None: none holds them; the paths keep their order)
    paths: list[str]  # every path given, the ranked ones first
    ranked: int  # how many lead `paths` by the repository's ranking


@dataclass(frozen=True)
class CodeSearch:
    results: list[CodeResult]
    state: str
    input_tokens: int  # the tokens of every hit's whole definition
    output_tokens: int
    found: int = 0  # the hits among the first k, shown or left out by the budget; for a listing of files (a request
    # of paths alone), and their definitions beyond those hits too
    caveats: Caveats = Caveats()  # what the search could not do as asked (a name no definition has, ...)


@dataclass
class _Repo:
    head: RepoHead
    memory: RepoMemory = field(default_factory=RepoMemory)
    loaded: bool = False
    running: bool = False
    requested: int = 0  # syncs asked for
    finished: int = 0  # syncs done (a sync covers every request made before it started)
    done: int = 0
    total: int = 0
    dropped: int = 0  # files the sync under way (else the last) dropped: gone from the folder
    read_paths: list[str] = field(default_factory=list)  # the first SKIPPED_NAMED it reads, and drops: a user told
    dropped_paths: list[str] = field(default_factory=list)  # "1 new or changed file read" is told which one
    error: str | None = None
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (mtime_ns, size) when hashed
    skipped: Skipped = field(default_factory=Skipped)
    unreadable: set[str] = field(default_factory=set)  # files the last sync could not read: read again each sync
    failed: set[str] = field(default_factory=set)  # files whose definitions could not be read (a bug): the same
    caught_up_at: float = -CATCH_UP_S  # when a read that differed from the index last queued a sync (monotonic)


class RepoIndex:
    def __init__(self, store: Store, reader: FileReader, tokenizer: Tokenizer, progress: Progress | None = None,
                 vectors: UnitVectors | None = None) -> None:
        self.store = store
        self.vectors = vectors
        self.reader = reader
        self.tokenizer = tokenizer
        self.progress = progress
        # tokens of definitions and of their lines, kept for the searches that show them again
        self._whole_tokens = functools.lru_cache(maxsize=1 << 12)(tokenizer.count)
        self._line_tokens = functools.lru_cache(maxsize=1 << 15)(tokenizer.count)
        store.ensure(SPEC)
        for name, kind in SPEC.indexes.items():
            store.index(SPEC.name, name, kind)
        self._repos: dict[tuple[str, str], _Repo] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._jobs: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="ctxsieve-repos", daemon=True)
        self._worker.start()

    # --- the API's verbs --------------------------------------------------------------------------------

    def register(self, tenant: str, name: str, path: str) -> RepoStatus:
        """Index a folder as `name` (queued); registering it again with another folder re-points it."""
        real = self.reader.resolve(path)
        if not real.is_dir():
            raise InvalidInput(f"{path}: not a folder")
        with self._lock:
            repo = self._repos.get((tenant, name)) or self._stored(tenant, name)
            if repo is None or repo.head.path != str(real):
                repo = _Repo(RepoHead(name, str(real)), loaded=repo is None)
                self._repos[(tenant, name)] = repo
                self.store.upsert(SPEC.name, [head_point(tenant, repo.head)])
        return self.sync(tenant, name)

    def ensure(self, tenant: str, name: str, path: str, wait_s: float = FIRST_INDEX_WAIT_S,
               fresh_s: float = FRESH_WAIT_S) -> RepoStatus:
        """A repository known already brought up to date with its files, waited for up to `fresh_s` (an agent's
        search after its own edit must show the lines as they are now); else `path` registered as `name`, waited
        for up to `wait_s`. A name known as another folder is refused: its lines are not this folder's."""
        with self._lock:
            known = (tenant, name) in self._repos or self._stored(tenant, name) is not None
        if known:
            self._same_folder(tenant, name, path)
            self.sync(tenant, name)
        else:
            self.register(tenant, name, path)
        self._wait_synced(tenant, name, fresh_s if known else wait_s)
        return self.status(tenant, name)

    def _wait_synced(self, tenant: str, name: str, timeout: float) -> None:
        """Wait up to `timeout` for the syncs asked for so far to be done."""
        deadline = time.monotonic() + timeout
        with self._lock:
            repo = self._get(tenant, name)
            while repo.finished < repo.requested and (left := deadline - time.monotonic()) > 0:
                self._changed.wait(left)

    def _same_folder(self, tenant: str, name: str, path: str) -> None:
        real = str(self.reader.resolve(path))
        with self._lock:
            registered = self._get(tenant, name).head.path
        if registered != real:
            raise InvalidRequest(f"repository {name!r} is the folder {registered}, not {real}: name that one with "
                                 f"`repo`, or index this folder under another name (`ctxsieve index {real} --name "
                                 "NAME`) and name it with `repo`")

    def sync(self, tenant: str, name: str, wait: bool = False) -> RepoStatus:
        """Queue a sync (one already queued covers this request too); with `wait`, return once it is done."""
        with self._lock:
            repo = self._get(tenant, name)
            repo.requested += 1
            wanted = repo.requested
            if not repo.running and repo.requested == repo.finished + 1:
                self._jobs.put((tenant, name))
            while wait and repo.finished < wanted:
                self._changed.wait()
        return self.status(tenant, name)

    def status(self, tenant: str, name: str) -> RepoStatus:
        with self._lock:
            repo = self._get(tenant, name)
            state = self._state(tenant, repo)
        left = self.vectors.left((tenant, name), repo.memory if state == "lexical" else None) \
            if self.vectors is not None else None
        return replace(_status(repo, state, left), vectors_off=self.vectors is None)

    def all(self, tenant: str) -> list[RepoStatus]:
        return [self.status(tenant, name) for name in self._names(tenant)]

    def delete(self, tenant: str, name: str) -> None:
        with self._lock:
            self._get(tenant, name)
            self._repos.pop((tenant, name), None)
            self.store.delete_where(SPEC.name, scope(tenant, name))
        if self.vectors is not None:
            self.vectors.forget((tenant, name))

    def search(self, tenant: str, name: str, query: str, k: int = 10, max_tokens: int | None = None,
               path: str | None = None, windows: bool = False) -> CodeSearch:
        """The best k definitions within the budget; with `windows`, one the query points into (a place, a frame)
        shown around that line when cut (else from its first line, for a client that numbers text from there)."""
        with self._lock:
            repo = self._get(tenant, name)
            state = self._state(tenant, repo)
        path = _within_repository(path, repo.head.path)
        indexed = repo.loaded and repo.head.indexed_at is not None  # its files all read once: a glob they miss is
        if path and indexed and not repo.memory.any_file(path):  # wrong, not "no definition is named ..."
            raise InvalidRequest(f"path: no file of repository {name!r} matches {path!r} among those it indexed "
                                 "(source in a language it reads, not ignored, vendored or skipped; a glob over the "
                                 "paths relative to the repository, `lib/**/*.py`, `*.go`, or a folder, `lib/ansible`)")
        read = read_code_query(_from_top(query, repo.head.path))
        # a function and a definition looked up are shown whole, and the hits inside them (nested definitions, later
        # parts) are left out: k are asked for, not k less those, and 8k once more when those leave fewer than k (a
        # trial's `TypeAdapterFactory` gave 7 of k 10, its interface's methods inside it, and 18 of k 20)
        texts: dict[str, str] = {}  # the files' stored texts this search read: each read once
        for asked in (2 * k, WIDEST * k):  # (a second search only when the first came short)
            found_hits, state, by_meaning = self._hits(tenant, repo, read, asked, path, state, windows)
            hits = self._whole_hits(tenant, name, read, _as_short_outer(read, found_hits, repo.memory),
                                    repo.memory if windows else None, texts)[:k]
            if len(hits) >= k or len(found_hits) < asked:
                break
        declared = {n for n in read.lookup if any(declares(h.unit, n) for h in found_hits)}  # (by a module's or a
        # type's own lines as found: a class widened whole holds its methods' locals too)
        listed = repo.memory.listed_units(read, path)
        found = len(hits) + sum(1 for u in listed  # (a listing of files counts all theirs: a trial's first 10 of
                                if not any(_within(u, h.unit) for h in hits))  # ws.rs's 105 ended at line 203 of
        # 1,267, and nothing said the file held more)
        if read.lookup and not listed and len(hits) >= k:  # every definition of the names looked up (a trial's
            found = max(found, len(repo.memory.defining(read.lookup, path)))  # `render`, 29 at k 3: nothing said
            # there were more)
        in_order = bool(listed) and {h.unit.path for h in hits} <= {u.path for u in listed}  # (not when the search
        # found others: a file that is not there, nearest ones after a short file's)
        if not windows:
            hits = [replace(h, focus=0) for h in hits]
        undefined = tuple(sorted(n for n in read.lookup if code_shaped(n) and not repo.memory.defines(n, path)
                                 and n not in declared))
        elsewhere = repo.memory.elsewhere(read, {(h.unit.path, h.unit.name) for h in hits})
        outside = tuple(n for n in undefined if path and repo.memory.defines(n))  # (a trial's `--path .../v4`
        # answer said no `ZodObject.extend` was defined: v3 defines one)
        caveats = Caveats(undefined=undefined, by_meaning=by_meaning, missing=repo.memory.missing(read),
                          elsewhere=elsewhere, vectors_off=self.vectors is None,
                          foreign_words=not by_meaning and not read.tests and repo.memory.foreign_words(read),  # (tests
                          outside_path=outside, listing=in_order,  # have no vectors: a search for them is by words)
                          between=repo.memory.between(read), absent=repo.memory.absent_words(read))
        asked = bool(hits) and bool(read.lookup) and defined_or_declared(hits[0].unit, read.lookup)
        results, tokens = self._packed(hits, max_tokens or DEFAULT_TOKENS, name, state, caveats, windows, asked,
                                       lambda packed: self._with_matched(tenant, name, read, repo.memory, packed,
                                                                         texts))
        whole = sum(self._whole_tokens(h.unit.text) for h in hits)
        return CodeSearch(results, state, whole, tokens, found, caveats)

    def _hits(self, tenant: str, repo: _Repo, read: CodeQuery, k: int, path: str | None, state: str, windows: bool
              ) -> tuple[list[Hit], str, bool]:
        """The best k definitions, the repository's state they were found in, and whether by meaning alone."""
        name = repo.head.name
        cosines = self.vectors.cosines(read.text) if self.vectors is not None and state == "ready" else None
        hits = repo.memory.search(read, k, path, cosines=cosines, focused=windows)
        if self._edited_since(repo, {h.unit.path for h in hits}, unknown=False):  # its lines would not be the
            self.sync(tenant, name)  # file's: brought up to date first (a stat per file found; a restart's files
            # are checked by the sync its load queues, not by every search meanwhile)
            self._wait_synced(tenant, name, FRESH_WAIT_S)
            with self._lock:
                state = self._state(tenant, repo)
            hits = repo.memory.search(read, k, path, cosines=cosines, focused=windows)
        if cosines is None or self.vectors is None or not read.terms or read.tests or hits and not (
                repo.memory.names_only_itself(read, own_words(name, repo.head.path))):
            return hits, state, False
        # no definition has a word or name of the request, or none but the project's own name (written in another
        # language than the code); not for tests asked for (they have no vectors) nor a request of no word at all
        near = self.vectors.nearest((tenant, name), repo.memory, read.text, k, path)
        return (near, state, True) if near else (hits, state, False)  # (none by meaning under a path of tests alone:
        # what the project's name found)

    def _whole_hits(self, tenant: str, name: str, read: CodeQuery, hits: list[Hit], memory: RepoMemory | None,
                    texts: dict[str, str]) -> list[Hit]:
        """Functions (methods) that rank above their parts, and the definitions a request of names looks up, whole: a
        unit stops at its definition's first nested one (a function's inner function, a class's first method), so the
        first part is widened to the definition's last line from the file's text as indexed (a function was shown to
        its inner one's line, its later part a hit of its own further down), and the hits that lie inside it (its
        inner definitions, its later parts) are left out, their lines being its own. An inner function that ranks
        above its parent is shown as itself, and so is its parent's part after it; a class not looked up stays its
        own lines (its methods are hits of their own), and so does a test group (its tests are); a file indexed again
        since the search read it keeps the part. With `memory` (a client shown windows), a function widened whole that
        no place of the request points into is shown around its best line (`RepoMemory.matched_line`), as a long part
        is: attrs's 256-line `_attrs_to_init_script` was shown from its signature, the lines of the bug 180 below."""
        def first_of_its_parts(i: int) -> bool:  # (a part of it that ranks higher is shown as itself: its lines
            return not any(_in_definition_of(h.unit, hits[i].unit) for h in hits[:i])  # matched)

        wanted = [i for i, hit in enumerate(hits)
                  if hit.unit.definition_end > hit.unit.end_line and not hit.unit.rest and (
                      looked_up(hit.unit, read.lookup) or hit.unit.kind in WHOLE_KINDS and first_of_its_parts(i))
                  or _short_rest(hit.unit) and first_of_its_parts(i)]  # (a function's code after an inner one: shown
        # with its signature)
        self._read_texts(tenant, name, {hits[i].unit.path for i in wanted}, texts)
        widened = list(hits)
        matching = memory if not (read.paths_only or read.at_lines or read.lookup) else None
        for i in wanted:
            whole = _whole_definition(hits[i].unit, texts.get(hits[i].unit.path))
            focus = hits[i].focus
            if matching is not None and whole is not None:  # (a frame's line first, as a part's)
                focus = place_in(read, whole) or matching.matched_line(read, whole)
            widened[i] = hits[i] if whole is None else Hit(whole, hits[i].score, focus)
        kept = [hit for hit in widened if not any(_within(hit.unit, o.unit) and o.unit != hit.unit for o in widened)]
        return _one_per_definition(kept, lambda hit: place_in(read, hit.unit) > 0)

    def _read_texts(self, tenant: str, name: str, paths: Collection[str], texts: dict[str, str]) -> None:
        """`texts` with the stored text of each of `paths` it does not hold yet, in one read of the store."""
        texts.update(self._file_texts(tenant, name, [p for p in paths if p not in texts]))

    def _file_texts(self, tenant: str, name: str, paths: Collection[str]) -> dict[str, str]:
        """The stored text of each file, as indexed, in one read of the store."""
        keys = {file_key(tenant, name, path): path for path in paths}
        found = self.store.get(SPEC.name, list(keys), payload=("text",)) if keys else {}
        return {keys[key]: str(point.payload.get("text", "")) for key, point in found.items()}

    def _packed(self, hits: list[Hit], budget: int, name: str, state: str, caveats: Caveats, windows: bool,
                asked: bool, matched: Callable[[list[CodeResult]], list[CodeResult]]) -> tuple[list[CodeResult], int]:
        """The hits within `budget` as the agent is shown them (`render_answer`), and that answer's tokens; each cut
        one with the lines not shown that hold the most of the request's words (`matched`: trimming a line off the
        last one later leaves them not shown); with `asked`, the first the definition a look-up names."""
        closing = max(self.tokenizer.count("\n\n" + closing_line(name, shown, left, state, caveats))
                      for shown in {1, len(hits)} for left in {0, len(hits)})  # (its longest form: it says what the
        results = matched(pack_hits(hits, self._line_tokens, budget - closing, windows, asked))  # packing leaves
        # out)

        def answer(shown: list[CodeResult]) -> str:
            return render_answer(name, shown, len(hits), state, caveats)

        tokens = self.tokenizer.count(answer(results))
        while results and tokens > budget:  # the parts were counted apart: the whole, as shown, decides; the lines
            pointing = [i for i, r in enumerate(results) if r.matched_lines]  # pointed at go first, the last one's
            results = [*results[:pointing[-1]], replace(results[pointing[-1]], matched_lines=()),  # first, then
                       *results[pointing[-1] + 1:]] if pointing else trimmed(results)  # the code shown
            tokens = self.tokenizer.count(answer(results))
        return results, tokens

    def _with_matched(self, tenant: str, name: str, read: CodeQuery, memory: RepoMemory,
                      results: list[CodeResult], texts: dict[str, str]) -> list[CodeResult]:
        """Each cut result with the lines of its definition not shown that hold the most of the request's words
        (`matched_lines`), from its file's text as indexed: an agent told "read client.py lines 293-1463" of a
        1,200-line class read all of it, or guessed, for the three lines the request was about."""
        cut = {r.path for r in results if not r.whole}
        if not cut or not read.terms or read.at_lines or read.paths_only:  # (a place's or a path's words are its
            return results  # path's: `router.go:1012` said "the request's words most at lines 886", router's)
        self._read_texts(tenant, name, cut, texts)  # (those widened whole are read already)
        lines = {path: texts[path].split("\n") for path in cut if path in texts}
        shown: dict[str, set[int]] = {}  # every line the answer shows, of each file: a class's rest holds its
        for r in results:  # methods, hits of their own below it, whose lines it would point at again
            shown.setdefault(r.path, set()).update(range(max(r.shown_start_line, r.start_line), r.shown_end_line + 1))
        return [r if r.whole else replace(r, matched_lines=_matched_lines(r, lines.get(r.path), shown[r.path], read,
                                                                          memory))
                for r in results]

    def ranking_for(self, tenant: str, query: str, base: str | None = None, first: int = 1) -> RepoRanking:
        """What the tenant's indexed repositories say of a request, for a cut of their files' text: how one ranks
        the files a grep's lines name (relative ones from `base`, the folder the tool ran in, else from the
        repository's root: `_shares`), and the definitions of a source file read from its line `first` on
        (`_definitions`). A boost only: when the repositories cannot be read, nothing (the cut goes on with its own
        ranking)."""

        def files(paths: Sequence[str]) -> Mapping[str, float]:
            return _or_nothing(lambda: self._shares(tenant, query, paths, base)[1], {})

        def units(path: str, text: str) -> Sequence[tuple[int, int, float]]:
            return _or_nothing(lambda: self._definitions(tenant, query, path, text, base, first), [])

        return RepoRanking(files, units)

    def rank_files(self, tenant: str, query: str, paths: Sequence[str], base: str | None = None) -> FileOrder:
        """`paths` (a Glob's or a grep's list of files) in the order the tenant's repository holding them ranks them
        for the request, best first; those it does not rank keep their order after them; unchanged when no
        repository holds them."""
        repo, shares = self._shares(tenant, query, paths, base)
        order = sorted(range(len(paths)), key=lambda i: (-shares.get(paths[i], -1.0), i))
        return FileOrder(repo, [paths[i] for i in order], sum(1 for p in paths if p in shares))

    def _shares(self, tenant: str, query: str, paths: Sequence[str], base: str | None
                ) -> tuple[str | None, dict[str, float]]:
        """The repository holding `paths` (`_holding`) and each held path's share of the best one's score in its
        search of the request over those files alone, lexical (the same request ranks the same files until the files
        change); paths it finds nothing in are left out."""
        held = self._holding(tenant, paths, base)
        if held is None:
            return None, {}
        repo, named = held
        if _due(repo, time.monotonic()) and self._edited_since(repo, named.values()):  # no stat when none is due
            self._catch_up(tenant, repo)  # this list is ranked as last indexed, the next one as the files are now
        best: dict[str, float] = {}
        for hit in repo.memory.search(read_code_query(query), repo.memory.unit_count, within=set(named.values())):
            best[hit.unit.path] = max(best.get(hit.unit.path, 0.0), hit.score)
        top = max(best.values(), default=0.0)
        shares = {path: best[own] / top for path, own in named.items() if own in best} if top > 0 else {}
        return repo.head.name, shares

    def _definitions(self, tenant: str, query: str, path: str, text: str, base: str | None,
                     first: int = 1) -> list[tuple[int, int, float]]:
        """The definitions of the repository holding `path` that lie within `text` (the file as the cut reads it,
        from its line `first` on: a Read's window, or the 2,000 lines Claude Code reads of a longer file), their
        spans as lines of `text`, when its lines are still the indexed ones at every such definition (a file edited
        since its last sync gets none), each with its place in the repository's ranking of those definitions for the
        request (lexical, as `_shares`), from the worst (0) to the best (1): every definition matches some words of
        a long request, so only the spread tells them apart (on bench.code's dev split, shares of the best score
        lowered the place shown; python -m bench.code --repository)."""
        held = self._holding(tenant, [path], base)
        if held is None:
            return []
        repo, named = held
        lines = text.split("\n")  # (only a read of an indexed file is split: every source file's cut asks)
        read = read_code_query(query)
        found, rows = repo.memory.candidates(read, within={named[path]})
        last = first + len(lines) - 1
        inside = [j for j, u in enumerate(found) if first <= u.start_line and u.end_line <= last]
        units = [found[j] for j in inside]
        if not units:
            return []
        if any("\n".join(lines[u.start_line - first:u.end_line - first + 1]) != u.text for u in units):
            self._catch_up(tenant, repo)  # edited since its last sync: what the index ranked is not what is read
            return []
        rows = rows[inside]
        rows[:, SIGNALS.index("path")] = 0.0  # one file's: naming it tells none apart
        scores = combine(rows, units, query=read)
        low, top = float(scores.min()), float(scores.max())
        spread = max(top - low, MIN_SPREAD * top)  # scores all but equal tell the definitions apart by nothing
        if spread <= 0:
            return []
        return [(u.start_line - first + 1, u.end_line - first + 1, (float(s) - low) / spread)
                for u, s in zip(units, scores, strict=True)]

    @staticmethod
    def _edited_since(repo: _Repo, paths: Iterable[str], unknown: bool = True) -> bool:
        """Whether any of a repository's `paths` has another size or mtime than when its last sync read it (a grep's
        or a Glob's files, whose lines a cut cannot check against the index as a read's are): a stat per file. A path
        no sync of this process has read yet (a restart's index, loaded from the store) counts as `unknown`."""
        root = Path(repo.head.path)
        for path in paths:
            if not unknown and path not in repo.stats:
                continue
            try:
                info = os.stat(root / path)
            except OSError:
                return True  # deleted since
            if repo.stats.get(path) != (info.st_mtime_ns, info.st_size):
                return True
        return False

    def _catch_up(self, tenant: str, repo: _Repo) -> None:
        """A sync queued for a repository a read shows otherwise than indexed, or whose files a grep or a Glob lists
        were changed since (an agent's edit), so its next cut is ranked again; none while one is queued or under way,
        nor more often than every CATCH_UP_S (a read that never matches, a Read's cut long lines say, must not walk
        the repository at every call)."""
        now = time.monotonic()
        with self._lock:
            if not _due(repo, now):
                return
            repo.caught_up_at = now
        self.sync(tenant, repo.head.name)

    def _holding(self, tenant: str, paths: Sequence[str], base: str | None = None
                 ) -> tuple[_Repo, dict[str, str]] | None:
        """The repository holding most of `paths` (relative to `base` or else its folder, or absolute inside it,
        through a symlink too), at least half of them, with each held path's own name in it; of folders indexed one
        inside the other that hold as many, the innermost; None when none does or two apart hold as many (two
        checkouts of one layout: which one the grep ran in is not known). Only a repository
        whose first sync is done counts: a half-indexed one would rank the same request otherwise a moment later
        (after a restart, each stored repository counts once the worker has loaded it: `_resume`)."""
        with self._lock:
            repos = [r for (t, _), r in self._repos.items() if t == tenant and r.finished > 0]
        distinct = list(dict.fromkeys(paths))  # a path listed twice is one file
        resolve = functools.cache(_realpath)  # once per path, not once per path and repository
        found = []
        for repo in repos:
            named = {p: own for p in distinct if (own := _inside(repo.head.path, p, base, resolve))
                     and repo.memory.holds(own)}
            if named and 2 * len(named) >= len(distinct):
                found.append((repo, named))
        most = max((len(named) for _, named in found), default=0)
        tied = sorted((pair for pair in found if len(pair[1]) == most), key=lambda pair: -len(pair[0].head.path))
        if not tied or any(not nested(pair[0].head.path, tied[0][0].head.path) for pair in tied[1:]):
            return None
        return tied[0]  # one repository, or folders indexed inside one another: the innermost knows these files

    def close(self) -> None:
        self._jobs.put(None)
        self._worker.join(timeout=30)
        if self.vectors is not None:
            self.vectors.close()

    def _state(self, tenant: str, repo: _Repo) -> str:
        if repo.running or repo.requested > repo.finished:
            return "indexing"
        ready = self.vectors is not None and self.vectors.ready((tenant, repo.head.name), repo.memory)
        return "ready" if ready else "lexical"

    # --- repositories in memory -------------------------------------------------------------------------

    def _get(self, tenant: str, name: str) -> _Repo:
        """The repository (loaded from the store on first use after a start); NotFound names `ctxsieve index`."""
        repo = self._repos.get((tenant, name)) or self._stored(tenant, name)
        if repo is None:
            held = self._names(tenant)  # (a trial's agent asked for `tmp`, its folder's name, and was not told which
            indexed = f" (indexed: {', '.join(held[:10])}{', ...' if len(held) > 10 else ''})" if held else ""  # are)
            raise NotFound(f"repository {name!r} is not indexed{indexed}: run `ctxsieve index PATH --name {name}` "
                           f"(or PUT /v1/repos/{name} with its path)")
        return repo

    def _names(self, tenant: str) -> list[str]:
        """The names of the tenant's repositories, in order."""
        found = scroll_all(self.store, SPEC.name, Where((Match("tenant", tenant), Match("type", "repo"))),
                           payload=("repo",))
        return sorted({str(f.payload["repo"]) for f in found})

    def _stored(self, tenant: str, name: str) -> _Repo | None:
        found = scroll_all(self.store, SPEC.name, scope(tenant, name, "repo"), most=1)
        head = next((head_of(f.payload) for f in found), None)
        if head is None:
            return None
        repo = _Repo(head)
        self._repos[(tenant, name)] = repo
        repo.requested += 1  # load what the store holds, then catch up with the folder
        self._jobs.put((tenant, name))
        return repo

    # --- the worker ---------------------------------------------------------------------------------------

    def _work(self) -> None:
        self._resume()
        while (job := self._jobs.get()) is not None:
            tenant, name = job
            with self._lock:
                repo = self._repos.get(job)
                if repo is None or repo.running:
                    continue
                repo.running, repo.error, covers = True, None, repo.requested
            try:
                self._run_sync(tenant, repo)
                if self.vectors is not None:
                    self.vectors.want((tenant, name), repo.memory)
            except (CtxsieveError, OSError) as exc:
                log.warning("repository %s: sync failed: %s", name, exc)
                repo.error = f"{type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 - a bug: said loudly, and the worker lives on for the others
                log.exception("repository %s: sync failed", name)
                repo.error = f"{type(exc).__name__}: {exc}"
            finally:
                with self._lock:
                    repo.running, repo.finished = False, covers
                    if repo.requested > repo.finished:  # asked again while running
                        self._jobs.put(job)
                    self._changed.notify_all()

    def _resume(self) -> None:
        """Every repository the store holds, loaded and brought up to date behind a (re)start: searches and the cuts
        that read them (`ranking_for`) find them as they were, not after a first request has asked for each."""
        try:
            found = scroll_all(self.store, SPEC.name, Where((Match("type", "repo"),)), payload=("tenant", "repo"))
        except Exception as exc:  # noqa: BLE001 - each is still loaded when a request names it
            log.warning("stored repositories not resumed: %s: %s", type(exc).__name__, exc)
            return
        for tenant, name in sorted({(f.payload["tenant"], f.payload["repo"]) for f in found}):
            with self._lock:
                if (tenant, name) not in self._repos:
                    self._stored(tenant, name)

    def _run_sync(self, tenant: str, repo: _Repo) -> None:
        if not repo.loaded:
            self._load(tenant, repo)
        root = Path(repo.head.path)
        if not root.is_dir():
            raise NotFound(f"{root}: the repository's folder is gone")
        listing = walk(root)
        files = listing.files
        changed, skipped = self._changed_files(repo, root, files)
        skipped.update(listing.skipped)
        repo.done, repo.total, repo.dropped, repo.skipped = 0, len(changed), 0, skipped
        repo.read_paths, repo.dropped_paths = [state.path for state in changed[:SKIPPED_NAMED]], []
        try:
            for batch in _batches(changed, BATCH_FILES):
                self._write(tenant, repo, batch)
                repo.done += len(batch)
                if self.progress is not None:
                    self.progress(repo.head.name, repo.done, repo.total)
        except BaseException:  # the files not written are read again by the next sync, not taken for unchanged
            for state in changed[repo.done :]:
                repo.stats.pop(state.path, None)
            raise
        listed = set(files)
        repo.unreadable &= listed
        repo.failed &= listed
        for path in sorted(set(repo.memory.hashes()) - listed):
            self.store.delete_where(SPEC.name, scope(tenant, repo.head.name, path=path))
            repo.memory.drop_file(path)
            repo.stats.pop(path, None)
            repo.dropped += 1
            if len(repo.dropped_paths) < SKIPPED_NAMED:
                repo.dropped_paths.append(path)
        repo.head = replace(repo.head, head=git_head(root), indexed_at=utc_stamp(), files=repo.memory.file_count,
                            definitions=repo.memory.unit_count, skipped=dict(skipped.counts),
                            skipped_paths=skipped.paths)
        with self._lock:  # as `delete` holds it: a repository deleted while this sync ran stays deleted
            if self._repos.get((tenant, repo.head.name)) is repo:
                self.store.upsert(SPEC.name, [head_point(tenant, repo.head)])
            else:  # what this sync wrote after the delete goes too
                self.store.delete_where(SPEC.name, scope(tenant, repo.head.name))

    def _changed_files(self, repo: _Repo, root: Path, files: list[str]) -> tuple[list[FileState], Skipped]:
        """The files whose bytes differ from what is indexed (a file whose size and mtime are unchanged is not
        read again); binary, huge and unreadable files counted apart."""
        indexed = repo.memory.hashes()
        changed: list[FileState] = []
        skipped = Skipped()
        for path in files:
            try:
                info = os.stat(root / path)
            except OSError:  # removed between the listing and now
                continue
            seen = (info.st_mtime_ns, info.st_size)
            if path in indexed and repo.stats.get(path) == seen and path not in repo.unreadable \
                    and path not in repo.failed:
                continue
            # Looked at, read or not: a grep listing a file it cannot read must not queue a catch-up every time
            # (`_edited_since`); an indexed one keeps its last complete state, and each sync tries it again (a
            # `chmod` back changes neither its mtime nor its size).
            repo.stats[path] = seen
            try:
                state = read_source(root, path)
            except OSError:
                skipped.add("unreadable", path)
                repo.unreadable.add(path)
                continue
            repo.unreadable.discard(path)
            if state.text is None:
                skipped.add(state.why, path)
            elif indexed.get(path) != state.hash:
                changed.append(state)
            else:  # back to what is indexed
                repo.failed.discard(path)
        return changed, skipped

    def _write(self, tenant: str, repo: _Repo, batch: list[FileState]) -> None:
        """Each file's point (its text and units, in one upsert), then the memory swap."""
        name = repo.head.name
        parsed = []
        for state in batch:
            try:
                parsed.append((state, units_of(state.path, state.text or "")))
            except Exception:  # noqa: BLE001 - a reading bug in one file: said loudly, the others indexed, and
                # this one keeps its last complete state, tried again (and counted) at each sync as unreadable ones
                log.exception("repository %s: %s not indexed", name, state.path)
                repo.skipped.add("failed", state.path)
                repo.failed.add(state.path)
                continue
            repo.failed.discard(state.path)
        self.store.upsert(SPEC.name, [file_point(tenant, name, s.path, s.hash, s.text or "", u) for s, u in parsed])
        for state, units in parsed:
            repo.memory.put_file(state.path, state.hash, units, line_count(state.text or ""))

    def _load(self, tenant: str, repo: _Repo) -> None:
        """What the store holds: each file as it was last indexed whole (its units found again from its stored
        text, and stored so, where an earlier version of `units_of` found them)."""
        stale: list[FileState] = []
        for found in scroll_all(self.store, SPEC.name, scope(tenant, repo.head.name, "file"), page=256):
            payload = found.payload
            if current_units(payload):
                repo.memory.put_file(payload["path"], payload["hash"], units_of_point(payload),
                                     line_count(payload["text"]))
                continue
            stale.append(FileState(payload["path"], payload["hash"], payload["text"]))
            if len(stale) == BATCH_FILES:  # written a batch at a time: the texts are not all held at once
                self._write(tenant, repo, stale)
                stale = []
        if stale:
            self._write(tenant, repo, stale)
        repo.loaded = True


def line_count(text: str) -> int:
    """A file's lines: its last newline ends its last line, it opens none."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _one_per_definition(hits: list[Hit], placed: Callable[[Hit], bool]) -> list[Hit]:
    """The hits less a definition's part (its first, or one after a nested definition) below another of its parts: each
    is shown under the definition's span, so black's `_handle_regular_fmt_block` was twice in one answer under one head
    line (3rd and 10th, its inner function 1st), and so was rich's `_traverse` when a long part was shown around its
    best line. The rest of it is a read away, and the slot is another definition's. A part the request's place points
    into (`placed`: a traceback's frame) takes its definition's slot from one it does not: its line is shown."""
    slot: dict[tuple[str, int, int], int] = {}
    out: list[Hit] = []
    for hit in hits:
        span = _definition_of(hit.unit)
        if span is None or span not in slot:
            if span is not None:
                slot[span] = len(out)
            out.append(hit)
        elif placed(hit) and not placed(out[slot[span]]):
            out[slot[span]] = hit
    return out


def _definition_of(unit: CodeUnit) -> tuple[str, int, int] | None:
    """The definition a part belongs to (path, first and last line); None for a unit that is a whole definition."""
    if unit.rest:
        return unit.path, unit.definition_start, unit.definition_end
    if unit.definition_end > unit.end_line:
        return unit.path, unit.start_line, unit.definition_end
    return None


def _within(inner: CodeUnit, outer: CodeUnit) -> bool:
    """`inner` lies within `outer`'s own lines (those of a function widened whole hold its nested definitions and
    later parts; a class's, its head alone), or is `outer`."""
    return outer.path == inner.path and outer.start_line <= inner.start_line and inner.end_line <= outer.end_line


REST_WHOLE_LINES = 60  # a function's later part ranking first is shown as the whole function up to this long,
# and so is a definition nested in one (`_as_short_outer`)


def _from_top(query: str, root: str) -> str:
    """The query with the repository's own folder taken off the paths it writes whole (`/tmp/echo/bind.go`, as agents
    write them, is `bind.go`: a trial's was a search, not a listing of the file at the repository's top)."""
    if not root or root == "/":
        return query
    return re.sub(rf"(?<![\w/.@+-]){re.escape(root.rstrip('/'))}/(?=[\w.@+-])", "", query)


def _within_repository(path: str | None, root: str) -> str | None:
    """A `path` glob as the repository's paths are written: a trial's `./binding` and `/tmp/gin/binding` (the folder
    as a shell names it) were refused, no file matching. Written so, from the repository's top, it stays there: a
    name alone becomes `/name` (`matches`: `./*.go` is the top folder's Go files, not any folder's)."""
    if not path:
        return path
    if path.startswith("/"):
        for form in (posixpath.normpath(path), os.path.realpath(path)):  # (the root as registered: its real path)
            if PurePosixPath(form).is_relative_to(root):
                path = f"./{PurePosixPath(form).relative_to(root).as_posix()}"
                break
    if path != "." and not path.startswith("./"):
        return path
    path = posixpath.normpath(path)  # (`./a/../b` is `b`)
    return "" if path == "." else path if "/" in path else f"/{path}"


WIDEST = 8  # times k the hits a search looks through for k not inside each other


def _as_short_outer(read: CodeQuery, hits: list[Hit], memory: RepoMemory) -> list[Hit]:
    """Each hit of the tests nested in a function of the tests of at most REST_WHOLE_LINES lines (a test's own `class
    CustomReader(...)`, a handler it defines) as that test's first part, which is shown whole: alone, the inner
    definition came first and its test after it as a signature and "lines 877-899 not shown", the test's body nowhere
    (a user trial over aiohttp). Not in shipped code, where an inner function ranking first is shown as itself (a
    56-line `build_form` shown from its first line left out the inner `submit_signup` asked about), nor a definition
    the request looks up by name. A hit inside a short function an earlier hit stands for is left out (its own first
    part, its later part)."""
    out: list[Hit] = []
    shown: list[CodeUnit] = []  # the short functions the hits so far stand for
    for hit in hits:
        if any(_within_short(hit.unit, whole) for whole in shown):
            continue
        outer = None if looked_up(hit.unit, read.lookup) or not in_tests(hit.unit) else _short_outer(hit.unit, memory)
        out.append(hit if outer is None else Hit(outer, hit.score, hit.focus))
        if outer is not None or in_tests(hit.unit) and _is_short_function(hit.unit):
            shown.append(out[-1].unit)
    return out


MATCHED_LINES = 3  # the lines not shown a cut result points at, where the request's words are most
LINE_WORDS = 8  # the request's rarest words (that the code holds) they are found by: an issue's 80 words made every
# line of a 2,000-line module a candidate, +17 ms a search on ansible (bench.repos)
MATCH_SCAN_LINES = 3000  # of a definition's lines not shown, looked through on each side (a generated file's class)


def _matched_lines(result: CodeResult, lines: list[str] | None, shown: set[int], read: CodeQuery,
                   memory: RepoMemory) -> tuple[int, ...]:
    """The MATCHED_LINES lines of `result`'s definition that the answer does not show (`shown`: its lines of the
    file) with the most of the request's rarest words (by their idf; comment lines not counted), in line order; none
    when its file's text (`lines`) is not the one it was cut from."""
    if lines is None:
        return ()
    first = max(result.shown_start_line, result.start_line)
    if "\n".join(lines[first - 1 : result.shown_end_line]) != result.text:
        return ()
    low, high = max(result.start_line, first - MATCH_SCAN_LINES), min(result.end_line,
                                                                      result.shown_end_line + MATCH_SCAN_LINES)
    weights = memory.line_weights(read, "\n".join(lines[low - 1 : high]), result.path, LINE_WORDS, read.short)
    weighed = [(weight, low + i) for i, weight in enumerate(weights) if weight > 0 and low + i not in shown]
    return tuple(sorted(line for _, line in sorted(weighed, key=lambda w: (-w[0], w[1]))[:MATCHED_LINES]))


def _is_short_function(unit: CodeUnit) -> bool:
    return unit.kind in WHOLE_KINDS and not unit.rest and \
        unit.last_line - unit.start_line < REST_WHOLE_LINES


def _within_short(unit: CodeUnit, function: CodeUnit) -> bool:
    """`unit` lies in `function`'s lines (the function's first part itself included)."""
    return unit.path == function.path and function.start_line <= unit.start_line and \
        unit.end_line <= function.last_line


def _short_outer(unit: CodeUnit, memory: RepoMemory) -> CodeUnit | None:
    """The first part of the outermost function of at most REST_WHOLE_LINES lines that `unit` is nested in; else
    None."""
    around = [u for u in memory.units_of(unit.path)
              if _is_short_function(u) and u.start_line < unit.start_line and unit.end_line <= u.definition_end]
    return min(around, key=lambda u: u.start_line, default=None)  # (the outermost: a definition nested twice
    # stands for the test, not for the helper between, which the test's first part would not be widened over)


def _short_rest(unit: CodeUnit) -> bool:
    """A function's code after an inner function (ripgrep's `trim_ascii_prefix` after its `fn is_space`), in one of
    at most REST_WHOLE_LINES lines: shown as its later part it had no signature, only "lines 446-462 not shown"."""
    return unit.rest and unit.kind in WHOLE_KINDS and unit.definition_start > 0 and \
        unit.definition_end - unit.definition_start < REST_WHOLE_LINES


def _in_definition_of(inner: CodeUnit, part: CodeUnit) -> bool:
    """`inner` lies within the definition `part` is a part of (its first, or a later one), and is not `part`."""
    span = _definition_of(part)
    return span is not None and inner.path == span[0] and span[1] <= inner.start_line and inner.end_line <= span[2] \
        and inner != part


def _whole_definition(unit: CodeUnit, text: str | None) -> CodeUnit | None:
    """The definition `unit` begins (or, a later part, belongs to), through its last line, from its file's text as
    indexed; None when that text is not the one the unit was read from (indexed again since)."""
    if text is None:
        return None
    lines = text.split("\n")
    if "\n".join(lines[unit.start_line - 1 : unit.end_line]) != unit.text:
        return None
    first = unit.definition_start if unit.rest else unit.start_line
    return replace(unit, start_line=first, end_line=unit.definition_end, rest=False, definition_start=0,
                   text="\n".join(lines[first - 1 : unit.definition_end]))


def _inside(root: str, path: str, base: str | None = None,
            resolve: Callable[[str], str | None] | None = None) -> str | None:
    """`path` as the repository at `root` (a resolved folder) names it: relative to `base` (an absolute folder) or
    else to `root` (`./`, `\\` and `a/../b` as they resolve), or absolute under `root`, as written or once its
    symlinks are resolved (`resolve`, `_realpath` by default); None when outside, or when it names no file here."""
    if base is not None and not os.path.isabs(path):
        path = os.path.join(base, path.replace("\\", "/"))
    if not os.path.isabs(path):
        own = posixpath.normpath(path.replace("\\", "/"))
        return None if own in (".", "..") or own.startswith("../") else own
    under = _under(root, path)
    if under is not None:
        return under
    real = (resolve or _realpath)(path)
    return _under(root, real) if real is not None else None


def _due(repo: _Repo, now: float) -> bool:
    """A catch-up sync may be queued: none is queued or under way, and none was in the last CATCH_UP_S."""
    return not repo.running and repo.requested <= repo.finished and now - repo.caught_up_at >= CATCH_UP_S


def _realpath(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (ValueError, OSError):  # a NUL byte, a loop of links: no file of a repository
        return None


def _under(root: str, path: str) -> str | None:
    try:
        relative = os.path.relpath(path, root).replace(os.sep, "/")
    except ValueError:  # another drive (Windows), a NUL byte
        return None
    return None if relative in (".", "..") or relative.startswith("../") else relative


def _or_nothing(ask: Callable[[], T], nothing: T) -> T:
    try:
        return ask()
    except Exception as exc:  # noqa: BLE001 - a boost only: the cut goes on with its own sound ranking
        log.warning("a cut not ranked by the repositories: %s: %s", type(exc).__name__, exc)
        return nothing


def _batches(items: list[FileState], size: int) -> Iterator[list[FileState]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _status(repo: _Repo, state: str, vectors_left: int | None) -> RepoStatus:
    head = repo.head
    files, units = (repo.memory.file_count, repo.memory.unit_count) if repo.loaded else (head.files, head.definitions)
    return RepoStatus(head.name, head.path, files, units, state, head.head,  # while loading: as last stored
                      head.indexed_at, dict(repo.skipped.counts or head.skipped or {}), repo.done, repo.total,
                      repo.dropped, repo.error, vectors_left, {why: list(paths) for why, paths in (
                          repo.skipped.paths if repo.skipped.counts else head.skipped_paths or {}).items()},
                      list(repo.read_paths), list(repo.dropped_paths))
