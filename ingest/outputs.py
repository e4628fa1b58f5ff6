"""Command output coding agents read, each a kind with its own cut: test and build logs, unified diffs, and
grep/ripgrep results.

- `log`: every failure is kept together and named (a pytest failure section, a Python traceback down to its
  exception line, an `error:`/`FAILED`/`--- FAIL` line), as is the run's summary and its last lines; the rest
  (passing tests, progress) is ordinary text the request may still ask for. The sieve shows failures, summary and
  tail first, whole, whatever the request (indexes/sieve.py).
- `diff`: one chunk per hunk, the file's header lines going with its first hunk, each named by its file.
- `grep`: `path:line:text` lines (grep -rn, git grep -n, rg -n), `line:text` lines of one file (grep -n FILE, rg
  --heading under each path line): each line is a chunk, so the lines that best fit the request are shown and the
  others cost nothing (indexes/grep_view.py chooses them).
All are cut into whole lines (code.line_chunks), so every snippet carries the output's true line numbers.
"""

from __future__ import annotations

import re

from .code import LineSpan

FAILURE, SUMMARY, TAIL = "failure", "summary", "last lines"  # chunk contexts the sieve shows first
TAIL_LINES = 15

_PYTEST_SECTION = re.compile(r"^=+ (FAILURES|ERRORS|short test summary info|warnings summary) =+$")
_PYTEST_CASE = re.compile(r"^_{3,} (.+?) _{3,}$")
_PYTEST_RESULT = re.compile(r"^=+ .*\b\d+ (passed|failed|error|errors|skipped)\b.* in [0-9.]+s.*=+$")
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_FAILURE_LINE = re.compile(r"^(FAILED |ERROR |E\s{2,}|--- FAIL:|FAIL\b|npm ERR!|.*\berror(\[E\d+\])?:|"
                           r".*: error\b|make(\[\d+\])?: \*\*\*|BUILD FAILED|thread '.*' panicked at)", re.I)
_LOG_HINTS = re.compile(r"^(=+ (FAILURES|ERRORS|short test summary info) =+|.* PASSED|.* FAILED|FAILED |ERROR |"
                        r"Traceback \(most recent call last\):|=+ .* in [0-9.]+s =+|--- (PASS|FAIL):"
                        r"|ok\s+\S+\s+[0-9.]+s|npm ERR!|.*\berror(\[E\d+\])?:|make(\[\d+\])?: \*\*\*"
                        r"|test result: )", re.M)
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


_GREP_LINE = re.compile(r"^([^\s:][^:\n]*?)[:-](\d+)[:-]")
_GREP_MATCH = re.compile(r"^([^\s:][^:\n]*?):(\d+):")  # path:N:text (a match); path-N-text is a context line
_NUMBERED = re.compile(r"^(\d+)[:-]")  # N:text of one file (grep -n FILE, rg --heading under its path line)
_PATH = re.compile(r"^[^\s:]*[/.][^\s:]*$")  # rg --heading's line naming the file below


def looks_like_grep(text: str) -> bool:
    """Most lines are `path:line:text` (or a context line `path-line-text`), or `line:text` of one file with the
    numbers rising (grep -n of a file; rg --heading, each file's lines under its path)."""
    lines = [line for line in text[:100_000].split("\n") if line.strip() and line != "--"]
    if len(lines) < 5:
        return False
    return sum(bool(_GREP_LINE.match(line)) for line in lines) >= 0.8 * len(lines) or _numbered(lines)


def _numbered(lines: list[str]) -> bool:
    """`N:text` lines, rising between path lines (nothing else), their text rarely a number (not `10:30 ...`)."""
    numbers, last, digits = 0, 0, 0
    for line in lines:
        match = _NUMBERED.match(line)
        if match is None:
            if not _PATH.match(line):
                return False
            last = 0  # a path line: the next file's numbers start again
            continue
        if int(match.group(1)) <= last:
            return False
        last = int(match.group(1))
        numbers += 1
        digits += line[match.end() : match.end() + 1].isdigit()
    return numbers >= 0.5 * len(lines) and digits <= 0.2 * numbers


def grep_file(line: str) -> str | None:
    """The file a `path:N:text` (or context `path-N-text`) line names, else None (`N:text`, `N:M:text`)."""
    match = _GREP_MATCH.match(line) or _GREP_LINE.match(line)
    return match.group(1) if match and not match.group(1).isdigit() else None


def grep_spans(text: str) -> list[LineSpan]:
    """A span per line (a separator `--` and a blank line are none): lines are ranked one by one. A line that names
    its file needs no context; a line of rg --heading is named by the path line above it."""
    lines = text.split("\n")
    spans: list[LineSpan] = []
    heading = ""
    for i, line in enumerate(lines):
        if not line.strip() or line == "--":
            heading = "" if not line.strip() else heading
            continue
        if grep_file(line) is not None:
            spans.append(LineSpan(i, i, ""))
        elif _NUMBERED.match(line):
            spans.append(LineSpan(i, i, f"file {heading}" if heading else ""))
        else:
            heading = line if _PATH.match(line) else heading  # rg --heading's path line names the lines below
            spans.append(LineSpan(i, i, ""))
    return spans


def looks_like_diff(text: str) -> bool:
    head = text[:20000]
    return head.startswith("diff --git ") or bool(re.search(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d", head, re.M))


def looks_like_log(text: str) -> bool:
    """Test or build output: a pytest report, or several lines that only such output writes."""
    sample = text[:200_000]
    if re.search(r"^=+ (FAILURES|short test summary info) =+$", sample, re.M):
        return True
    return len(_LOG_HINTS.findall(sample)) >= max(3, sample.count("\n") // 200)


def log_spans(text: str) -> list[LineSpan]:
    """Failures (whole), the summary and the last lines, as named spans; the rest as loose blocks."""
    lines = text.split("\n")
    label = [""] * len(lines)
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if _PYTEST_SECTION.match(line):
            section = line.strip("= ").split()[0].lower()
            label[i] = SUMMARY if section == "short" else FAILURE if section in ("failures", "errors") else ""
        elif section in ("failures", "errors") and (case := _PYTEST_CASE.match(line)):
            end = i + 1
            while end < len(lines) and not _PYTEST_CASE.match(lines[end]) and not lines[end].startswith("===="):
                end += 1
            label[i:end] = [f"{FAILURE}: {case.group(1)}"] * (end - i)
            i = end
            continue
        elif section == "short" or _PYTEST_RESULT.match(line):
            label[i] = SUMMARY
        elif _TRACEBACK.match(line):
            end = i + 1
            while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
                end += 1
            end = min(end + 1, len(lines))  # the exception line itself
            label[i:end] = [FAILURE] * (end - i)
            i = end
            continue
        elif _FAILURE_LINE.match(line):
            label[i] = FAILURE
        i += 1
    for j in range(max(0, len(lines) - TAIL_LINES), len(lines)):
        label[j] = label[j] or TAIL
    return _spans(lines, label)


def _spans(lines: list[str], label: list[str]) -> list[LineSpan]:
    """Runs of lines with the same label; unlabelled runs are loose blocks (split at blank lines)."""
    spans: list[LineSpan] = []
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or label[i] != label[start]:
            if label[start]:
                spans.append(LineSpan(start, i - 1, label[start]))
            else:
                spans.extend(_loose(lines, start, i - 1))
            start = i
    return [s for s in spans if any(lines[j].strip() for j in range(s.first, s.last + 1))]


def _loose(lines: list[str], first: int, last: int) -> list[LineSpan]:
    out, start = [], None
    for j in range(first, last + 1):
        if lines[j].strip():
            start = j if start is None else start
        elif start is not None:
            out.append(LineSpan(start, j - 1, "", loose=True))
            start = None
    if start is not None:
        out.append(LineSpan(start, last, "", loose=True))
    return out


def diff_spans(text: str) -> list[LineSpan]:
    """A span per hunk, named by its file; a file's header lines go with its first hunk."""
    lines = text.split("\n")
    spans: list[LineSpan] = []
    path, start = "", 0
    for i, line in enumerate(lines):
        header = _DIFF_FILE.match(line)
        if header or _HUNK.match(line):
            if i > start and any(lines[j].strip() for j in range(start, i)):
                spans.append(LineSpan(start, i - 1, f"file {path}" if path else ""))
            if header:
                path = header.group(2)
            elif line.startswith("@@") and i > 0 and lines[i - 1].startswith("+++ ") and spans and \
                    spans[-1].last == i - 1:
                start = spans.pop().first  # the header goes with the file's first hunk
                continue
            start = i
        elif line.startswith("+++ ") and not path:
            path = line[4:].split("\t")[0].removeprefix("b/")
    if start < len(lines) and any(lines[j].strip() for j in range(start, len(lines))):
        spans.append(LineSpan(start, len(lines) - 1, f"file {path}" if path else ""))
    return spans
