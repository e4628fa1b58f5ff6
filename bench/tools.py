"""Tool retrieval: Recall@3/5/10 and nDCG@5 on MetaTool and Seal-Tools, zero-shot and with feedback.

Usage: python -m bench.tools [--test 1000] [--train 1000]
Peers in the same run on the same model: "name: description" embedded alone (langgraph-bigtool's
index) and BM25 alone over names, descriptions and argument names (Anthropic's BM25 tool search).
Training (feedback) and test queries are split by query, never by tool.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets import DATA
from indexes.lexical import Bm25Index
from indexes.store import open_store
from indexes.tools import ToolIndex
from indexes.vectors import EmbeddingCache
from ingest.embedding import load_sentence_transformer
from ingest.tokens import load_tokenizer

CACHE = Path.home() / ".cache" / "ctxsieve"
KS = (3, 5, 10)
Query = tuple[str, set[str]]
Ranker = Callable[[str], list[str]]
_TYPES = {"str": "string", "string": "string", "int": "integer", "integer": "integer", "float": "number",
          "number": "number", "bool": "boolean", "boolean": "boolean", "list": "array", "array": "array",
          "dict": "object", "object": "object"}


def safe(name: str) -> str:
    """Tool names as model APIs accept them (MetaTool has names like `PDF&URLTool`)."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


def metatool() -> tuple[list[dict[str, Any]], list[Query]]:
    descriptions = json.loads((DATA / "metatool" / "plugin_des.json").read_text())
    tools = [{"name": safe(n), "description": d} for n, d in descriptions.items()]
    with (DATA / "metatool" / "all_clean_data.csv").open() as f:
        queries = [(row["Query"], {safe(row["Tool"])}) for row in csv.DictReader(f)]
    return tools, queries


def seal_tools() -> tuple[list[dict[str, Any]], list[Query]]:
    tools = []
    for line in (DATA / "seal_tools" / "tool.jsonl").read_text().splitlines():
        raw = json.loads(line)
        props = {}
        for pname, spec in (raw.get("parameters") or {}).items():
            prop = {"description": str(spec.get("description", ""))}
            if spec.get("type") in _TYPES:
                prop["type"] = _TYPES[spec["type"]]
            props[pname] = prop
        tools.append({"name": safe(raw["api_name"]), "description": raw["api_description"],
                      "parameters": {"type": "object", "properties": props}})
    queries = []
    for line in (DATA / "seal_tools" / "dev.jsonl").read_text().splitlines():
        raw = json.loads(line)
        queries.append((raw["query"], {safe(c["api"]) for c in raw["calling"]}))
    return dedupe(tools), queries


def dedupe(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool["name"] not in seen:
            seen.add(tool["name"])
            out.append(tool)
    return out


def split(queries: list[Query], train: int, test: int, seed: int = 13) -> tuple[list[Query], list[Query]]:
    """Disjoint by query text: no test query (or a duplicate of it) is ever recorded as feedback."""
    by_text: dict[str, Query] = {}
    for q in queries:
        by_text.setdefault(q[0].strip().lower(), q)
    unique = list(by_text.values())
    random.Random(seed).shuffle(unique)
    return unique[:train], unique[train : train + test]


def scores(ranker: Ranker, queries: list[Query]) -> dict[str, float]:
    recall = dict.fromkeys(KS, 0.0)
    ndcg = 0.0
    for text, gold in queries:
        ranked = ranker(text)[: max(KS)]
        for k in KS:
            recall[k] += len(gold & set(ranked[:k])) / len(gold)
        dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(ranked[:5]) if name in gold)
        ndcg += dcg / sum(1 / math.log2(i + 2) for i in range(min(5, len(gold))))
    out = {f"R@{k}": recall[k] / len(queries) for k in KS}
    out["nDCG@5"] = ndcg / len(queries)
    return out


def dense_peer(cache: EmbeddingCache, tools: list[dict[str, Any]]) -> Ranker:
    names = [t["name"] for t in tools]
    matrix = cache.passages([f"{t['name']}: {t['description']}" for t in tools])

    def rank(query: str) -> list[str]:
        return [names[i] for i in np.argsort(-(matrix @ cache.query(query)), kind="stable")[:10]]
    return rank


def bm25_peer(tools: list[dict[str, Any]]) -> Ranker:
    names = [t["name"] for t in tools]
    texts = [" ".join([t["name"], t["description"], *((t.get("parameters") or {}).get("properties") or {})])
             for t in tools]
    index = Bm25Index.build(texts)

    def rank(query: str) -> list[str]:
        return [names[i] for i in np.argsort(-index.scores(query), kind="stable")[:10]]
    return rank


def ours(index: ToolIndex, toolset: str, tenant: str = "bench") -> Ranker:
    def rank(query: str) -> list[str]:
        return [s.name for s in index.select(tenant, query, [toolset], 10, [], "openai", None, None).selected]
    return rank


def report(name: str, result: dict[str, float]) -> None:
    print(f"  {name:<44} " + "  ".join(f"{k} {v:.3f}" for k, v in result.items()), flush=True)


def run_set(label: str, tools: list[dict[str, Any]], queries: list[Query], train: int, test: int,
            index: ToolIndex, cache: EmbeddingCache) -> None:
    train_q, test_q = split(queries, train, test)
    print(f"{label}: {len(tools)} tools, {len(test_q)} test queries, {len(train_q)} feedback queries", flush=True)
    started = time.perf_counter()
    index.put("bench", label, tools)
    print(f"  (registered in {time.perf_counter() - started:.0f} s)", flush=True)
    report('peer: "name: description" dense', scores(dense_peer(cache, tools), test_q))
    report("peer: BM25 (names, descriptions, arguments)", scores(bm25_peer(tools), test_q))
    report("ctxsieve zero-shot", scores(ours(index, label), test_q))
    for text, gold in train_q:
        index.record("bench", text, sorted(gold), [label])
    report(f"ctxsieve with feedback ({len(train_q)} queries)", scores(ours(index, label), test_q))


def speed(index: ToolIndex, tools: list[dict[str, Any]], queries: list[Query], n: int = 5000) -> None:
    pool = list(tools)
    while len(pool) < n:
        extra = dict(tools[len(pool) % len(tools)])
        extra["name"] = f"{extra['name']}_{len(pool)}"
        pool.append(extra)
    index.put("bench", "large", pool[:n])
    times = []
    for i, (text, _) in enumerate(queries[:200]):
        unseen = f"{text} (request {i})"  # never embedded before: the latency includes the query embedding
        started = time.perf_counter()
        index.select("bench", unseen, ["large"], 5, [], "openai", None, None)
        times.append(time.perf_counter() - started)
    times = times[5:]  # the first calls build the cached index
    print(f"selection over {n} tools: p50 {statistics.median(times) * 1000:.1f} ms, "
          f"p95 {sorted(times)[int(0.95 * len(times))] * 1000:.1f} ms", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--train", type=int, default=1000)
    parser.add_argument("--only-speed", action="store_true", help="just the 5,000-tool selection latency")
    args = parser.parse_args(argv)
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = load_sentence_transformer("multilingual-e5-small", CACHE / "models")
    store = open_store()
    cache = EmbeddingCache(store, embedder)
    index = ToolIndex(store, cache, tokenizer)
    meta_tools, meta_queries = metatool()
    seal, seal_queries = seal_tools()
    if args.only_speed:
        speed(index, [*seal, *meta_tools], seal_queries)
        return
    run_set("metatool", meta_tools, meta_queries, args.train, args.test, index, cache)
    run_set("seal_tools", seal, seal_queries, min(args.train, len(seal_queries) // 2),
            min(args.test, len(seal_queries) - len(seal_queries) // 2), index, cache)
    speed(index, [*seal, *meta_tools], seal_queries)


if __name__ == "__main__":
    main()
