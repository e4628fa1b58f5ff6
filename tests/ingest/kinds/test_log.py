"""Logs: each failure kept together with its part (`role`), the summary and last lines too; failures first."""

from __future__ import annotations

from ctxsieve.ingest.kinds import kind_named
from ctxsieve.ingest.kinds.log import FAILURE, SUMMARY, TAIL

from .cutting import assert_exact, chunks_of

PASSING = "".join(f"tests/test_mod.py::test_ok_{i} PASSED{' ' * 20}[{i:3d}%]\n" for i in range(60))
LOG = (
    "============================= test session starts ==============================\n"
    + PASSING
    + "tests/test_mod.py::test_parse FAILED\n"
    "=================================== FAILURES ===================================\n"
    "__________________________________ test_parse __________________________________\n"
    "\n"
    "    def test_parse():\n"
    ">       assert parse('1') == 2\n"
    "E       AssertionError: assert 1 == 2\n"
    "\n"
    "tests/test_mod.py:12: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_mod.py::test_parse - AssertionError: assert 1 == 2\n"
    "========================= 1 failed, 60 passed in 0.52s =========================\n"
)


def test_a_pytest_log_is_told_and_cut_by_its_parts(tokenizer) -> None:
    view, chunks = chunks_of(LOG, tokenizer, "auto", target=64)
    assert view.content_type == "log"
    assert_exact(view, chunks, 64)
    failing = [c for c in chunks if c.role == FAILURE and c.context == "failure: test_parse"]
    assert failing and "E       AssertionError: assert 1 == 2" in "".join(c.text(view.text) for c in failing)
    assert any(c.role == SUMMARY and "1 failed, 60 passed" in c.text(view.text) for c in chunks)
    assert {c.role for c in chunks} >= {FAILURE, SUMMARY}
    assert all(c.role in ("", FAILURE, SUMMARY, TAIL) for c in chunks)


def test_failures_then_summary_then_tail_come_first_and_are_never_cut(tokenizer) -> None:
    view, chunks = chunks_of(LOG, tokenizer, "log", target=64)
    log = kind_named("log")
    first = log.priorities("why does the run of test_ok_3 pass", view.text, chunks, None, lambda a, b: (a, b), 1500)
    assert first is not None
    for i, chunk in enumerate(chunks):
        assert first[i] == {FAILURE: 6.0, SUMMARY: 4.0, TAIL: 2.0}.get(chunk.role, 0.0)
    must = log.must_show(chunks)
    assert must and all(chunks[i].role in (FAILURE, SUMMARY) for i in must)
    assert kind_named("text").must_show(chunks) == []


def test_a_traceback_is_one_failure_down_to_its_exception_line(tokenizer) -> None:
    trace = ("starting worker\n" * 30 + "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
             "    main()\nValueError: bad input\n" + "shutting down\n" * 30)
    view, chunks = chunks_of(trace, tokenizer, "log", target=400)
    failure = [c for c in chunks if c.role == FAILURE]
    assert len(failure) == 1 and failure[0].text(view.text).endswith("ValueError: bad input")
