"""Content kinds: what an output is, and how it is viewed, cut, ranked and shown (one module per kind).

The registry lists every kind once, in the order they are tried on text sent as `auto`: the first that claims
the text is its kind (JSON that parses, HTML, a diff, grep output, a test or build log, markdown, code; text
otherwise). A tool call naming a source file (Read of `x.py`), or a script (`#!/usr/bin/env bash`), is code whatever
its text looks like. Everything
that depends on a kind asks it (`kind_named(name)`); nothing else branches on a kind's name.
"""

from __future__ import annotations

from ctxsieve_client.languages import shebang_language

from .base import ByLines, Chunk, Cutting, Failure, Kind, Leaf, Piece, Prose, Verdict, Viewed, lines_budget
from .code import Code, language_of
from .diff import Diff
from .grep import Grep
from .html import Html
from .json import Json
from .log import Log
from .markdown import Markdown
from .text import Text

KINDS: tuple[Kind, ...] = (Json(), Html(), Diff(), Grep(), Log(), Markdown(), Code(), Text())
_BY_NAME: dict[str, Kind] = {kind.name: kind for kind in KINDS}
CONTENT_TYPES: tuple[str, ...] = tuple(_BY_NAME)
LINE_KINDS: tuple[str, ...] = tuple(kind.name for kind in KINDS if kind.shown_as.by_lines)
MIXED = Text()  # several documents of different kinds (one search's pages) are ranked as text


def kind_named(name: str) -> Kind:
    """The kind of a stored view (`mixed` for documents of several kinds)."""
    return _BY_NAME.get(name, MIXED)


def detect(text: str) -> Kind:
    return next(kind for kind in KINDS if kind.detect(text))


def resolve(content_type: str, text: str, path: str | None = None) -> Kind:
    """The kind a document is read as: the one named, else code for a source file the call names or a script (its
    `#!` line names an interpreter whose grammar ctxsieve has: a `bin/` command with no suffix, whose comments
    markdown would otherwise claim as headings), else detected."""
    if content_type != "auto":
        return kind_named(content_type)
    script = shebang_language(text) is not None
    return _BY_NAME["code"] if script or language_of(path) is not None else detect(text)


__all__ = ["CONTENT_TYPES", "KINDS", "LINE_KINDS", "ByLines", "Chunk", "Cutting", "Failure", "Kind", "Leaf", "Piece",
           "Prose", "Verdict", "Viewed", "detect", "kind_named", "lines_budget", "resolve"]
