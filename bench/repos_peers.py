"""bench.repos' peers, each in a child process of its own (its peak RSS its own): plain BM25 over the same
definitions (bench.localize_bm25, in this venv) and semble (PyPI `semble`, in its own venv, offline).

Both run in-process (no HTTP): their index time from nothing, then the same queries one at a time, p50/p95; the
answer's tokens are those of the top 10 results' texts whole (o200k_base), as neither cuts to a budget.
Usage (the child): python -m bench.repos_peers bm25 ROOT QUERIES.json
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

K = 10
SEMBLE = """
import json, os, resource, sys, time
root, queries = sys.argv[1], json.load(open(sys.argv[2]))
started = time.monotonic()
try:
    from semble import SembleIndex
    index = SembleIndex.from_path(root)
except Exception as exc:  # the peer's own failure is the figure: reported, not hidden
    print(json.dumps({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}))
    sys.exit(0)
took = time.monotonic() - started
latencies, texts = [], []
for query in queries:
    t = time.monotonic()
    found = index.search(query, top_k=10)
    latencies.append(time.monotonic() - t)
    texts.append([r.chunk.content for r in found])
print(json.dumps({"index_s": took, "latencies": latencies, "texts": texts,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def peer(name: str, root: Path, queries: list[str], distinct: int, semble_python: str) -> list[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
        json.dump(queries, handle)
        handle.flush()
        if name == "bm25":
            command = [sys.executable, "-m", "bench.repos_peers", "bm25", str(root), handle.name]
        elif name == "semble":
            if not Path(semble_python).exists():
                return [f"semble: not run ({semble_python} missing: pip install semble==0.7.0 in a venv there)"]
            command = [semble_python, "-c", SEMBLE, str(root), handle.name]
        else:
            raise SystemExit(f"unknown peer {name!r}")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        return [f"{name}: failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"]
    return summary(name, json.loads(done.stdout.strip().splitlines()[-1]), distinct)


def summary(name: str, found: dict[str, object], distinct: int) -> list[str]:
    from bench.repos import la, quantile
    from ctxsieve.ingest.tokens import load_tokenizer

    if "error" in found:
        return [f"{name}: could not run here: {found['error']} {la()}"]
    tokenizer = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")
    latencies: list[float] = found["latencies"]  # type: ignore[assignment]
    texts: list[list[str]] = found["texts"]  # type: ignore[assignment]
    tokens = [sum(tokenizer.count(t) for t in hits) for hits in texts]
    return [f"{name} (in-process, no HTTP): index from nothing {found['index_s']:.1f} s, peak RSS "
            f"{found['rss_mib']:.0f} MiB {la()}",
            f"{name} search: p50 {quantile(latencies, 0.5) * 1000:.0f} ms, p95 {quantile(latencies, 0.95) * 1000:.0f} "
            f"ms; first pass p50 {quantile(latencies[:distinct], 0.5) * 1000:.0f} ms; top {K} texts whole: median "
            f"{statistics.median(tokens):.0f} tokens"]


def bm25_child(root: Path, queries: list[str]) -> dict[str, object]:
    from bench.localize_bm25 import Bm25Localizer

    started = time.monotonic()
    index = Bm25Localizer()
    index.sync(root)
    took = time.monotonic() - started
    latencies, texts = [], []
    lines: dict[str, list[str]] = {}
    for query in queries:
        t = time.monotonic()
        hits = index.search(query, K)
        latencies.append(time.monotonic() - t)
        for hit in hits:
            lines.setdefault(hit.path, (root / hit.path).read_text(errors="replace").split("\n"))
        texts.append(["\n".join(lines[h.path][h.start_line - 1 : h.end_line]) for h in hits])
    return {"index_s": took, "latencies": latencies, "texts": texts,
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


if __name__ == "__main__":
    if sys.argv[1] == "bm25":
        print(json.dumps(bm25_child(Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text()))))
