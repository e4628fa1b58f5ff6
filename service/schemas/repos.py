"""Repositories (code search)."""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from .common import MAX_K, MAX_TOKENS, Folder, Query, SearchText, Strict, UsageOut, no_nul, valid_unicode

RepoState = Literal["indexing", "lexical", "ready"]
PathText = Annotated[str, Field(min_length=1, max_length=4_096), AfterValidator(valid_unicode), AfterValidator(no_nul)]


def absolute(path: str) -> str:
    """A folder the service is to read: a relative one would be read from the service's own working folder."""
    if not os.path.isabs(path):
        raise ValueError("must be an absolute path (a relative one would be read from the service's working folder)")
    return path


AbsolutePath = Annotated[PathText, AfterValidator(absolute)]


class RepoPut(Strict):
    path: AbsolutePath


class RepoProgress(BaseModel):
    done: int  # files read by the sync under way
    total: int  # files it has to read (the ones whose content changed)
    dropped: int = 0  # files it dropped, gone from the folder
    vectors_left: int | None = None  # definitions still without a vector (state `lexical` until none is left)
    read_paths: list[str] = []  # the first five of the files it reads (new or changed), in path order
    dropped_paths: list[str] = []  # the first five of the files it dropped


class RepoInfo(BaseModel):
    name: str
    path: str
    files: int
    definitions: int
    state: RepoState
    head: str | None
    indexed_at: str | None
    skipped: dict[str, int]  # files left out, by why (binary, huge, minified, ...)
    progress: RepoProgress
    error: str | None = None  # the last sync's failure, verbatim
    skipped_paths: dict[str, list[str]] = {}  # the first five files left out of each why, by path
    vectors_off: bool = False  # the service makes no vectors: `lexical` is the state it stays in


class RepoList(BaseModel):
    repos: list[RepoInfo]


class CodeSearchQuery(Strict):
    query: SearchText
    k: Annotated[int, Field(ge=1, le=MAX_K)] = 10
    max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] | None = None
    path: Annotated[str, Field(min_length=1, max_length=512), AfterValidator(valid_unicode)] | None = None
    # the repository's folder: a repository not yet known is registered with it and indexed on first use (the
    # search waits a few seconds for the first index, then answers from what is indexed, state `indexing`)
    folder: AbsolutePath | None = None
    # the client numbers a hit's `text` from its `shown_start_line`: a hit may be shown around the line the query
    # points at (`app.py:1200`, a traceback's frame); without it each hit's text starts at its first line, as a
    # client from before the field reads it
    windows: bool = False


MAX_PATHS = 10_000  # a Glob or a grep lists a few hundred files (Claude Code's keep 100 and 250)


class FileRankQuery(Strict):
    query: Query
    paths: Annotated[list[PathText], Field(min_length=1, max_length=MAX_PATHS)]
    # the folder the tool ran in: relative paths are read from it (else from the repository's own folder)
    base: Folder | None = None


class FileRankResponse(BaseModel):
    repo: str | None  # the repository that ranked them; null when none of the tenant's holds them (order unchanged)
    paths: list[str]  # every path sent, once for each time it was sent: the ranked ones first, best first
    ranked: int  # how many lead `paths` by the repository's ranking; the rest keep the order they were sent in


class CodeHit(BaseModel):
    path: str
    name: str
    kind: str
    start_line: int  # the definition's true span, 1-based, inclusive
    end_line: int
    score: float
    text: str  # its lines from shown_start_line to shown_end_line, verbatim
    shown_end_line: int  # the last line in `text`: below end_line when the budget cut it
    # the first line in `text`: start_line, or below it when the hit is shown around the line the query points at
    shown_start_line: int
    matched_lines: list[int] = []  # of the lines not shown, up to three where the query's words are most
    within: str = ""  # a Rust trait impl's method: the impl's header (`impl fmt::Display for PathError`)


class CodeSearchResponse(BaseModel):
    repo: str
    results: list[CodeHit]
    usage: UsageOut
    state: RepoState
    undefined: list[str] = []  # a query of names alone: the names no definition has (the results: the nearest)
    missing: list[str] = []  # a query of files or places alone: those the repository has nothing at
    elsewhere: list[str] = []  # a trace's frames whose line is not in the definition they name (another version)
    by_meaning: bool = False  # no definition has a word or name of the query: the results are the nearest by meaning
    vectors_off: bool = False  # the service makes no vectors (`repo_vectors` off): state `lexical` is final
    foreign_words: bool = False  # words in Chinese, Japanese or Korean no definition holds: read by meaning (ready)
    outside_path: list[str] = []  # of `undefined`, the names a definition outside the files `path` matches has
    listing: bool = False  # a query of file paths alone: the results are their definitions in the files' order
    between: list[str] = []  # a query of places alone: those whose line is in no definition (either side shown)
    absent: list[str] = []  # a short query of words: those no definition holds in any form (the others found these)
