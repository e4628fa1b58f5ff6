"""What every kind's chunks keep: exact offsets, whole lines for kinds read by lines, nothing dropped."""

from __future__ import annotations

from ctxsieve.ingest.chunking import chunk_view
from ctxsieve.ingest.normalize import Document, build_view


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
