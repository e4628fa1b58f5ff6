"""What `ctxsieve install` changed, so `uninstall` can put it back: one JSON file under the state folder, and a copy
of each changed file's bytes as they were before the first install touched it (none for a file install created)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@dataclass
class Entry:
    path: str
    agent: str
    kind: str  # how uninstall takes ctxsieve's part out if the file changed since (install.REMOVERS)
    backup: str | None  # the bytes before, in backups/; None: install created the file
    after: str  # sha256 of what install wrote: the file is still ours to restore while it matches
    mode: int | None = None  # the file's permission bits before


@dataclass
class Manifest:
    folder: Path
    url: str | None = None
    capture_dir: str | None = None  # Claude Code's capture folder, as install wrote it into its settings
    entries: dict[str, Entry] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)  # made by install: removed, when empty, once all is undone

    @property
    def file(self) -> Path:
        return self.folder / "manifest.json"

    @classmethod
    def load(cls, state: Path) -> Manifest:
        folder = state / "install"
        try:
            data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(folder)
        entries = {e["path"]: Entry(**e) for e in data.get("files", [])}
        return cls(folder, data.get("url"), data.get("capture_dir"), entries, data.get("folders", []))

    def note_folders(self, paths: list[Path]) -> None:
        """The folders that writing these files (and this record) will make: recorded before anything is made."""
        for path in [*paths, self.file]:
            missing = [p for p in path.parents if not p.exists()]
            self.folders += [str(p) for p in missing if str(p) not in self.folders]

    def record(self, path: Path, agent: str, kind: str, before: bytes | None, after: bytes) -> None:
        """The first install's bytes before are kept: a later install changes only what the file should now be."""
        known = self.entries.get(str(path))
        if known is not None:
            known.after = digest(after)
            return
        backup = None
        if before is not None:
            backup = f"{digest(str(path).encode())[:16]}.before"
            (self.folder / "backups").mkdir(parents=True, exist_ok=True)
            (self.folder / "backups" / backup).write_bytes(before)
        mode = path.stat().st_mode & 0o7777 if before is not None else None
        self.entries[str(path)] = Entry(str(path), agent, kind, backup, digest(after), mode)

    def before(self, entry: Entry) -> bytes | None:
        return None if entry.backup is None else (self.folder / "backups" / entry.backup).read_bytes()

    def forget(self, entry: Entry) -> None:
        self.entries.pop(entry.path, None)
        if entry.backup is not None:
            (self.folder / "backups" / entry.backup).unlink(missing_ok=True)

    def save(self) -> None:
        """Written before any file it records is changed; removed with its folder once nothing is left to undo."""
        if not self.entries:
            self.file.unlink(missing_ok=True)
            for folder in sorted({self.folder / "backups", self.folder, *map(Path, self.folders)},
                                 key=lambda p: -len(p.parts)):  # deepest first
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {"url": self.url, "capture_dir": self.capture_dir, "files": [asdict(e) for e in self.entries.values()],
                "folders": self.folders}
        partial = self.file.with_name("manifest.json.partial")
        partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        partial.replace(self.file)
