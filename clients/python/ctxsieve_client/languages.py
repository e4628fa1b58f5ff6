"""Source files, as every part of ctxsieve tells one: the one table of suffixes (each with its tree-sitter grammar),
a script's `#!` line, the arguments a tool call names its file (and a read's first line) by, and what an absolute
folder is. Pure and standard-library only: the service's code kind (ctxsieve.ingest.kinds.code), its file reader
(ctxsieve.indexes.files) and the surfaces read the same table."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

# a file's extension -> its tree-sitter grammar (PyPI `tree-sitter-language-pack`)
LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".tpp": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".php": "php", ".sh": "bash",
    ".bash": "bash", ".zsh": "bash", ".bats": "bash", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift",
    ".scala": "scala", ".lua": "lua", ".pl": "perl", ".pm": "perl", ".t": "perl", ".ex": "elixir", ".exs": "elixir",
    ".vue": "vue", ".svelte": "svelte", ".dart": "dart", ".r": "r", ".m": "objc", ".mm": "objc",
    ".ps1": "powershell", ".psm1": "powershell", ".tf": "hcl", ".hcl": "hcl",
    ".hs": "haskell", ".jl": "julia", ".zig": "zig",
}
# a script's `#!` line: its interpreter (`#!/bin/sh`, `#!/usr/bin/env -S python3 -u`), the grammar it is written in
_SHEBANG = re.compile(r"#![ \t]*\S*/(?:env[ \t]+(?:-\S+[ \t]+)*)?([a-z]+)")
_INTERPRETERS = {"python": "python", "sh": "bash", "bash": "bash", "zsh": "bash", "dash": "bash", "ksh": "bash",
                 "bats": "bash",
                 "node": "javascript", "nodejs": "javascript", "ruby": "ruby", "lua": "lua", "php": "php",
                 "perl": "perl", "elixir": "elixir", "pwsh": "powershell", "runhaskell": "haskell", "julia": "julia"}


def shebang_language(text: str) -> str | None:
    """The grammar a script's first line names (jq's tests/shtest, a `bin/` command with no suffix): the match is
    anchored at the text's start and stays on its first line, so any text may be passed whole."""
    found = _SHEBANG.match(text)
    return _INTERPRETERS.get(found.group(1)) if found is not None else None


PATH_ARGUMENTS = ("file_path", "path", "filename", "file", "filepath", "target_file", "relative_path")


def source_path(args: Mapping[str, Any]) -> str | None:
    """The file a tool call names (Read's `file_path`, a read_text_file's `path`, ...), if any."""
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def first_line(tool: str | None, args: Mapping[str, Any]) -> int:
    """The file's line a read's text begins at: Claude Code's Read `offset` (its `startLine`), else 1 (another
    tool's `offset` may count bytes or from 0)."""
    offset = args.get("offset")
    usable = tool == "Read" and isinstance(offset, int) and not isinstance(offset, bool) and offset > 1
    return offset if usable and isinstance(offset, int) else 1


CLAUDE_READ_LINES = 2_000  # the lines Claude Code's Read gives of a longer file when the call sets no `limit`
# a shell command printing part of a file from its start: `head -n 80 x.py`, `sed -n '1,200p' x.py`
_WINDOW_COMMAND = re.compile(r"(?:^|[\s;&|(`\"'])(?:head|sed\s+-n)\s")


def reads_to_end(tool: str | None, args: Mapping[str, Any], lines: int) -> bool:
    """Whether a read's text (of `lines` lines) runs to its file's end: not a window of it (Read's `limit`,
    read_text_file's `head`, a `head` or `sed -n` command), nor the first CLAUDE_READ_LINES lines Claude Code's Read
    gives of a longer file."""
    if any(isinstance(args.get(key), int) for key in ("limit", "head")):
        return False
    if tool == "Read" and lines >= CLAUDE_READ_LINES:
        return False
    return not any(_WINDOW_COMMAND.search(command) for command in command_texts(args))


def command_texts(args: Mapping[str, Any]) -> list[str]:
    """The call's arguments that may be a shell command: each string, and each list of strings (`["bash", "-lc",
    "cat x.py"]`) joined."""
    return [v for v in args.values() if isinstance(v, str)] + \
        [" ".join(v) for v in args.values() if isinstance(v, list) and all(isinstance(w, str) for w in v)]


_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")  # C:\work, C:/work, \\server\share


def usable_folder(value: object) -> str | None:
    """A working folder an agent states, as the service takes it (absolute, at most 4,096 characters, no NUL)."""
    usable = isinstance(value, str) and is_absolute_folder(value) and len(value) <= 4_096 and "\0" not in value
    return value if usable and isinstance(value, str) else None


def is_absolute_folder(path: str) -> bool:
    """Absolute as the system that wrote it writes it: POSIX (`/work`) or Windows (`C:\\work`, `\\\\server\\share`),
    whatever system reads it (a hook on one machine, the service on another)."""
    return path.startswith("/") or _WINDOWS_ABSOLUTE.match(path) is not None


def is_source(path: str) -> bool:
    """The path's suffix is a source file's (read as code)."""
    return PurePosixPath(path).suffix.lower() in LANGUAGES
