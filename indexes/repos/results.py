"""A search's hits as the agent receives them: each definition's lines, cut to the budget over all results.

Every hit first gets its head (its first lines, up to HEAD_TOKENS: the signature and docstring say what it is), then,
while the budget lasts, its lines through its header line where a long doc comment kept that out of its head;
what is left of the budget then goes best hit first to whole definitions, a definition that does not fit shown
as far as whole lines fit. A cut result keeps its true span (`start_line`/`end_line`) and says the last line shown
(`shown_end_line`), so the rest is one read of the file away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .memory import Hit

__all__ = ["DEFAULT_TOKENS", "HEAD_TOKENS", "CodeResult", "pack_hits"]

DEFAULT_TOKENS = 2000  # a search's budget when the request sets none
HEAD_TOKENS = 80
HEAD_MAX_TOKENS = 240  # a head reaches its header line below a doc comment up to this many tokens
HEADER_LINES = 60  # looked through for a unit's header line


@dataclass(frozen=True)
class CodeResult:
    path: str
    name: str
    kind: str
    start_line: int
    end_line: int
    score: float
    text: str
    shown_end_line: int
    tokens: int

    @property
    def whole(self) -> bool:
        return self.shown_end_line >= self.end_line


def pack_hits(hits: Sequence[Hit], count: Callable[[str], int], max_tokens: int) -> list[CodeResult]:
    """The hits within `max_tokens` (text tokens, `count` a tokenizer's count); a hit none of whose lines fit is
    left out, and so are the ones after it."""
    costs = [_LineCosts(count, hit.unit.text.split("\n")) for hit in hits]
    shown = [0] * len(hits)
    used = 0
    for i, unit_costs in enumerate(costs):  # heads first
        n, spent = _fit(unit_costs, 0, min(HEAD_TOKENS, max_tokens - used))
        if n == 0:
            break
        shown[i], used = n, used + spent
    for i, (hit, unit_costs) in enumerate(zip(hits, costs, strict=True)):  # then each through its header line
        if shown[i] == 0:
            break
        through = _header_end(hit, unit_costs)
        if through > shown[i] and (more := unit_costs.total(through) - unit_costs.total(shown[i])) <= max_tokens - used:
            shown[i], used = through, used + more
    for i, unit_costs in enumerate(costs):  # then whole definitions, best first
        if shown[i] == 0:
            break
        n, spent = _fit(unit_costs, shown[i], max_tokens - used)
        shown[i], used = shown[i] + n, used + spent
    return [_result(hit, unit_costs.lines, n, unit_costs.total(n))
            for hit, unit_costs, n in zip(hits, costs, shown, strict=True) if n]


def _header_end(hit: Hit, costs: _LineCosts) -> int:
    """How many of a hit's first lines run through its header line (the `def`/`func` line below a doc comment), when
    they cost at most HEAD_MAX_TOKENS; 0 when its header is not among its first HEADER_LINES."""
    signature = hit.unit.signature
    header = next((i for i, line in enumerate(costs.lines[:HEADER_LINES]) if signature and line.strip() == signature),
                  None)
    if header is None or costs.total(header + 1) > HEAD_MAX_TOKENS:
        return 0
    return header + 1


class _LineCosts:
    """A definition's lines and their token counts, each counted when first asked for: the budget ends the packing
    long before the end of a long definition, whose other lines are never counted."""

    def __init__(self, count: Callable[[str], int], lines: list[str]) -> None:
        self.count = count
        self.lines = lines
        self.known: list[int] = []

    def __len__(self) -> int:
        return len(self.lines)

    def at(self, i: int) -> int:
        while len(self.known) <= i:
            self.known.append(self.count(self.lines[len(self.known)] + "\n"))
        return self.known[i]

    def total(self, n: int) -> int:
        return sum(self.at(i) for i in range(n))


def _fit(costs: _LineCosts, start: int, budget: int) -> tuple[int, int]:
    """How many lines from `start` fit in `budget`, and their cost."""
    n = spent = 0
    for i in range(start, len(costs)):
        cost = costs.at(i)
        if spent + cost > budget:
            break
        n, spent = n + 1, spent + cost
    return n, spent


def _result(hit: Hit, lines: list[str], n: int, tokens: int) -> CodeResult:
    unit = hit.unit
    return CodeResult(unit.path, unit.name, unit.kind, unit.start_line, unit.end_line, round(hit.score, 6),
                      "\n".join(lines[:n]), unit.start_line + n - 1, tokens)
