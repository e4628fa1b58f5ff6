"""The source files of a repository: what git tracks or would track (`.gitignore` respected), else a walk of the
folder; vendored and build folders skipped, every language the code kind reads, binary and huge files counted."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ctxsieve_client.languages import LANGUAGES, shebang_language

__all__ = ["MAX_FILE_BYTES", "SKIPPED_FOLDERS", "FileState", "Walk", "head_of", "minified", "nested", "read_source",
           "walk"]

MAX_FILE_BYTES = 1 << 20  # a larger source file is generated or data: skipped and counted
SHEBANG_BYTES = 128  # read of a file with no suffix for its `#!` line
# scripts a build tool writes or vendors, with no suffix and a `#!` line: Gradle's and Maven's wrappers, autoconf's
GENERATED_SCRIPTS = frozenset({"gradlew", "mvnw", "configure", "config.status", "install-sh", "depcomp", "missing",
                               "compile", "ar-lib", "test-driver", "libtool", "ltmain", "mkinstalldirs", "py-compile"})
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "vendor", "third_party", "thirdparty", "build", "dist", "target", "out",
    ".venv", "venv", "env", "site-packages", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".eggs", ".next", ".cache", "bower_components", "Pods", ".gradle", ".idea", ".vscode",
})


SKIPPED_NAMED = 5  # the files left out that a repository's status names, per why (the rest are counted)


@dataclass
class Skipped:
    """The files a sync left out: how many per why (binary, huge, minified, unreadable, outside, link, failed, and
    folder: a source file git tracks in a build, vendored or tool folder, SKIPPED_FOLDERS), the first few named."""

    counts: Counter[str] = field(default_factory=Counter)
    paths: dict[str, list[str]] = field(default_factory=dict)

    def add(self, why: str, path: str) -> None:
        self.counts[why] += 1
        named = self.paths.setdefault(why, [])
        if len(named) < SKIPPED_NAMED:  # a name in another encoding than UTF-8 as its bytes escaped: storable
            named.append(path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))

    def update(self, other: Skipped) -> None:
        self.counts.update(other.counts)
        for why, paths in other.paths.items():
            named = self.paths.setdefault(why, [])
            named.extend(paths[: SKIPPED_NAMED - len(named)])


@dataclass
class Walk:
    files: list[str] = field(default_factory=list)  # relative posix paths, sorted
    skipped: Skipped = field(default_factory=Skipped)


@dataclass(frozen=True)
class FileState:
    path: str
    hash: str  # sha256 of the bytes
    text: str | None  # None: binary, huge or minified (counted, not indexed)
    why: str = ""


def walk(root: Path) -> Walk:
    """The repository's candidate source files (by suffix, or a script's `#!` line; outside skipped folders)."""
    listed = _git_files(root)
    names = listed if listed is not None else _walked(root)
    out = Walk()
    real_root = os.path.realpath(root)
    for name in sorted(set(names)):
        parts = PurePosixPath(name).parts
        if any(p in SKIPPED_FOLDERS or p.endswith(".egg-info") for p in parts[:-1]):
            if listed is not None and PurePosixPath(name).suffix.lower() in LANGUAGES:  # (tracked: fastify's build/
                out.skipped.add("folder", name)  # scripts, where `index` said "skipped: none"; by suffix alone, no
            continue  # stat or read of a vendored tree's every file)
        if (root / name).is_file() and _source(root, name):  # (a named pipe, opened, would never answer)
            if not _storable(name):
                out.skipped.add("unreadable", name)
            elif _links_out(root / name, real_root):
                out.skipped.add("outside", name)
            else:
                out.files.append(name)
    return _links_to_listed_left_out(root, real_root, out)


def _links_to_listed_left_out(root: Path, real_root: str, found: Walk) -> Walk:
    """A link to another of the repository's source files is that file again (SDWebImage's 61 headers in
    `include/SDWebImage/` link to `Core/`: every hit in them came twice): left out, counted as `link`; a link to a
    file not indexed under its own name is kept."""
    listed = set(found.files)
    kept: list[str] = []
    for name in found.files:
        own = os.path.relpath(os.path.realpath(root / name), real_root).replace(os.sep, "/") \
            if (root / name).is_symlink() else None  # (one lstat a file: realpath only for a link)
        if own is not None and own != name and own in listed:
            found.skipped.add("link", name)
        else:
            kept.append(name)
    found.files = kept
    return found


def _source(root: Path, name: str) -> bool:
    """A source file by its suffix, or a script with none by its `#!` line (jq's tests/shtest, a `bin/` command) that
    is no link (ansible's `bin/ansible` is `lib/ansible/cli/adhoc.py` again) and not a build tool's (`gradlew`)."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix:
        return suffix in LANGUAGES
    if (root / name).is_symlink() or PurePosixPath(name).name in GENERATED_SCRIPTS:
        return False
    try:
        with open(root / name, "rb") as script:
            head = script.read(SHEBANG_BYTES)
    except OSError:  # a folder git lists (a submodule), a file gone since it was listed
        return False
    return head.startswith(b"#!") and shebang_language(head.decode("utf-8", "replace")) is not None


def _links_out(path: Path, real_root: str) -> bool:
    """A symbolic link to a file outside the repository: indexing it would show what the service may not have been
    allowed to read (its read roots are checked for the repository's folder, not for what a link inside points at).
    Only the file itself can be a link here: git lists a linked folder as one entry and os.walk does not follow one."""
    return path.is_symlink() and not nested(real_root, os.path.realpath(path))


def nested(outer: str, inner: str) -> bool:
    """`inner` is `outer` or a path inside it (both resolved)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _storable(name: str) -> bool:
    """A name that is UTF-8 on disk: one in another encoding (its bytes kept as surrogates) cannot be stored or
    shown as it is."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_source(root: Path, name: str) -> FileState:
    data = (root / name).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if len(data) > MAX_FILE_BYTES:
        return FileState(name, digest, None, "huge")
    if b"\x00" in data[:8192]:
        return FileState(name, digest, None, "binary")
    if minified(name, data):
        return FileState(name, digest, None, "minified")
    return FileState(name, digest, decoded(data))


MINIFIED_LINE = 1000  # bytes per line on average, in a file over 20 such lines: a bundle or a minifier's output
MINIFIED_NAMED_LINE = 200  # and in a file named `x-min.js` (drf's `prettify-min.js`, 490 a line; `array-min.js` may
# be a person's code)


def minified(name: str, data: bytes) -> bool:
    """A minifier's or bundler's output (`app.min.js`, drf's `prettify-min.js`, `app.bundle.js`, Dokka's 692 KB
    `main.js` of 340,000-character lines): no definition a person wrote, and its parse took 30 s of a first index. A
    source file whose lines are code with a long line of data among hundreds is not one (its average stays low); a
    short file of little more than its data is. Lines end with `\n`, or `\r` alone (old Mac)."""
    stem = PurePosixPath(name).stem
    lines = max(data.count(b"\n"), data.count(b"\r")) + 1
    named = stem.endswith("-min") and PurePosixPath(name).suffix.lower() in (".js", ".mjs", ".cjs")
    return stem.endswith((".min", ".bundle")) or named and len(data) / lines > MINIFIED_NAMED_LINE \
        or len(data) > 20 * MINIFIED_LINE and len(data) / lines > MINIFIED_LINE


# a source file's own declaration of its encoding in its first two lines (PEP 263, Ruby's magic comment, Emacs and
# Vim modelines): `# -*- coding: latin-1 -*-`, `# encoding: iso-8859-1`
_CODING = re.compile(rb"^[ \t\f]*(?:#|//|/\*|--).*?coding[:=][ \t]*([-\w.]+)")


def decoded(data: bytes) -> str:
    """A source file's text: UTF-8, else the encoding its first lines declare (`café` in a Latin-1 file read as
    UTF-8 was shown as `caf\ufffd`, and its definition `café_name` named `_name`), else UTF-8 with the bytes it cannot
    read replaced."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for line in data.split(b"\n", 2)[:2]:
        if (found := _CODING.match(line)) is not None:
            declared = _declared(data, found.group(1).decode("ascii"))
            if declared is not None:
                return declared
            break
    return data.decode("utf-8", "replace")


def _declared(data: bytes, encoding: str) -> str | None:
    """The text in the encoding a file declares, when that reads it line for line (an ASCII-compatible encoding
    whose text encodes back to the same bytes: `unicode_escape` would turn a `\\n` into a line of its own and shift
    every line number after it); None otherwise."""
    try:
        text = data.decode(encoding)
        same = text.encode(encoding) == data
    except (LookupError, UnicodeError, TypeError):
        return None
    return text if same and text.count("\n") == data.count(b"\n") else None


def head_of(root: Path) -> str | None:
    """The commit checked out, where the folder is a git repository."""
    done = _git(root, "rev-parse", "HEAD")
    return done.strip() if done else None


def _git_files(root: Path) -> list[str] | None:
    """Tracked files and untracked ones .gitignore lets in, relative to root; None outside a git repository."""
    done = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if done is None:
        return None
    return [n for n in done.split("\0") if n]


def _git(root: Path, *args: str) -> str | None:
    """git's output, bytes that are not UTF-8 kept as surrogates (as os.walk keeps them: a file named in another
    encoding is found, then counted as unreadable by `walk`, instead of failing the sync); None where git failed."""
    if not (root / ".git").exists() and not _inside_git(root):
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def _inside_git(root: Path) -> bool:
    return any((parent / ".git").exists() for parent in root.resolve().parents)


def _walked(root: Path) -> list[str]:
    out: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        base = Path(folder).relative_to(root)
        out.extend((base / f).as_posix() for f in files)
    return out
