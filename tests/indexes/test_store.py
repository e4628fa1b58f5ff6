"""The store protocol, the same tests over both adapters: Qdrant Edge (embedded) and qdrant-client (a server's
client API; its `:memory:` mode stands in for a server here), so every call the URL path makes runs in CI.
Then the claims that rest on it: two writers over one store both keep what they wrote, and a data dir is
held by one process."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ctxsieve.indexes.collections import CollectionIndex, CollectionInfo, NewDocument, QueryParams, records
from ctxsieve.indexes.errors import StoreUnavailable
from ctxsieve.indexes.sessions import Read, SessionLog
from ctxsieve.indexes.store import (
    HasIds,
    IsEmpty,
    Match,
    MatchAny,
    PointData,
    Range,
    Search,
    SpaceSpec,
    Sparse,
    Store,
    Where,
    open_edge,
    open_store,
    point_id,
    scroll_all,
    where,
)
from ctxsieve.indexes.tools import ToolIndex
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import HashingEmbedder

SPEC = SpaceSpec(name="t", dense={"d": 4}, sparse=("bm25",),
                 indexes={"tenant": "tenant", "n": "integer", "at": "datetime", "m.tag": "keyword"})


@pytest.fixture(params=["edge", "client"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path) if request.param == "edge" else open_store(url=":memory:")
    opened.ensure(SPEC)
    opened.upsert("t", [PointData(key=f"k{i}", payload={
        "tenant": "a" if i < 3 else "b", "n": i, "at": f"2024-01-0{i + 1}T00:00:00Z", "m": {"tag": f"t{i % 2}"}},
        dense={"d": np.eye(4, dtype=np.float32)[i % 4]}, sparse={"bm25": Sparse((i, 9), (1.0, 0.5))})
        for i in range(5)] + [PointData(key="head", payload={"tenant": "a", "kind": "head"})])
    yield opened
    opened.close()


def test_get_by_key_with_payload_fields_and_vectors(store: Store) -> None:
    found = store.get("t", ["k1", "head", "missing"], payload=("n",), vectors=("d",))
    assert set(found) == {"k1", "head"}
    assert found["k1"].payload == {"n": 1} and found["k1"].id == point_id("k1")
    assert np.array_equal(found["k1"].dense["d"], np.eye(4, dtype=np.float32)[1])


def test_filters_translate_the_same_on_both_engines(store: Store) -> None:
    assert store.count("t", None) == 6
    assert store.count("t", where(tenant="a")) == 4
    assert store.count("t", Where((Range("n", gte=1, lt=4),))) == 3
    assert store.count("t", Where((Range("at", gte="2024-01-03T00:00:00Z", dates=True),))) == 3
    assert store.count("t", Where((MatchAny("n", (1, 2)),))) == 2
    assert store.count("t", Where((Match("m.tag", "t0"),), (Match("tenant", "b"),))) == 2
    assert store.count("t", Where(must_not=(IsEmpty("m.tag"),))) == 5
    assert store.count("t", Where((HasIds((point_id("k1"), point_id("k4"))),))) == 2
    nested = Where((Where(must_not=(Match("n", 0),)), Match("tenant", "a")))
    assert store.count("t", nested) == 3


def test_dense_and_sparse_search_in_one_call(store: Store) -> None:
    dense, sparse = store.search("t", [
        Search(using="d", vector=np.eye(4)[0], limit=2, where=where(tenant="a"), vectors=("d", "bm25")),
        Search(using="bm25", vector=Sparse((9, 2), (1.0, 1.0)), limit=3, where=where(tenant="a"),
               idf_corpus=where(tenant="a"))])
    assert dense[0].payload["n"] == 0 and dense[0].score == pytest.approx(1.0)
    assert dense[0].sparse["bm25"] == Sparse((0, 9), (1.0, 0.5))
    assert sparse[0].payload["n"] == 2, "the rarer term (2) outweighs the common one (9): IDF is applied"
    assert sparse[0].score == pytest.approx(1.048, abs=1e-3), "IDF over the tenant's points only"


def test_scroll_pages_and_orders(store: Store) -> None:
    assert len(list(scroll_all(store, "t", None, page=2))) == 6
    page, _ = store.scroll("t", where(tenant="a"), limit=2, payload=("n",), order_by="n", descending=True)
    assert [p.payload["n"] for p in page if "n" in p.payload] == [2, 1]
    assert store.facet("t", "tenant", None, 10) == {"a": 4, "b": 2}


def test_delete_by_key_and_by_filter(store: Store) -> None:
    store.delete("t", ["head"])
    store.delete_where("t", where(tenant="b"))
    assert store.count("t", None) == 3 and not store.get("t", ["head"])


def test_a_data_dir_is_held_by_one_process_and_the_error_names_it(tmp_path: Path) -> None:
    first = open_edge(tmp_path)
    try:
        with pytest.raises(StoreUnavailable, match=f"{tmp_path / 'edge'} is in use by another process"):
            open_edge(tmp_path)
    finally:
        first.close()
    open_edge(tmp_path).close()  # released on close


def test_writes_pause_when_the_disk_is_nearly_full(tmp_path: Path) -> None:
    store = open_edge(tmp_path, min_free_bytes=1 << 62)  # more than any disk: always "full"
    try:
        with pytest.raises(StoreUnavailable, match="data directory is full"):
            store.ensure(SPEC)
    finally:
        store.close()


def test_two_writers_over_one_store_keep_everything(store: Store, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Two replicas (two index objects, as two processes would hold) writing at once: nothing is lost."""
    embedder = HashingEmbedder()
    replicas = [CollectionIndex(store, EmbeddingCache(store, embedder), tokenizer, 96) for _ in range(2)]
    tools = [ToolIndex(store, EmbeddingCache(store, embedder), tokenizer) for _ in range(2)]
    logs = [SessionLog(store, 7) for _ in range(2)]
    replicas[0].create("a", "kb", "")
    tools[0].put("a", "crm", [{"name": f"tool_{i}", "description": f"does thing {i}"} for i in range(4)])

    def write(r: int) -> None:
        for batch in range(5):
            replicas[r].add("a", "kb", [NewDocument(f"r{r}-{batch}-{i}", f"replica {r} wrote fact {batch} {i}")
                                        for i in range(3)])
            tools[r].record("a", f"replica {r} query {batch}", [f"tool_{batch % 4}"], ["crm"])
            logs[r].record("a", "s", Read(route="filter", refs=[f"src_{r}{batch}"], input_tokens=10, output_tokens=5))

    threads = [threading.Thread(target=write, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert replicas[1].info("a", "kb").documents == 30
    assert len(replicas[0].hashes("a", "kb")) == 30
    recorded = tools[1].get_many("a", ["crm"], with_feedback=True)[0].feedback
    assert len(recorded) == 10
    assert len(logs[0].report("a", "s").requests) == 10


def test_a_tally_from_the_index_stays_exact_through_replacements_and_deletes(store: Store) -> None:
    store.ensure(SpaceSpec(name="s", dense={"d": 4}, indexes={"scope": "keyword", "n": "integer"}))

    def put(ids: range, scope: str) -> None:
        store.upsert("s", [PointData(key=f"p{i}", payload={"scope": scope, "n": i},
                                     dense={"d": np.eye(4, dtype=np.float32)[i % 4]}) for i in ids])

    put(range(600), "a")
    put(range(600, 1000), "b")
    store.delete_where("s", where(scope="a").and_(Range("n", lt=100)))
    put(range(200, 300), "a")  # replaced in place
    put(range(300, 350), "b")  # moved from a to b
    store.delete("s", [f"p{i}" for i in range(900, 950)])
    store.set_where("s", where(scope="b").and_(Range("n", gte=600, lt=700)), {"scope": "c"})
    for scope in ("a", "b", "c", "nothing"):
        assert store.tally("s", "scope", scope) == store.count("s", where(scope=scope))
    assert (store.tally("s", "scope", "a"), store.tally("s", "scope", "c")) == (450, 100)


def test_collections_written_before_scopes_get_them_once(store: Store, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A data dir from the build before `scope`: its documents and chunks are found, counted and filtered."""
    cache = EmbeddingCache(store, HashingEmbedder())
    old = CollectionIndex(store, cache, tokenizer, 96)
    for tenant in ("a", "b"):
        old.create(tenant, "kb", "")
        old.add(tenant, "kb", [NewDocument(f"d{i}", f"pump valve fact {i} of {tenant}", metadata={"n": i})
                               for i in range(4)])
    store.set_where(old.space, Where((MatchAny("kind", ("document", "chunk")),)), {"scope": None})
    assert old.info("a", "kb").chunks == 0  # what the old points look like to the new code

    fresh = CollectionIndex(store, cache, tokenizer, 96)
    assert fresh.info("a", "kb") == CollectionInfo(name="kb", description="", documents=4, chunks=4)
    hits = fresh.query("b", "kb", "valve fact 2", QueryParams(k=2, filter={"n": {"gte": 2}})).snippets
    assert hits and all(h.metadata["n"] >= 2 and h.text.endswith("of b") for h in hits)


def test_every_index_kind_is_accepted_by_both_engines(store: Store) -> None:
    store.ensure(SpaceSpec(name="kinds", dense={"d": 4}, indexes={
        f"f_{kind}": kind for kind in ("keyword", "tenant", "partition", "integer", "float", "datetime", "bool")}))
    store.upsert("kinds", [PointData(key="p", payload={"f_partition": "x", "f_integer": 3},
                                     dense={"d": np.eye(4, dtype=np.float32)[0]})])
    assert store.tally("kinds", "f_partition", "x") == 1
    assert store.count("kinds", Where((Range("f_integer", gte=3),))) == 1


def test_fields_an_older_build_indexed_with_hnsw_links_lose_them(tmp_path: Path) -> None:
    """Metadata indexes made before partitions existed would each add HNSW graphs at the next optimize."""
    import qdrant_edge as qe

    first = open_edge(tmp_path)
    first.ensure(SPEC)
    first.close()
    shard = qe.EdgeShard.load(str(tmp_path / "edge" / "t"))
    shard.update(qe.UpdateOperation.create_field_index("metadata.family", qe.PayloadSchemaType.Keyword))
    shard.close()
    reopened = open_edge(tmp_path)
    reopened.ensure(SPEC)
    schema = reopened._shards["t"].info().payload_schema
    reopened.close()
    assert schema["metadata.family"].params.enable_hnsw is False
    assert schema["m.tag"].params.enable_hnsw is False and schema["tenant"].params.is_tenant


def test_every_collection_candidate_gets_both_scores(store: Store, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Found by one search, scored by the other in a second call: dense scores are the cosine of the stored
    vectors, and a chunk sharing a query term has a BM25 score whichever search found it."""
    cache = EmbeddingCache(store, HashingEmbedder())
    index = CollectionIndex(store, cache, tokenizer, 96)
    index.create("a", "kb", "")
    words = ["pump", "valve", "seal", "gasket", "flange", "rotor", "stator", "bearing"]
    index.add("a", "kb", [NewDocument(f"d{i}", f"{words[i % 8]} {words[(i * 3) % 8]} note {i} about part {i % 5}")
                          for i in range(150)])
    query = "bearing seal part 3"
    corpus = records.of("a", "kb", "chunk")
    found = index._candidates(query, corpus, corpus)
    q = cache.query(query)
    ids = [f.id for f, _, _ in found]
    stored = {f.id: f for f in scroll_all(store, index.space, Where((HasIds(tuple(ids)),)), payload=("text",),
                                           vectors=(cache.vector,))}
    assert len(found) > 64  # both searches contributed
    for f, dense, lexical in found:
        assert abs(dense - float(stored[f.id].dense[cache.vector] @ q)) < 1e-5
        shares = {"bearing", "seal", "part", "3"} & set(stored[f.id].payload["text"].split())
        assert (lexical > 0) == bool(shares), stored[f.id].payload["text"]
