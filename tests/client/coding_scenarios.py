"""The outputs coding agents really produce, made on disk for a real agent to run: a failing `pytest -v` run whose
log is over Claude Code's 30,000-character preview, the same log saved and printed with `cat`, a failing C build,
a large source file to read with offset/limit, and a tree to grep. Each scenario says which facts the model must
be sent (every failing test id and its assertion line, the compiler's errors, true line numbers, a needed line)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAILING = (101, 202, 303, 404)
PASSING = 900
SOURCE = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "_pydecimal.py"


@dataclass
class Project:
    root: Path
    log: Path  # a failing run's log, saved
    source: Path  # a large source file (the standard library's _pydecimal.py)
    c_file: Path
    facts: dict[str, list[str]] = field(default_factory=dict)  # what the model must see, per scenario


def make_project(root: Path) -> Project:
    tests = root / "tests"
    tests.mkdir(parents=True)
    (tests / "test_ledger.py").write_text(
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('n', range({PASSING}))\n"
        "def test_balances(n):\n    assert n >= 0\n\n\n"
        f"@pytest.mark.parametrize('n', {list(FAILING)})\n"
        "def test_doubling(n):\n"
        "    value = {'n': n, 'doubled': n * 2}\n"
        "    assert value['doubled'] == n * 3, f'doubling {n} gave {value[\"doubled\"]}'\n")
    log = root / "run.log"
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"], cwd=root,
                          capture_output=True, text=True, timeout=300)
    log.write_text(done.stdout)
    source = root / "decimal_impl.py"
    source.write_text(SOURCE.read_text())
    c_file = root / "build.c"
    helpers = "".join(f"int helper_{i}(int a) {{ int unused_{i} = a; return a + {i}; }}\n" for i in range(400))
    c_file.write_text(helpers + "int main(void) { return missing_symbol(1) + undeclared_total; }\n")
    ids = [f"tests/test_ledger.py::test_doubling[{n}]" for n in FAILING]
    asserts = [f"AssertionError: doubling {n} gave {2 * n}" for n in FAILING]
    return Project(root, log, source, c_file, facts={
        "pytest": ids + asserts + ["4 failed, 900 passed"],
        "cat log": ids + asserts + ["4 failed, 900 passed"],
        "build": ["'undeclared_total' undeclared", "implicit declaration of function 'missing_symbol'"],
        "grep": ["def quantize(self, exp, rounding=None, context=None):"],
    })


def read_window(project: Project, offset: int, limit: int) -> list[str]:
    """The file's lines a Read of offset/limit covers (1-based offset, as Claude Code's Read)."""
    return project.source.read_text().split("\n")[offset - 1: offset - 1 + limit]


def tool_results(requests: list[dict[str, Any]]) -> dict[str, str]:
    """What the model was sent for each tool call: the tool_result's text in the request that first carried it, and
    the hook context Claude Code added with it. Claude Code 2.1.327 joins every hook context so far, and its own
    reminders, into one `system` text that grows request by request, each context under `<Event>:<Tool> hook
    additional context: `; a result gets the contexts new in its request, Claude Code's own paragraphs trimmed."""
    sent: dict[str, str] = {}
    before: list[str] = []
    for request in requests:
        results, texts = _blocks(request)
        contexts = [c for text in texts for c in hook_contexts(text)]
        fresh = [c for c in contexts if c not in before]
        new = [tool_id for tool_id in results if tool_id not in sent]
        for tool_id in new:
            sent[tool_id] = results[tool_id]
        if new and fresh:
            sent[new[-1]] += "".join("\n" + c for c in fresh)
        before = contexts
    return sent


def _blocks(request: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """(each tool_result's text by id, every other text a user or system turn carries)."""
    results: dict[str, str] = {}
    texts: list[str] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if message.get("role") == "assistant":
            continue
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                results[block["tool_use_id"]] = inner if isinstance(inner, str) else "".join(
                    b.get("text", "") for b in inner or [] if isinstance(b, dict))
            elif block.get("type") == "text":
                texts.append(block.get("text", ""))
    return results, texts


HOOK_CONTEXT = re.compile(r"(?:^|\n\n)(?=\w+:\w+ hook additional context: )")
# Claude Code's own paragraphs in the same system text (its reminders, the deferred tools it lists once an MCP server
# connects, that server's instructions): a hook context ends where one of them begins
OWN_PARAGRAPHS = ("The user hasn't heard from you", "The following deferred tools", "# MCP Server Instructions",
                  "The following MCP servers")


def hook_contexts(text: str) -> list[str]:
    """The hook contexts in a text, each to the next or to the first of Claude Code's own paragraphs."""
    contexts = []
    for part in HOOK_CONTEXT.split(text)[1:] if HOOK_CONTEXT.search(text) else []:
        paragraphs = part.split("\n\n")
        own = next((i for i, p in enumerate(paragraphs) if i and p.startswith(OWN_PARAGRAPHS)), len(paragraphs))
        contexts.append("\n\n".join(paragraphs[:own]))
    return contexts


NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
MARKED = re.compile(r"^\s*(\d+)│(.*)$")


def false_numbers(shown: str, file_lines: list[str]) -> tuple[int, list[str]]:
    """(lines checked, rows whose number is not the file's) in a Read as Claude Code numbers it (`N<TAB>`), where a
    cut of several runs carries each line's own number before `│`."""
    checked, wrong = 0, []
    for row in shown.split("\n"):
        match = NUMBERED.match(row)
        if not match:
            continue
        own, rest = int(match.group(1)), match.group(2)
        if rest.strip() == "⋮":
            continue
        marked = MARKED.match(rest)
        number, text = (int(marked.group(1)), marked.group(2)) if marked else (own, rest)
        checked += 1
        if not (0 < number <= len(file_lines) and file_lines[number - 1] == text):
            wrong.append(row)
    return checked, wrong


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
