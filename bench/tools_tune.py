"""Fusion-rule tuning for tool selection, on the TRAINING split only (the test split is bench.tools').

Usage: python -m bench.tools_tune
Caches each query's dense and BM25 score vectors (as ToolIndex computes them, zero-shot) under
~/.cache/ctxsieve/bench, then evaluates fusion rules offline in milliseconds each.
"""

from __future__ import annotations

import numpy as np

from bench.tools import CACHE, metatool, seal_tools, split
from indexes.sieve import EmbeddingCache
from indexes.store import QdrantStore
from indexes.tools import ToolIndex
from ingest.embedding import load_sentence_transformer
from ingest.tokens import load_tokenizer

OUT = CACHE / "bench"


def dump(label: str, tools, queries, train: int, test: int, index: ToolIndex) -> None:  # type: ignore[no-untyped-def]
    target = OUT / f"{label}.npz"
    if target.exists():
        return
    train_q, test_q = split(queries, train, test)
    index.put("bench", label, tools)
    prepared = index._prepare([index.get("bench", label)])
    names = [t.name for _, t in prepared.owners]
    out = {}
    for part, qs in (("train", train_q), ("test", test_q)):
        dense, lexical, gold = [], [], []
        for text, g in qs:
            q = index.vectors.query(text)
            dense.append((prepared.tool_vectors @ q + prepared.name_vectors @ q) / 2)
            lexical.append(prepared.lexical.scores(text))
            gold.append([names.index(n) for n in g if n in names])
        out[f"{part}_dense"] = np.array(dense)
        out[f"{part}_lexical"] = np.array(lexical)
        width = max(len(x) for x in gold)
        out[f"{part}_gold"] = np.array([x + [-1] * (width - len(x)) for x in gold])
    np.savez(target, **out)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = load_sentence_transformer("multilingual-e5-small", CACHE / "models")
    store = QdrantStore.open(OUT / "qdrant")
    index = ToolIndex(store, EmbeddingCache(store, embedder), tokenizer)
    tools, queries = metatool()
    dump("metatool", tools, queries, 1000, 1000, index)
    seal, seal_queries = seal_tools()
    dump("seal_tools", seal, seal_queries, len(seal_queries) // 2, len(seal_queries) - len(seal_queries) // 2, index)
    store.close()


if __name__ == "__main__":
    main()
