"""Scale of the store: a collection grown to 10k, 100k and 1M chunks, queried over HTTP; stored sources vs RSS.

Usage: python -m bench.scale [--sizes 10000,100000,1000000] [--queries 800] [--sources 20000] [--optimize]

Chunk vectors come from a stand-in embedder (seeded random unit vectors under the real model's vector name)
so that a million chunks are written in minutes; everything else is real: documents of ~10 chunks built
from SQuAD paragraphs, chunked with tiktoken, BM25 sparse vectors, written through CollectionIndex into
Qdrant Edge, then `ctxsieve serve` (a real process with the real model, which embeds each query) answers
queries over HTTP. For each size it prints: insert rate through CollectionIndex (stand-in vectors) and
into the engine alone, restart to ready, service RSS, query p50/p95 without and with filters, and the
first query after a write. `--sources N` stores N distinct 20 KB outputs through /v1/filter (they fit
the budget, so nothing is embedded) and prints the service's RSS before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench.datasets import DATA
from ctxsieve.indexes.collections import CollectionIndex, NewDocument
from ctxsieve.indexes.store import PointData, SpaceSpec, open_edge
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.e5_model import MODEL_NAME
from ctxsieve.ingest.tokens import load_tokenizer

CACHE = Path.home() / ".cache" / "ctxsieve"
FAMILIES = ("pump", "valve", "seal", "motor", "gear", "hose", "filter", "sensor")


class StandInEmbedder:
    """Seeded random unit vectors named like the real model's: cheap, and the query side stays real."""

    model_id = MODEL_NAME
    dim = 384

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b("\n".join(texts).encode(), digest_size=8).digest(), "big")
        vectors = np.random.default_rng(seed).standard_normal((len(texts), self.dim)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def paragraphs() -> list[str]:
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    return [p["context"] for a in squad for p in a["paragraphs"]]


def questions(n: int) -> list[str]:
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    found = [qa["question"] for a in squad for p in a["paragraphs"] for qa in p["qas"]]
    return found[:: max(1, len(found) // n)][:n]


def document(i: int, texts: list[str]) -> NewDocument:
    """~10 chunks: six paragraphs, each opened by the document's number so every chunk is distinct."""
    body = "\n\n".join(f"[{i}.{j}] {texts[(i * 7 + j * 131) % len(texts)]}" for j in range(6))
    return NewDocument(f"spec-{i}", body, f"Spec {i}", None, {"family": FAMILIES[i % 8], "year": 2000 + i % 25})


def grow(data: Path, target: int, done: int, texts: list[str]) -> tuple[int, int, float]:
    """Add documents until the collection holds `target` chunks; returns (documents, chunks, seconds)."""
    store = open_edge(data)
    index = CollectionIndex(store, EmbeddingCache(store, StandInEmbedder()), load_tokenizer(
        "o200k_base", CACHE / "tiktoken"), 96)
    index.create("default", "specs", "stand-in vectors")
    chunks = index.info("default", "specs").chunks
    started, i = time.perf_counter(), done
    while chunks < target:
        chunks += index.add("default", "specs", [document(i + j, texts) for j in range(100)])[1]
        i += 100
    seconds = time.perf_counter() - started
    store.close()
    return i, chunks, seconds


def engine_insert_rate(data: Path, n: int = 50_000) -> float:
    """Points per second into the engine alone: 384-d vector, 40-term sparse vector, ~1 KB payload."""
    store = open_edge(data / "insert-probe")
    store.ensure(SpaceSpec(name="probe", dense={"d": 384}, sparse=("s",), indexes={"tenant": "tenant"}))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    points = [PointData(key=f"p{i}", payload={"tenant": "t", "text": "x" * 1000, "n": i},
                        dense={"d": vectors[i]}, sparse={"s": _sparse(rng)}) for i in range(n)]
    started = time.perf_counter()
    store.upsert("probe", points)
    rate = n / (time.perf_counter() - started)
    store.close()
    return rate


def _sparse(rng: np.random.Generator) -> Any:
    from ctxsieve.indexes.store import Sparse

    ids = np.unique(rng.integers(0, 1 << 30, 40))
    return Sparse(tuple(int(x) for x in ids), tuple(1.0 for _ in ids))


def serve(data: Path, port: int) -> tuple[subprocess.Popen[bytes], float]:
    env = {**os.environ, "CTXSIEVE_LOG_LEVEL": "warning", "CTXSIEVE_BACKGROUND_EMBEDDING": "false"}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "ctxsieve.service.cli", "serve", "--data-dir", str(data),
                                "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return process, time.perf_counter() - started
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise SystemExit("ctxsieve serve exited while starting")
        time.sleep(0.1)


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """Resident memory (MiB); RssAnon is the heap, RssFile the mapped files the kernel can drop."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed(http: httpx.Client, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = http.post("/v1/collections/specs/query", json=body)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return elapsed


def p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * q))] * 1000


def measure(port: int, asked: list[str], doc_base: int, texts: list[str]) -> str:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        for q in ("warm-up one", "warm-up two"):
            timed(http, {"query": q, "k": 5, "max_tokens": 600})  # the process's first inference, not the store
        # Each condition gets questions of its own: a repeated question's embedding is cached by the service.
        thirds = [asked[i::4] for i in range(4)]
        plain = [timed(http, {"query": q, "k": 5, "max_tokens": 600}) for q in thirds[0]]
        keyword = [timed(http, {"query": q, "k": 5, "max_tokens": 600, "filter": {"family": "valve"}})
                   for q in thirds[1]]
        ranged = [timed(http, {"query": q, "k": 5, "max_tokens": 600,
                               "filter": {"year": {"gte": 2020}, "family": {"not": "pump"}}}) for q in thirds[2]]
        after_write = []
        for j in range(20):
            doc = document(doc_base + j, texts)
            added = http.post("/v1/collections/specs/documents", json={"documents": [
                {"id": doc.id, "text": doc.text, "title": doc.title, "metadata": doc.metadata}]})
            assert added.status_code == 200, added.text
            after_write.append(timed(http, {"query": thirds[3][j], "k": 5, "max_tokens": 600}))
    return (f"query p50/p95 ms: {p(plain, 0.5):.1f}/{p(plain, 0.95):.1f}; filter family=valve "
            f"{p(keyword, 0.5):.1f}/{p(keyword, 0.95):.1f}; filter year>=2020 and not pump "
            f"{p(ranged, 0.5):.1f}/{p(ranged, 0.95):.1f}; first query after a write (20) "
            f"p50/max {p(after_write, 0.5):.1f}/{max(after_write) * 1000:.1f}")


def sources(data: Path, port: int, n: int, texts: list[str]) -> None:
    process, _ = serve(data / "sources", port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            http.post("/v1/filter", json={"query": "warm", "content": "warm-up output", "max_tokens": 10_000})
        before, anon_before = rss_mib(process.pid), rss_mib(process.pid, "RssAnon")
        started = time.perf_counter()
        errors: list[str] = []

        def send(worker: int) -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
                for i in range(worker, n, 4):
                    body = f"output {i}\n" + "\n\n".join(texts[(i * 13 + j) % len(texts)] for j in range(30))
                    response = http.post("/v1/filter", json={"query": "what happened", "content": body[:20_000],
                                                             "max_tokens": 10_000})
                    if response.status_code != 200:
                        errors.append(response.text)

        threads = [threading.Thread(target=send, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - started
        time.sleep(10)  # two malloc_trim rounds, so freed heap is not counted
        after, anon_after = rss_mib(process.pid), rss_mib(process.pid, "RssAnon")
        print(f"sources: {n} distinct 20 KB outputs stored in {seconds:.0f} s ({n / seconds:.0f}/s, {len(errors)} "
              f"errors); service RSS {before:.0f} -> {after:.0f} MiB (+{after - before:.0f} MiB; of it heap "
              f"+{anon_after - anon_before:.0f} MiB, mapped files +{after - before - anon_after + anon_before:.0f})",
              flush=True)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=800, help="split four ways: no filter, two filters, writes")
    parser.add_argument("--sources", type=int, default=20_000)
    parser.add_argument("--data", type=Path, default=CACHE / "bench" / "scale")
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--optimize", action="store_true",
                        help="after growing, build HNSW offline (ctxsieve optimize's code) before serving")
    args = parser.parse_args()
    texts, asked = paragraphs(), questions(args.queries)
    args.data.mkdir(parents=True, exist_ok=True)
    print(f"engine insert: {engine_insert_rate(args.data):.0f} points/s (384-d dense, 40-term sparse, 1 KB payload)",
          flush=True)
    done, previous = 0, 0
    for size in (int(s) for s in args.sizes.split(",") if s):
        done, chunks, seconds = grow(args.data, size, done, texts)
        added, previous = chunks - previous, chunks
        if args.optimize:
            store = open_edge(args.data)
            spent = store.optimize_all()
            store.close()
            print("optimized offline: " + ", ".join(f"{space} {s:.0f} s" for space, s in spent), flush=True)
        process, ready = serve(args.data, args.port)
        try:
            line = measure(args.port, asked, 10_000_000 + size, texts)
            grown = (f"{added} added at {added / seconds:.0f} chunks/s through CollectionIndex (stand-in vectors)"
                     if seconds > 1 else "already there")
            print(f"{chunks} chunks: {grown}; restart to ready {ready:.1f} s; service RSS {rss_mib(process.pid):.0f} "
                  f"MiB (heap {rss_mib(process.pid, 'RssAnon'):.0f}, mapped files "
                  f"{rss_mib(process.pid, 'RssFile'):.0f}); {line}", flush=True)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
    if args.sources:
        sources(args.data, args.port, args.sources, texts)


if __name__ == "__main__":
    main()
