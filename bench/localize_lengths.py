"""How much of a request and of each definition the dense re-rank needs: dev-split localization (bench.localize_tune's
protocol and gathered signals) with the request cut to its first N model tokens (`head_of`) and definitions' passages
of C characters, and the CPU each costs.

Usage: python -m bench.localize_lengths [--chars 1200,600,400] [--query-tokens 512,256,128,64] [--aside]
       python -m bench.localize_lengths --repo PATH [--chars 1200,400]

Run `python -m bench.localize_tune --dense` once first (it gathers the dev signals). Each case's DENSE_TOP units are
the shipped rule's without the dense signal; their passages are embedded per length (CPU seconds per passage given);
the request's vector per cut (CPU per request). --aside: each also with every unit given a vector (tests, examples,
docs and vendored code too), against the shipped rule (`has_vector`). Dev only: the shipped lengths were chosen here.
--repo: what a repository's vectors cost instead (no embedding, the model's tokenizer only): e5 tokens over its
definitions' passages per length, of the shipped code alone, and padded in batches of 4 (UnitVectors.BATCH) in path
order against sorted by length.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import bench.localize_tune as tune
from bench.localize_ctxsieve import dense_model
from ctxsieve.ingest.coderank import ranker
from ctxsieve.ingest.coderank.ranker import DENSE_TOP, WEIGHTS, order_of, passage_of, score
from ctxsieve.ingest.embedding import head_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", default="1200,600,400")
    parser.add_argument("--query-tokens", default="512,256,128,64")
    parser.add_argument("--aside", action="store_true", help="also with vectors for tests, examples, docs, vendored")
    parser.add_argument("--repo", type=Path, default=None, help="count a repository's tokens to embed instead")
    args = parser.parse_args()
    if args.repo is not None:
        repo_tokens(args.repo, [int(c) for c in args.chars.split(",")])
        return
    sys.modules["__main__"].Gathered = tune.Gathered  # type: ignore[attr-defined]  # pickled by `-m localize_tune`
    gathered = pickle.loads((tune.CACHE / "signals-dev.pkl").read_bytes())
    model = dense_model()
    shipped = ranker.has_vector
    plain = replace(WEIGHTS, dense=0.0)
    best = [order_of(score(g.rows, g.units, plain), g.units)[:DENSE_TOP] for g in gathered]
    print(f"{len(gathered)} dev cases; shipped: passages of {ranker.PASSAGE_CHARS} characters, requests of "
          f"{ranker.QUERY_TOKENS} tokens", flush=True)
    queries = {}
    for n in map(int, args.query_tokens.split(",")):
        started = time.process_time()
        queries[n] = [model.embed_queries([head_of(model, g.case.problem_statement, n)])[0] for g in gathered]
        print(f"requests of {n} tokens: {(time.process_time() - started) / len(gathered) * 1000:.0f} CPU ms each",
              flush=True)
    for chars in map(int, args.chars.split(",")):
        ranker.PASSAGE_CHARS = chars  # passage_of reads it at each call
        passages = sorted({passage_of(g.units[j]) for g, top in zip(gathered, best, strict=True) for j in top}, key=len)
        started = time.process_time()
        vectors = dict(zip(passages, np.concatenate([model.embed_passages(passages[i : i + 8])
                                                     for i in range(0, len(passages), 8)]), strict=True))
        tokens = sum(len(e.ids) for e in model.backend_tokenizer.encode_batch(passages))
        print(f"passages of {chars} characters: {len(passages)}, {tokens / len(passages):.0f} tokens each on average, "
              f"{(time.process_time() - started) / len(passages) * 1000:.0f} CPU ms each", flush=True)
        for n, vecs in queries.items():
            for g, q in zip(gathered, vecs, strict=True):
                g.query = q
            for every in (False, True) if args.aside else (False,):
                ranker.has_vector = (lambda _unit: True) if every else shipped  # rerank reads it at each call
                a1, a5, m, f10 = tune.evaluate(gathered, WEIGHTS, vectors=vectors)
                which = ", every unit with a vector" if every else ""
                print(f"  requests of {n} tokens{which}: file@1 {a1:.3f} file@5 {a5:.3f} MRR {m:.3f} fn@10 {f10:.3f}",
                      flush=True)
            ranker.has_vector = shipped


def repo_tokens(root: Path, lengths: list[int]) -> None:
    from ctxsieve.indexes.repos.vectors import BATCH
    from ctxsieve.indexes.repos.walk import read_source, walk
    from ctxsieve.ingest.coderank.units import units_of

    units = [u for path in walk(root).files if (text := read_source(root, path).text) is not None
             for u in units_of(path, text)]
    tokenizer = dense_model().backend_tokenizer
    prompt = "passage: "  # e5's passage prompt, as the model reads each passage

    def tokens(passages: list[str]) -> list[int]:
        return [len(e.ids) for e in tokenizer.encode_batch([prompt + p for p in passages])]

    def padded(lengths: list[int]) -> int:
        return sum(max(lengths[i : i + BATCH]) * len(lengths[i : i + BATCH]) for i in range(0, len(lengths), BATCH))

    print(f"{root}: {len(units)} definitions", flush=True)
    for chars in lengths:
        ranker.PASSAGE_CHARS = chars
        every = sorted({passage_of(u) for u in units})
        shipped = sorted({passage_of(u) for u in units if ranker.has_vector(u)})
        counts, all_counts = tokens(shipped), tokens(every)
        print(f"passages of {chars} characters: every definition {sum(all_counts):,} e5 tokens (padded in path order "
              f"{padded(all_counts):,}); the shipped code "
              f"({len(shipped)} passages) {sum(counts):,}, padded in batches of {BATCH}: in path order "
              f"{padded(counts):,}, sorted by length {padded(sorted(counts)):,}", flush=True)


if __name__ == "__main__":
    main()
