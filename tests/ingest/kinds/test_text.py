"""Plain text: paragraphs packed within the target, sentences kept whole (English and Chinese)."""

from __future__ import annotations

from .cutting import chunks_of


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
