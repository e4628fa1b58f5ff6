"""Markdown: headings are each chunk's context and its boundaries."""

from __future__ import annotations

from .cutting import chunks_of


def test_markdown_headings_are_context_and_boundaries(tokenizer) -> None:
    text = "# Guide\n\nIntro text.\n\n## Install\n\nRun pip install acme.\n\n## Usage\n\nCall acme.run() daily.\n"
    view, chunks = chunks_of(text, tokenizer, "markdown", target=200)
    assert [c.context for c in chunks] == ["Guide", "Guide > Install", "Guide > Usage"]
    assert view.text[chunks[1].start : chunks[1].end] == "## Install\n\nRun pip install acme."
