"""`ctxsieve hook claude-code`: a PostToolUse command hook for Claude Code and the Claude Agent SDK.

It reads the hook's JSON on stdin and, for a tool output over `passthrough_tokens`, writes on stdout
`{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": ...}}`: the same shape the tool
returned (Read's `file.content`, Bash's `stdout`, WebFetch's `result`, an MCP tool's content blocks, a plain
string), its text replaced by the snippets the current step needs and a placeholder naming
`mcp__ctxsieve__filter_ref` / `mcp__ctxsieve__fetch_ref`. Claude Code rejects a replacement of another shape and
keeps the original, hence the shape is kept. Small outputs, the answers of ctxsieve's own ref tools (under any
MCP server's name) and failures are left alone (a failed call fires PostToolUseFailure, not this hook). Whatever
goes wrong, the hook exits 0 with no output, so the tool's own answer reaches the model, and says why on stderr.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..client import Call
from ..cutting import (
    CutOptions,
    cut_request,
    cut_text,
    lists_files,
    named_placeholder,
    order_note,
    passes,
    rank_files_request,
    reordered,
    was_cut,
)
from ..fitting import CLAUDE_BASH, CLAUDE_HOOK_CONTEXT, LOG_HEAD, fit_failing
from ..intent import own_words, step_intent
from ..languages import usable_folder
from ..models import FilterResult
from ..placeholder import prefixed
from ..ref_tools import answered_by_ref_tool
from ..rendering import render_map
from ..wrap import render_result
from .whole import Whole, whole_output

TOOL_PREFIX = "mcp__ctxsieve__"  # how Claude Code names the tools of the `ctxsieve` MCP server it registers
CLAUDE_NAMES = prefixed(TOOL_PREFIX)
TRANSCRIPT_TAIL = 200_000  # bytes of the transcript read from its end (the latest turns are all that is used)
TRANSCRIPT_WAIT_S = 0.5  # Claude Code writes its transcript behind the hook's call: the user's turn may land shortly
CONTEXT_CHARS = CLAUDE_HOOK_CONTEXT.size  # Claude Code saves a longer hook context to a file, shows a 2 KB preview
FAILURE_TOKENS = 1000  # a failing command's context beyond its failures: it shares Claude Code's CONTEXT_CHARS
PERSISTED = ("persistedOutputPath", "persistedOutputSize")  # Claude Code's note that it showed only a preview
Rebuild = Callable[[str], Any]
M = TypeVar("M")


HookOptions = CutOptions


class Sender(Protocol):
    """What sends the filter call: the typed client (the command hook), or the service itself (its http hook)."""

    def send(self, call: Call[M]) -> M: ...


AGENT = "claude-code"  # the agent this hook's sessions are (X-Agent), as its MCP clientInfo names itself


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


def _replacing(response: dict[str, Any], key: str, inner: Rebuild) -> Rebuild:
    return lambda shown: {**response, key: inner(shown)}


def intent_of(tool_input: Mapping[str, Any], transcript: Path | None) -> str | None:
    """The one intent rule (intent.step_intent): the latest user request and assistant text of the transcript,
    and the call's own query-like field."""
    user, assistant = _waited_turns(transcript) if transcript is not None else (None, None)
    return step_intent(user, assistant, tool_input)


def _waited_turns(transcript: Path) -> tuple[str | None, str | None]:
    deadline = time.monotonic() + TRANSCRIPT_WAIT_S
    turns = latest_turns(transcript)
    while turns[0] is None and time.monotonic() < deadline:  # not written yet (seen with the real CLI)
        time.sleep(0.025)
        turns = latest_turns(transcript, deep=False)  # a turn written now lands at the end
    return turns


def latest_turns(transcript: Path, deep: bool = True) -> tuple[str | None, str | None]:
    """The latest user request (a prompt, not a tool result nor harness context such as a <system-reminder>) and
    the latest assistant text in a Claude Code transcript. Its tail is read first, then a longer one: the
    transcript also logs whole request copies, so the user's turn can lie megabytes back."""
    turns: tuple[str | None, str | None] = (None, None)
    for tail in (TRANSCRIPT_TAIL, TRANSCRIPT_TAIL * 40) if deep else (TRANSCRIPT_TAIL,):
        turns = _turns_in(_tail_lines(transcript, tail))
        if turns[0] is not None:
            break
    return turns


def _tail_lines(transcript: Path, tail: int) -> list[str]:
    try:
        with transcript.open("rb") as f:
            f.seek(max(0, transcript.stat().st_size - tail))
            return f.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _turns_in(lines: list[str]) -> tuple[str | None, str | None]:
    user = assistant = None
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "last-prompt" and user is None and isinstance(entry.get("lastPrompt"), str):
            user = own_words(entry["lastPrompt"], ("text",)) or None
        message = entry.get("message")
        if isinstance(message, dict) and entry.get("type") in ("user", "assistant"):
            text = own_words(message.get("content"), ("text",))
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


def handle(payload: Any, client: Sender, options: HookOptions) -> dict[str, Any] | None:
    """The hook's answer for one PostToolUse or PostToolUseFailure payload, or None to leave the output alone."""
    if not isinstance(payload, Mapping):
        return None
    if payload.get("hook_event_name") == "PostToolUse":
        return _post_tool_use(payload, client, options)
    if payload.get("hook_event_name") == "PostToolUseFailure":
        return _post_tool_use_failure(payload, client, options)
    return None


def _post_tool_use(payload: Mapping[str, Any], client: Sender, options: HookOptions) -> dict[str, Any] | None:
    """The tool's output in its own shape, cut from the whole output (Claude Code's saved one, or ctxsieve's
    capture, when Claude Code handed only a preview); a Glob's or Grep's list of files ranked instead."""
    listed = listed_files(payload)
    if listed is not None:
        return _ranked_files(payload, listed, client)
    found = extract(payload.get("tool_response"))
    if found is None or answered_by_ref_tool(str(payload.get("tool_name", "")), found[0]):
        return None
    preview, rebuild = found
    whole = whole_output(payload)
    text = whole.text if whole is not None and whole.text is not None else preview
    if passes(text, options):  # before reading the transcript for an intent
        return None
    tool_input = _tool_input(payload)
    intent = intent_of(tool_input, _transcript(payload.get("transcript_path")))
    request = cut_request(text, intent, str(payload.get("tool_name", "tool")), tool_input, options,
                          cwd=_cwd(payload))
    if request is None:
        return None
    result = client.send(request)
    response = payload.get("tool_response")
    file = response.get("file") if isinstance(response, dict) else None
    own_lines = result.view is not None and result.view.numbered  # the cut's line numbers are the read's
    if payload.get("tool_name") == "Read" and own_lines and isinstance(file, dict) \
            and isinstance(file.get("content"), str) and was_cut(result, options):
        return _numbered_read(response, file, result)  # type: ignore[arg-type]
    shown = cut_text(result, options, CLAUDE_NAMES, original=text)
    if shown is None:
        return None
    # a log's failures first, within what Claude Code shows of a Bash output without saving it to a file
    placeholder = named_placeholder(result, CLAUDE_NAMES)
    shown = fit_failing(result, LOG_HEAD, placeholder, CLAUDE_BASH, claude_ref_call) or shown
    replaced = rebuild(_unseen_note(whole) + shown)
    if isinstance(replaced, dict):  # the cut is what the model sees, not Claude Code's preview of the preview
        replaced = {k: v for k, v in replaced.items() if k not in PERSISTED}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": replaced}}


def listed_files(payload: Mapping[str, Any]) -> list[str] | None:
    """The files a Glob or a Grep in `files_with_matches` mode (its default) found, when there are several to
    order: Claude Code passes them as `filenames`, relative to its working folder."""
    response = payload.get("tool_response")
    if not isinstance(response, dict) or not lists_files(str(payload.get("tool_name")), _tool_input(payload)) \
            or response.get("mode", "files_with_matches") != "files_with_matches":
        return None
    names = response.get("filenames")
    if not isinstance(names, list) or len(names) < 2 or not all(isinstance(n, str) and n for n in names):
        return None
    return names


def _ranked_files(payload: Mapping[str, Any], listed: list[str], client: Sender) -> dict[str, Any] | None:
    """The list in the order the indexed repository holding its files ranks them for the request (the same files,
    each once as listed), with a line saying so; None (the list as the tool gave it) when no repository holds them
    or it ranks none."""
    call = rank_files_request(intent_of(_tool_input(payload), _transcript(payload.get("transcript_path"))), listed,
                              _cwd(payload))
    order = client.send(call) if call is not None else None
    if order is None or not reordered(order, listed):
        return None
    response = payload["tool_response"]
    truncated = bool(response.get("truncated") or response.get("appliedLimit"))
    note = order_note(str(payload.get("tool_name")), len(listed), order, truncated, f"{TOOL_PREFIX}search_code")
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note,
                                   "updatedToolOutput": {**response, "filenames": order.paths}}}


def _unseen_note(whole: Whole | None) -> str:
    if whole is None or whole.text is not None:
        return ""
    return f"[ctxsieve: cut from Claude Code's preview of the output, not the whole: {whole.origin}]\n"


def _post_tool_use_failure(payload: Mapping[str, Any], client: Sender, options: HookOptions
                           ) -> dict[str, Any] | None:
    """A failing command's whole output, cut as a log (its failures, assertions, tracebacks and summary whole), beside
    Claude Code's own error, which goes to the model unchanged; None when that error already holds the output."""
    whole = whole_output(payload)
    error = str(payload.get("error", ""))
    if whole is None or whole.text is None or whole.text.strip() in error or passes(whole.text, options):
        return None
    tool_input = _tool_input(payload)
    intent = intent_of(tool_input, _transcript(payload.get("transcript_path")))
    budget = options.max_tokens or FAILURE_TOKENS  # a log's failures and summary are shown whole beyond it
    request = cut_request(whole.text, intent, str(payload.get("tool_name", "tool")), tool_input,
                          HookOptions(passthrough_tokens=options.passthrough_tokens, max_tokens=budget), kind="log",
                          cwd=_cwd(payload))
    if request is None:
        return None
    result = client.send(request)
    lines = whole.text.count("\n") + (not whole.text.endswith("\n"))
    head = (f"ctxsieve: Claude Code showed {len(error):,} characters of this failing command's output; the whole "
            f"output ({lines:,} lines) is stored as {result.ref}. Its failures follow, one line each, then its "
            "tracebacks whole as far as Claude Code shows a hook's context, each under its line range in the whole "
            "output; the error above is Claude Code's own.")
    placeholder = named_placeholder(result, CLAUDE_NAMES)
    context = fit_failing(result, head, placeholder, CLAUDE_HOOK_CONTEXT, claude_ref_call) or \
        _within(head + "\n\n" + render_result(result, placeholder), CLAUDE_HOOK_CONTEXT.size)
    return {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": context}}


def claude_ref_call(ref: str, lines: str | None) -> str:
    """The call that reads a ref's lines, as Claude Code names the tool of the `ctxsieve` MCP server install adds."""
    return f'{TOOL_PREFIX}fetch_ref(ref="{ref}"' + (f', lines="{lines}")' if lines else ")")


def _cwd(payload: Mapping[str, Any]) -> str | None:
    """Claude Code's working folder, which its Grep's and Glob's paths are relative to."""
    return usable_folder(payload.get("cwd"))


def _tool_input(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    value = payload.get("tool_input")
    return value if isinstance(value, Mapping) else {}


def _numbered_read(response: dict[str, Any], file: dict[str, Any], result: FilterResult) -> dict[str, Any]:
    """A Read's cut as Read's own output: the read's own lines (verbatim, from its content) with the file's line
    numbers. Claude Code numbers Read's content from `startLine` on (the read's offset: the cut's lines count from
    there): one contiguous run of lines goes as it is, from its first line, so Claude Code's numbers are the file's;
    several runs (or an outline's first lines) carry each line's number before a `│` (Claude Code's own numbering of
    such a cut is not the file's, and the note says so). The placeholder goes beside the output, never among its
    lines."""
    offset = _start_line(file) - 1
    own = file["content"].split("\n")
    runs = [(first + offset, "\n".join(own[first - 1:last])) for first, last in _spans(result, own)]
    outline = result.more is not None and result.more.shown == "outline"
    if len(runs) == 1 and not outline:
        first, text = runs[0]
        content, start, note = text, first, ""
    else:
        blocks = ["\n".join(f"{first + i}│{line}" for i, line in enumerate(text.split("\n")))
                  for first, text in runs]
        content, start = "\n     ⋮\n".join(blocks), 1
        note = ("The number before │ on each line is its line in the file (Read's own numbering of this cut is "
                "not); edit by the text after │. ")
    if outline:
        note = "An outline (no request to rank by): each part's first line. " + note
    window = f" (this Read's lines {offset + 1}-{offset + len(own)}; fetch_ref's lines count from its first, " \
        f"file line {offset + 1})" if offset else ""
    if outline:
        shown = ", ".join(f"{first}-{first + text.count(chr(10))}" for first, text in runs)
        context = f"ctxsieve cut this Read to lines {shown} of {file.get('totalLines', '?')}{window}. {note}" + \
            named_placeholder(result, CLAUDE_NAMES)
    else:  # short: every token of the note is one the cut's lines do not get (python -m bench.code)
        numbers = "the number before │ is the file's line" if len(runs) > 1 else "Read's numbers are the file's"
        context = f"ctxsieve cut this Read of {file.get('totalLines', '?')} lines{window}; {numbers}. Other lines: " \
            f'{TOOL_PREFIX}fetch_ref(ref="{result.ref}", lines="A-B")'
    context += f"\n{render_map(result.map, offset)}" if result.map else ""
    replaced = {**response, "file": {**file, "content": content, "startLine": start,
                                     "numLines": content.count("\n") + 1}}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": replaced,
                                   "additionalContext": _within(context, CONTEXT_CHARS)}}


def _spans(result: FilterResult, own: list[str]) -> list[tuple[int, int]]:
    """The read's lines the cut shows, as (first, last) runs: an outline's entries by their first line; runs
    separated only by blank lines are joined (the blank lines put back)."""
    outline = result.more is not None and result.more.shown == "outline"
    spans = sorted((s.line_start, s.line_start if outline else s.line_end or s.line_start)
                   for s in result.snippets if s.line_start)
    runs: list[tuple[int, int]] = []
    for first, last in spans:
        gap = own[runs[-1][1]:first - 1] if runs else None
        if runs and not outline and (first <= runs[-1][1] + 1 or not any(line.strip() for line in gap or [])):
            runs[-1] = (runs[-1][0], max(last, runs[-1][1]))
        else:
            runs.append((first, last))
    return runs


def _within(text: str, limit: int) -> str:
    """Whole lines of `text` up to `limit` characters (a map's last lines give way first: it comes last)."""
    if len(text) <= limit:
        return text
    return text[:text.rfind("\n", 0, limit)]


def _start_line(file: Mapping[str, Any]) -> int:
    start = file.get("startLine")
    return start if isinstance(start, int) and start > 0 else 1
