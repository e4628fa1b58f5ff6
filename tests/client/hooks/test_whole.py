"""Where the hooks and the proxy find a tool call's whole output: ctxsieve's capture of a Bash call (run through the
real capture script as Claude Code hands it a command), Claude Code's saved output, and nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ctxsieve_client.hooks.whole import capture_script, evaluated, saved_whole, whole_output

SCRIPT = "source /x/shell-snapshots/snapshot-bash-1.sh 2>/dev/null || true && eval {} < /dev/null && pwd -P >| /tmp/c"


def claude_script(command: str) -> str:
    """The script Claude Code hands its shell (and CLAUDE_CODE_SHELL_PREFIX) for a Bash call."""
    return SCRIPT.format("'" + command.replace("'", "'\"'\"'") + "'")


def test_the_command_a_script_evaluates() -> None:
    command = "python -c 'import sys; print(sys.argv)' \"a b\" && echo it's"
    assert evaluated(claude_script(command)) == command
    assert evaluated("bash /x/hook.sh") is None, "a hook or a status line is no Bash call"


def test_the_capture_keeps_output_and_status_and_is_claimed_once(tmp_path: Path) -> None:
    command = "echo out; echo err >&2; exit 3"
    env = {"PATH": "/usr/bin:/bin", "CTXSIEVE_CAPTURE_DIR": str(tmp_path), "CLAUDE_CODE_SESSION_ID": "s-1"}
    done = subprocess.run([str(capture_script()), claude_script(command)], env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 3 and done.stdout == "out\nerr\n", "the command's own status and output"
    payload = {"tool_name": "Bash", "session_id": "s-1", "tool_input": {"command": command}}
    whole = whole_output(payload, tmp_path)
    assert whole is not None and (whole.text, whole.origin) == ("out\nerr\n", "capture")
    assert whole_output(payload, tmp_path) is None, "claimed once, then gone"
    other = subprocess.run([str(capture_script()), "echo hook"], env=env, capture_output=True, text=True, timeout=30)
    assert other.stdout == "hook\n" and not list(tmp_path.glob("s-1/*")), "anything else runs untouched, uncaught"


def test_only_an_agents_saved_output_is_read(tmp_path: Path) -> None:
    saved = tmp_path / "projects" / "p" / "s-1" / "tool-results" / "b1.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text("the whole log\n" * 5000)
    preview = f"<persisted-output>\nOutput too large (68.4KB). Full output saved to: {saved}\n\nPreview (first 2KB):\n"
    whole = saved_whole(preview + "the whole log\n</persisted-output>")
    assert whole is not None and whole.text == saved.read_text()
    elsewhere = saved_whole(preview.replace(str(saved), "/etc/passwd"))
    assert elsewhere is not None and elsewhere.text is None and "not in an agent's folder" in elsewhere.origin
    response = {"stdout": "the whole", "persistedOutputPath": str(saved)}
    mine = whole_output({"tool_name": "Bash", "session_id": "s-1", "tool_response": response}, tmp_path)
    assert mine is not None and mine.text == saved.read_text()
    theirs = whole_output({"tool_name": "Bash", "session_id": "s-2", "tool_response": response}, tmp_path)
    assert theirs is not None and theirs.text is None, "another session's saved output is not this call's"


def test_a_gone_sessions_captures_are_dropped_after_a_day(tmp_path: Path) -> None:
    import os
    import time

    old = tmp_path / "s-old"
    old.mkdir()
    (old / "1-2-3.out").write_text("never claimed")
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    whole_output({"tool_name": "Bash", "session_id": "s-new", "tool_input": {"command": "ls"}}, tmp_path)
    assert not old.exists()
