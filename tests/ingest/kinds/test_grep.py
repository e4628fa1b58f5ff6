"""Grep output as its own kind: told from other text in each form agents print it, cut into single lines, and shown
as runs of the lines a request needs within the budget as the agent receives it (ingest/kinds/grep.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ctxsieve.ingest.kinds.grep import (
    SPREAD_RANKED,
    GrepLines,
    choose_lines,
    grep_file,
    grep_spans,
    heading,
    runs_of,
    spread,
)
from ctxsieve.ingest.normalize import detect_content_type
from ctxsieve.ingest.tokens import Tokenizer
from ctxsieve_client.models import FilterResult, Snippet
from ctxsieve_client.rendering import SEPARATOR, View, render
from ctxsieve_client.rendering import snippet as client_snippet

GREP_VIEW = View(by_lines=True, headed=False)  # as the service says grep output is shown
# `grep -rn 'def ' .` over a project holding two methods of the same name, the one the request needs among many
DEFINITIONS = [f"    def method_{i}(self, value, context=None):" for i in range(300)]
DEFINITIONS[120] = "    def quantize(self, exp, rounding=None, context=None):"
DEFINITIONS[260] = "    def quantize(self, a, b):"
GREP = "\n".join([*(f"./decimal_impl.py:{10 * i + 3}:{line}" for i, line in enumerate(DEFINITIONS)),
                  "./tests/test_ledger.py:5:def test_balances(n):", "./tests/test_ledger.py:10:def test_doubling(n):"])
REQUEST = ("The ledger tests fail and the C build breaks: find out why. Then check how Decimal.quantize rounds its "
           "result. grep -rn 'def ' .")


@pytest.mark.parametrize("text", [
    GREP,
    "src/a.py:3:x = 1\nsrc/a.py-4-y = 2\n--\nsrc/b.py:9:z = 3\nsrc/b.py:12:w\nsrc/c.py:1:v",  # grep -rn -C, git grep
    "\n".join(f"{n}:    def f{n}(self):" for n in range(3, 60, 7)),  # grep -n FILE; Claude Code's Grep of one file
    "src/a.py\n3:def a():\n9:def b():\n\nsrc/b.py\n1:def c():\n5:def d():\n7:def e():",  # rg --heading
])
def test_each_form_of_grep_output_is_told_as_grep(text: str) -> None:
    assert detect_content_type(text) == "grep"


def test_numbered_text_that_is_not_one_files_lines_is_not_grep() -> None:
    schedule = "09:00 standup\n10:30 review\n11:00 lunch\n13:00 planning\n14:00 retro\n15:30 demo"
    assert detect_content_type(schedule) != "grep", "numbers that are times, not line numbers"
    falling = "\n".join(f"{n}: step" for n in (9, 7, 5, 3, 1))
    assert detect_content_type(falling) != "grep", "a file's line numbers rise"


def test_every_line_is_its_own_chunk_and_names_its_file() -> None:
    text = "src/a.py:3:x = 1\nsrc/a.py-4-y = 2\n--\n2024-b.py:9:z = 3\n\nsrc/c.py\n12:w\n14:30:v"
    spans = grep_spans(text)
    assert [(s.first, s.last) for s in spans] == [(0, 0), (1, 1), (3, 3), (5, 5), (6, 6), (7, 7)], "no -- or blank"
    assert [grep_file(text.split("\n")[s.first]) for s in spans[:3]] == ["src/a.py", "src/a.py", "2024-b.py"]
    assert [s.context for s in spans[4:]] == ["file src/c.py"] * 2, "rg --heading's path names the lines below it"
    assert all(s.context == "" for s in spans[:3]), "a line that names its file needs no heading to say it"


def lines_of(scores: list[float], files: list[str], tokens: int = 10, run: int = 5) -> GrepLines:
    return GrepLines(np.array(scores), files, [tokens] * len(scores), [run] * len(scores))


def test_a_line_next_to_a_chosen_one_costs_only_its_own_tokens() -> None:
    lines = lines_of([9, 8, 0, 7, 0, 6], ["a"] * 6)
    assert choose_lines(lines, budget=15 + 10 + 15, most_runs=9) == [0, 1, 3], "lines 0-1 are one run: one heading"
    assert runs_of([0, 1, 3], lines.files) == [(0, 1), (3, 3)]
    assert runs_of([0, 1], ["a", "b"]) == [(0, 0), (1, 1)], "a run never crosses files"
    assert choose_lines(lines, budget=1000, most_runs=1) == [0, 1, 2], "at most most_runs runs"


def test_lines_the_request_does_not_match_fill_what_is_left_in_order() -> None:
    lines = lines_of([0, 0, 5, 0, 0], ["a"] * 5)
    assert choose_lines(lines, budget=15 + 15 + 5, most_runs=9) == [0, 1, 2], "the match, then the rest in order"
    assert choose_lines(lines_of([0, 0, 0], ["a"] * 3), budget=25, most_runs=9) == [0, 1], "never nothing"


def test_a_files_later_lines_count_less_so_the_budget_reaches_more_files() -> None:
    """With no index of the repository, a file's second line already falls below another file's best; where the
    indexed repository ranks the files, the best file keeps more of its lines first."""
    scores = spread(np.array([10.0, 9.0, 8.0, 7.0]), ["a", "a", "a", "b"])
    assert scores[3] == 7.0 and scores[0] == 10.0, "each file's best line keeps its score"
    assert scores[2] < scores[1] < scores[3], "a's second line falls below b's best"
    ranked = spread(np.array([10.0, 9.0, 8.0, 7.0]), ["a", "a", "a", "b"], SPREAD_RANKED)
    assert ranked[2] < ranked[3] < ranked[1], "ranked by the repository: a's third line falls below b's best"


def test_a_grep_ranked_by_the_indexed_repository_spreads_its_lines_less() -> None:
    """The cut of a grep over an indexed repository's files keeps more lines of the files it ranks first; with no
    ranking of them (no index, or none of these files in it), its files' later lines count less."""
    from ctxsieve.ingest.coderank.ranker import RepoRanking
    from ctxsieve.ingest.kinds.base import Chunk
    from ctxsieve.ingest.kinds.grep import Grep

    lines = [f"./a.py:{n}:retry_budget = {n}" for n in range(1, 4)] + ["./b.py:1:retry_budget = 9"]
    view = "\n".join(lines)
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    chunks = [Chunk(i, start, start + len(line), 8, 0, "")
              for i, (start, line) in enumerate(zip(starts, lines, strict=True))]
    lexical = np.array([1.0, 1.0, 1.0, 1.0])

    def ranking(shares: dict[str, float]) -> RepoRanking:
        return RepoRanking(lambda paths: {p: shares.get(p, 0.0) for p in paths}, lambda path, text: [])

    def scores(repo: RepoRanking | None) -> list[float]:
        return list(Grep().rescore("retry budget", view, chunks, lexical, None, lambda s, e: (s, e), repo))

    plain, unknown, ranked = scores(None), scores(ranking({})), scores(ranking({"a.py": 1.0}))
    assert plain[1] < plain[3] and list(unknown) == list(plain), "no ranking of these files: spread to reach b.py"
    assert ranked[1] > ranked[3], "a.py ranked first by the repository keeps its second line above b.py's best"


def test_the_heading_counted_is_the_one_the_client_renders() -> None:
    """A grep snippet is headed only where its lines do not name their file (rg --heading): the service counts what
    the client shows."""
    snippet = Snippet(id="src_x#3", text="12:x", score=None, start=0, end=8, tokens=4, document=0, title=None,
                      url=None, context="file a.py", line_start=12, line_end=15)
    bare = Snippet(**{**snippet.__dict__, "text": "a.py:12:x", "context": ""})
    assert heading(12, 15, "file a.py") + "12:x" == client_snippet(snippet, GREP_VIEW)
    assert render([snippet, bare], "", GREP_VIEW) == (
        heading(12, 15, "file a.py") + "12:x" + SEPARATOR + heading(12, 15, "") + "a.py:12:x" + SEPARATOR)
    assert heading(12, 15, "") == "", "lines that name their own file and line need no heading"


def test_the_definition_the_request_names_is_shown_among_its_namesakes(stub_client: TestClient,
                                                                        tokenizer: Tokenizer) -> None:
    response = stub_client.post("/v1/filter", json={
        "query": REQUEST, "content": GREP, "k": 50, "max_tokens": 1500,
        "source": {"tool": "Bash", "args": {"command": "grep -rn 'def ' ."}}})
    out = FilterResult.from_json(response.json())
    shown = render(out.snippets, "", out.view or GREP_VIEW).removesuffix(SEPARATOR)
    assert out.content_type == "grep" and out.view == GREP_VIEW
    assert "def quantize(self, exp, rounding=None, context=None):" in shown and "def quantize(self, a, b):" in shown
    assert "test_ledger.py:10:def test_doubling(n):" in shown, "the tests the request names"
    assert tokenizer.count(shown) <= 1500, "within the budget as the agent receives it, headings and all"
    lines = GREP.split("\n")
    for s in out.snippets:
        assert s.text == "\n".join(lines[s.line_start - 1 : s.line_end]), "whole lines, true numbers"
    starts = [s.line_start for s in out.snippets]
    assert starts == sorted(starts), "in the output's order"
