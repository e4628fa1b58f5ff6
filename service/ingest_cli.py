"""`ctxsieve ingest PATH --collection NAME`: index a folder into a collection, incrementally.

Through a running service (`--url`), or directly on a data dir when none runs. A file's id is its path
relative to PATH; unchanged files (same content hash as stored) are skipped before anything is sent, and
`--prune` removes the documents of files that are gone.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctxsieve.indexes.collections import NewDocument
from ctxsieve.indexes.errors import CtxsieveError
from ctxsieve.indexes.files import SUFFIX_TYPES, decode

DEFAULT_GLOB = "**/*"
TEXT_SUFFIXES = {*SUFFIX_TYPES, ".pdf"}


class Target(Protocol):
    def ensure(self, name: str) -> None: ...
    def stored(self, name: str) -> dict[str, str]: ...
    def add(self, name: str, docs: list[NewDocument]) -> int: ...
    def remove(self, name: str, doc_id: str) -> None: ...


class HttpTarget:
    """A running service, through the typed client."""

    def __init__(self, url: str, api_key: str | None) -> None:
        from ctxsieve_client import Client

        self.client = Client(url, api_key=api_key, timeout=600)

    def ensure(self, name: str) -> None:
        from ctxsieve_client import CtxsieveError as ServiceError

        try:
            self.client.collection(name)
        except ServiceError as exc:
            if exc.status != 404:
                raise SystemExit(f"ctxsieve answered {exc}") from exc
            self.client.create_collection(name)

    def stored(self, name: str) -> dict[str, str]:
        hashes: dict[str, str] = {}
        offset: int | None = 0
        while offset is not None:  # every page: an unchanged file is skipped only if its hash is known
            page = self.client.list_documents(name, offset, 1000)
            hashes.update((d.id, d.hash) for d in page.documents)
            offset = page.next_offset
        return hashes

    def add(self, name: str, docs: list[NewDocument]) -> int:
        return self.client.add_documents(name, [{"id": d.id, "text": d.text, "title": d.title,
                                                 "metadata": d.metadata or {}, "content_type": d.content_type}
                                                for d in docs]).chunks

    def remove(self, name: str, doc_id: str) -> None:
        self.client.delete_document(name, doc_id)


class LocalTarget:
    def __init__(self, engine: Any, tenant: str) -> None:
        self.index = engine.collections
        self.tenant = tenant

    def ensure(self, name: str) -> None:
        try:
            self.index.info(self.tenant, name)
        except CtxsieveError:
            self.index.create(self.tenant, name, "")

    def stored(self, name: str) -> dict[str, str]:
        hashes: dict[str, str] = self.index.hashes(self.tenant, name)
        return hashes

    def add(self, name: str, docs: list[NewDocument]) -> int:
        return int(self.index.add(self.tenant, name, docs)[1])

    def remove(self, name: str, doc_id: str) -> None:
        self.index.remove(self.tenant, name, doc_id)


@dataclass
class Summary:
    files: int = 0
    skipped: int = 0
    unreadable: int = 0
    chunks: int = 0
    tokens: int = 0
    pruned: int = 0
    seconds: float = 0.0


def documents(root: Path, pattern: str) -> Iterator[tuple[Path, NewDocument | None]]:
    for path in sorted(root.glob(pattern)):
        if not path.is_file() or path.is_symlink() or path.suffix.lower() not in TEXT_SUFFIXES:
            continue
        try:
            text, kind = decode(path.read_bytes(), path)
        except CtxsieveError:
            yield path, None
            continue
        rel = path.relative_to(root).as_posix()
        yield path, NewDocument(rel, text, title=path.name, metadata={"path": rel}, content_type=kind)


def ingest(root: Path, name: str, target: Target, pattern: str, prune: bool, count_tokens: Any) -> Summary:
    from rich.progress import Progress

    started = time.perf_counter()
    summary = Summary()
    target.ensure(name)
    stored = target.stored(name)
    found = list(documents(root, pattern))
    seen: set[str] = set()
    with Progress(transient=True) as progress:
        task = progress.add_task(f"ingesting into {name}", total=len(found))
        for path, doc in found:
            progress.advance(task)
            if doc is None:
                summary.unreadable += 1
                progress.console.print(f"[yellow]skipped {path}: not text")
                continue
            seen.add(doc.id)
            summary.files += 1
            if stored.get(doc.id) == doc.digest():
                summary.skipped += 1
                continue
            summary.chunks += target.add(name, [doc])
            summary.tokens += count_tokens(doc.text)
    if prune:
        for doc_id in sorted(set(stored) - seen):
            target.remove(name, doc_id)
            summary.pruned += 1
    summary.seconds = time.perf_counter() - started
    return summary
