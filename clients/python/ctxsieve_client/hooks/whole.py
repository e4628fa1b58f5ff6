"""A Claude Code tool call's whole output, wherever Claude Code left it.

Claude Code hands a PostToolUse hook only the first 30,000 characters of a Bash output and saves the whole output to
a file it names (`persistedOutputPath`); for a failing command it hands PostToolUseFailure only its own
head-and-tail cut (`error`, 10,000 characters of those 30,000) and saves the whole output nowhere. So
`capture.sh`, Claude Code's CLAUDE_CODE_SHELL_PREFIX, saves each Bash call's output whole, by session, beside the
script Claude Code ran (`<root>/<session>/<n>.cmd` and `.out`); the hooks find a call's capture by the command
that script evaluates. Only those two kinds of file are read: Claude Code's own tool-results of this session, and
captures under the capture root. Whatever cannot be read leaves the preview, and the note says why.
"""

from __future__ import annotations

import re
import shlex
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

MAX_WHOLE_BYTES = 24 * 1024 * 1024  # under the service's 32 MiB body limit, with the JSON escaping it may need
STALE_S = 24 * 3600  # a capture no hook claimed (an interrupted or backgrounded call) is dropped after a day
CAPTURE_SCRIPT = "capture.sh"
_PERSISTED = re.compile(r"\A<persisted-output>\nOutput too large \([^)\n]*\)\. Full output saved to: ([^\n]+)\n")
SAVED_FOLDERS = ("tool-results", "tool-output")  # where Claude Code and OpenCode save a whole output they cut
_EVAL = re.compile(r"(?:^|&& )eval ('(?:[^']|'\"'\"')*')(?= < /dev/null)")


@dataclass(frozen=True)
class Whole:
    text: str | None  # the whole output, or None: only the preview could be had
    origin: str  # what it was read from ("capture", "persisted"), or why it could not be


def capture_root() -> Path:
    """Where capture.sh saves outputs: one folder for every process whatever its TMPDIR (setup.state.capture_dir)."""
    from ..setup.state import capture_dir

    return capture_dir()


def capture_script() -> Path:
    """capture.sh as installed with this package (install copies it where it outlives the package's folder)."""
    return Path(str(resources.files(__package__ or "ctxsieve_client.hooks") / CAPTURE_SCRIPT))


def whole_output(payload: Mapping[str, Any], root: Path | None = None) -> Whole | None:
    """The whole output of the call the payload reports, when Claude Code showed less of it; None when what the
    payload holds is already the whole output (no capture, nothing persisted)."""
    if payload.get("tool_name") != "Bash":
        return None
    response = payload.get("tool_response")
    response = response if isinstance(response, Mapping) else {}
    if response.get("backgroundTaskId") or _input(payload).get("run_in_background"):
        return None  # still running: its output is in Claude Code's task file, not here yet
    command = _input(payload).get("command")
    captured = _claim(root or capture_root(), payload.get("session_id"), command) if isinstance(command, str) \
        else None
    if captured is not None:
        return captured
    persisted = response.get("persistedOutputPath")
    if isinstance(persisted, str):
        return _read_persisted(Path(persisted), payload.get("session_id"))
    return None


def _input(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    value = payload.get("tool_input")
    return value if isinstance(value, Mapping) else {}


def _claim(root: Path, session: Any, command: str) -> Whole | None:
    """The newest capture of this session whose script evaluates this command (deleted once read)."""
    folder = root / re.sub(r"[^A-Za-z0-9_-]", "", str(session or "none"))
    _drop_stale_sessions(root, folder)
    try:
        scripts = sorted(folder.glob("*.cmd"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    now = time.time()
    for script in scripts:
        try:
            stale = now - script.stat().st_mtime > STALE_S
            found = None if stale else evaluated(script.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if stale:
            _forget(script)
        elif found == command:
            whole = _read(script.with_suffix(".out"), "capture")
            _forget(script)
            return whole
    return None


def _drop_stale_sessions(root: Path, current: Path) -> None:
    """Other sessions' folders untouched for a day (their agents have gone): their captures will not be claimed."""
    now = time.time()
    try:
        stale = [d for d in root.iterdir() if d != current and d.is_dir() and now - d.stat().st_mtime > STALE_S]
    except OSError:
        return
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)


def evaluated(script: str) -> str | None:
    """The command a Claude Code Bash script evaluates (`... && eval '<command>' < /dev/null && pwd -P ...`)."""
    found = _EVAL.search(script)
    if found is None:
        return None
    try:
        words = shlex.split(found.group(1))
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def saved_whole(text: str, saved: str | None = None) -> Whole | None:
    """The whole output an agent saved and named in the text it showed (Claude Code's `<persisted-output>` preview,
    or the path `saved` another agent's mark named): only a regular file in such an agent's own folder is read."""
    found = _PERSISTED.match(text)
    path = found.group(1).strip() if found else saved
    if path is None:
        return None
    if Path(path).parent.name not in SAVED_FOLDERS:
        return Whole(None, f"{path} is not in an agent's folder of saved outputs")
    return _read(Path(path), "saved")


def _read_persisted(path: Path, session: Any) -> Whole:
    """Claude Code's saved output: only a tool-results file of this session's folder."""
    if not (isinstance(session, str) and path.parent.name == "tool-results" and path.parent.parent.name == session):
        return Whole(None, "the saved output is not a tool-results file of this session")
    return _read(path, "persisted")


def _read(path: Path, origin: str) -> Whole:
    try:
        if path.is_symlink() or not path.is_file():
            return Whole(None, f"{path} is not a regular file")
        size = path.stat().st_size
        if size > MAX_WHOLE_BYTES:
            return Whole(None, f"{path} has {size:,} bytes, over ctxsieve's {MAX_WHOLE_BYTES:,}")
        return Whole(path.read_bytes().decode("utf-8", errors="replace"), origin)
    except OSError as exc:
        return Whole(None, f"{path} could not be read ({exc.strerror or type(exc).__name__})")


def _forget(script: Path) -> None:
    for path in (script, script.with_suffix(".out")):
        path.unlink(missing_ok=True)
