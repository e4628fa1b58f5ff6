"""A failing run's answer shaped to arrive whole inside the agent's own limit (docs/limits.md).

Each agent shows the model only so much of one tool result or hook context, measured in its own unit, and cuts or
saves the rest where the model does not look: Claude Code a hook's context over 10,000 characters (a file and a 2 KB
preview), an MCP result whose length over 4 estimates over MAX_MCP_OUTPUT_TOKENS, Codex a call's output over its
token budget (4 bytes a token). So a log's cut is laid out facts first, from the service's reading of the log
(`FilterResult.verdict`, the log kind's own: no second parser here): one line per failure (test id, where, its
assertion line, its lines in the log), the run's result; then the tracebacks, each whole, as far as the limit
holds; then the placeholder. The ones left out are named with the call that reads them. Should the failure lines
alone not fit, as many whole lines as fit go, then how many more there are and the call that lists them: no line is
cut short, no failure dropped silently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .calls import Call, Requests
from .models import Failure, FilterResult, RefContent, Snippet, Verdict
from .rendering import SEPARATOR, heading

MESSAGE_CHARS = 300  # a failure line's assertion beyond this many characters is shown to there, and says so
RefCall = Callable[[str, str | None], str]  # (ref, "A-B" lines or None for whole) -> the call the model can make


@dataclass(frozen=True)
class Limit:
    """What an agent keeps of one result, in its own unit: `chars` as JavaScript counts them (UTF-16 code units),
    or `bytes` of UTF-8."""

    size: int
    unit: Literal["chars", "bytes"] = "chars"

    def measure(self, text: str) -> int:
        if self.unit == "bytes":
            return len(text.encode("utf-8"))
        return len(text.encode("utf-16-le")) // 2

    def less(self, used: int) -> Limit:
        return Limit(max(0, self.size - used), self.unit)


# Claude Code 2.1.327 saves a hook's additionalContext over 10,000 characters to a file and shows a 2 KB preview; it
# heads the context with `<Event>:<Tool> hook additional context: ` (kept clear of by MARGIN)
CLAUDE_HOOK_CONTEXT = Limit(10_000)
# Claude Code passes an MCP result untouched while its estimate (characters / 4) is at most half its
# MAX_MCP_OUTPUT_TOKENS (25,000); past that it counts it with the provider and may save it to a file
CLAUDE_MCP_TOKENS = 25_000
# Claude Code cuts a tool's error, an MCP error result's included, over 10,000 + 1,024 characters to a 5,000-character
# head and tail with `... [N characters truncated] ...` between (its error shortening, LHt=1e4)
CLAUDE_TOOL_ERROR = Limit(10_000)
# Claude Code saves a Bash output (a hook's updatedToolOutput included) over 30,000 characters to a file
CLAUDE_BASH = Limit(30_000)
# Codex cuts a call's output to 10,000 tokens, counting 4 bytes a token (codex-rs output-truncation)
CODEX_CALL = Limit(40_000, "bytes")
_SHOWN = re.compile(r"(\d+) of (\d+) chunks shown, (\d+) -> \d+ tokens")
LOG_HEAD = "ctxsieve cut this output (a test or build log):"
MARGIN = 300  # room for what the agent puts around the text (its own heading, a note)


def claude_mcp_limit(max_mcp_output_tokens: int | None = None) -> Limit:
    """The size of an MCP result Claude Code never cuts: half its token limit, as its length / 4 estimate counts."""
    return Limit(2 * (max_mcp_output_tokens or CLAUDE_MCP_TOKENS))


def mcp_result_limit() -> Limit:
    """What an MCP result of ctxsieve's (the gateway's, `ctxsieve mcp`'s) is fitted to: Codex's per-call budget in
    bytes, which also keeps under Claude Code's (UTF-8 bytes are never fewer than JavaScript's characters), or
    Claude Code's when its MAX_MCP_OUTPUT_TOKENS (passed on to the servers it starts) makes that the smaller."""
    own = os.environ.get("MAX_MCP_OUTPUT_TOKENS", "")
    claude = claude_mcp_limit(int(own)) if own.isdigit() and int(own) > 0 else None
    return Limit(claude.size, "bytes") if claude is not None and claude.size < CODEX_CALL.size else CODEX_CALL


def mcp_error_limit() -> Limit:
    """What an MCP error result of ctxsieve's (the gateway's) is fitted to: Claude Code's cut of a tool's error
    (10,000 characters), or the MCP result limit when that is the smaller."""
    result = mcp_result_limit()
    return result if result.size < CLAUDE_TOOL_ERROR.size else CLAUDE_TOOL_ERROR


def fits(text: str, limit: Limit) -> bool:
    return limit.measure(text) <= limit.size


def tool_ref_call(ref: str, lines: str | None) -> str:
    """The call that reads a ref's lines, as ctxsieve's MCP tools are named (`tools` placeholders)."""
    return f'fetch_ref(ref="{ref}"' + (f', lines="{lines}")' if lines else ")")


def fit_tool_text(result: FilterResult, shown: str) -> str:
    """An MCP tool's text of a cut (`shown`): a log's with failures laid out facts first within mcp_result_limit, as
    the hooks lay out theirs (a cut of ranked snippets would show only some of the failures)."""
    return fit_failing(result, LOG_HEAD, result.placeholder, mcp_result_limit(), tool_ref_call) or shown


def fit_error_text(result: FilterResult, text: str) -> str | None:
    """A tool's error result (`text`, stored whole as `result.ref`) over mcp_error_limit, laid out within it: its
    failures, then its tracebacks as far as they fit; None when it is not a log with failures (it then goes as it
    is: an error is never filtered)."""
    lines = text.count("\n") + (not text.endswith("\n"))
    head = (f"ctxsieve: this error result ({lines:,} lines, {len(text):,} characters) is longer than an agent shows "
            f"of an error whole; it is stored whole as {result.ref}. Its failures follow, one line each, then its "
            "tracebacks whole as far as they fit, each under its line range in the whole output.")
    return fit_failing(result, head, result.placeholder, mcp_error_limit(), tool_ref_call)


FAILURES_QUERY = "the failures: each failing test or error, its assertion and traceback, and the result"


def reading_of(answer: object) -> Call[FilterResult] | None:
    """For a fetch whose text is over mcp_result_limit: the call that reads the ref as a log (its failures, in
    `FilterResult.verdict`), for fit_answer; None for any other answer."""
    if not isinstance(answer, RefContent) or fits(answer.text, mcp_result_limit()) or answer.content_type != "log":
        return None
    return Requests.refilter(answer.ref, FAILURES_QUERY, placeholder="tools")


def fit_answer(answer: object, text: str, reading: FilterResult | None = None) -> str:
    """A ref tool's text (`text`, of `answer`) within mcp_result_limit: a cut laid out as fit_tool_text does; a
    fetch over the limit as its log's failures (`reading`, from reading_of) or its first lines, each with the calls
    that read the rest. Anything else as it is."""
    if isinstance(answer, FilterResult):
        return fit_tool_text(answer, text)
    if not isinstance(answer, RefContent) or fits(text, mcp_result_limit()):
        return text
    limit = mcp_result_limit()
    lines = text.count("\n") + (not text.endswith("\n"))
    first = answer.line_start or 1
    size = (f"lines {first}-{first + lines - 1}" if answer.line_start or answer.start is None else
            f"characters {answer.start}-{answer.end}")
    head = f"ctxsieve: {size} of {answer.ref} ({len(text):,} characters) are more than an MCP result shows whole"
    if reading is not None and reading.verdict is not None and reading.verdict.failures:
        return fit_failing(reading, head + ". It is a failing run: its failures follow, one line each, then its "
                           "tracebacks whole as far as they fit, each under its line range.", reading.placeholder,
                           limit, tool_ref_call) or text
    if answer.line_start is None and answer.start is not None:
        return _page_chars(answer, text, head + ":", limit)
    return _page_lines(answer.ref, text, first, head + "; its first lines follow:", limit)


def _page_lines(ref: str, text: str, first: int, head: str, limit: Limit) -> str:
    """`head`, as many whole lines of `text` (numbered from `first`) as fit, then the call that reads the next ones
    as far as a result holds them."""
    rows = text.split("\n")
    room = limit.less(MARGIN + limit.measure(head) + 200)  # 200: the closing note
    kept = _fitting(rows, 0, room)
    after = _fitting(rows, kept, room)
    last = first + len(rows) - 1
    note = (f"[lines {first + kept}-{last} not shown (the limit of what is shown); the next of them: "
            f"{tool_ref_call(ref, f'{first + kept}-{first + after - 1}')}]")
    return head + "\n" + "\n".join(rows[:kept]) + "\n" + note


def _fitting(rows: list[str], start: int, room: Limit) -> int:
    """The index past the last of rows[start:] that fit in `room` together; at least one row (a line alone over the
    limit is named by its own call: the agent's cut of it is then the model's only one)."""
    used, end = 0, start
    while end < len(rows) and used + room.measure(rows[end]) + 1 <= room.size:
        used += room.measure(rows[end]) + 1
        end += 1
    return max(end, start + 1) if start < len(rows) else start


def _page_chars(answer: RefContent, text: str, head: str, limit: Limit) -> str:
    room = limit.less(MARGIN + limit.measure(head) + 200)
    shown = text.encode("utf-16-le")[: room.size * 2].decode("utf-16-le", "ignore") if room.unit == "chars" else \
        text.encode("utf-8")[: room.size].decode("utf-8", "ignore")
    start = (answer.start or 0) + len(shown)
    note = (f"[characters {start}-{answer.end} not shown (the limit of what is shown): "
            f'fetch_ref(ref="{answer.ref}", start={start}, end={min(start + len(shown), answer.end or start)})]')
    return head + "\n" + shown + "\n" + note


def fit_failing(result: FilterResult, head: str, placeholder: str, limit: Limit, ref_call: RefCall) -> str | None:
    """A log's cut within `limit`: `head`, a line per failure and the result, the tracebacks that fit whole, the
    placeholder; None when the result carries no verdict (not a log with failures)."""
    verdict = result.verdict
    if verdict is None or not verdict.failures:
        return None
    limit = limit.less(MARGIN)
    ref = result.ref
    tail = "\n\n" + placeholder
    facts = _facts(verdict, ref, ref_call, limit.less(limit.measure(head + "\n\n" + tail)))
    text = head + "\n\n" + facts
    room = limit.less(limit.measure(text + tail))
    shown, left, chunks = _tracebacks(result.snippets, verdict, room.less(room.measure(_left_out(
        verdict.failures, ref, ref_call))))
    return text + shown + _left_out(left, ref, ref_call) + "\n\n" + _counted(placeholder, chunks)


def failure_line(failure: Failure) -> str:
    """`FAILED <test id> at <where>: <assertion line> (log lines A-B)`; a build error is its own line."""
    message = failure.message
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + f"… ({len(failure.message) - MESSAGE_CHARS:,} more characters)"
    own = bool(failure.where) and not message.startswith(failure.where)  # a compiler's line names its own place
    where = f" at {failure.where}" if own else ""
    what = f"FAILED {failure.test}{where}: " if failure.test else f"{failure.where}: " if own else ""
    lines = f"line {failure.line_start}" if failure.line_start == failure.line_end else \
        f"lines {failure.line_start}-{failure.line_end}"
    return f"{what}{message} (log {lines})"


def _facts(verdict: Verdict, ref: str, ref_call: RefCall, limit: Limit) -> str:
    """Every failure's line and the result, or as many whole failure lines as fit, then how many more and the call
    that lists them."""
    total = len(verdict.failures)
    top = f"{total} failure{'s' if total != 1 else ''}, each with where it failed, its assertion line and its lines " \
          "in the whole log:"
    outcome = "".join(f"\nResult (log line {line}): {str(text).strip('= ')}" for line, text in verdict.outcome)
    lines = [failure_line(f) for f in verdict.failures]
    whole = "\n".join([top, *lines]) + outcome
    if limit.measure(whole) <= limit.size:
        return whole
    kept: list[str] = []
    for line in lines:
        more = _more_note(verdict, total - len(kept) - 1, ref, ref_call)
        if limit.measure("\n".join([top, *kept, line, more]) + outcome) > limit.size:
            break
        kept.append(line)
    return "\n".join([top, *kept, _more_note(verdict, total - len(kept), ref, ref_call)]) + outcome


def _more_note(verdict: Verdict, more: int, ref: str, ref_call: RefCall) -> str:
    if more <= 0:
        return ""
    rest = verdict.failures[-more:]
    if verdict.listing is not None:
        first, last = verdict.listing
        how = f"the log lists every one, a line each, on its lines {first}-{last}: {ref_call(ref, f'{first}-{last}')}"
    else:
        how = f"they are on the log's lines {rest[0].line_start}-{rest[-1].line_end}: " \
              f"{ref_call(ref, f'{rest[0].line_start}-{rest[-1].line_end}')}"
    return f"… and {more} more failure{'s' if more != 1 else ''} not listed here (the limit of what is shown); {how}"


def _tracebacks(snippets: list[Snippet], verdict: Verdict, room: Limit) -> tuple[str, list[Failure], int]:
    """Each failure's traceback, all of the snippets that hold it or none (each under its line range), in order
    while they fit, then the cut's other snippets (a compiler's warning that explains its error) while they fit; the
    failures not shown so; how many snippets were shown."""
    parts: list[str] = []
    left: list[Failure] = []
    shown: set[int] = set()
    used = 0
    for failure in verdict.failures:
        mine = [i for i, s in enumerate(snippets) if i not in shown and (s.line_start or 0) <= failure.line_end
                and failure.line_start <= (s.line_end or 0)]
        part = "".join(_shown(snippets[i]) for i in mine)
        if not mine and any((s.line_start or 0) <= failure.line_end and failure.line_start <= (s.line_end or 0)
                            for s in snippets):
            continue  # its traceback is already shown, with an earlier failure's
        if not mine or used + room.measure(part) > room.size:
            left.append(failure)
            continue
        parts.append(part)
        used += room.measure(part)
        shown.update(mine)
    for i, snippet in enumerate(snippets):
        part = _shown(snippet)
        if i not in shown and used + room.measure(part) <= room.size:
            parts.append(part)
            used += room.measure(part)
            shown.add(i)
    return "".join(parts), left, len(shown)


def _shown(snippet: Snippet) -> str:
    return SEPARATOR + heading(snippet.line_start, snippet.line_end, snippet.context) + snippet.text


def _counted(placeholder: str, chunks: int) -> str:
    """The placeholder's count of what is shown, made true of this text (it shows fewer chunks than the service's
    cut: the failures' lines, and the tracebacks that fit)."""
    return _SHOWN.sub(lambda m: f"{chunks} of {m.group(2)} chunks shown whole here, {m.group(3)} tokens held",
                      placeholder, count=1)


def _left_out(left: list[Failure], ref: str, ref_call: RefCall) -> str:
    if not left:
        return ""
    ranges = ", ".join(f"{f.line_start}-{f.line_end}" for f in left[:3]) + (", ..." if len(left) > 3 else "")
    example = ref_call(ref, f"{left[0].line_start}-{left[0].line_end}")
    return f"{SEPARATOR}[{len(left)} traceback{'s' if len(left) != 1 else ''} not shown (the limit of what is " \
           f"shown): each failure's lines above (log lines {ranges}) read it, e.g. {example}]"
