"""HTML: reduced to the article's text, cut as markdown."""

from __future__ import annotations

import pytest

from tests.conftest import shared

from .cutting import assert_exact, chunks_of


@pytest.mark.parametrize("page", ["qq", "gmw", "bbc-1", "wikipedia"])
def test_html_pages_reduce_to_their_article(tokenizer, page: str) -> None:
    html = shared("web_pages", page, "source.html").read_text(encoding="utf-8", errors="replace")
    view, chunks = chunks_of(html, tokenizer, "auto", target=96)
    assert view.content_type == "html" and view.sections[0].title
    assert tokenizer.count(view.text) < tokenizer.count(html) / 2, "markup and boilerplate are dropped"
    assert "<div" not in view.text and "function(" not in view.text
    assert_exact(view, chunks, 96)
