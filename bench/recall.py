"""Evidence recall at a token budget: ctxsieve vs dense alone, BM25 alone and LangChain's splitter + top-k.

Usage: python -m bench.recall [--questions 450] [--sets squad,cmrc] [--store FOLDER]
All methods run in the same process on the same model; the first three share ctxsieve's chunks.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.datasets import Case, cmrc_cases, found, haystack_cases, squad_cases
from bench.models import add_runtime, dense_model
from ctxsieve.indexes.sieve import FAST_CANDIDATES, FAST_NEIGHBOURS, FilterParams, Sieve
from ctxsieve.indexes.sources import SourceInput, SourceStore
from ctxsieve.indexes.store import Store, open_store
from ctxsieve.indexes.vectors import EmbeddingCache
from ctxsieve.ingest.embedding import resolve_model_path
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.static_model import StaticEmbedder, ensure_static
from ctxsieve.ingest.tokens import load_tokenizer

BUDGETS = (300, 600)
CACHE = Path.home() / ".cache" / "ctxsieve"


STATIC: list[StaticEmbedder | None] = []


def make_sieve(store: Store, chunk_tokens: int, dense_weight: float, embedder, tokenizer,  # type: ignore[no-untyped-def]
               fast_candidates: int = FAST_CANDIDATES, static: bool = True, neighbours: int = FAST_NEIGHBOURS) -> Sieve:
    if not STATIC:
        STATIC.append(ensure_static(resolve_model_path_folder(), CACHE / "models",
                                    getattr(embedder, "backend_tokenizer", None)))
    sources = SourceStore(store, tokenizer, chunk_tokens)
    return Sieve(sources, EmbeddingCache(store, embedder), tokenizer, dense_weight=dense_weight,
                 fast_candidates=fast_candidates, static=STATIC[0] if static else None, fast_neighbours=neighbours)


def resolve_model_path_folder() -> Path:
    return Path(resolve_model_path("multilingual-e5-small", CACHE / "models"))


def sieve_method(sieve: Sieve, mode: str = "fast") -> Callable[[Case, int], str]:
    def run(case: Case, budget: int) -> str:
        inp = SourceInput((Document(case.text),), True, "text")
        result = sieve.filter("bench", inp, FilterParams(case.question, k=50, max_tokens=budget, mode=mode))  # type: ignore[arg-type]
        return "\n".join(s.text for s in result.snippets)
    return run


def langchain_method(embedder, tokenizer, chunk_chars: int = 500) -> Callable[[Case, int], str]:  # type: ignore[no-untyped-def]
    """The common peer pipeline: RecursiveCharacterTextSplitter, embed every chunk, top-k by cosine."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_chars, chunk_overlap=50,
                                              separators=["\n\n", "\n", "。", ". ", " ", ""])
    cache: dict[str, tuple[list[str], np.ndarray]] = {}

    def run(case: Case, budget: int) -> str:
        if case.text not in cache:
            chunks = splitter.split_text(case.text)
            cache[case.text] = (chunks, embedder.embed_passages(chunks))
        chunks, vectors = cache[case.text]
        scores = vectors @ embedder.embed_queries([case.question])[0]
        shown, used = [], 0
        for i in np.argsort(-scores):
            tokens = tokenizer.count(chunks[i])
            if used + tokens <= budget:
                shown.append(chunks[i])
                used += tokens
        return "\n".join(shown)
    return run


def evaluate(name: str, method: Callable[[Case, int], str], cases: list[Case]) -> dict[int, float]:
    started = time.perf_counter()
    hits = dict.fromkeys(BUDGETS, 0)
    for case in cases:
        for budget in BUDGETS:
            hits[budget] += found(case.answers, method(case, budget))
    recall = {b: hits[b] / len(cases) for b in BUDGETS}
    print(f"  {name:<34} " + "  ".join(f"@{b}: {recall[b]:.3f}" for b in BUDGETS)
          + f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return recall


def main() -> None:
    parser = argparse.ArgumentParser()
    # 450: at 150 one question is 0.67 points, too coarse to judge a one-point target (the test split leaves
    # out the dev questions fast mode was tuned on, so SQuAD gives 437).
    parser.add_argument("--questions", type=int, default=int(os.environ.get("BENCH_QUESTIONS", "450")))
    parser.add_argument("--sets", default="squad,cmrc,haystack")
    parser.add_argument("--int8", action="store_true", help="the dense model with int8 linear layers")
    parser.add_argument("--chunk-tokens", type=int, default=96)
    parser.add_argument("--dense-weight", type=float, default=0.6)
    parser.add_argument("--peers", default="dense,bm25,langchain")
    parser.add_argument("--weights", default="", help="extra fused weights to try on the same chunks")
    parser.add_argument("--variants", default="20/0", help="other fast-mode budgets to run, as candidates/neighbours "
                                                           "(20/0: session 2's default, 20 plain candidates)")
    parser.add_argument("--store", type=Path, help="keep chunk vectors in this folder across runs (a vector depends "
                                                   "only on the model, its runtime and the text: one folder per "
                                                   "runtime, and reuse changes no figure)")
    parser.add_argument("--first-stage", default="static", help="fast mode's first stage: static (the default), "
                                                                 "none (BM25 alone, a first start's), or both")
    parser.add_argument("--fast-only", action="store_true", help="leave out accurate mode")
    add_runtime(parser)
    args = parser.parse_args()
    args.first_stage = "static,none" if args.first_stage == "both" else args.first_stage
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    embedder = dense_model(args.runtime, args.int8)
    store = open_store(args.store)  # every method shares the chunk-vector cache (in memory by default)
    loaders = {"squad": squad_cases, "cmrc": cmrc_cases,
               "haystack": lambda _n: haystack_cases((10_000, 40_000, 100_000), (0.1, 0.5, 0.9), tokenizer)}
    for set_name in args.sets.split(","):
        cases = loaders[set_name](args.questions)
        tokens = sum(tokenizer.count(t) for t in {c.text for c in cases}) / len({c.text for c in cases})
        print(f"{set_name}: {len(cases)} questions, {len({c.text for c in cases})} inputs, "
              f"{tokens:.0f} tokens per input", flush=True)
        sieve = make_sieve(store, args.chunk_tokens, args.dense_weight, embedder, tokenizer)
        if not args.fast_only:
            evaluate(f"ctxsieve accurate ({args.chunk_tokens}-token chunks)", sieve_method(sieve, "accurate"), cases)
        if "static" in args.first_stage.split(","):
            evaluate("ctxsieve fast (default)", sieve_method(sieve), cases)
        if "none" in args.first_stage.split(","):  # a first start's, until the static stage is made
            bm25_first = make_sieve(store, args.chunk_tokens, args.dense_weight, embedder, tokenizer, static=False)
            evaluate("fast, first stage BM25 alone", sieve_method(bm25_first), cases)
        for spec in [v for v in args.variants.split(",") if v]:
            n, around = (int(x) for x in spec.split("/"))
            variant = make_sieve(store, args.chunk_tokens, args.dense_weight, embedder, tokenizer, n, True, around)
            evaluate(f"fast, {n} candidates + neighbours of {around}", sieve_method(variant), cases)
        for weight in [float(w) for w in args.weights.split(",") if w]:
            variant = make_sieve(store, args.chunk_tokens, weight, embedder, tokenizer)
            evaluate(f"fused, dense weight {weight}", sieve_method(variant, "accurate"), cases)
        peers = args.peers.split(",")
        if "dense" in peers:
            dense_only = make_sieve(store, args.chunk_tokens, 1.0, embedder, tokenizer)
            evaluate("dense alone (same chunks)", sieve_method(dense_only, "accurate"), cases)
        if "bm25" in peers:
            bm25_only = make_sieve(store, args.chunk_tokens, 0.0, embedder, tokenizer)
            evaluate("BM25 alone (same chunks)", sieve_method(bm25_only, "accurate"), cases)
        if "langchain" in peers and set_name != "haystack":  # 36 x 50k tokens re-embedded: over an hour
            evaluate("LangChain splitter + top-k", langchain_method(embedder, tokenizer), cases)


if __name__ == "__main__":
    main()
