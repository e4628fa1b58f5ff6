"""A small git repository for `search_code` through a real agent, and the check of what the model was sent.

The files hold a few definitions whose spans Python's own `ast` gives (the truth the rendered hits are checked
against), and one definition far over search_code's default budget, so that its answer is cut and must say which
lines were not shown and how to read them. `hits_of` parses the text the model read; `check_hit` holds each of its
numbered lines to the file's own line of that number.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

NAME = "ledger-app"  # the repository's folder, so the name search_code gives it
BRANCHES = 260  # route_event's branches: well over the default budget (indexes/repos/results.py DEFAULT_TOKENS)

FILES = {
    "billing/invoices.py": '''"""Invoices: totals with discounts and tax."""

from decimal import Decimal

from billing.tax import TaxTable

ROUNDING = Decimal("0.01")


def compute_invoice_total(lines, discount, table, region):
    """The invoice's total: each line's price times its quantity, less the discount, plus the region's tax."""
    subtotal = sum(Decimal(line["price"]) * line["quantity"] for line in lines)
    discounted = subtotal - subtotal * Decimal(discount)
    taxed = discounted * (1 + table.rate_for(region))
    return taxed.quantize(ROUNDING)


def format_invoice_number(year, serial):
    return f"INV-{year}-{serial:06d}"
''',
    "billing/tax.py": '''"""Tax rates per region."""

from decimal import Decimal


class TaxTable:
    """Value-added tax rates, by region code."""

    def __init__(self, rates):
        self.rates = {code.upper(): Decimal(rate) for code, rate in rates.items()}

    def rate_for(self, region):
        """The tax rate of a region; an unknown region is refused, never taxed at zero."""
        try:
            return self.rates[region.upper()]
        except KeyError:
            raise LookupError(f"no tax rate for region {region!r}") from None
''',
    "app/events.py": '"""Events from the ledger\'s queue, each routed to its handler."""\n\n\n'
                     "def route_event(event):\n"
                     '    """Route one ledger event to its handler by its kind."""\n'
                     '    kind = event["kind"]\n'
                     + "".join(f'    if kind == "ledger.kind_{i}":\n'
                               f'        return handle_kind(event, {i}, "ledger.kind_{i} handled by shard {i % 9}")\n'
                               for i in range(BRANCHES))
                     + '    raise ValueError(f"unknown event kind {kind}")\n\n\n'
                     "def handle_kind(event, number, note):\n    return number, note\n",
    "README.md": "# ledger-app\n\nInvoices and events.\n",
}


@dataclass(frozen=True)
class Definition:
    path: str
    name: str  # qualified, as search_code names it (Class.method)
    start: int
    end: int


def make_repository(parent: Path) -> Path:
    """The repository, committed, at parent/NAME."""
    root = parent / NAME
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "ledger"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
    return root


def definition(root: Path, path: str, name: str) -> Definition:
    """A definition's true span, as Python's parser gives it."""
    tree = ast.parse((root / path).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        for child in getattr(node, "body", []):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                qualified = f"{node.name}.{child.name}" if isinstance(node, ast.ClassDef) else child.name
                if qualified == name:
                    return Definition(path, name, child.lineno, child.end_lineno or child.lineno)
    raise AssertionError(f"{name} is not defined in {path}")


@dataclass(frozen=True)
class Hit:
    path: str
    start: int
    end: int
    kind: str
    name: str
    rows: list[tuple[int, str]]  # each shown line: (its number, its text)
    rest: str | None  # the line saying what is not shown, for a cut definition


HEAD = re.compile(r"^(\S+):(\d+)-(\d+) (\w+) (\S+)$")
ROW = re.compile(r"^(\d+)│(.*)$")


def hits_of(text: str) -> list[Hit]:
    """The definitions in search_code's answer, as the model read it."""
    hits = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        head = HEAD.match(lines[0])
        if head is None:
            continue
        rows = [(int(m.group(1)), m.group(2)) for line in lines[1:] if (m := ROW.match(line))]
        rest = next((line for line in lines[1:] if line.startswith("⋮")), None)
        path, start, end, kind, name = head.groups()
        hits.append(Hit(path, int(start), int(end), kind, name, rows, rest))
    return hits


def check_hit(root: Path, hit: Hit, truth: Definition) -> None:
    """The hit is the definition, with its true span, every shown line the file's own, and, when cut, the line
    naming the rest to read."""
    assert (hit.path, hit.name, hit.start, hit.end) == (truth.path, truth.name, truth.start, truth.end), hit
    file_lines = (root / truth.path).read_text(encoding="utf-8").split("\n")
    assert hit.rows and hit.rows[0][0] == truth.start, "the definition is shown from its first line"
    assert [n for n, _ in hit.rows] == list(range(truth.start, truth.start + len(hit.rows))), "consecutive lines"
    wrong = [(n, text) for n, text in hit.rows if file_lines[n - 1] != text]
    assert not wrong, f"lines not the file's own: {wrong[:3]}"
    last = hit.rows[-1][0]
    if last == truth.end:
        assert hit.rest is None, "a whole definition says nothing is missing"
    else:
        rest = f"{last + 1}-{truth.end}"
        said = f"⋮ lines {rest} not shown: read {truth.path} lines {rest}"
        assert hit.rest is not None and (hit.rest == said or hit.rest.startswith(
            f"{said} (the request's words most at lines ")), hit.rest
        pointed = [int(n) for n in re.findall(r"\d+", hit.rest[len(said):])]
        assert all(last < n <= truth.end and file_lines[n - 1].strip() for n in pointed), (pointed, hit.rest)
