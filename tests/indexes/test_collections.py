"""Collections: documents add, replace and go by id; a query runs in the store under its filter, serves only the
acknowledged version of each document, and says how to ask again."""

from __future__ import annotations

import pytest

from ctxsieve.indexes.collections import CollectionIndex, CollectionInfo, NewDocument, QueryParams
from ctxsieve.indexes.errors import InvalidInput, NotFound
from ctxsieve.indexes.store import Store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.tokens import Tokenizer

DOCS = [NewDocument("pump", "The pump moves water up the hill.", "Pump", None, {"family": "pump", "year": 2019}),
        NewDocument("valve", "The valve stops water flowing back.", "Valve", None, {"family": "valve", "year": 2023}),
        NewDocument("seal", "The seal keeps the valve dry.", "Seal", None, {"family": "seal", "year": 2024})]


@pytest.fixture
def index(edge: Store, cache: EmbeddingCache, words: Tokenizer) -> CollectionIndex:
    collections = CollectionIndex(edge, cache, words, 32)
    collections.create("t", "specs", "parts")
    collections.add("t", "specs", DOCS)
    return collections


def ids(index: CollectionIndex, query: str, **params: object) -> list[str]:
    return [h.document_id for h in index.query("t", "specs", query, QueryParams(**params)).snippets]  # type: ignore[arg-type]


def test_counts_and_listing(index: CollectionIndex) -> None:
    assert index.info("t", "specs") == CollectionInfo(name="specs", description="parts", documents=3, chunks=3)
    assert sorted(d.id for d in index.documents("t", "specs")) == ["pump", "seal", "valve"]
    assert index.hashes("t", "specs")["pump"] == DOCS[0].digest()
    with pytest.raises(NotFound):
        index.info("u", "specs")


def test_unchanged_documents_are_skipped_and_a_changed_one_replaced(index: CollectionIndex) -> None:
    assert index.add("t", "specs", DOCS) == (["pump", "valve", "seal"], 0)
    changed = NewDocument("pump", "The pump now pushes oil through the pipe.", "Pump", None, {"family": "pump"})
    assert index.add("t", "specs", [changed])[1] == 1
    assert index.info("t", "specs").chunks == 3, "the replaced version's chunk is gone"
    assert "oil" in index.query("t", "specs", "oil pipe pump", QueryParams(k=1)).snippets[0].text


def test_the_filter_runs_in_the_store_and_a_bad_one_is_refused(index: CollectionIndex) -> None:
    assert ids(index, "water", filter={"family": "valve"}) == ["valve"]
    assert sorted(ids(index, "water", filter={"year": {"gte": 2023}})) == ["seal", "valve"]
    assert ids(index, "water", filter={"family": {"not": {"any": ["valve", "seal"]}}}) == ["pump"]
    with pytest.raises(InvalidInput, match="colour"):
        ids(index, "water", filter={"colour": "red"})
    with pytest.raises(InvalidInput, match="between"):
        ids(index, "water", filter={"year": {"between": [1, 2]}})


def test_a_query_packs_to_its_budget_and_says_how_to_ask_again(index: CollectionIndex, words: Tokenizer) -> None:
    result = index.query("t", "specs", "valve water", QueryParams(k=3, max_tokens=12))
    assert sum(h.tokens for h in result.snippets) <= 12
    assert all(h.tokens == words.count(h.text) for h in result.snippets)
    assert result.more.collection == "specs" and result.more.chunks_total == 3
    assert 'query_collection(collection="specs"' in result.more.placeholder("tools")


def test_removing_a_document_and_the_collection(index: CollectionIndex) -> None:
    index.remove("t", "specs", "seal")
    assert index.info("t", "specs").documents == 2 and "seal" not in ids(index, "seal dry", k=3)
    with pytest.raises(NotFound):
        index.remove("t", "specs", "seal")
    index.delete("t", "specs")
    with pytest.raises(NotFound):
        index.info("t", "specs")
