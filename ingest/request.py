"""What a request about code names: identifiers written as code, and the frames of a traceback.

An issue or a step names the code it is about in forms prose does not use: `backticks`, calls (`run(`), dotted
paths (`ansible.vars.manager`), snake_case and CamelCase names, and traceback frames (`File "x/validators.py",
line 100, in __call__`, `at render (src/app.js:40:7)`, `main.go:12`). A definition whose name the request writes
that way, or whose lines a frame of this file points into, is what the request is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b")
_COMPOUND = re.compile(r"\b(?:_*[a-z0-9]+(?:_[a-z0-9]+)+_*|_{1,2}[a-z0-9_]+|[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+"
                       r"|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<>][\w<>]*))?')
_AT_FRAME = re.compile(r"\bat (?:([\w.$<>]+) )?\(?([\w./\\@+-]+\.\w+):(\d+)(?::\d+)?\)?")
_PATH_LINE = re.compile(r"([\w./\\@+-]+\.[A-Za-z]{1,5}):(\d+)\b")
# a Go module cache's folder of a module at a version (`.../pkg/mod/github.com/gin-gonic/gin@v1.9.1/`): the paths
# under it are the module's own
_MODULE_AT_VERSION = re.compile(r"^.*@v\d[\w.+-]*/")
_COMMON_TEXT = ("self cls this none true false null def class return import from if else for while in is not and or "
                "with as try except raise pass the a an of to etc")
_COMMON = frozenset(_COMMON_TEXT.split())


@dataclass(frozen=True)
class Frame:
    path: str
    line: int | None
    function: str | None


@dataclass(frozen=True)
class CodeRequest:
    names: frozenset[str]  # identifiers the request writes as code
    frames: tuple[Frame, ...]
    pairs: frozenset[tuple[str, str]] = frozenset()  # `Outer.inner` as written (dotted paths, qualified calls)

    def frames_in(self, path: str | None) -> list[Frame]:
        """The frames that point into this file (matched by its name, then by as much of its path as given)."""
        if not path:
            return []
        return [f for f in self.frames if paths_meet(f.path, path)]


def read_request(text: str) -> CodeRequest:
    names: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for quoted in _BACKTICKED.findall(text):
        names.update(_IDENTIFIER.findall(quoted))
    names.update(_CALLED.findall(text))
    for dotted in _DOTTED.findall(text):
        if not re.fullmatch(r"[\w.]+\.(py|js|ts|go|rs|java|rb|php|txt|md|json|yml|yaml|cfg|toml|html|com|org)",
                            dotted):
            parts = dotted.split(".")
            names.update(parts)
            pairs.update(zip(parts, parts[1:], strict=False))
    names.update(_COMPOUND.findall(text))
    frames = [Frame(p, int(n), f) for p, n, f in _PY_FRAME.findall(text)]
    frames += [Frame(_module_path(p), int(n), f or None) for f, p, n in _AT_FRAME.findall(text)]
    known = {(f.path, f.line) for f in frames}
    frames += [Frame(path, int(n), None) for p, n in _PATH_LINE.findall(text)
               if ((path := _module_path(p)), int(n)) not in known]
    names.update(f.function for f in frames if f.function)
    return CodeRequest(frozenset(n for n in names if len(n.strip("_")) >= 3 and n.lower() not in _COMMON),
                       tuple(frames), frozenset(pairs))


def _module_path(path: str) -> str:
    """A frame's path inside a Go module at a version, as the module's own repository has it: a panic's frames name
    files in the module cache (`/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/tree.go` is `tree.go`)."""
    return _MODULE_AT_VERSION.sub("", path.replace("\\", "/")) if "@v" in path else path


def paths_meet(written: str, path: str) -> bool:
    """A path as written names a file: the file's name and its folder agree (or just the name, when one side gives no
    folder). A traceback from an installed copy names the same module under another root (`site-packages/flask/app.py`
    is a checkout's `src/flask/app.py`), a Go panic's frame one in the module cache."""
    frame, own = (PurePosixPath(p.replace("\\", "/")).parts for p in (written, path))
    matching = 0
    for a, b in zip(reversed(frame), reversed(own), strict=False):
        if a != b:
            break
        matching += 1
    return matching >= min(2, len(frame), len(own)) and matching > 0
