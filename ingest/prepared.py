"""Prepared model files (the ONNX export, its int8 form, the OpenVINO IR, the static table) recognised by what they
were made from, not by when.

`record` writes beside a prepared file, in `<file>.inputs`, the version of the step that made it and the sha256 of
each input; `current` says whether the file is there and was made by that version from inputs with those contents.
Timestamps decide nothing, so a cache copied without them (`cp -r`) is reused, not prepared again. They only spare
the reading: an input whose size, mtime and inode are the recorded ones is not hashed again (the weights are 470 MB);
one that differs is hashed, and the record brought up to date when its content is the same.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger("ctxsieve")


def record_path(target: Path) -> Path:
    return target.with_name(target.name + ".inputs")


def current(target: Path, inputs: Sequence[Path], version: str) -> bool:
    """`target` exists and was made by `version` of its step from inputs with these contents."""
    recorded = _load(record_path(target))
    files = recorded.get("inputs")
    if not target.exists() or recorded.get("version") != version or not isinstance(files, dict):
        return False
    if set(files) != {p.name for p in inputs}:
        return False
    moved = [p for p in inputs if files[p.name].get("stat") != _stat(p)]
    if not moved:
        return True
    log.info("%s: comparing %s with the record by content (moved or touched since)", target.name,
             ", ".join(p.name for p in moved))
    if any(sha256(p) != files[p.name].get("sha256") for p in moved):
        return False
    _save(record_path(target), {"version": version, "inputs": {**files, **{p.name: _entry(p) for p in moved}}})
    log.info("%s: made from the same contents, reused", target.name)
    return True


def recorded_version(target: Path) -> str | None:
    """The version of the step that made `target`, as its record says (None: no readable record)."""
    version = _load(record_path(target)).get("version")
    return version if isinstance(version, str) else None


def record(target: Path, inputs: Sequence[Path], version: str) -> None:
    """Say, beside `target` just made, what it was made from."""
    _save(record_path(target), {"version": version, "inputs": {p.name: _entry(p) for p in inputs}})


@contextmanager
def writing(target: Path) -> Iterator[Path]:
    """This process's own file to write `target` into, renamed into place when the block ends and removed if it fails:
    two processes preparing at once never write one file, and an interrupted start leaves no half-written file."""
    partial = target.with_name(f"partial-{os.getpid()}-{target.name}")
    try:
        yield partial
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)


def sha256(path: Path) -> str:
    return _sha256(str(path.resolve()), *_stat(path))


@functools.lru_cache(maxsize=32)
def _sha256(path: str, *stat: int) -> str:  # noqa: ARG001 - the stat keys the cache: a changed file is read again
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _stat(path: Path) -> list[int]:
    info = path.stat()
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _entry(path: Path) -> dict[str, Any]:
    return {"sha256": sha256(path), "stat": _stat(path)}


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or unreadable: the file is prepared again
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, Any]) -> None:
    try:
        with writing(path) as partial:
            partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:  # a read-only cache is still used; its inputs are only hashed again at the next start
        log.warning("%s not written: %s", path, exc)
