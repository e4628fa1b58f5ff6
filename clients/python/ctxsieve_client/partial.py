"""What an agent cut from a tool's output before anyone else saw it, read from the marks it leaves; and a cut of such
a text shown with only the line numbers that can be placed in the whole output.

Every agent keeps the output's start, so the kept lines before its first mark are the output's own lines 1, 2, ...
(the file's, when the command printed a file from its first line). What each writes:
- Codex (codex-rs `utils/output-truncation`, 0.169): the middle, cut at a byte (mid-line), becomes `…N tokens
  truncated…` (`…N chars truncated…` under a byte budget). An `exec` / `exec_command` result over its
  `max_output_tokens` is also headed `Warning: truncated output (original token count: N)\\nTotal output lines:
  L\\n\\n`: the count of the whole output's lines places the kept tail (a suffix of the output). Without it the tail
  cannot be placed.
- Claude Code: the middle becomes `\\n\\n... [N characters truncated] ...\\n\\n`.
- OpenCode (`tool/truncation.ts`): whole lines kept, then `\\n\\n...N lines truncated...\\n\\n` (or bytes) and its hint
  naming the file it saved the whole output to; truncating from the start, the mark and hint come first and the
  last lines after them. Older versions end a head cut at a character with `(Output was truncated due to length
  limit)` or a `<bash_metadata>` block saying so.
The lines holding a mark (with the ends of the lines it was put between) are the agent's: they are shown as its
cut, unnumbered, and so are kept lines whose place in the output is unknown. A mark in the middle counts only with
about as much kept on either side (as the agents keep), so a file that merely quotes one is not taken for a cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby

from .cutting import OUTLINE_HEADING
from .models import FilterResult, MapLine, Snippet
from .rendering import PLAIN, SEPARATOR, heading, render, render_map, render_outline

_CODEX_WARNING = re.compile(r"\AWarning: truncated output \(original token count: \d+\)\nTotal output lines: (\d+)\n\n")
_CODEX_MARK = re.compile(r"…(\d+) (tokens|chars) truncated…")
_CLAUDE_MARK = re.compile(r"\n\n\.\.\. \[(\d+) (characters|lines) truncated\] \.\.\.\n\n")
_OPENCODE_HINT = r"The tool call succeeded but the output was truncated\. Full output saved to: ([^\n]+)"
_OPENCODE_HEAD = re.compile(r"\n(\n\.\.\.(\d+) (lines|bytes) truncated\.\.\.\n\n" + _OPENCODE_HINT + r".*)\Z", re.S)
_OPENCODE_TAIL = re.compile(r"\A\.\.\.(\d+) (lines|bytes) truncated\.\.\.\n\n" + _OPENCODE_HINT + r"\n[^\n]*\n\n")
_OPENCODE_END = re.compile(r"\n\n(?:\(Output was truncated due to length limit\)|<bash_metadata>\nbash tool "
                           r"truncated output as it exceeded (\d+) char limit\n)")
BALANCE = 0.1  # a middle mark: the kept head and tail differ by at most this share (and 256 bytes)


@dataclass(frozen=True, kw_only=True)
class Partial:
    """An agent's cut of an output, as lines of the text it kept."""

    agent: str  # "Codex", "Claude Code", "OpenCode"
    dropped: str  # what the agent says it dropped, and where: "20918 tokens from its middle"
    cuts: tuple[tuple[int, int], ...]  # the kept text's lines (first, last) holding each mark, in order
    shift: int | None  # the lines after the last mark are the output's lines n + shift; None: their place is unknown
    saved: str | None = None  # where the agent saved the whole output

    @property
    def head(self) -> int:
        """The kept lines 1..head are the output's own lines 1..head."""
        return self.cuts[0][0] - 1

    def line(self, n: int) -> int | None:
        """The output's line for line n of the kept text, or None when it cannot be placed."""
        if n <= self.head:
            return n
        return n + self.shift if self.shift is not None and n > self.cuts[-1][1] else None

    def dropped_lines(self) -> tuple[int, int] | None:
        """The output's lines the cut took (the mark's line holds the start of the first and the end of the last),
        when the lines after it can be placed."""
        return (self.head + 1, self.cuts[-1][1] + self.shift) if self.shift is not None else None

    def is_mark(self, n: int) -> bool:
        return any(first <= n <= last for first, last in self.cuts)


def read(text: str) -> tuple[str, Partial] | None:
    """The text the agent kept (its warning header left out: line 1 is the output's line 1) and its cut, when an
    agent cut this output; None when none did."""
    for reader in (_codex, _claude_code, _opencode_end_marks, _opencode_start_mark):
        found = reader(text)
        if found is not None:
            return found
    return None


def _codex(text: str) -> tuple[str, Partial] | None:
    header = _CODEX_WARNING.match(text)
    kept = text[header.end():] if header else text
    marks = list(_CODEX_MARK.finditer(kept))
    if not marks or (header is None and not _balanced(kept[:marks[0].start()], kept[marks[-1].end():])):
        return None
    cuts = tuple((_line_of(kept, m.start()), _line_of(kept, m.end())) for m in marks)
    shift = _codex_shift(int(header.group(1)), kept[marks[-1].end():], cuts[-1][1]) if header else None
    dropped = " and ".join(f"{m.group(1)} {m.group(2)}" for m in marks) + " from its middle"
    return kept, Partial(agent="Codex", dropped=dropped, cuts=cuts, shift=shift)


def _codex_shift(total_lines: int, tail: str, mark_line: int) -> int | None:
    """The whole output's line count (Rust's `str::lines`: a last newline ends a line, it does not start one)
    places the kept tail, a suffix of the output: it begins inside the output's line `first`."""
    newlines = total_lines if tail.endswith("\n") else total_lines - 1
    first = 1 + newlines - tail.count("\n")
    return first - mark_line if first >= mark_line else None


def _claude_code(text: str) -> tuple[str, Partial] | None:
    marks = list(_CLAUDE_MARK.finditer(text))
    if not marks or not _balanced(text[:marks[0].start()], text[marks[-1].end():]):
        return None
    cuts = tuple((_line_of(text, m.start()), _line_of(text, m.end())) for m in marks)
    dropped = " and ".join(f"{m.group(1)} {m.group(2)}" for m in marks) + " from its middle"
    return text, Partial(agent="Claude Code", dropped=dropped, cuts=cuts, shift=None)


def _opencode_end_marks(text: str) -> tuple[str, Partial] | None:
    """Whole lines, then the mark and the hint (to the end); or, in older versions, a head cut at a character."""
    whole = _OPENCODE_HEAD.search(text)
    if whole is not None:
        first = _line_of(text, whole.start(1))  # (the kept lines are whole: the mark begins on a line of its own)
        return text, Partial(agent="OpenCode", dropped=f"{whole.group(2)} {whole.group(3)} from its end",
                             cuts=((first, _line_of(text, len(text))),), shift=None, saved=whole.group(4).strip())
    older = _OPENCODE_END.search(text)
    if older is None or len(text) - older.end() > 2000:  # (only more of OpenCode's notes may follow it)
        return None
    limit = f"past {older.group(1)} characters" if older.group(1) else "past its length limit"
    return text, Partial(agent="OpenCode", dropped=f"everything {limit}",
                         cuts=((_line_of(text, older.start()), _line_of(text, len(text))),), shift=None)


def _opencode_start_mark(text: str) -> tuple[str, Partial] | None:
    """The mark and hint first, then the output's last lines: placed when it counted what it dropped in lines."""
    found = _OPENCODE_TAIL.match(text)
    if found is None:
        return None
    last = _line_of(text, found.end()) - 1
    shift = int(found.group(1)) - last if found.group(2) == "lines" else None
    return text, Partial(agent="OpenCode", dropped=f"{found.group(1)} {found.group(2)} from its start",
                         cuts=((1, last),), shift=shift, saved=found.group(3).strip())


def _balanced(head: str, tail: str) -> bool:
    sizes = len(head.encode()), len(tail.encode())
    return min(sizes) > 0 and max(sizes) - min(sizes) <= 256 + BALANCE * max(sizes)


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def render_cut(result: FilterResult, cut: Partial, placeholder: str) -> str:
    """A filter answer on a kept text as one text: the snippets of a view read by lines headed by the output's own
    line numbers where they can be placed, the agent's mark and the lines that cannot be placed headed as what they
    are; the map of the file without the definitions that cannot be placed; then the placeholder."""
    if result.more is not None and result.more.shown == "outline":
        return render_outline(result.snippets, placeholder, OUTLINE_HEADING)
    if not (result.view or PLAIN).by_lines:
        return render(result.snippets, placeholder)
    lines_map = [MapLine(line=n, text=m.text) for m in result.map or [] if (n := cut.line(m.line)) is not None]
    shown = [_placed(s, cut) for s in result.snippets]
    return SEPARATOR.join([*([render_map(lines_map)] if lines_map else []), *shown, placeholder])


def _placed(snippet: Snippet, cut: Partial) -> str:
    """The snippet's lines in runs of one kind each (placed, the agent's mark, not placeable), each under its own
    heading; the definition it is part of named once, on the first."""
    if not snippet.line_start:
        return snippet.text
    rows = list(enumerate(snippet.text.split("\n"), start=snippet.line_start))
    runs = []
    for number, (kind, group) in enumerate(groupby(rows, key=lambda row: _kind(cut, row[0]))):
        lines = list(group)
        context = snippet.context if number == 0 else ""
        runs.append(_run_heading(kind, lines, cut, context) + "\n".join(text for _, text in lines))
    return "\n".join(runs)


def _kind(cut: Partial, n: int) -> str:
    return "mark" if cut.is_mark(n) else "placed" if cut.line(n) is not None else "unplaced"


def _run_heading(kind: str, lines: list[tuple[int, str]], cut: Partial, context: str) -> str:
    if kind == "placed":
        first, last = cut.line(lines[0][0]), cut.line(lines[-1][0])
        return heading(first, last, context)
    where = f" · {context}" if context else ""
    if kind == "mark":
        return f"── {cut.agent} cut the output here, before ctxsieve saw it{where} ──\n"
    return f"── after {cut.agent}'s cut: lines whose place in the output is unknown{where} ──\n"


def fetch_note(cut: Partial, first: int | None, last: int | None) -> str:
    """What a part of a kept text fetched by its own line numbers is, said on a line before it."""
    about = f"[ctxsieve: {cut.agent} cut this output before ctxsieve saw it ({cut.dropped}); this is "
    if first is None or last is None:
        return about + f"the text it kept, whose line numbers are the output's only up to line {cut.head}]"
    runs = [list(run) for placed, run in groupby(range(first, last + 1), key=lambda n: cut.line(n) is not None)
            if placed]
    where = "; ".join(f"its lines {r[0]}-{r[-1]} are the output's lines {cut.line(r[0])}-{cut.line(r[-1])}"
                      for r in runs)
    return about + f"lines {first}-{last} of the text it kept, not of the output" + \
        (f" ({where}; the rest cannot be placed)" if where else " (none of them can be placed in the output)") + "]"
