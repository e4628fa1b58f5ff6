"""Command output coding agents read, through the API (the real model and store): a real `pytest -v` run with
failing tests and a real `git diff`, each read as its own kind and cut by its own rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client.models import FilterResult
from ctxsieve_client.rendering import SEPARATOR, render
from tests.conftest import CACHE

TOKENS = load_tokenizer("o200k_base", CACHE / "tiktoken")

FAILING = (7, 23, 31)


@pytest.fixture(scope="module")
def pytest_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("suite")
    cases = "".join(
        f"def test_pump_{i}():\n    reading = {i} * 3\n    assert reading == {i * 3 + (1 if i in FAILING else 0)}, "
        f"'pump {i} drifted'\n\n" for i in range(60))
    (root / "test_pumps.py").write_text("import pytest\n\n" + cases)
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_pumps.py"],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-500:]
    return done.stdout


def post(client: TestClient, **body: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/v1/filter", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_test_log_keeps_every_failure_and_the_summary(client: TestClient, pytest_log: str) -> None:
    out = post(client, query="list the files in the project", content=pytest_log, max_tokens=1500,
               source={"tool": "Bash", "args": {"command": "pytest -v"}})
    shown = "\n".join(s["text"] for s in out["snippets"])
    assert out["content_type"] == "log"
    for i in FAILING:
        assert f"FAILED test_pumps.py::test_pump_{i}" in shown, "every failing test is named"
        assert f"AssertionError: pump {i} drifted" in shown, "and its assertion is shown"
    assert "3 failed, 57 passed" in shown, "the summary line"
    assert shown.count("PASSED") < 10, "passing noise is cut"
    lines = pytest_log.split("\n")
    for s in out["snippets"]:
        assert s["text"] == "\n".join(lines[s["line_start"] - 1 : s["line_end"]]), "whole lines, true numbers"


def test_a_logs_failures_fit_whole_whatever_the_budget(client: TestClient, pytest_log: str) -> None:
    """A budget smaller than the failures (a surface's 300 tokens): every failure and the summary still come whole;
    the budget bounds only what is shown around them."""
    out = post(client, query="why", content=pytest_log, max_tokens=300, k=2, content_type="log")
    shown = "\n".join(s["text"] for s in out["snippets"])
    for i in FAILING:
        assert f"FAILED test_pumps.py::test_pump_{i}" in shown and f"AssertionError: pump {i} drifted" in shown
        assert f"assert {i * 3} == {i * 3 + 1}" in shown, "the assertion's own line"
    assert "3 failed, 57 passed" in shown
    assert out["usage"]["output_tokens"] > 300, "over the budget: failures are never cut to fit it"


@pytest.fixture(scope="module")
def git_diff(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("repo")
    git = ["git", "-C", str(root), "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for name in ("pumps.py", "valves.py", "gauges.py"):
        (root / name).write_text("".join(f"def {name[:-4]}_{i}(x):\n    return x * {i}\n\n\n" for i in range(80)))
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    for name in ("pumps.py", "valves.py", "gauges.py"):
        text = (root / name).read_text()
        for i in (5, 40, 70):
            text = text.replace(f"    return x * {i}\n", f"    return x * {i} + OFFSET_{i}  # calibrated\n")
        (root / name).write_text(text)
    return subprocess.run([*git, "diff"], capture_output=True, text=True, check=True).stdout


def test_a_diff_keeps_whole_hunks_with_their_file(client: TestClient, git_diff: str) -> None:
    out = post(client, query="what changed in valves_40", content=git_diff, max_tokens=400)
    assert out["content_type"] == "diff"
    first = out["snippets"][0]
    assert first["context"] == "file valves.py" or any(s["context"] == "file valves.py" for s in out["snippets"])
    hunk = next(s["text"] for s in out["snippets"] if "OFFSET_40" in s["text"] and s["context"] == "file valves.py")
    assert hunk.lstrip().startswith(("@@", "diff --git")), "a hunk starts at its header"
    assert "-    return x * 40\n+    return x * 40 + OFFSET_40  # calibrated" in hunk, "whole"


def ripgrep(pattern: str, root: Path) -> str:
    """ripgrep (the binary the Codex CLI's npm package ships) over this checkout, else git grep -n."""
    found = sorted((root / "tests" / "mcp" / "node_modules" / "@openai").glob("codex-*/vendor/*/codex-path/rg"))
    command = [str(found[0]), "-n", "--no-heading", "-t", "py", pattern, "."] if found else \
        ["git", "grep", "-n", pattern, "--", "*.py"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, check=True).stdout


def test_grep_results_are_the_lines_the_request_needs_by_runs_of_one_file(client: TestClient) -> None:
    found = ripgrep("content_type", Path(__file__).resolve().parents[2])
    out = post(client, query="where does the sieve choose the budget for code", content=found, max_tokens=600,
               source={"tool": "Bash", "args": {"command": "git grep -n content_type"}})
    assert out["content_type"] == "grep"
    lines = found.split("\n")
    for s in out["snippets"]:
        assert len({line.split(":", 1)[0] for line in s["text"].split("\n")}) == 1, "a snippet is one file's lines"
        assert s["text"] == "\n".join(lines[s["line_start"] - 1 : s["line_end"]]), "whole lines, true numbers"
    assert any("indexes/sieve.py:" in s["text"] for s in out["snippets"]), "the file the request is about"
    result = FilterResult.from_json(out)
    assert result.view is not None and result.view.by_lines and not result.view.headed
    shown = render(result.snippets, "", result.view).removesuffix(SEPARATOR)
    assert TOKENS.count(shown) <= 600, "the budget holds the snippets as the agent receives them, headings too"


def test_a_file_nested_deeper_than_pythons_stack_is_cut_as_text(client: TestClient) -> None:
    """Generated code can nest a thousand deep (`[[[...]]]`): the grammar's walk would pass Python's recursion limit,
    so such a file is read as one no grammar parses, its lines true, instead of failing the request."""
    deep = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(200))
    content = deep + "TABLE = " + "[" * 1200 + "]" * 1200 + "\n" + "\ndef parse_ledger_rows(rows):\n    return rows\n"
    out = post(client, query="parse_ledger_rows", content=content, max_tokens=300,
               source={"tool": "Read", "args": {"file_path": "/src/generated/tables.py"}})
    shown = "\n".join(s["text"] for s in out["snippets"])
    assert "def parse_ledger_rows(rows):" in shown and out["ref"]
    lines = content.split("\n")
    for s in out["snippets"]:
        assert s["text"] == "\n".join(lines[s["line_start"] - 1 : s["line_end"]]), "whole lines, true numbers"
