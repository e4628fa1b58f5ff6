"""Repository code search against issue 42's speed targets, on the largest dev repository (ansible).

Usage: python -m bench.repos [--searches 200] [--peers bm25,semble] [--out bench/results/repos.txt]

A scratch `ctxsieve serve` (fresh data dir, CTXSIEVE_READ_ROOTS = the checkout) indexes ansible from a local clone
of /work/.mirror/ansible+ansible checked out at COMMIT under ~/.cache/ctxsieve/bench/repos/ (never committed):
- first index: PUT /v1/repos/ansible, then GET until the state leaves `indexing` (searchable: `lexical`), then
  until it is `ready` (every definition's vector made, while no request runs); the server's resident memory
  sampled from /proc/<pid>/status meanwhile (VmRSS), and its VmHWM;
- the index's size on disk (the data dir: bytes written and blocks held);
- an edit: a new function appended to one file, then POST sync (and, once more, PUT again as `ctxsieve index`
  does), timed until a search for its name finds it;
- searches: the ansible issues' texts of $SWE_DEV (../shared/data/swe_dev; first 4,000 characters, the API's
  limit), cycled to --searches, one at a time over HTTP after a warm-up, at the default budget: p50/p95 latency
  and the median answer's tokens (usage.output_tokens). The first pass (each issue's first time) is reported apart.
Peers in the same run (bench.repos_peers): plain BM25 over the same definitions (bench.localize_bm25), and semble
in its own venv (`--semble-python`), both in-process. The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.hooks import load, machine
from bench.loadtest import rss_mib, scratch_process
from bench.localize_data import SWE_DEV

MIRROR = Path("/work/.mirror/ansible+ansible/repo")
COMMIT = "c9ac477e53a99e95781f333eec3329a935c1bf95"
CHECKOUT = Path.home() / ".cache" / "ctxsieve" / "bench" / "repos" / "ansible"
CASES = SWE_DEV / "cases.jsonl"
EDITED = "lib/ansible/utils/vars.py"
QUERY_CHARS = 4000
WARMUP = 5


def checkout(folder: Path = CHECKOUT) -> Path:
    """A clone of the mirror at COMMIT with no local changes (a previous run's edit undone)."""
    if not (folder / ".git").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(MIRROR), str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "checkout", "-q", "-f", COMMIT], check=True)
    subprocess.run(["git", "-C", str(folder), "clean", "-q", "-fd"], check=True)
    return folder


def issue_queries(n: int) -> tuple[list[str], int]:
    """`n` queries: the distinct ansible issues' texts cycled; and how many are distinct."""
    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    texts = list(dict.fromkeys(r["problem_statement"][:QUERY_CHARS] for r in rows if r["repo"] == "ansible/ansible"))
    return [texts[i % len(texts)] for i in range(n)], len(texts)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def la() -> str:
    return f"(load {os.getloadavg()[0]:.1f})"


def wait_indexed(client: httpx.Client, name: str, pid: int | None = None, samples: list[float] | None = None,
                 until: tuple[str, ...] = ("lexical", "ready")) -> dict[str, Any]:
    """GET the repository until its state is one of `until`, sampling the server's VmRSS every tenth of a second."""
    while True:
        if samples is not None:
            samples.append(rss_mib(pid) or 0.0)
        info: dict[str, Any] = client.get(f"/v1/repos/{name}").raise_for_status().json()
        if info["state"] in until:
            return info
        time.sleep(0.1)


def first_index(client: httpx.Client, pid: int, root: Path) -> list[str]:
    idle, startup_peak = rss_mib(pid), rss_mib(pid, "VmHWM")
    samples: list[float] = []
    started = time.monotonic()
    client.put("/v1/repos/ansible", json={"path": str(root)}).raise_for_status()
    info = wait_indexed(client, "ansible", pid, samples)
    took = time.monotonic() - started
    lexical = [f"first index, searchable (lexical): {took:.1f} s for {info['files']} files, "
               f"{info['definitions']} definitions, skipped {info['skipped']}, error {info['error']} {la()}",
               f"server RSS: idle after start {idle:.0f} MiB (startup peak VmHWM {startup_peak:.0f} MiB); while "
               f"indexing max VmRSS {max(samples):.0f} MiB ({len(samples)} samples)"]
    for line in lexical:
        print(line, flush=True)
    samples = []
    info = wait_indexed(client, "ansible", pid, samples, until=("ready",))
    ready = time.monotonic() - started
    return lexical + [f"vectors made (ready): {ready:.0f} s after the PUT ({ready - took:.0f} s after lexical) for "
                      f"{info['definitions']} definitions {la()}",
                      f"server RSS while embedding: max VmRSS {max(samples):.0f} MiB; VmHWM after "
                      f"{rss_mib(pid, 'VmHWM'):.0f} MiB"]


def disk_size(data: Path) -> list[str]:
    """Bytes written (apparent) and blocks held, for the data dir and its repos space."""
    def size(folder: Path) -> tuple[float, float]:
        files = [p for p in folder.rglob("*") if p.is_file()]
        return (sum(p.stat().st_size for p in files) / 2**20, sum(p.stat().st_blocks * 512 for p in files) / 2**20)
    whole, repos = size(data), size(data / "edge" / "repos")
    return [f"index on disk: data dir {whole[1]:.0f} MiB held ({whole[0]:.0f} MiB apparent, the engine's files are "
            f"sparse); its repos space {repos[1]:.0f} MiB held ({repos[0]:.0f} MiB apparent)"]


def found_after(client: httpx.Client, root: Path, marker: str, ask: Callable[[], object]) -> float:
    """Seconds from appending `def marker` to EDITED and asking (`ask`) until a search's first hit is it."""
    started = time.monotonic()
    with (root / EDITED).open("a") as handle:
        handle.write(f"\n\ndef {marker}(value):\n    return value\n")
    ask()
    while time.monotonic() - started < 60:
        hits = client.post("/v1/repos/ansible/search", json={"query": marker, "k": 1}).raise_for_status().json()
        if hits["results"] and hits["results"][0]["name"] == marker:
            return time.monotonic() - started
        time.sleep(0.02)
    return float("nan")


def edits(client: httpx.Client, root: Path) -> list[str]:
    nonce = int(time.time())
    unchanged = time.monotonic()
    client.post("/v1/repos/ansible/sync").raise_for_status()
    wait_indexed(client, "ansible")
    unchanged_s = time.monotonic() - unchanged
    by_sync = found_after(client, root, f"ctxsieve_bench_sync_{nonce}",
                          lambda: client.post("/v1/repos/ansible/sync").raise_for_status())
    by_index = found_after(client, root, f"ctxsieve_bench_index_{nonce}",
                           lambda: client.put("/v1/repos/ansible", json={"path": str(root)}).raise_for_status())
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", EDITED], check=True)
    client.post("/v1/repos/ansible/sync").raise_for_status()
    wait_indexed(client, "ansible", until=("ready",))  # the searches that follow re-rank by vectors
    return [f"sync with nothing changed: {unchanged_s * 1000:.0f} ms {la()}",
            f"edited definition found: {by_sync:.2f} s after the edit with POST sync, {by_index:.2f} s with PUT again "
            f"(what `ctxsieve index` sends) {la()}"]


def searches(client: httpx.Client, queries: list[str], distinct: int) -> list[str]:
    for query in queries[-WARMUP:]:
        client.post("/v1/repos/ansible/search", json={"query": query[::-1]}).raise_for_status()
    latencies: list[float] = []
    tokens: list[int] = []
    for query in queries:
        started = time.monotonic()
        response = client.post("/v1/repos/ansible/search", json={"query": query}).raise_for_status()
        latencies.append(time.monotonic() - started)
        tokens.append(response.json()["usage"]["output_tokens"])
    first = latencies[:distinct]
    return [f"search over HTTP, warm, {len(queries)} searches ({distinct} distinct issues cycled): p50 "
            f"{quantile(latencies, 0.5) * 1000:.0f} ms, p95 {quantile(latencies, 0.95) * 1000:.0f} ms; first pass "
            f"(each issue once) p50 {quantile(first, 0.5) * 1000:.0f} ms, p95 {quantile(first, 0.95) * 1000:.0f} ms "
            f"{la()}",
            f"answer tokens (usage.output_tokens, default budget): median {statistics.median(tokens):.0f}, max "
            f"{max(tokens)}"]


def ctxsieve_run(queries: list[str], distinct: int) -> list[str]:
    root = checkout()
    env = {"CTXSIEVE_READ_ROOTS": str(root)}
    lines: list[str] = []
    with scratch_process("bench-repos-", env) as (process, url, scratch), \
            httpx.Client(base_url=url, timeout=600) as client:
        lines += first_index(client, process.pid, root)
        print(*lines[2:], sep="\n", flush=True)
        lines += disk_size(scratch / "data")
        print(lines[-1], flush=True)
        for step in (lambda: edits(client, root), lambda: searches(client, queries, distinct)):
            for line in step():
                print(line, flush=True)
                lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--peers", default="bm25,semble", help="comma-separated; empty for none")
    parser.add_argument("--semble-python", default="/tmp/semble-venv/bin/python")
    parser.add_argument("--out", default="bench/results/repos.txt")
    args = parser.parse_args()
    from bench.repos_peers import peer

    queries, distinct = issue_queries(args.searches)
    head = [f"$ python -m bench.repos {' '.join(sys.argv[1:])}".rstrip(),
            f"machine: {machine()}", f"repository: ansible at {COMMIT[:12]} ({CHECKOUT})", ""]
    print("\n".join(head), flush=True)
    lines = ["ctxsieve (scratch `ctxsieve serve`, over HTTP):", *ctxsieve_run(queries, distinct)]
    for name in filter(None, args.peers.split(",")):
        found = peer(name, checkout(), queries, distinct, args.semble_python)
        print("\n".join(found), flush=True)
        lines += ["", *found]
    lines += ["", f"at the end: {load()}"]
    Path(args.out).write_text("\n".join([*head, *lines]) + "\n")


if __name__ == "__main__":
    main()
