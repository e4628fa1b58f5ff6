"""A repository's points in the store: its head, and one point per file with its units. Keys are deterministic,
so re-indexing the same content writes the same points.

A file's point holds its text as indexed and its units' places (name, kind, lines, signature): one upsert stores a
file whole, so whatever moment a crash or a kill -9 stops a sync at, each file is stored as it was or as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxsieve.ingest.coderank.units import UNITS_VERSION, CodeUnit

from ..store import Match, PointData, SpaceSpec, Where, layout

__all__ = ["SPEC", "RepoHead", "current_units", "file_key", "file_point", "head_of", "head_point", "scope",
           "units_of_point"]

SPEC = SpaceSpec(name=layout.REPOS, indexes={"tenant": "keyword", "repo": "keyword", "type": "keyword",
                                             "path": "keyword", "hash": "keyword"})
_SEP = "\x1f"


@dataclass(frozen=True)
class RepoHead:
    name: str
    path: str
    head: str | None = None
    indexed_at: str | None = None
    files: int = 0
    definitions: int = 0
    skipped: dict[str, int] | None = None
    skipped_paths: dict[str, list[str]] | None = None  # the first few of each why


def scope(tenant: str, repo: str, kind: str | None = None, path: str | None = None) -> Where:
    must = [Match("tenant", tenant), Match("repo", repo)]
    if kind is not None:
        must.append(Match("type", kind))
    if path is not None:
        must.append(Match("path", path))
    return Where(tuple(must))


def head_point(tenant: str, head: RepoHead) -> PointData:
    return PointData(key=_SEP.join(("repo", tenant, head.name)), payload={
        "type": "repo", "tenant": tenant, "repo": head.name, "path": head.path, "head": head.head,
        "indexed_at": head.indexed_at, "files": head.files, "definitions": head.definitions,
        "skipped": dict(head.skipped or {}), "skipped_paths": dict(head.skipped_paths or {})})


def head_of(payload: dict[str, Any]) -> RepoHead:
    return RepoHead(payload["repo"], payload["path"], payload.get("head"), payload.get("indexed_at"),
                    int(payload.get("files", 0)), int(payload.get("definitions", 0)), payload.get("skipped") or {},
                    payload.get("skipped_paths") or {})


def file_point(tenant: str, repo: str, path: str, digest: str, text: str, units: list[CodeUnit]) -> PointData:
    """The file's bytes as indexed and its units' places: one point, so a file is stored whole or not at all."""
    return PointData(key=file_key(tenant, repo, path), payload={
        "type": "file", "tenant": tenant, "repo": repo, "path": path, "hash": digest, "text": text,
        "units": [[u.name, u.kind, u.start_line, u.end_line, u.signature, u.rest, u.definition_end, u.definition_start,
                   u.within, u.package] for u in units],
        "units_version": UNITS_VERSION})


def file_key(tenant: str, repo: str, path: str) -> str:
    return _SEP.join(("file", tenant, repo, path))


def current_units(payload: dict[str, Any]) -> bool:
    """The point's units were found by this version's `units_of` (else they are found again from its text)."""
    return payload.get("units_version") == UNITS_VERSION


def units_of_point(payload: dict[str, Any]) -> list[CodeUnit]:
    """A file point's units, their text cut from the file's text as it was indexed."""
    lines = payload["text"].split("\n")
    return [CodeUnit(payload["path"], name, kind, first, last, "\n".join(lines[first - 1 : last]), signature, rest, end,
                     *more) for name, kind, first, last, signature, rest, end, *more in payload["units"]]
