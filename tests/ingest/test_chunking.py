"""Chunking: exact offsets for any input, structure-aware boundaries, sizes within the target."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxsieve.ingest.chunking import chunk_view
from ctxsieve.ingest.normalize import Document, build_view, detect_content_type
from tests.conftest import shared


def chunks_of(text: str, tokenizer, kind: str = "auto", target: int = 64):  # type: ignore[no-untyped-def]
    view = build_view([Document(text)], kind)
    return view, chunk_view(view, tokenizer, target)


def assert_exact(view, chunks, target: int) -> None:  # type: ignore[no-untyped-def]
    assert all(c.tokens <= target for c in chunks)
    previous_end = -1
    for chunk in chunks:
        text = view.text[chunk.start : chunk.end]
        assert text == chunk.text(view.text) and text.strip() and text
        if view.content_type == "code":  # whole lines, indentation kept (a line over the target alone is cut)
            whole = chunk.start in (0, previous_end) or view.text[chunk.start - 1] == "\n"
            assert whole or overlong_line(view.text, chunk.start), "a code chunk starts at a line"
        else:
            assert text.strip() == text
        assert chunk.start >= previous_end, "chunks never overlap and stay in order"
        previous_end = chunk.end


def overlong_line(text: str, offset: int) -> bool:
    """A chunk may start inside a line only when that line is longer than any chunk could be (minified code)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    return (len(text) if line_end < 0 else line_end) - line_start > 32


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3000),
       st.sampled_from(["text", "markdown", "code"]))
def test_offsets_are_exact_for_any_unicode(tokenizer, text: str, kind: str) -> None:
    view, chunks = chunks_of(text, tokenizer, kind, target=32)
    assert view.text == text
    assert_exact(view, chunks, 32)
    covered = "".join(view.text[c.start : c.end] for c in chunks)
    assert "".join(covered.split()) == "".join(text.split()), "no visible character is dropped"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=200),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner,
                                                                                 max_size=5), max_leaves=40))
def test_json_offsets_are_exact(tokenizer, value: object) -> None:
    view, chunks = chunks_of(json.dumps(value), tokenizer, "json", target=32)
    assert_exact(view, chunks, 32)


def test_every_chunk_is_within_the_target(tokenizer) -> None:
    text = ("One sentence about budgets. " * 40 + "\n\n") * 5 + "x" * 5000
    _, chunks = chunks_of(text, tokenizer, "text", target=64)
    assert chunks and all(c.tokens <= 64 for c in chunks)
    assert all(c.tokens == tokenizer.count(text[c.start : c.end]) for c in chunks)


def test_chinese_sentences_are_kept_whole(tokenizer) -> None:
    sentence = "长江是中国最长的河流，全长约六千三百公里。"
    text = "".join(f"第{i}句：{sentence}" for i in range(40))
    view, chunks = chunks_of(text, tokenizer, "text", target=48)
    assert len(chunks) > 3
    for c in chunks[:-1]:
        assert view.text[c.start : c.end].endswith("。"), "cut at a sentence end, not mid-sentence"


def test_english_sentences_are_kept_whole(tokenizer) -> None:
    text = " ".join(f"Sentence number {i} talks about the quarterly revenue of Acme." for i in range(50))
    view, chunks = chunks_of(text, tokenizer, "text", target=40)
    assert all(view.text[c.start : c.end].endswith(".") for c in chunks)


def test_markdown_headings_are_context_and_boundaries(tokenizer) -> None:
    text = "# Guide\n\nIntro text.\n\n## Install\n\nRun pip install acme.\n\n## Usage\n\nCall acme.run() daily.\n"
    view, chunks = chunks_of(text, tokenizer, "markdown", target=200)
    assert [c.context for c in chunks] == ["Guide", "Guide > Install", "Guide > Usage"]
    assert view.text[chunks[1].start : chunks[1].end] == "## Install\n\nRun pip install acme."


def test_json_chunks_name_their_record(tokenizer) -> None:
    response = {"query": "q", "results": [{"title": f"Page {i}", "url": f"https://x/{i}",
                                           "content": f"Body of page {i}. " * 30} for i in range(4)]}
    view, chunks = chunks_of(json.dumps(response), tokenizer, "auto", target=80)
    assert view.content_type == "json"
    assert any(c.context == "results[2] (Page 2)" for c in chunks)
    for c in chunks:
        if c.context.startswith("results[2]"):
            assert "results[3]" not in view.text[c.start : c.end], "records are never mixed in one chunk"


def test_code_splits_at_definitions(tokenizer) -> None:
    text = "import os\n\ndef alpha():\n    return 1\ndef beta():\n    return 2\n\nclass Gamma:\n    pass\n"
    view, chunks = chunks_of(text, tokenizer, "code", target=8)
    starts = [view.text[c.start : c.end].split("\n")[0] for c in chunks]
    assert "def alpha():" in starts and "def beta():" in starts and "class Gamma:" in starts


@pytest.mark.parametrize(("text", "kind"), [
    ('{"a": [1, 2]}', "json"),
    ("<!DOCTYPE html><html><body><p>Hello</p></body></html>", "html"),
    ("# Title\n\n- item one\n- item two\n", "markdown"),
    ("def f():\n    return 1\n\nclass A:\n    pass\nimport os\n", "code"),
    ("Plain words, nothing else.", "text"),
])
def test_content_type_detection(text: str, kind: str) -> None:
    assert detect_content_type(text) == kind


@pytest.mark.parametrize("page", ["qq", "gmw", "bbc-1", "wikipedia"])
def test_html_pages_reduce_to_their_article(tokenizer, page: str) -> None:
    html = shared("web_pages", page, "source.html").read_text(encoding="utf-8", errors="replace")
    view, chunks = chunks_of(html, tokenizer, "auto", target=96)
    assert view.content_type == "html" and view.sections[0].title
    assert tokenizer.count(view.text) < tokenizer.count(html) / 2, "markup and boilerplate are dropped"
    assert "<div" not in view.text and "function(" not in view.text
    assert_exact(view, chunks, 96)
