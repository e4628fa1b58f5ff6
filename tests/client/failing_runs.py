"""Failing runs of another project, made real on disk: `pytest -v` over suites with 1, 8, 30 and 100 failing tests
among passing ones (each failure a helper's assertion with the locals pytest prints, about 1.5 KB of traceback), and
a C file gcc fails to build with 50 errors. Each run says what the model must be shown of it: every failing test's
id and its assertion line (a build: every error line)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PASSING = 400  # enough `-v` lines that even one failure's run is over Claude Code's 10,000-character error
SIZES = (1, 8, 30, 100)
BUILD_ERRORS = 50


@dataclass(frozen=True)
class Run:
    command: str
    ids: list[str]  # every failing test's id (a build: empty)
    asserts: list[str]  # every assertion or error line the model must see
    output: str  # what the command printed (for the checks that read it without an agent)


def expected(n: int, i: int) -> int:
    return sum((k + 1) * (3 * i + k) for k in range(6)) + 1  # off by one: the test fails


def suite(root: Path, failing: int) -> Run:
    folder = root / f"suite{failing}"
    folder.mkdir(parents=True)
    picked = [7 * i + 3 for i in range(failing)]
    (folder / "test_billing.py").write_text(
        "import pytest\n\n\n"
        "def check_invoice(invoice, expected):\n"
        "    total = sum(line['qty'] * line['price'] for line in invoice['lines'])\n"
        "    assert total == expected, f\"invoice {invoice['id']} totals {total}, expected {expected}\"\n\n\n"
        f"@pytest.mark.parametrize('n', range({PASSING}))\n"
        "def test_line_is_positive(n):\n    assert n + 1 > 0\n\n\n"
        f"@pytest.mark.parametrize('n', {picked})\n"
        "def test_invoice_total(n):\n"
        "    invoice = {'id': f'INV-{n:04d}', 'lines': [{'sku': f'SKU-{n}-{k}', 'qty': k + 1, 'price': 3 * n + k}\n"
        "                                             for k in range(6)]}\n"
        "    check_invoice(invoice, expected=sum((k + 1) * (3 * n + k) for k in range(6)) + 1)\n")
    command = f"{sys.executable} -m pytest -v -p no:cacheprovider {folder.name}"
    done = subprocess.run(command.split(), cwd=root, capture_output=True, text=True, timeout=300)
    ids = [f"{folder.name}/test_billing.py::test_invoice_total[{n}]" for n in picked]
    asserts = [f"AssertionError: invoice INV-{n:04d} totals {expected(0, n) - 1}, expected {expected(0, n)}"
               for n in picked]
    return Run(command, ids, asserts, done.stdout)


def build(root: Path) -> Run:
    source = root / "ledger.c"
    source.write_text("#include <stdio.h>\n\n" + "".join(
        f"int account_{i}(int amount) {{\n    int fee_{i} = amount / 100;\n    return amount + balance_{i};\n}}\n\n"
        for i in range(BUILD_ERRORS)) + "int main(void) { return account_0(1); }\n")
    command = f"gcc -Wall -Wextra -c {source.name} -o /dev/null"
    # the C locale, as under the agent (its environment names none): gcc quotes with ASCII quotes there
    done = subprocess.run(command.split(), cwd=root, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    return Run(command, [], [f"error: 'balance_{i}' undeclared" for i in range(BUILD_ERRORS)], done.stderr)


def make_runs(root: Path) -> dict[str, Run]:
    return {**{f"pytest {n}": suite(root, n) for n in SIZES}, "gcc": build(root)}
