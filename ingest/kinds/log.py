"""Test and build logs: every failure kept together and named, the run's summary and its last lines first.

A failure is a pytest failure section, a Python traceback down to its exception line, or an `error:` / `FAILED` /
`--- FAIL` line; the summary is pytest's short summary and result line. Chunks carry their part as `role`
(FAILURE, SUMMARY, TAIL). A request puts failures first, then the summary, then the last lines, whatever it asks,
and the failures and the summary are never cut away: the budget rises to hold them (an error is never cut, and a
failing run's failures are its error). The rest (passing tests, progress) is ordinary text a request may ask for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..lines import LineSpan, line_chunks
from .base import DEFAULT_K, LINED_K, ByLines, Chunk, Cutting, Failure, Leaf, LineSpanOf, Piece, Verdict

FAILURE, SUMMARY, TAIL = "failure", "summary", "last lines"  # the parts a log's chunks play
# what a request puts first, whatever it asks: steps of 2 over fused scores in [0, 1], so no tail chunk outranks
# the summary and no summary chunk a failure
FIRST = {FAILURE: 6.0, SUMMARY: 4.0, TAIL: 2.0}
TAIL_LINES = 15

_PYTEST_SECTION = re.compile(r"^=+ (FAILURES|ERRORS|short test summary info|warnings summary) =+$")
_PYTEST_CASE = re.compile(r"^_{3,} (.+?) _{3,}$")
_PYTEST_RESULT = re.compile(r"^=+ .*\b\d+ (passed|failed|error|errors|skipped)\b.* in [0-9.]+s.*=+$")
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_FAILURE_LINE = re.compile(r"^(FAILED |ERROR |E\s{2,}|--- FAIL:|FAIL\b|npm ERR!|.*\berror(\[E\d+\])?:|"
                           r".*: error\b|make(\[\d+\])?: \*\*\*|BUILD FAILED|thread '.*' panicked at)", re.I)
_SUMMARY_ID = re.compile(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$")  # a short summary line's node id
_PYTEST_PLACE = re.compile(r"^([^\s:][^:\n]*:\d+):(?: |$)")  # `tests/test_x.py:12: AssertionError`, a frame's place
_PYTEST_E = re.compile(r"^E {2,}(\S.*)$")  # an exception line pytest marks with `E`
_PY_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_AT = re.compile(r"^([^\s:][^:\n]*:\d+)(?::\d+)?: ")  # a compiler's `build.c:12:5: error: ...`
_NOT_A_NAME = re.compile(r"^ERROR (?:at (?:setup|teardown) of|collecting) ")
_LOG_HINTS = re.compile(r"^(=+ (FAILURES|ERRORS|short test summary info) =+|.* PASSED|.* FAILED|FAILED |ERROR |"
                        r"Traceback \(most recent call last\):|=+ .* in [0-9.]+s =+|--- (PASS|FAIL):"
                        r"|ok\s+\S+\s+[0-9.]+s|npm ERR!|.*\berror(\[E\d+\])?:|make(\[\d+\])?: \*\*\*"
                        r"|test result: )", re.M)


class Log(ByLines):
    name = "log"

    def detect(self, text: str) -> bool:
        return looks_like_log(text)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del title, leaves
        text = view[start:end]
        return line_chunks(text, start, log_spans(text), how.tokenizer, how.line_target)

    def default_k(self, max_tokens: int | None) -> int:
        """Given a budget, a log needs what it never cuts (which raises k to hold it) and a few chunks more: the
        rest is the passing noise a budget would otherwise fill."""
        return LINED_K if max_tokens is None else DEFAULT_K

    def priorities(self, query: str, view: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf,
                   budget: int | None, whole: bool = True) -> np.ndarray | None:
        del query, view, path, line_span, budget, whole
        return np.array([FIRST.get(chunk.role, 0.0) for chunk in chunks])

    def must_show(self, chunks: Sequence[Chunk]) -> list[int]:
        return [i for i, chunk in enumerate(chunks) if chunk.role in (FAILURE, SUMMARY)]

    def verdict(self, view: str) -> Verdict | None:
        return log_verdict(view)


def looks_like_log(text: str) -> bool:
    """Test or build output: a pytest report, or several lines that only such output writes."""
    sample = text[:200_000]
    if re.search(r"^=+ (FAILURES|short test summary info) =+$", sample, re.M):
        return True
    return len(_LOG_HINTS.findall(sample)) >= max(3, sample.count("\n") // 200)


def log_spans(text: str) -> list[LineSpan]:
    """Failures (whole), the summary and the last lines, as named spans; the rest as loose blocks."""
    lines = text.split("\n")
    label, _ = _read(lines)
    for j in range(max(0, len(lines) - TAIL_LINES), len(lines)):
        label[j] = label[j] if label[j][0] else (TAIL, "")
    return _spans(lines, label)


def log_verdict(text: str) -> Verdict | None:
    """Each failure of the log once, as the spans above read it (a pytest case, its id from the short summary; a
    traceback, by its exception line; a failure line: a compiler's `error:`, `FAILED`, `--- FAIL:`), the run's result
    lines, and the short summary's lines; None when the log holds no failure."""
    lines = text.split("\n")
    label, blocks = _read(lines)
    if not blocks:
        return None
    short = [i for i, line in enumerate(lines) if label[i][0] == SUMMARY and _SUMMARY_ID.match(line)]
    ids = [m.group(1) for i in short if (m := _SUMMARY_ID.match(lines[i]))]
    outcome = [(i + 1, line) for i, line in enumerate(lines) if _PYTEST_RESULT.match(line)]
    listing = (short[0] + 1, short[-1] + 1) if short else None
    return Verdict([_failure(lines, first, last, test, ids) for first, last, test in blocks], outcome, listing)


def _read(lines: list[str]) -> tuple[list[tuple[str, str]], list[tuple[int, int, str | None]]]:
    """Each line's (role, the failing test it belongs to), and the failures as (first, last, test) 0-based line
    ranges (test None: not a pytest case)."""
    label: list[tuple[str, str]] = [("", "")] * len(lines)
    blocks: list[tuple[int, int, str | None]] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if _PYTEST_SECTION.match(line):
            section = line.strip("= ").split()[0].lower()
            label[i] = (SUMMARY if section == "short" else FAILURE if section in ("failures", "errors") else "", "")
        elif section in ("failures", "errors") and (case := _PYTEST_CASE.match(line)):
            end = i + 1
            while end < len(lines) and not _PYTEST_CASE.match(lines[end]) and not lines[end].startswith("===="):
                end += 1
            label[i:end] = [(FAILURE, case.group(1))] * (end - i)
            blocks.append((i, end - 1, case.group(1)))
            i = end
            continue
        elif section == "short" or _PYTEST_RESULT.match(line):
            label[i] = (SUMMARY, "")
        elif _TRACEBACK.match(line):
            end = i + 1
            while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
                end += 1
            end = min(end + 1, len(lines))  # the exception line itself
            label[i:end] = [(FAILURE, "")] * (end - i)
            blocks.append((i, end - 1, None))
            i = end
            continue
        elif _FAILURE_LINE.match(line):
            label[i] = (FAILURE, "")
            blocks.append((i, i, None))
        i += 1
    return label, blocks


def _failure(lines: list[str], first: int, last: int, test: str | None, ids: list[str]) -> Failure:
    """A failure's facts: a pytest case's id, where it was raised and its first `E` line; a traceback's last frame
    and exception line; a failure line's own `path:line` and the line itself."""
    own = lines[first:last + 1]
    if test is None:
        frames = [m for line in own if (m := _PY_FRAME.match(line))]
        where = f"{frames[-1].group(1)}:{frames[-1].group(2)}" if frames else \
            (m.group(1) if (m := _AT.match(own[0])) else "")
        message = next((line for line in reversed(own) if line.strip()), "") if frames else own[0]
        return Failure("", where, message.strip(), first + 1, last + 1)
    places = [m.group(1) for line in own if (m := _PYTEST_PLACE.match(line))]
    said = next((m.group(1) for line in own if (m := _PYTEST_E.match(line))), "")
    return Failure(_node_id(test, places, ids), places[-1] if places else "", said, first + 1, last + 1)


def _node_id(name: str, places: list[str], ids: list[str]) -> str:
    """A case's node id: the short summary's, whose id ends with the case's name; else the test file's path and
    the name (a class's `.` as pytest's `::`)."""
    name = _NOT_A_NAME.sub("", name)
    tail = "::" + name.replace(".", "::")
    found = next((i for i in ids if i.endswith(tail) or i == name), None)
    if found is not None:
        return found
    return places[0].rsplit(":", 1)[0] + tail if places else name


def _spans(lines: list[str], label: list[tuple[str, str]]) -> list[LineSpan]:
    """Runs of lines with the same label; unlabelled runs are loose blocks (split at blank lines)."""
    spans: list[LineSpan] = []
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or label[i] != label[start]:
            role, test = label[start]
            if role:
                spans.append(LineSpan(start, i - 1, f"{role}: {test}" if test else role, role=role))
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
