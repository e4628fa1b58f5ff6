"""The LlamaIndex postprocessor behind LlamaIndex's own retriever over an in-memory index, against the real
service (stand-in model: what is tested is the adapter, not ranking quality)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core import Document, SummaryIndex
from llama_index.core.schema import NodeRelationship

from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.llamaindex import CtxsieveNodePostprocessor
from tests.conftest import CACHE

STATIONS = ["Alder", "Birch", "Cedar", "Dogwood", "Elm"]
PUMPS = [f"{name}{i}" for i in range(16) for name in ("Kestrel", "Osprey", "Heron", "Plover", "Curlew")]


@pytest.fixture(autouse=True, scope="module")
def offline_encodings() -> None:
    """LlamaIndex's splitter counts with tiktoken's cl100k_base: from the bpe-openai package, never downloaded."""
    load_tokenizer("cl100k_base", CACHE / "tiktoken")


@pytest.fixture
def client(stub_url: str) -> Iterator[Client]:
    with Client(stub_url) as c:
        yield c


def test_the_postprocessor_cuts_a_retrievers_nodes_keeping_their_ids_and_metadata(client: Client) -> None:
    docs = [Document(text="\n\n".join(f"At {station} station the {pump} pump moved {p * 7 + s} litres."
                                      for p, pump in enumerate(PUMPS)), metadata={"station": station},
                     doc_id=f"doc-{s}") for s, station in enumerate(STATIONS)]
    retriever = SummaryIndex.from_documents(docs).as_retriever()  # LlamaIndex's own: every node, no model
    query = "how many litres did the Heron7 pump at Dogwood station move"
    nodes = retriever.retrieve(query)
    kept = CtxsieveNodePostprocessor(client=client, max_tokens=200).postprocess_nodes(nodes, query_str=query)
    assert kept and sum(len(n.node.get_content()) for n in kept) < sum(len(n.node.get_content()) for n in nodes) / 10
    ids = {n.node.node_id for n in nodes}
    assert all(n.node.relationships[NodeRelationship.SOURCE].node_id in ids for n in kept)
    heron7 = PUMPS.index("Heron7")
    assert any(n.node.metadata["station"] == "Dogwood" and f"Heron7 pump moved {heron7 * 7 + 3} litres"
               in n.node.get_content() for n in kept)
    assert all(n.node.metadata["ctxsieve_ref"].startswith("src_") for n in kept)
