"""Sources: stored whole under a content-addressed ref, read back as written, forgotten and expired by rule."""

from __future__ import annotations

import time

import pytest

from ctxsieve.indexes.errors import Gone, InvalidInput, NotFound
from ctxsieve.indexes.sources import Source, SourceInput, SourceStore
from ctxsieve.indexes.store import Store
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.tokens import Tokenizer

TEXT = "\n\n".join(f"# Part {i}\n\nThe shard {i} was copied to the archive at step {i}." for i in range(40))


def stored(sources: SourceStore, text: str = TEXT, tenant: str = "t") -> Source:
    return sources.put(tenant, SourceInput((Document(text),), True, "markdown", "tail", {"n": 40}))


def test_the_same_content_gets_the_same_ref_per_tenant(sources: SourceStore) -> None:
    first, again, other = stored(sources), stored(sources), stored(sources, tenant="u")
    assert first.ref == again.ref != other.ref
    assert stored(sources, TEXT + " ").ref != first.ref


def test_a_source_reads_back_as_written_from_the_store(edge: Store, words: Tokenizer, sources: SourceStore) -> None:
    source = stored(sources)
    fresh = SourceStore(edge, words, 32).get("t", source.ref)  # nothing in memory: read from the store
    assert fresh.text == TEXT and fresh.chunks == source.chunks and fresh.view == source.view
    assert (fresh.tool, fresh.args, fresh.tokens) == ("tail", {"n": 40}, words.count(TEXT))
    assert [fresh.chunk_text(c) for c in fresh.chunks] == [source.chunk_text(c) for c in source.chunks]


def test_another_chunk_size_re_derives_chunks_without_rewriting(edge: Store, words: Tokenizer,
                                                                 sources: SourceStore) -> None:
    prose = " ".join(f"Sentence {i} says where shard {i} went." for i in range(200))
    source = sources.put("t", SourceInput((Document(prose),), True, "text"))
    wider = SourceStore(edge, words, 96).get("t", source.ref)
    assert len(wider.chunks) < len(source.chunks) and wider.text == prose
    assert all(c.tokens <= 96 for c in wider.chunks) and wider.chunker != source.chunker
    assert SourceStore(edge, words, 32).get("t", source.ref).chunks == source.chunks, "the record was not rewritten"


def test_parts_of_a_source(sources: SourceStore) -> None:
    source = stored(sources)
    start, end = source.part(chunk=3, window=1)
    assert (start, end) == (source.chunks[2].start, source.chunks[4].end)
    with pytest.raises(InvalidInput, match="out of range"):
        source.part(chunk=len(source.chunks))
    with pytest.raises(InvalidInput, match="outside the view"):
        source.part(0, len(source.view.text) + 1)


def test_another_tenants_ref_is_unknown_and_a_deleted_one_too(sources: SourceStore) -> None:
    source = stored(sources)
    with pytest.raises(NotFound):
        sources.get("u", source.ref)
    assert sources.delete("t", source.ref), "the vector keys it used, for the caller to drop"
    with pytest.raises(NotFound):
        sources.get("t", source.ref)


def test_past_retention_a_ref_is_gone_naming_the_setting_then_stored_again(edge: Store, words: Tokenizer) -> None:
    sources = SourceStore(edge, words, 32, retention_days=1)
    source = stored(sources)
    sources.expire(now=time.time() + 1.5 * 86400)  # a tombstone until twice the retention
    with pytest.raises(Gone, match=r"retention period \(1 days\)") as gone:
        sources.get("t", source.ref)
    assert gone.value.setting == "source_retention_days"
    assert stored(sources).text == TEXT, "sending the output again stores it again"
