"""A change install plans to one file: its bytes before and after, shown as the lines it adds and removes."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Change:
    path: Path
    before: bytes | None  # None: the file does not exist
    after: bytes
    agent: str
    kind: str  # how uninstall takes ctxsieve's part out of it (install.REMOVERS)
    mode: int | None = None  # for a file install creates (the capture script is executable)

    @property
    def pending(self) -> bool:
        return self.before != self.after

    def lines(self) -> list[str]:
        """The lines added (+) and removed (-), without context: what the plan shows."""
        old = (self.before or b"").decode("utf-8", "replace").splitlines()
        new = self.after.decode("utf-8", "replace").splitlines()
        diff = difflib.unified_diff(old, new, n=0, lineterm="")
        return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
