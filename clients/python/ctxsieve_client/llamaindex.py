"""A LlamaIndex adapter (`pip install 'ctxsieve-client[llamaindex]'`; LlamaIndex is imported only here).

`CtxsieveNodePostprocessor(client=..., max_tokens=...)`: the nodes a retriever found become the snippets relevant
to the query within a token budget (ctxsieve ranks the chunks of all nodes together); each snippet is a node that
keeps its source node's id (as the source relationship) and metadata, plus where in ctxsieve it came from.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode
from pydantic import Field


class CtxsieveNodePostprocessor(BaseNodePostprocessor):
    client: Any = Field(description="a ctxsieve_client.Client")
    max_tokens: int = 1500
    k: int = 20

    @classmethod
    def class_name(cls) -> str:
        return "CtxsieveNodePostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
                           ) -> list[NodeWithScore]:
        if not nodes or query_bundle is None or not query_bundle.query_str:
            return nodes
        documents = [{"text": n.node.get_content(), "metadata": {"node": n.node.node_id}} for n in nodes]
        result = self.client.filter(query_bundle.query_str, documents=documents, k=self.k,
                                    max_tokens=self.max_tokens, order="score", placeholder="tools")
        out = []
        for snippet in result.snippets:
            source = nodes[snippet.document].node
            node = TextNode(text=snippet.text, id_=f"{source.node_id}#{snippet.id}",
                            metadata={**source.metadata, "ctxsieve_ref": result.ref, "ctxsieve_snippet": snippet.id},
                            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source.node_id)})
            out.append(NodeWithScore(node=node, score=snippet.score))
        return out
