"""The tool-selection fusion weight, chosen on the TRAINING split only (bench.tools reports the test split).

Usage: python -m bench.tools_tune [--weights 0.5,0.6,...]
For each dense weight, zero-shot R@5 over each set's training queries, through ToolIndex.select itself (so
the rule tuned is the rule shipped). Tool and query vectors are kept under ~/.cache/ctxsieve/bench.
"""

from __future__ import annotations

import argparse

from bench.tools import CACHE, metatool, ours, scores, seal_tools, split
from indexes.store import open_store
from indexes.tools import ToolIndex
from indexes.vectors import EmbeddingCache
from ingest.embedding import load_sentence_transformer
from ingest.tokens import load_tokenizer

WEIGHTS = "0.5,0.55,0.6,0.65,0.7,0.72,0.74,0.76,0.78,0.8,0.85,0.9"
TENANT = "tools-tune"  # its own tenant: no feedback recorded by other benches reaches these toolsets


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default=WEIGHTS)
    args = parser.parse_args()
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = load_sentence_transformer("multilingual-e5-small", CACHE / "models")
    store = open_store(CACHE / "bench" / "qdrant")
    cache = EmbeddingCache(store, embedder)
    (meta, meta_queries), (seal, seal_queries) = metatool(), seal_tools()
    half = len(seal_queries) // 2
    sets = {"metatool": (meta, split(meta_queries, 1000, 1000)[0]),  # the splits bench.tools uses
            "seal_tools": (seal, split(seal_queries, half, len(seal_queries) - half)[0])}
    for label, (tools, _) in sets.items():
        ToolIndex(store, cache, tokenizer).put(TENANT, label, tools)
    print(f"{'dense weight':>12}" + "".join(f"{label + ' train R@5':>24}" for label in sets) + f"{'mean':>8}",
          flush=True)
    for weight in (float(w) for w in args.weights.split(",")):
        index = ToolIndex(store, cache, tokenizer, weight)
        recall = [scores(ours(index, label, TENANT), train)["R@5"] for label, (_, train) in sets.items()]
        print(f"{weight:>12.2f}" + "".join(f"{r:>24.3f}" for r in recall) + f"{sum(recall) / len(recall):>8.3f}",
              flush=True)
    store.close()


if __name__ == "__main__":
    main()
