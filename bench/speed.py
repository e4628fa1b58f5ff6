"""Latency of a fresh (never-seen) input through the filter, by input size and mode, with peers.

Usage: python -m bench.speed [--trials 5] [--sizes 2000,10000,40000,100000]
Each trial uses a fresh on-disk store (nothing cached), the real model, and real content: SQuAD
articles, web pages and recorded search responses, packed into a search-response-shaped JSON.
Peers in the same run: every chunk embedded (`mode: accurate`), and LangChain's
RecursiveCharacterTextSplitter + EmbeddingsFilter with the same model.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.datasets import DATA, squad_cases
from bench.models import add_runtime, dense_model
from ctxsieve.indexes.background import BackgroundEmbedder
from ctxsieve.indexes.sieve import FAST_CANDIDATES, FAST_NEIGHBOURS, FilterParams, Sieve
from ctxsieve.indexes.sources import SourceInput, SourceStore
from ctxsieve.indexes.store import open_store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import resolve_model_path
from ctxsieve.ingest.kinds.html import html_to_text
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.static_model import ensure_static, make_table
from ctxsieve.ingest.tokens import load_tokenizer

CACHE = Path.home() / ".cache" / "ctxsieve"
QUERY = "what caused the delays and who was responsible"


def corpus() -> list[tuple[str, str]]:
    """(title, text) pages of real content, in a fixed order."""
    pages = []
    squad = json.loads((DATA / "squad" / "squad_dev_v1.1.json").read_text())["data"]
    for article in squad:
        pages.append((article["title"], "\n\n".join(p["context"] for p in article["paragraphs"])))
    for folder in sorted((DATA / "web_pages").iterdir()):
        if (folder / "source.html").exists():
            text, title = html_to_text((folder / "source.html").read_text(errors="replace"))
            pages.insert(len(pages) // 2, (title or folder.name, text))
    return pages


def inputs(size: int, trials: int, tokenizer) -> list[str]:  # type: ignore[no-untyped-def]
    """`trials` distinct search responses of about `size` tokens each (no page reused across trials)."""
    pages = corpus()
    out, cursor = [], 0
    for trial in range(trials):
        results, tokens = [], 0
        while tokens < size:
            title, text = pages[cursor % len(pages)]
            cursor += 1
            take = text[: max(200, (size - tokens) * 4)]
            results.append({"title": title, "url": f"https://example.org/{trial}/{cursor}", "content": take[:300],
                            "raw_content": take})
            tokens = tokenizer.count(json.dumps({"results": results}, ensure_ascii=False))
        out.append(json.dumps({"query": QUERY, "results": results}, ensure_ascii=False))
    return out


Run = Callable[[str], tuple[float, int]]  # seconds, tokens returned


def ctxsieve_runner(mode: str, embedder, tokenizer, static,  # type: ignore[no-untyped-def]
                    candidates: int = FAST_CANDIDATES, neighbours: int = FAST_NEIGHBOURS) -> Run:
    def run(text: str) -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as folder:
            store = open_store(Path(folder))
            sieve = Sieve(SourceStore(store, tokenizer, 96), EmbeddingCache(store, embedder), tokenizer,
                          static=static, fast_candidates=candidates, fast_neighbours=neighbours)
            started = time.perf_counter()
            result = sieve.filter("bench", SourceInput((Document(text),), True),
                                  FilterParams(QUERY, k=5, max_tokens=800, mode=mode))  # type: ignore[arg-type]
            elapsed = time.perf_counter() - started
            store.close()
        return elapsed, result.usage.output_tokens
    return run


def langchain_runner(embedder, tokenizer) -> Run:  # type: ignore[no-untyped-def]
    from langchain_classic.retrievers.document_compressors import EmbeddingsFilter
    from langchain_core.documents import Document as LCDocument
    from langchain_core.embeddings import Embeddings
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    class SameModel(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_passages(texts).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_queries([text])[0].tolist()  # type: ignore[no-any-return]

    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50)
    def cosine(a: object, b: object) -> np.ndarray:
        x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
        return (x @ y.T) / (np.linalg.norm(x, axis=1)[:, None] * np.linalg.norm(y, axis=1)[None, :])

    # The similarity function is given so langchain-community (its default's home) is not needed.
    compressor = EmbeddingsFilter(embeddings=SameModel(), k=5, similarity_fn=cosine)

    def run(text: str) -> tuple[float, int]:
        started = time.perf_counter()
        docs = [LCDocument(page_content=c) for c in splitter.split_text(text)]
        kept = compressor.compress_documents(docs, QUERY)
        elapsed = time.perf_counter() - started
        return elapsed, sum(tokenizer.count(d.page_content) for d in kept)
    return run


def refilter_times(texts: list[str], embedder, tokenizer, static, queries: list[str],  # type: ignore[no-untyped-def]
                   pause: float = 5.0) -> dict[str, list[float]]:
    """An agent's next call on an output it just filtered: a re-filter with a new query right after the
    first filter, `pause` seconds after it (a model turn), and once the background has embedded every chunk.
    The background worker yields to requests as in the service (it runs only while none is in flight)."""
    in_flight = [0]

    def refilter(ref: str, query: str) -> float:
        in_flight[0] += 1
        started = time.perf_counter()
        try:
            sieve.refilter("bench", ref, FilterParams(query, k=5, max_tokens=800))
        finally:
            in_flight[0] -= 1
        return time.perf_counter() - started

    times: dict[str, list[float]] = {"right after": [], f"{pause:.0f} s after": [], "after the background": []}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(Path(folder))
        cache = EmbeddingCache(store, embedder)
        background = BackgroundEmbedder(cache, lambda: in_flight[0] == 0)
        sieve = Sieve(SourceStore(store, tokenizer, 96), cache, tokenizer, static=static, background=background)
        for i, text in enumerate(texts):
            source = SourceInput((Document(text),), True)
            in_flight[0] += 1  # the first filter is a request too: the worker waits for it
            ref = sieve.filter("bench", source, FilterParams(QUERY, k=5, max_tokens=800)).ref
            in_flight[0] -= 1
            if i % 2:
                time.sleep(pause)
            label = f"{pause:.0f} s after" if i % 2 else "right after"
            times[label].append(refilter(ref, queries[i % len(queries)]))
            background.drain(timeout=600)
        for query in queries:
            times["after the background"].append(refilter(ref, query))
        background.close()
        store.close()
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def compare(specs: str, sizes: list[int], trials: int, embedder, tokenizer, static) -> None:  # type: ignore[no-untyped-def]
    """Budgets timed turn by turn on each input, so the machine's drift hits them all alike."""
    budgets = [tuple(int(x) for x in spec.split("/")) for spec in specs.split(",")]
    runners = {b: ctxsieve_runner("fast", embedder, tokenizer, static, *b) for b in budgets}
    for size in sizes:
        texts = inputs(size, trials, tokenizer)
        runners[budgets[0]](texts[0])  # warm-up, not timed
        times: dict[tuple[int, ...], list[float]] = {b: [] for b in budgets}
        for text in texts:
            for budget, runner in runners.items():
                times[budget].append(runner(text)[0])
        for budget, values in times.items():
            print(f"{size:>12}  fast, {budget[0]} candidates + neighbours of {budget[1]:<3} "
                  f"p50 {statistics.median(values):.3f} s  p95 {percentile(values, 0.95):.3f} s", flush=True)


def static_times() -> None:
    """Making the static stage's table (what a first `make run` waits for before fast mode has its first stage)."""
    folder = Path(resolve_model_path("multilingual-e5-small", CACHE / "models"))
    for trial in range(3):
        start, cpu = time.perf_counter(), time.process_time()
        make_table(folder)
        print(f"static table from the token embeddings, trial {trial + 1}: {time.perf_counter() - start:.1f} s "
              f"({time.process_time() - cpu:.1f} CPU s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--sizes", default="2000,10000,40000,100000")
    parser.add_argument("--candidates", type=int, default=FAST_CANDIDATES, help="fast mode's first-stage candidates")
    parser.add_argument("--neighbours", type=int, default=FAST_NEIGHBOURS,
                        help="best dense hits whose neighbouring chunks are embedded too")
    parser.add_argument("--refilter-inputs", type=int, default=12, help="fresh inputs for the re-filter timings")
    parser.add_argument("--peer-sizes", default="2000,10000,40000", help="sizes at which the slow peers also run")
    parser.add_argument("--compare", default="", help="fast-mode budgets as candidates/neighbours, e.g. 20/0,14/3: "
                                                      "run interleaved over the same inputs instead of the table")
    parser.add_argument("--static", action="store_true", help="time making the static stage's table")
    add_runtime(parser)
    args = parser.parse_args()
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = dense_model(args.runtime)
    if args.static:
        static_times()
        return
    static = ensure_static(Path(resolve_model_path("multilingual-e5-small", CACHE / "models")), CACHE / "models",
                           getattr(embedder, "backend_tokenizer", None))
    if args.compare:
        compare(args.compare, [int(x) for x in args.sizes.split(",")], args.trials, embedder, tokenizer, static)
        return
    runners = {"ctxsieve fast (default)": ctxsieve_runner("fast", embedder, tokenizer, static, args.candidates,
                                                                 args.neighbours),
               "every chunk embedded (accurate)": ctxsieve_runner("accurate", embedder, tokenizer, static),
               "LangChain splitter + EmbeddingsFilter": langchain_runner(embedder, tokenizer)}
    peer_sizes = {int(s) for s in args.peer_sizes.split(",") if s}
    print(f"{'input tokens':>12}  {'method':<38} {'p50 s':>7} {'p95 s':>7} {'x fast':>7} {'tokens out':>10}",
          flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        texts = inputs(size, args.trials, tokenizer)
        fast_p50 = None
        for name, runner in runners.items():
            if not name.startswith("ctxsieve") and size not in peer_sizes:
                continue
            runs = [runner(t) for t in (texts if name.startswith("ctxsieve fast") else texts[:3])]
            times = [r[0] for r in runs]
            p50, p95 = statistics.median(times), percentile(times, 0.95)
            fast_p50 = fast_p50 or p50
            out = statistics.median(r[1] for r in runs)
            print(f"{size:>12}  {name:<38} {p50:>7.2f} {p95:>7.2f} {p50 / fast_p50:>7.1f} {out:>10.0f}", flush=True)
    if 40000 in {int(s) for s in args.sizes.split(",")}:
        queries = [c.question for c in squad_cases(60)][:40]
        fresh = inputs(40000, args.refilter_inputs, tokenizer)
        for label, values in refilter_times(fresh, embedder, tokenizer, static, queries).items():
            print(f"re-filter of a fresh 40k-token ref with a new query, {label}: p50 "
                  f"{statistics.median(values) * 1000:.1f} ms, p95 {percentile(values, 0.95) * 1000:.1f} ms "
                  f"({len(values)} re-filters)", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process (model + store + bench): {rss:.0f} MiB")


if __name__ == "__main__":
    main()
