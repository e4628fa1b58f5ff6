"""A search's hits as the agent receives them: each definition's lines, cut to the budget over all results.

The budget is the whole answer as every surface shows it (`ctxsieve_client.code_search.render_answer`): each hit's
head line, its lines after their numbers, the line saying how to read the rest of a cut one, and the closing line.

Every hit first gets its head (its first lines, up to HEAD_TOKENS: the signature and docstring say what it is), then,
while the budget lasts, its lines through its header line where a long doc comment kept that out of its head (a doc
longer than HEAD_MAX_TOKENS: the hit is shown around its header line instead, the lines above said not shown);
what is left of the budget then goes best hit first to whole definitions, a definition that does not fit shown
as far as whole lines fit. A cut result keeps its true span (`start_line`/`end_line`) and says the last line shown
(`shown_end_line`), so the rest is one read of the file away. A definition's part before its first nested definition
(a function's lines before an inner function, a class's before its first method) is shown under the definition's
whole span, so it reads as cut, never as the whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ctxsieve.ingest.coderank.units import CodeUnit
from ctxsieve_client.code_search import hit_head, rest_line
from ctxsieve_client.rendering import numbered_line

from .memory import Hit

__all__ = ["DEFAULT_TOKENS", "HEAD_TOKENS", "CodeResult", "pack_hits", "trimmed"]

DEFAULT_TOKENS = 2000  # a search's budget when the request sets none
HEAD_TOKENS = 80
HEAD_SHARE = 4  # a head's one long line may cost up to this share of the budget (1 / HEAD_SHARE)
HEAD_MAX_TOKENS = 240  # a head reaches its header line below a doc comment up to this many tokens
BEST_SHARE = 2  # the best hit is shown whole first where it costs at most this share of the budget (1 / BEST_SHARE)
ASKED_SHARE = 0.75  # of the budget, what a definition looked up by name may take before the other hits' heads
HEADER_LINES = 60  # looked through for a unit's header line


@dataclass(frozen=True)
class CodeResult:
    path: str
    name: str
    kind: str
    start_line: int
    end_line: int
    score: float
    text: str  # its lines from shown_start_line to shown_end_line
    shown_end_line: int
    tokens: int
    shown_start_line: int = 0  # the first line in `text`: start_line, or below it when shown around a place
    matched_lines: tuple[int, ...] = ()  # lines of the definition not shown where the request's words are most
    within: str = ""  # a Rust trait impl's method: the impl's header (`CodeUnit.within`)

    @property
    def whole(self) -> bool:
        return self.shown_start_line <= self.start_line and self.shown_end_line >= self.end_line


def pack_hits(hits: Sequence[Hit], count: Callable[[str], int], max_tokens: int, windows: bool = False,
              asked: bool = False) -> list[CodeResult]:
    """The hits within `max_tokens` as shown (`count` a tokenizer's count): each with its head line and the lines
    saying how to read the rest, counted whether or not it is cut, its lines after their numbers; a hit none of
    whose lines fit is left out, and so are the ones after it. A hit the request points into (`Hit.focus`: a
    traceback's frame, `app.py:1200`) is shown around that line, growing a line above and one below in turn. With
    `windows` (a client that numbers a hit's text from `shown_start_line`), a definition's later part (after a
    nested definition) is shown under the definition's whole span too, its lines above said not shown. A window's
    lines above it, up to HEAD_MAX_TOKENS, are shown before any hit grows further when the budget has room for them
    beside what saying they are not shown costs: the `def` line says what the window is of. With `asked` (the first
    hit is the definition a look-up names), it is shown first as far as ASKED_SHARE of the budget goes."""
    costs = [_LineCosts(count, hit.unit.text.split("\n"), hit.unit.start_line) for hit in hits]
    shown = [(0, 0)] * len(hits)  # each hit's lines shown, [first, end) of its text's lines
    used = 0
    for i, (hit, unit_costs) in enumerate(zip(hits, costs, strict=True)):  # heads (or the focused line) first
        unit, focus = hit.unit, _focus_of(hit, unit_costs) or _header_below_doc(hit, unit_costs)
        rest, start = rest_line(unit.path, unit.last_line, unit.last_line), _start_of(unit, windows)
        around = count(hit_head(unit.path, start, unit.last_line, unit.kind, unit.name, unit.within) + "\n") \
            + count(rest + "\n\n") + (count(rest + "\n") if focus or start < unit.start_line else 0)
        head = _head_tokens(unit_costs, focus, max_tokens)
        if i == 0 and not focus:
            head = _best_head(hit, unit_costs, head, max_tokens - around, asked)
        first, end, spent = _grow(unit_costs, focus, focus, min(head, max_tokens - used - around))
        if end == first:
            if i == 0 and around <= max_tokens:  # not even its first line fits (a minified line, a tiny budget):
                return [_result(hit, unit_costs.lines, 0, 0, 0, windows)]  # where it is, and how to read it
            break
        shown[i], used = (first, end), used + spent + around
    for i, (hit, unit_costs) in enumerate(zip(hits, costs, strict=True)):  # then each through its header line
        first, end = shown[i]
        if end == first:
            break
        through = _header_end(hit, unit_costs)
        if first == 0 and through > end and \
                (more := unit_costs.total(through) - unit_costs.total(end)) <= max_tokens - used:
            shown[i], used = (0, through), used + more
        elif first > 0 and _start_of(hit.unit, windows) == hit.unit.start_line and \
                (above := unit_costs.total(first)) <= HEAD_MAX_TOKENS and above <= max_tokens - used + (
                    freed := count(rest_line(hit.unit.path, hit.unit.last_line, hit.unit.last_line) + "\n")):
            shown[i], used = (0, end), used + above - freed  # a window a few lines below its `def` line: those
            # lines, not "lines 232-234 not shown" (a user trial's traceback)
        elif first > 0 and (header := _header_row(hit, unit_costs, min(first, LONGEST_DOC))) is not None and \
                (above := unit_costs.total(first) - unit_costs.total(header)) <= min(HEAD_MAX_TOKENS,
                                                                                   max_tokens - used):
            shown[i], used = (header, end), used + above  # a window a few lines below its header line, under a long
            # doc comment: from that line, the doc above said not shown (a trial's Java trace into `Gson.fromJson`
            # showed lines 1088-, its signature at 1087 and its overloads' alike, with "lines 1051-1087 not shown")
    for i, (hit, unit_costs) in enumerate(zip(hits, costs, strict=True)):  # then whole definitions, best first
        first, end = shown[i]
        if end == first:
            break
        first, end, spent = _grow(unit_costs, first, end, max_tokens - used)
        shown[i], used = (first, end), used + spent
        if first == 0 and end < len(unit_costs) and _start_of(hit.unit, windows) == hit.unit.start_line and \
                hit.unit.end_line == hit.unit.last_line:  # the last lines fit in what saying how to read them costs:
            freed = count(rest_line(hit.unit.path, hit.unit.last_line, hit.unit.last_line) + "\n\n")  # shown whole
            if (left := unit_costs.total(len(unit_costs)) - unit_costs.total(end)) <= max_tokens - used + freed:
                shown[i], used = (0, len(unit_costs)), used + left - freed  # (a `}` alone had been "not shown")
    return [_result(hit, unit_costs.lines, first, end, unit_costs.total(end) - unit_costs.total(first), windows)
            for hit, unit_costs, (first, end) in zip(hits, costs, shown, strict=True) if end > first]


def _best_head(hit: Hit, costs: _LineCosts, head: int, budget: int, asked: bool = False) -> int:
    """What the best hit's head may cost, before any other hit's head: the whole hit where it costs at most
    1 / BEST_SHARE of the budget (at 800 tokens a trial's 8-line `is_safe_attribute` was cut above its one line of
    logic, six more hits shown), else its lines through its header line where they fit (a trial's `Viper.find` at
    300 tokens showed eight lines of its doc comment and no `func` line, then a TODO), else a head as any other's,
    the budget going on to the next hits. A definition looked up by name (`asked`) may take ASKED_SHARE of the budget:
    a trial's `Faraday::RackBuilder` at 800 tokens showed its first 9 lines, then other classes and specs."""
    if (whole := costs.total(len(costs))) <= budget // BEST_SHARE:
        return max(head, whole)
    if asked:
        return max(head, min(whole, int(budget * ASKED_SHARE)))
    if (through := _header_end(hit, costs)) and costs.total(through) <= budget:
        return max(head, costs.total(through))
    return head


def _head_tokens(costs: _LineCosts, first: int, max_tokens: int) -> int:
    """What a hit's head may cost: HEAD_TOKENS, or its first line whole when that line alone costs more (a long
    comment line, 96 tokens, had left a definition shown with no line at all, and every hit after it out) and at most
    a quarter of the budget (a minified line stays out)."""
    line = costs.at(first) if first < len(costs) else 0
    return line if HEAD_TOKENS < line <= max_tokens // HEAD_SHARE else HEAD_TOKENS


def _focus_of(hit: Hit, costs: _LineCosts) -> int:
    """The index of the line the request points at in the hit's text, when it is not its first (0 otherwise)."""
    at = hit.focus - hit.unit.start_line
    return at if 0 < at < len(costs) else 0


def _header_below_doc(hit: Hit, costs: _LineCosts) -> int:
    """The index of a definition's header line when a doc comment above it is longer than its head may reach
    (HEAD_MAX_TOKENS): the hit is shown around that line, which says what it is (a Julia docstring of 47 lines
    above `Base.eachrow(df) = ...` showed its first lines alone, an Elixir `@doc` its prose and no `def`); 0
    otherwise."""
    header = _header_row(hit, costs, LONGEST_DOC) or 0
    return header if header and costs.total(header + 1) > HEAD_MAX_TOKENS else 0


LONGEST_DOC = 400  # lines looked through for the header line below a doc comment


def _grow(costs: _LineCosts, first: int, end: int, budget: int) -> tuple[int, int, int]:
    """Lines [first, end) grown within `budget` (from the line `first` alone when none is shown yet: a hit's first
    line, or the line its request points at), one above and one below in turn (a prefix grows down only), and the
    cost of the lines added."""
    spent = 0
    if first == end:
        if first >= len(costs) or costs.at(first) > budget:
            return first, end, 0
        spent, end = costs.at(first), first + 1
    while True:
        grew = False
        for at in (first - 1, end):
            if 0 <= at < len(costs) and spent + costs.at(at) <= budget:
                spent += costs.at(at)
                first, end = (at, end) if at < first else (first, at + 1)
                grew = True
        if not grew:
            return first, end, spent


def _header_end(hit: Hit, costs: _LineCosts) -> int:
    """How many of a hit's first lines run through its header line (the `def`/`func` line below a doc comment), when
    they cost at most HEAD_MAX_TOKENS; 0 when its header is not among its first HEADER_LINES."""
    header = _header_row(hit, costs, HEADER_LINES)
    if header is None or costs.total(header + 1) > HEAD_MAX_TOKENS:
        return 0
    return header + 1


def _header_row(hit: Hit, costs: _LineCosts, within: int) -> int | None:
    """The index of a hit's header line (its `signature`, as written) among its first `within` lines, if there."""
    signature = hit.unit.signature
    if not signature:
        return None
    return next((i for i, line in enumerate(costs.lines[:within]) if line.strip() == signature), None)


class _LineCosts:
    """A definition's lines and their token counts, each counted when first asked for: the budget ends the packing
    long before the end of a long definition, whose other lines are never counted."""

    def __init__(self, count: Callable[[str], int], lines: list[str], first: int) -> None:
        self.count = count
        self.lines = lines
        self.first = first  # the first line's number
        self.known: list[int] = []

    def __len__(self) -> int:
        return len(self.lines)

    def at(self, i: int) -> int:
        while len(self.known) <= i:
            at = len(self.known)
            self.known.append(self.count(numbered_line(self.first + at, self.lines[at]) + "\n"))
        return self.known[i]

    def total(self, n: int) -> int:
        return sum(self.at(i) for i in range(n))


def _result(hit: Hit, lines: list[str], first: int, end: int, tokens: int, windows: bool) -> CodeResult:
    unit = hit.unit
    return CodeResult(unit.path, unit.name, unit.kind, _start_of(unit, windows), unit.last_line, round(hit.score, 6),
                      "\n".join(lines[first:end]), unit.start_line + end - 1, tokens, unit.start_line + first,
                      within=unit.within)


def _start_of(unit: CodeUnit, windows: bool) -> int:
    """The first line of the definition a hit is of: a definition's later part (`return fn; };` after an inner
    function) is shown under the definition's whole span, when the client numbers text from `shown_start_line`;
    labelled with its own lines alone it read as the whole definition (`_parse` as lines 36-37, not 22-37)."""
    return unit.definition_start if windows and unit.rest and unit.definition_start else unit.start_line


def trimmed(results: list[CodeResult]) -> list[CodeResult]:
    """The results less the last line shown of the last one (that one left out when it was its only line)."""
    last = results[-1]
    lines = last.text.split("\n")
    if len(lines) == 1:
        return results[:-1]
    return [*results[:-1], replace(last, text="\n".join(lines[:-1]), shown_end_line=last.shown_end_line - 1)]
