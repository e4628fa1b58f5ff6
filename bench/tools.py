"""Tool retrieval on three pools (MetaTool, Seal-Tools, StableToolBench): Recall@3/5/10, nDCG@5 and
completeness (C@5: every gold tool of a request in the top 5), zero-shot and with feedback; abstention.

Usage: python -m bench.tools [--only-speed]
Peers in the same run on the same model: "name: description" embedded alone (langgraph-bigtool's index),
BM25 alone over names, descriptions and argument names (Anthropic's BM25 tool search), and their min-max
fusion. Training (feedback) and test queries are split by query, never by tool; the rule was chosen on
training queries only (bench/tools_tune.py).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets import DATA
from bench.models import add_runtime, dense_model
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.indexes.ranking import normalise
from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.tools import SelectParams, ToolIndex
from ctxsieve.indexes.tools.feedback import RULES
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.tokens import load_tokenizer

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


STABLETOOLBENCH = ("G1_category", "G1_instruction", "G1_tool", "G2_category", "G2_instruction", "G3_instruction")


def stb_name(tool: str, api: str) -> str:
    """A RapidAPI endpoint as one tool name (model APIs cap names at 64 characters)."""
    return safe(f"{tool}__{api}")[:64]


def stabletoolbench() -> tuple[list[dict[str, Any]], list[Query]]:
    """Pool: every endpoint any query lists; gold: the query's `relevant APIs` (multi-tool requests)."""
    tools: dict[str, dict[str, Any]] = {}
    queries = []
    for part in STABLETOOLBENCH:
        for raw in json.loads((DATA / "stabletoolbench" / f"{part}.json").read_text()):
            for api in raw["api_list"]:
                name = stb_name(api["tool_name"], api["api_name"])
                params = [*api.get("required_parameters", []), *api.get("optional_parameters", [])]
                props = {}
                for p in params:
                    prop = {"description": str(p.get("description") or "")}
                    if str(p.get("type", "")).lower() in _TYPES:
                        prop["type"] = _TYPES[str(p["type"]).lower()]
                    props[safe(p["name"])] = prop
                tools.setdefault(name, {
                    "name": name, "description": (api.get("api_description") or "").strip() or api["api_name"],
                    "parameters": {"type": "object", "properties": props,
                                   "required": [safe(p["name"]) for p in api.get("required_parameters", [])]}})
            queries.append((raw["query"], {stb_name(t, a) for t, a in raw["relevant APIs"]}))
    return list(tools.values()), queries


def pools() -> dict[str, tuple[list[dict[str, Any]], list[Query]]]:
    return {"metatool": metatool(), "seal_tools": seal_tools(), "stabletoolbench": stabletoolbench()}


def pool_split(label: str, queries: list[Query]) -> tuple[list[Query], list[Query]]:
    """Training (feedback, tuning) and test queries: MetaTool 1,000 + 1,000; the smaller pools halved."""
    if label == "metatool":
        return split(queries, 1000, 1000)
    half = len(split(queries, len(queries), 0)[0]) // 2
    return split(queries, half, len(queries))


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
    ndcg = complete = 0.0
    for text, gold in queries:
        ranked = ranker(text)[: max(KS)]
        for k in KS:
            recall[k] += len(gold & set(ranked[:k])) / len(gold)
        dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(ranked[:5]) if name in gold)
        ndcg += dcg / sum(1 / math.log2(i + 2) for i in range(min(5, len(gold))))
        complete += gold <= set(ranked[:5])
    out = {f"R@{k}": recall[k] / len(queries) for k in KS}
    out["nDCG@5"] = ndcg / len(queries)
    out["C@5"] = complete / len(queries)
    return out


def _peer_dense(cache: EmbeddingCache, tools: list[dict[str, Any]]) -> Callable[[str], np.ndarray]:
    """"name: description" embedded alone (langgraph-bigtool's index)."""
    matrix = cache.passages([f"{t['name']}: {t['description']}" for t in tools])
    return lambda query: matrix @ cache.query(query)


def _peer_bm25(tools: list[dict[str, Any]]) -> Callable[[str], np.ndarray]:
    """BM25 over names, descriptions and argument names (Anthropic's BM25 tool search)."""
    return Bm25Index.build([" ".join([t["name"], t["description"],
                                      *((t.get("parameters") or {}).get("properties") or {})])
                            for t in tools]).scores


def _ranked(tools: list[dict[str, Any]], score: Callable[[str], np.ndarray]) -> Ranker:
    names = [t["name"] for t in tools]
    return lambda query: [names[i] for i in np.argsort(-score(query), kind="stable")[:10]]


def dense_peer(cache: EmbeddingCache, tools: list[dict[str, Any]]) -> Ranker:
    return _ranked(tools, _peer_dense(cache, tools))


def bm25_peer(tools: list[dict[str, Any]]) -> Ranker:
    return _ranked(tools, _peer_bm25(tools))


def fusion_peer(cache: EmbeddingCache, tools: list[dict[str, Any]]) -> Ranker:
    """The two peers' scores min-max normalised and averaged (the common hybrid default)."""
    dense, lexical = _peer_dense(cache, tools), _peer_bm25(tools)
    return _ranked(tools, lambda query: normalise(dense(query)) + normalise(lexical(query)))


def ours(index: ToolIndex, toolset: str, tenant: str = "bench", abstain: bool = False) -> Ranker:
    def rank(query: str) -> list[str]:
        return [s.name for s in index.select(tenant, query, [toolset], SelectParams(k=10, abstain=abstain)).selected]
    return rank


def abstention(label: str, tools: list[dict[str, Any]], test_q: list[Query], index: ToolIndex,
               removed: int = 60) -> None:
    """`abstain` on ordinary test requests (how often it wrongly answers nothing, and what that costs in
    R@5), and on requests whose gold tools were taken out of the toolset (how often it rightly does)."""
    plain = scores(ours(index, label), test_q)["R@5"]
    answers = {text: ours(index, label, abstain=True)(text) for text, _ in test_q}  # each request asked once
    with_abstain = scores(answers.__getitem__, test_q)["R@5"]
    wrongly = sum(not answer for answer in answers.values()) / len(answers)
    rightly = 0
    for i, (text, gold) in enumerate(test_q[:removed]):
        index.put("bench", f"{label}-without-{i}", [t for t in tools if t["name"] not in gold])
        rightly += not ours(index, f"{label}-without-{i}", abstain=True)(text)
        index.delete("bench", f"{label}-without-{i}")
    print(f"  abstain: on ordinary requests {wrongly:.1%} (R@5 {plain:.3f} -> {with_abstain:.3f}); with the "
          f"gold tools removed {rightly / min(removed, len(test_q)):.1%} of {min(removed, len(test_q))}", flush=True)


def report(name: str, result: dict[str, float]) -> None:
    print(f"  {name:<44} " + "  ".join(f"{k} {v:.3f}" for k, v in result.items()), flush=True)


def run_set(label: str, tools: list[dict[str, Any]], queries: list[Query], index: ToolIndex,
            cache: EmbeddingCache, with_abstention: bool = True, fixed_rules: bool = True) -> None:
    train_q, test_q = pool_split(label, queries)
    print(f"{label}: {len(tools)} tools, {len(test_q)} test queries, {len(train_q)} feedback queries", flush=True)
    started = time.perf_counter()
    index.put("bench", label, tools)
    print(f"  (registered in {time.perf_counter() - started:.0f} s)", flush=True)
    report('peer: "name: description" dense', scores(dense_peer(cache, tools), test_q))
    report("peer: BM25 (names, descriptions, arguments)", scores(bm25_peer(tools), test_q))
    report("peer: min-max fusion of the two", scores(fusion_peer(cache, tools), test_q))
    report("ctxsieve zero-shot", scores(ours(index, label), test_q))
    if with_abstention:
        abstention(label, tools, test_q, index)
    index.record_many("bench", [(text, sorted(gold)) for text, gold in train_q], [label])
    report(f"ctxsieve with feedback ({len(train_q)} queries)", scores(ours(index, label), test_q))
    rule, uses = index.feedback_rule("bench", label)
    print(f"  the rule this toolset's {uses} recorded requests chose: {rule}", flush=True)
    if fixed_rules:
        for fixed in RULES:
            other = ToolIndex(index.store, index.vectors, index.tokenizer, feedback_rule=fixed)
            print(f"    fixed rule {str(fixed):<32} R@5 {scores(ours(other, label), test_q)['R@5']:.3f}", flush=True)
    seen = {tool for _, gold in train_q for tool in gold}
    gold = [tool for _, tools_ in test_q for tool in tools_]
    covered = sum(set(g) <= seen for _, g in test_q) / len(test_q)
    print(f"  feedback can only teach tools it has seen: {sum(t in seen for t in gold) / len(gold):.1%} of the test "
          f"requests' gold tools have a recorded use; every gold tool of {covered:.1%} of the requests", flush=True)


def one_gateway(index: ToolIndex, sets: dict[str, tuple[list[dict[str, Any]], list[Query]]]) -> None:
    """The pools behind one gateway: each pool's test requests selected from every pool's tools at once
    (`select` naming all the toolsets), zero-shot, against the same requests selected from their own pool."""
    labels = list(sets)
    for label in labels:
        index.put("bench", f"gw-{label}", sets[label][0])
    for label in labels:
        test_q = pool_split(label, sets[label][1])[1]
        alone = scores(ours(index, f"gw-{label}"), test_q)["R@5"]

        def together(query: str) -> list[str]:
            return [s.name for s in index.select("bench", query, [f"gw-{name}" for name in labels],
                                                 SelectParams(k=10)).selected]
        both = scores(together, test_q)["R@5"]
        print(f"one gateway, {len(labels)} toolsets, {sum(len(sets[n][0]) for n in labels)} tools: {label} R@5 "
              f"{both:.3f} (alone {alone:.3f}, {both - alone:+.3f})", flush=True)
    for label in labels:
        index.delete("bench", f"gw-{label}")


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
        index.select("bench", unseen, ["large"], SelectParams(k=5))
        times.append(time.perf_counter() - started)
    times = times[5:]  # the first calls build the cached index
    print(f"selection over {n} tools: p50 {statistics.median(times) * 1000:.1f} ms, "
          f"p95 {sorted(times)[int(0.95 * len(times))] * 1000:.1f} ms", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only-speed", action="store_true", help="just the 5,000-tool selection latency")
    parser.add_argument("--no-abstention", action="store_true", help="skip the (slow) abstention measurement")
    parser.add_argument("--pools", default="metatool,seal_tools,stabletoolbench")
    parser.add_argument("--no-fixed-rules", action="store_true", help="skip each fixed feedback rule's figure")
    add_runtime(parser)
    args = parser.parse_args(argv)
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = dense_model(args.runtime)
    sets = pools()
    (meta_tools, _), (seal, seal_queries) = sets["metatool"], sets["seal_tools"]
    with tempfile.TemporaryDirectory(prefix="ctxsieve-bench-tools-") as folder:
        store = open_store(Path(folder))  # toolsets and feedback: fresh every run, removed after it
        cache = EmbeddingCache(open_store(CACHE / "bench" / "tools"), embedder)  # vectors: kept between runs
        index = ToolIndex(store, cache, tokenizer)
        if not args.only_speed:
            one_gateway(index, {label: sets[label] for label in args.pools.split(",")})
        for label in [] if args.only_speed else args.pools.split(","):
            run_set(label, *sets[label], index, cache, not args.no_abstention, not args.no_fixed_rules)
        speed(index, [*seal, *meta_tools], seal_queries)
        store.close()
        cache.store.close()


if __name__ == "__main__":
    main()
