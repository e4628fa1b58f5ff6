"""`ctxsieve hook claude-code`: a PostToolUse command hook for Claude Code and the Claude Agent SDK.

It reads the hook's JSON on stdin and, for a tool output over `passthrough_tokens`, writes on stdout
`{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": ...}}`: the same shape the tool
returned (Read's `file.content`, Bash's `stdout`, WebFetch's `result`, an MCP tool's content blocks, a plain
string), its text replaced by the snippets the current step needs and a placeholder naming
`mcp__ctxsieve__filter_ref` / `mcp__ctxsieve__fetch_ref`. Claude Code rejects a replacement of another shape and
keeps the original, hence the shape is kept. Small outputs and failures are left alone (a failed call fires
PostToolUseFailure, not this hook). Whatever goes wrong, the hook exits 0 with no output, so the tool's own answer
reaches the model, and says why on stderr.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..client import Call
from ..cutting import CALL_WORDS, CutOptions, cut_request, cut_text, passes, was_cut
from ..gateway.names import first_text
from ..models import FilterResult, Snippet
from ..wrap import render_map

TOOL_PREFIX = "mcp__ctxsieve__"  # how Claude Code names the tools of the `ctxsieve` MCP server it registers
TRANSCRIPT_TAIL = 200_000  # bytes of the transcript read from its end (the latest turns are all that is used)
TRANSCRIPT_WAIT_S = 0.5  # Claude Code writes its transcript behind the hook's call: the user's turn may land shortly
Rebuild = Callable[[str], Any]
M = TypeVar("M")


HookOptions = CutOptions


class Sender(Protocol):
    """What sends the filter call: the typed client (the command hook), or the service itself (its http hook)."""

    def send(self, call: Call[M]) -> M: ...


def session_of(payload: Any) -> str | None:
    """Claude Code's session as the ctxsieve session, so GET /v1/sessions/cc-... shows this agent's reads."""
    session = payload.get("session_id") if isinstance(payload, dict) else None
    return f"cc-{session}"[:128] if isinstance(session, str) and session else None


def extract(response: Any) -> tuple[str, Rebuild] | None:
    """The text of a tool response of any shape Claude Code passes, and how to put other text back in that shape;
    None when there is no text to cut."""
    if isinstance(response, str):
        return response, lambda shown: shown
    if isinstance(response, list):
        texts = [b.get("text", "") for b in response if isinstance(b, dict) and b.get("type") == "text"]
        if not texts:
            return None
        others = [b for b in response if not (isinstance(b, dict) and b.get("type") == "text")]
        return "\n".join(texts), lambda shown: [{"type": "text", "text": shown}, *others]
    if not isinstance(response, dict):
        return None
    file = response.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):  # Read
        return file["content"], lambda shown: {**response, "file": {**file, "content": shown}}
    for key in ("stdout", "result", "content", "output", "text"):  # Bash, WebFetch, Grep, MCP results
        value = response.get(key)
        if isinstance(value, str) and value:
            return value, _replacing(response, key, lambda shown: shown)
        inner = extract(value) if isinstance(value, list) and key == "content" else None
        if inner is not None:
            return inner[0], _replacing(response, key, inner[1])
    return None


def _claude_names(placeholder: str) -> str:
    """The placeholder's tool calls as Claude Code names the tools of the `ctxsieve` MCP server."""
    return placeholder.replace("filter_ref(", f"{TOOL_PREFIX}filter_ref(").replace(
        "fetch_ref(", f"{TOOL_PREFIX}fetch_ref(")


def _replacing(response: dict[str, Any], key: str, inner: Rebuild) -> Rebuild:
    return lambda shown: {**response, key: inner(shown)}


def intent_of(tool_input: Mapping[str, Any], transcript: Path | None) -> str | None:
    """The call's own query-like field, else the latest user request and assistant text of the transcript."""
    own = first_text(tool_input, CALL_WORDS)
    if own is not None or transcript is None:
        return own
    deadline = time.monotonic() + TRANSCRIPT_WAIT_S
    turns = latest_turns(transcript)
    while turns[0] is None and time.monotonic() < deadline:  # not written yet (seen with the real CLI)
        time.sleep(0.025)
        turns = latest_turns(transcript)
    return " ".join(t for t in turns if t) or None


def latest_turns(transcript: Path) -> tuple[str | None, str | None]:
    """The latest user request (not a tool result) and the latest assistant text in a Claude Code transcript."""
    try:
        with transcript.open("rb") as f:
            f.seek(max(0, transcript.stat().st_size - TRANSCRIPT_TAIL))
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None, None
    user = assistant = None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        text = _text(message.get("content"))
        if message.get("role") == "user" and user is None and text:
            user = text
        elif message.get("role") == "assistant" and assistant is None and text:
            assistant = text
        if user and assistant:
            break
    return user, assistant


def _transcript(path: Any) -> Path | None:
    """Claude Code's transcript (a .jsonl file): nothing else named in a payload is read."""
    return Path(path) if isinstance(path, str) and path.endswith(".jsonl") else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):  # tool results are not what the user asked
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text").strip()
    return ""


def handle(payload: Any, client: Sender, options: HookOptions) -> dict[str, Any] | None:
    """The hook's answer for one PostToolUse payload, or None to leave the output alone."""
    if not isinstance(payload, Mapping) or payload.get("hook_event_name") != "PostToolUse":
        return None
    found = extract(payload.get("tool_response"))
    if found is None:
        return None
    text, rebuild = found
    tool_input = payload.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, Mapping) else {}
    if passes(text, options):  # before reading the transcript for an intent
        return None
    intent = intent_of(tool_input, _transcript(payload.get("transcript_path")))
    request = cut_request(text, intent, str(payload.get("tool_name", "tool")), tool_input, options)
    if request is None:
        return None
    result = client.send(request)
    file = payload.get("tool_response", {}).get("file") if isinstance(payload.get("tool_response"), dict) else None
    if payload.get("tool_name") == "Read" and result.content_type == "code" and isinstance(file, dict) \
            and was_cut(result, options):
        return _numbered_read(payload["tool_response"], file, result)
    shown = cut_text(result, options, _claude_names)
    if shown is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": rebuild(shown)}}


def _numbered_read(response: dict[str, Any], file: dict[str, Any], result: FilterResult) -> dict[str, Any]:
    """A code file's cut as Read's own output, with the file's line numbers. Claude Code numbers Read's content
    from `startLine` on: one contiguous run of lines goes as it is, from its first line, so Claude Code's numbers
    are the file's; several runs carry each line's number before a `│` (Claude Code's own numbering of such a cut
    is not the file's, and the note says so). The placeholder goes beside the output, never among its lines."""
    runs = _runs(result.snippets)
    if len(runs) == 1:
        first, text = runs[0]
        content, start, note = text, first, ""
    else:
        blocks = ["\n".join(f"{first + i:>6}│{line}" for i, line in enumerate(text.split("\n")))
                  for first, text in runs]
        content, start = "\n     ⋮\n".join(blocks), 1
        note = ("The number before │ on each line is its line in the file (Read's own numbering of this cut is "
                "not); edit by the text after │. ")
    lines = content.count("\n") + 1
    shown = ", ".join(f"{first}-{first + text.count(chr(10))}" for first, text in runs)
    context = f"ctxsieve cut this Read to lines {shown} of {file.get('totalLines', '?')}. {note}" + \
        _claude_names(result.placeholder) + (f"\n{render_map(result.map)}" if result.map else "")
    replaced = {**response, "file": {**file, "content": content, "startLine": start, "numLines": lines}}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": replaced,
                                   "additionalContext": context}}


def _runs(snippets: list[Snippet]) -> list[tuple[int, str]]:
    """Snippets joined into runs of the file's lines: (first line, text). Consecutive chunks (their ids' numbers)
    are separated only by blank lines, which are put back."""
    ordered = sorted(snippets, key=lambda s: s.line_start or 0)
    runs: list[tuple[int, str, int, int]] = []  # first line, text, last line, last chunk number
    for snippet in ordered:
        number = int(snippet.id.rsplit("#", 1)[-1]) if snippet.id.rsplit("#", 1)[-1].isdigit() else -2
        first, last = snippet.line_start or 1, snippet.line_end or 1
        if runs and number == runs[-1][3] + 1:
            start, text, end, _ = runs[-1]
            runs[-1] = (start, text + "\n" * (first - end) + snippet.text, last, number)
        else:
            runs.append((first, snippet.text, last, number))
    return [(first, text) for first, text, _, _ in runs]
