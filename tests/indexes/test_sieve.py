"""The sieve: errors verbatim, what fits comes back whole, the rest is ranked and packed to the budget, and the
same request gives the same answer; `more` says what was held back."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ctxsieve.indexes.sieve import FilterParams, Sieve
from ctxsieve.indexes.sources import SourceInput, SourceStore
from ctxsieve.indexes.store import Store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.indexes.websearch import Page, SearchQuery
from ctxsieve.ingest.embedding import HashingEmbedder
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.tokens import Tokenizer

LOG = "\n\n".join([f"step {i}: copied shard {i} to the archive" for i in range(80)]
                  + ["step 80: checksum mismatch on shard 17, archive rejected"])


@pytest.fixture
def sieve(sources: SourceStore, cache: EmbeddingCache, words: Tokenizer) -> Sieve:
    return Sieve(sources, cache, words)


def output(text: str = LOG) -> SourceInput:
    return SourceInput((Document(text),), True, "text", "tail", {"file": "sync.log"})


def test_a_large_output_is_cut_to_what_the_query_needs(sieve: Sieve, words: Tokenizer) -> None:
    result = sieve.filter("t", output(), FilterParams("checksum mismatch archive rejected", k=2, max_tokens=60))
    assert any("checksum mismatch" in s.text for s in result.snippets)
    assert sum(s.tokens for s in result.snippets) == result.usage.output_tokens <= 60
    assert all(s.tokens == words.count(s.text) for s in result.snippets)
    assert not result.passthrough and result.usage.input_tokens == words.count(LOG)
    more = result.more
    assert (more.ref, more.chunks_shown, more.shown) == (result.ref, len(result.snippets), "some")
    assert more.rerun is not None and (more.rerun.tool, more.rerun.args) == ("tail", {"file": "sync.log"})


def test_errors_come_back_verbatim_and_small_outputs_whole(sieve: Sieve) -> None:
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad shard"
    error = sieve.filter("t", output(trace * 30), FilterParams(None), is_error=True)
    assert error.passthrough and "".join(s.text for s in error.snippets) == trace * 30
    small = sieve.filter("t", output("one line"), FilterParams("anything", k=5))
    assert small.passthrough and small.snippets[0].text == "one line" and small.more.shown == "whole"


def test_nothing_over_min_score_is_an_empty_answer_that_says_so(sieve: Sieve) -> None:
    result = sieve.filter("t", output(), FilterParams("zebra", k=3, min_score=0.99))
    assert result.snippets == [] and result.more.shown == "none" and result.more.min_score == 0.99
    assert "reached min_score 0.99" in result.more.placeholder("http")


def test_the_same_request_gives_the_same_result_and_a_refilter_reuses_the_ref(sieve: Sieve) -> None:
    params = FilterParams("which shard failed", k=3)
    first, again = sieve.filter("t", output(), params), sieve.filter("t", output(), params)
    assert first == again
    refiltered = sieve.refilter("t", first.ref, FilterParams("step 40", k=1))
    assert refiltered.ref == first.ref and "step 40" in refiltered.snippets[0].text


def test_order_by_score_or_by_document(sieve: Sieve) -> None:
    by_doc = sieve.filter("t", output(), FilterParams("shard 17 archive", k=4, order="document"))
    by_score = sieve.filter("t", output(), FilterParams("shard 17 archive", k=4, order="score"))
    assert [s.start for s in by_doc.snippets] == sorted(s.start for s in by_doc.snippets)
    assert sorted(s.id for s in by_doc.snippets) == sorted(s.id for s in by_score.snippets)


def test_search_pages_are_ranked_together_and_each_kept_as_a_ref(sieve: Sieve) -> None:
    pages = [Page(f"https://example.com/{i}", f"Page {i}", LOG if i == 1 else f"nothing here {i} " * 200, 0.5)
             for i in range(3)]
    result = sieve.search_results("t", pages, SearchQuery("archive checksum"), FilterParams("checksum mismatch", k=2))
    assert len({r.ref for r in result.results}) == 3 and result.more.pages == 3
    assert any("checksum" in s.text for s in result.results[1].snippets)
    assert result.more.rerun is not None and result.more.rerun.tool == "search"


def test_an_outline_needs_no_query_and_shows_the_structure_within_the_budget(sieve: Sieve, words: Tokenizer) -> None:
    doc = "\n\n".join(f"# Chapter {c}\n\n" + "\n\n".join(f"Chapter {c} paragraph {p} says something long enough "
                                                           f"to be its own chunk of text, {p}." for p in range(6))
                      for c in range(8))
    result = sieve.filter("t", SourceInput((Document(doc),), True, "markdown"), FilterParams(None, mode="outline",
                                                                                               max_tokens=200))
    view = sieve.sources.get("t", result.ref).view.text
    assert result.more.shown == "outline" and not result.passthrough
    assert all(view[s.start : s.end] == s.text and "\n" not in s.text for s in result.snippets)
    assert {s.context for s in result.snippets} >= {f"Chapter {c}" for c in range(8)}, "every part is named"
    assert result.usage.output_tokens <= 200
    starts = [s.start for s in result.snippets]
    assert starts == sorted(starts)
    line = result.more.placeholder("tools")
    assert f'a part: fetch_ref(ref="{result.ref}", chunk=N, window=1)' in line and "outline" in line
    again = sieve.filter("t", SourceInput((Document(doc),), True, "markdown"), FilterParams(None, mode="outline",
                                                                                              max_tokens=200))
    assert again == result


def test_a_log_read_at_its_defaults_keeps_its_failures_and_its_last_lines(sieve: Sieve) -> None:
    """Left out, k follows the log's own budget: the failures, then the last lines that say how the run ended."""
    body: list[str] = []
    for i in range(400):
        body.append(f"   Compiling crate{i} v0.1.{i}")
        if i % 50 == 7:
            body += [f"error[E0308]: mismatched types in crate{i}", ""]
    body += ["warning: build finished with errors", "Finished: exit status 101 (the build was aborted)"]
    result = sieve.filter("t", SourceInput((Document("\n".join(body)),), True, "auto", "bash", {}),
                          FilterParams("why did the build fail"))
    shown = "\n".join(s.text for s in result.snippets)
    assert result.content_type == "log" and shown.count("error[E0308]") == 8
    assert "exit status 101" in shown, "the last lines are shown too"


def test_a_source_file_fits_its_budget_as_the_model_is_shown_it(sieve: Sieve, words: Tokenizer) -> None:
    """A code view's budget counts each line's number: a file fits it only when its lines with their numbers do."""
    text = "\n".join(f"value_{i} = compute(alpha, beta, gamma, {i})" for i in range(300))
    read = SourceInput((Document(text),), True, "auto", "Read", {"file_path": "/repo/values.py"})
    result = sieve.filter("t", read, FilterParams("value_7", max_tokens=words.count(text) + 10))
    assert not result.passthrough, "300 numbered lines cost more than the text alone"
    assert sieve.filter("t", read, FilterParams("value_7", max_tokens=4 * words.count(text))).passthrough


def test_a_source_file_no_larger_than_the_smallest_cut_comes_back_whole_at_its_defaults(
        sieve: Sieve, words: Tokenizer) -> None:
    """At the service's budget for code (a third of the file, at least MIN_TOKENS with the cut's note), a file whose
    lines with their numbers cost no more than MIN_TOKENS comes back whole: starlette's 85-line sessions.py had been
    cut by 20 lines for a saving of 50 tokens. A larger one is cut, within the budget."""
    from ctxsieve.ingest.kinds.code import MIN_TOKENS, NOTE_TOKENS, Code

    def read(text: str) -> SourceInput:
        return SourceInput((Document(text),), True, "auto", "Read", {"file_path": "/repo/shards.py"})

    def shown(text: str) -> int:
        return Code().cost(words.count(text), 1, text.count("\n") + 1)

    steps = MODULE.split("\n\n\n")
    small = next("\n\n\n".join(steps[:n]) for n in range(len(steps), 0, -1)
                 if shown("\n\n\n".join(steps[:n])) <= MIN_TOKENS)
    assert MIN_TOKENS - NOTE_TOKENS < shown(small) <= MIN_TOKENS, "a file the smallest cut's budget does not hold"
    assert sieve.filter("t", read(small), FilterParams("why does step_0 copy shard 0")).passthrough
    large = "\n\n".join([MODULE] * 3)
    cut = sieve.filter("t", read(large), FilterParams("why does verify_checksum raise"))
    assert not cut.passthrough and cut.usage.output_tokens <= max(MIN_TOKENS, shown(large) // 3)


class CountingEmbedder(HashingEmbedder):
    """The stand-in, counting what it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        return super().embed_passages(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        return super().embed_queries(texts)


MODULE = "\n\n".join(f"def step_{i}(archive):\n    \"\"\"Copy shard {i}.\"\"\"\n    return archive.copy({i})\n"
                   for i in range(60)) + "\n\ndef verify_checksum(archive):\n    raise OSError('checksum mismatch')\n"


def test_a_files_cut_shows_its_imports_with_the_definition_the_request_is_about(sieve: Sieve) -> None:
    """A read of a long module about its last definition, every other definition matching the request's words too:
    the cut shows that definition and, ahead of the others, the module's imports (where a fix that calls other code
    adds one; as many as a quarter of the budget holds), with their true line numbers."""
    steps = "\n\n".join(f"def step_{i}(archive):\n    \"\"\"Raise on a checksum mismatch of shard {i}.\"\"\"\n"
                          f"    return archive.copy({i})\n" for i in range(60))
    parts = "".join(f"from shards.part_{i} import copy_{i}\n" for i in range(8))
    text = "import os\nfrom pathlib import Path\n" + parts + "\n\n" + steps + MODULE.rsplit("\n\n\n", 1)[1]
    read = SourceInput((Document(text),), True, "auto", "Read", {"file_path": "/repo/shards.py"})
    result = sieve.filter("t", read, FilterParams("why does verify_checksum raise a checksum mismatch", max_tokens=200))
    shown = {s.line_start: s.text for s in result.snippets}
    assert shown.get(1, "").startswith("import os\nfrom pathlib import Path\nfrom shards.part_0 import"), shown
    assert any("checksum mismatch" in t for t in shown.values())


def test_a_definition_of_code_is_shown_with_the_blank_lines_that_part_it_from_its_neighbours(
        sieve: Sieve, words: Tokenizer) -> None:
    """Where a definition shown ends and the next begins, and where an edit would insert one: the blank lines either
    side of each snippet of code are shown with it (its text, offsets and lines the view's), counted in the budget
    with their line numbers, each line shown once; a log's snippets are not widened."""
    read = SourceInput((Document(MODULE),), True, "auto", "Read", {"file_path": "/repo/shards.py"})
    lines = MODULE.split("\n")
    result = sieve.filter("t", read, FilterParams("why does step_31 copy shard 31", max_tokens=120))
    assert result.content_type == "code" and result.snippets
    step = next(s for s in result.snippets if "def step_31(" in s.text)
    assert step.text.startswith("\n") and step.text.endswith("\n"), repr(step.text)
    assert step.text == MODULE[step.start:step.end] == "\n".join(lines[step.line_start - 1:step.line_end])
    assert lines[step.line_start - 1] == "" and lines[step.line_end - 1] == ""
    assert lines[step.line_start - 2].strip() and lines[step.line_end].strip(), "the blank run, no further"
    assert step.tokens == words.count(step.text)
    shown = [n for s in result.snippets for n in range(s.line_start, s.line_end + 1)]
    assert len(shown) == len(set(shown)), "no line twice"
    assert result.usage.output_tokens <= 120
    tight = sieve.filter("t", read, FilterParams("why does step_31 copy shard 31", max_tokens=25))
    assert all(s.tokens == words.count(s.text) for s in tight.snippets) and tight.usage.output_tokens <= 25
    log = sieve.filter("t", output(), FilterParams("checksum mismatch archive rejected", k=2, max_tokens=60))
    assert all(s.text.strip() == s.text for s in log.snippets), "a log's lines as they were chosen"


@pytest.mark.parametrize(("content_type", "candidates", "embeds"),
                         [("code", 5, False), ("code", 0, False), ("log", 5, True), ("log", 0, False)])
def test_code_is_cut_by_the_code_ranker_alone_and_other_lines_by_their_candidates(
        sources: SourceStore, edge: Store, words: Tokenizer, content_type: str, candidates: int, embeds: bool) -> None:
    """A fresh read of code embeds nothing, now or in the background (the code ranker ranks it), and the definition
    the request names is in the cut; a log's dense candidates are CTXSIEVE_CODE_CANDIDATES (0: none)."""
    model = CountingEmbedder()
    sieve = Sieve(sources, EmbeddingCache(edge, model), words, code_candidates=candidates)
    text = MODULE if content_type == "code" else LOG
    result = sieve.filter("t", SourceInput((Document(text),), True, content_type, "Read", {"file_path": "a.py"}),
                          FilterParams("why does verify_checksum raise a checksum mismatch", max_tokens=200))
    assert any("checksum mismatch" in s.text for s in result.snippets)
    assert (model.calls > 0) == embeds, model.calls


LONG = ("import os\n\n\ndef reconcile(ledger, archive, strict=False):\n"
        + "".join(f"    shard_{i} = copy_shard(ledger, archive, {i}, os.sep)\n" for i in range(90))
        + "    if archive.checksum != ledger.checksum:\n"
        + "        raise ValueError('checksum mismatch between ledger and archive')\n    return ledger\n")


def test_a_later_part_of_a_long_definition_is_shown_under_its_header_line(sieve: Sieve, words: Tokenizer) -> None:
    """A long function's last piece holds the words asked for; shown alone, the model saw lines of no named function
    (ansible's ensure_type: its docstring shown, the `def` line a fix edits not). Its header line comes with it,
    just before it, where the budget leaves room: the view's own text and lines, counted, no line twice."""
    read = SourceInput((Document(LONG),), True, "auto", "Read", {"file_path": "/repo/ledger.py"})
    lines = LONG.split("\n")
    result = sieve.filter("t", read, FilterParams("why is a checksum mismatch raised", max_tokens=50))
    at = next(i for i, s in enumerate(result.snippets) if "checksum mismatch" in s.text)
    assert at > 0, [s.text for s in result.snippets]
    head = result.snippets[at - 1]
    assert (head.line_start, head.line_end, head.text) == (4, 4, lines[3]) and head.text.startswith("def reconcile(")
    assert head.text == LONG[head.start:head.end] and head.tokens == words.count(head.text)
    assert head.id.startswith(result.ref + "#")
    shown = [n for s in result.snippets for n in range(s.line_start, s.line_end + 1)]
    assert len(shown) == len(set(shown)) and result.usage.output_tokens <= 50
    whole = sieve.filter("t", read, FilterParams("why is a checksum mismatch raised", max_tokens=50))
    assert [s.text for s in whole.snippets] == [s.text for s in result.snippets], "the same request, the same cut"


DOCUMENTED = ("def ensure_type(value, value_type, origin=None):\n    '''Return a configuration value cast to a type.\n"
              + "".join(f"    :{kind}: casts the value to {kind}, or raises on a value of another type\n"
                        for kind in ("boolean", "integer", "float", "list", "none", "path", "tmppath", "pathlist",
                                     "pathspec", "str", "dict", "bytes", "octal", "mode"))
              + "    '''\n" + "".join(f"    step_{i} = cast(value, {i})\n" for i in range(40)) + "    return value\n")


def test_a_docstring_piece_is_shown_joined_to_its_def_line(sieve: Sieve, words: Tokenizer) -> None:
    """The piece cut right after a `def` line (the line alone, then its docstring) is joined back to it when the
    docstring's piece is shown and the budget has room: one snippet from the `def` line on, the view's own text."""
    from ctxsieve.ingest.kinds import kind_named

    read = SourceInput((Document(DOCUMENTED),), True, "auto", "Read", {"file_path": "/repo/manager.py"})
    result = sieve.filter("t", read, FilterParams("unquote a string value of type str", max_tokens=65))
    doc = next(s for s in result.snippets if s.line_start == 2)
    assert not any(s.line_start <= 1 for s in result.snippets), "fixture: no room left for the def line"
    source = sieve.sources.get("t", result.ref)
    headed = sieve._headed(source, kind_named("code"), [doc], 200, 5)
    assert len(headed) == 1 and headed[0].line_start == 1 and headed[0].line_end == doc.line_end
    assert headed[0].text == DOCUMENTED[:doc.end] and headed[0].tokens == words.count(headed[0].text)
    assert sieve._headed(source, kind_named("code"), [doc], 0, 5) == [doc], "no room: as it was"
