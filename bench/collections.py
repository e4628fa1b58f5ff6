"""Static collections: ingest throughput (chunks per second) and query latency with 10,000+ chunks.

Usage: python -m bench.collections [--chunks 10000]
Documents: SQuAD and CMRC paragraphs (English and Chinese), then SQuAD questions as short notes, until the
collection holds the requested number of chunks. Queries: other SQuAD and CMRC questions.

`--recall`: evidence recall of a collection of every SQuAD and CMRC dev paragraph (2,915 documents): the
share of questions whose gold answer is in the snippets returned within 300 and 600 tokens (SQuAD test
questions and CMRC questions, the recall bench's test split). The same script runs on the code before
the move to Qdrant Edge (commit 7f2c7b8, in a git worktree), so both are measured on the same questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.datasets import DATA, cmrc_cases, squad_cases
from bench.models import add_runtime, dense_model
from ctxsieve.indexes.collections import CollectionIndex, NewDocument, QueryParams
from ctxsieve.ingest.tokens import load_tokenizer

try:
    from ctxsieve.indexes.store import open_store
    from ctxsieve.indexes.vectors import EmbeddingCache
except ImportError:  # the code before the move (7f2c7b8): same classes, older module layout
    from ctxsieve.indexes.sieve import EmbeddingCache  # type: ignore[attr-defined,no-redef]
    from ctxsieve.indexes.store import QdrantStore  # type: ignore[attr-defined]

    open_store = QdrantStore.open

CACHE = Path.home() / ".cache" / "ctxsieve"


def recall(index: CollectionIndex, docs: list[NewDocument]) -> None:
    """Every paragraph in one collection; how often the gold answer is inside the packed snippets."""
    index.create("bench", "qa", "SQuAD and CMRC paragraphs")
    for start in range(0, len(docs), 64):
        index.add("bench", "qa", docs[start : start + 64])
    for name, cases in (("SQuAD", squad_cases(450)), ("CMRC", cmrc_cases(450))):
        line = [f"collection recall, {name} ({len(cases)} questions over {len(docs)} paragraphs):"]
        for budget in (300, 600):
            hits = 0
            for case in cases:
                found = index.query("bench", "qa", case.question, QueryParams(k=50, max_tokens=budget))
                text = "\n".join(h.text for h in found.snippets)
                hits += any(answer in text for answer in case.answers)
            line.append(f"@{budget} {hits / len(cases):.3f}")
        print(" ".join(line), flush=True)


def corpus() -> tuple[list[NewDocument], list[str]]:
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    cmrc = json.loads((DATA / "cmrc2018" / "cmrc2018_dev.json").read_text())["data"]
    docs, questions = [], []
    for source, data in (("squad", squad), ("cmrc", cmrc)):
        for a, article in enumerate(data):
            for p, paragraph in enumerate(article["paragraphs"]):
                docs.append(NewDocument(f"{source}-{a}-{p}", paragraph["context"], metadata={"set": source}))
                questions.extend(qa["question"] for qa in paragraph["qas"])
    notes = [NewDocument(f"note-{i}", q, metadata={"set": "notes"}) for i, q in enumerate(questions[::2])]
    return docs + notes, questions[1::2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--recall", action="store_true", help="collection recall instead of throughput")
    add_runtime(parser)
    args = parser.parse_args()
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = dense_model(args.runtime)
    docs, questions = corpus()
    if args.recall:
        with tempfile.TemporaryDirectory() as folder:
            store = open_store(Path(folder))
            recall(CollectionIndex(store, EmbeddingCache(store, embedder), tokenizer, 96),
                   [d for d in docs if not d.id.startswith("note-")])
            store.close()
        return
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(Path(folder))
        index = CollectionIndex(store, EmbeddingCache(store, embedder), tokenizer, 96)
        index.create("bench", "kb", "bench")
        started, chunks, used = time.perf_counter(), 0, 0
        while chunks < args.chunks and used < len(docs):
            batch = docs[used : used + 64]
            chunks += index.add("bench", "kb", batch)[1]
            used += len(batch)
        seconds = time.perf_counter() - started
        print(f"ingest: {used} documents, {chunks} chunks in {seconds:.0f} s = {chunks / seconds:.1f} chunks/s "
              "(embedding included; on-disk embedded Qdrant)", flush=True)
        index.query("bench", "kb", "warm-up", QueryParams(max_tokens=600))  # loads the collection into memory once
        times = []
        for question in questions[:300]:
            t = time.perf_counter()
            index.query("bench", "kb", question, QueryParams(max_tokens=600))
            times.append(time.perf_counter() - t)
        filtered = []
        for question in questions[300:400]:
            t = time.perf_counter()
            index.query("bench", "kb", question, QueryParams(max_tokens=600, filter={"set": "cmrc"}))
            filtered.append(time.perf_counter() - t)
        print(f"query over {chunks} chunks: p50 {statistics.median(times) * 1000:.1f} ms, "
              f"p95 {sorted(times)[int(len(times) * 0.95)] * 1000:.1f} ms; with a metadata filter: "
              f"p50 {statistics.median(filtered) * 1000:.1f} ms", flush=True)
        store.close()


if __name__ == "__main__":
    main()
