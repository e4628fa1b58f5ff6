"""A bounded load test on loopback: 32 clients mixing the routes agents use, RSS sampled over time.

Usage: python -m bench.loadtest [--clients 32] [--duration 300] [--overload 20] [--url URL]
Without --url it starts `ctxsieve serve` on a free 127.0.0.1 port with a fresh data dir and samples that
process's RSS from /proc. Mix per request: filter a 2k/10k/40k-token search response (a new query each
time over a rotating pool of inputs), fetch a ref whole or a range, re-filter a ref, select tools from a
199-tool toolset, query a collection of the SQuAD dev articles. Then, with --overload N extra clients for 20 s,
deliberate overload, which must give 429 with Retry-After and still no 5xx.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.datasets import squad_cases
from bench.speed import CACHE, inputs
from bench.tools import metatool
from ctxsieve.ingest.tokens import load_tokenizer

MIX = (("filter", 0.30), ("ref", 0.20), ("refilter", 0.15), ("tools", 0.20), ("collection", 0.15))
SIZES = ((2000, 0.5), (10000, 0.35), (40000, 0.15))


@dataclass
class Window:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class Fixture:
    queries: list[str]
    payloads: dict[int, list[str]]
    refs: list[str] = field(default_factory=list)


def start_server(data_dir: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """`ctxsieve serve` on a free loopback port; `env` adds settings (`CTXSIEVE_READ_ROOTS`, ...)."""
    import socket

    unwind_on_sigterm()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "CTXSIEVE_LOG_LEVEL": "warning", "HF_HUB_OFFLINE": "1", **(env or {})}
    process = subprocess.Popen([sys.executable, "-m", "ctxsieve.service.cli", "serve", "--data-dir", str(data_dir),
                                "--port", str(port)], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, time.monotonic() + 600)
    except BaseException:  # not ready, or the caller interrupted: never leave the server behind
        process.kill()
        raise
    return process, url


def unwind_on_sigterm() -> None:
    """Python's default SIGTERM ends the bench at once, past the `finally` that stops its scratch server, which
    then stayed on its port (`pkill -f bench.code`); read as an exit instead, the server is stopped on the way out."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _exit_on_sigterm)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _wait_ready(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit("server did not become ready")


@contextlib.contextmanager
def scratch_service(prefix: str) -> Iterator[tuple[str, Path]]:
    """`ctxsieve serve` on a fresh temporary data dir; yields its URL and the folder, removed afterwards."""
    with scratch_process(prefix) as (_, url, root):
        yield url, root


@contextlib.contextmanager
def scratch_process(prefix: str, env: dict[str, str] | None = None
                    ) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """As scratch_service, with the server's process (for its RSS) and extra settings in `env`."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    process, url = start_server(root / "data", env)
    try:
        yield process, url, root
    finally:
        process.terminate()
        process.wait(30)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def service_url(url: str, prefix: str) -> Iterator[str]:
    """The given service's URL, or a scratch one's (started for the run, removed after) when none is given."""
    if url:
        yield url
        return
    with scratch_service(prefix) as (scratch, _):
        yield scratch


def rss_mib(pid: int | None, field: str = "VmRSS") -> float | None:
    """Resident MiB from /proc: VmRSS in all, or RssAnon (heap) / RssFile (mapped files the kernel can drop)."""
    if pid is None:
        return None
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return None


def rss_line(pid: int | None) -> str:
    fields = ("VmRSS", "RssAnon", "RssFile")
    return ", ".join(f"{field} {rss_mib(pid, field) or float('nan'):.0f} MiB" for field in fields)


def setup(url: str) -> tuple[Fixture, int]:
    """A toolset, a collection (the SQuAD dev articles, first 4,000 characters) and the inputs."""
    tokenizer = load_tokenizer("o200k_base", CACHE / "tiktoken")
    tools, _ = metatool()
    with httpx.Client(base_url=url, timeout=600) as client:
        client.put("/v1/toolsets/load", json={"tools": tools}).raise_for_status()
        client.put("/v1/collections/load", json={}).raise_for_status()
        cases = squad_cases(2000)
        docs = list({c.text[:4000]: c for c in cases}.values())
        for start in range(0, len(docs), 64):
            batch = [{"id": f"d{start + i}", "text": c.text[:4000]} for i, c in enumerate(docs[start : start + 64])]
            client.post("/v1/collections/load/documents", json={"documents": batch}).raise_for_status()
    queries = [c.question for c in squad_cases(400)]
    return Fixture(queries, {size: inputs(size, 6, tokenizer) for size, _ in SIZES}), len(docs)


def pick(options: tuple[tuple[object, float], ...], rng: random.Random) -> object:
    return rng.choices([o for o, _ in options], weights=[w for _, w in options])[0]


async def one(client: httpx.AsyncClient, kind: str, fx: Fixture, rng: random.Random) -> httpx.Response:
    query = rng.choice(fx.queries)
    if kind in ("ref", "refilter") and not fx.refs:
        kind = "filter"
    if kind == "filter":
        size = int(pick(SIZES, rng))  # type: ignore[call-overload]
        body = {"query": query, "content": rng.choice(fx.payloads[size]), "max_tokens": 800,
                "source": {"tool": "web_search", "args": {"q": "load"}}}
        response = await client.post("/v1/filter", json=body)
        if response.status_code == 200 and len(fx.refs) < 200:
            fx.refs.append(response.json()["ref"])
        return response
    if kind == "ref":
        ref = rng.choice(fx.refs)
        params = {} if rng.random() < 0.5 else {"start": 0, "end": 2000}
        return await client.get(f"/v1/refs/{ref}", params=params)
    if kind == "refilter":
        return await client.post(f"/v1/refs/{rng.choice(fx.refs)}/filter", json={"query": query, "k": 4})
    if kind == "tools":
        return await client.post("/v1/tools/select", json={"query": query, "toolsets": ["load"], "k": 5})
    return await client.post("/v1/collections/load/query", json={"query": query, "k": 5, "max_tokens": 600})


async def client_loop(url: str, fx: Fixture, seed: int, until: float, windows: list[Window], started: float,
                      interval: float) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        while time.monotonic() < until:
            kind = str(pick(MIX, rng))
            t = time.monotonic()
            try:
                response = await one(client, kind, fx, rng)
                status = response.status_code
            except httpx.TransportError:
                status = 599  # counted with the 5xx: the server dropped or refused the connection
            window = windows[min(len(windows) - 1, int((t - started) // interval))]
            window.statuses[status] += 1
            if status == 200:
                window.latencies[kind].append(time.monotonic() - t)
            elif status == 429:
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def sampler(pid: int | None, until: float, samples: list[tuple[float, float]], started: float) -> None:
    while time.monotonic() < until:
        rss = rss_mib(pid)
        if rss is not None:
            samples.append((time.monotonic() - started, rss))
        await asyncio.sleep(5)


def report(windows: list[Window], samples: list[tuple[float, float]], interval: float) -> None:
    kinds = [k for k, _ in MIX]
    print(f"{'t (s)':>7} {'reqs':>6} {'5xx':>4} {'429':>4} {'RSS MiB':>8}  " +
          "  ".join(f"{k + ' p50/p99 ms':>26}" for k in kinds), flush=True)
    for i, w in enumerate(windows):
        end = (i + 1) * interval
        rss = [r for t, r in samples if end - interval <= t < end]
        cells = [f"{quantile(w.latencies[k], 0.5) * 1000:>12.0f}/{quantile(w.latencies[k], 0.99) * 1000:<13.0f}"
                 for k in kinds]
        print(f"{end:>7.0f} {sum(w.statuses.values()):>6} {sum(n for s, n in w.statuses.items() if s >= 500):>4} "
              f"{w.statuses.get(429, 0):>4} {max(rss) if rss else float('nan'):>8.0f}  " + "  ".join(cells),
              flush=True)


def trend(samples: list[tuple[float, float]]) -> str:
    """RSS slope over the second half (after warm-up), MiB per minute, by least squares."""
    half = [s for s in samples if s[0] >= samples[-1][0] / 2] if samples else []
    if len(half) < 3:
        return "n/a"
    slope = statistics.linear_regression([t for t, _ in half], [r for _, r in half]).slope
    return f"{slope * 60:+.1f} MiB/min over the second half ({half[0][1]:.0f} -> {half[-1][1]:.0f} MiB)"


async def phase(url: str, fx: Fixture, clients: int, seconds: float, pid: int | None, interval: float,
                seed: int) -> tuple[list[Window], list[tuple[float, float]]]:
    started = time.monotonic()
    until = started + seconds
    windows = [Window() for _ in range(max(1, int(seconds // interval)))]
    samples: list[tuple[float, float]] = []
    await asyncio.gather(sampler(pid, until, samples, started),
                         *(client_loop(url, fx, seed + i, until, windows, started, interval) for i in range(clients)))
    return windows, samples


def totals(label: str, windows: list[Window]) -> None:
    statuses: dict[int, int] = defaultdict(int)
    latencies: dict[str, list[float]] = defaultdict(list)
    for w in windows:
        for s, n in w.statuses.items():
            statuses[s] += n
        for k, v in w.latencies.items():
            latencies[k].extend(v)
    print(f"{label}: {sum(statuses.values())} requests, statuses {dict(sorted(statuses.items()))}; " + ", ".join(
        f"{k} p50 {quantile(v, 0.5) * 1000:.0f} ms p99 {quantile(v, 0.99) * 1000:.0f} ms"
        for k, v in latencies.items()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=300)
    parser.add_argument("--interval", type=float, default=30)
    parser.add_argument("--overload", type=int, default=96, help="clients for a 20 s overload phase; 0 = none")
    parser.add_argument("--url", help="a running server (RSS is then not sampled)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        process, url = (None, args.url) if args.url else start_server(Path(folder))
        pid = process.pid if process else None
        try:
            if pid is not None:
                print(f"ready and idle: {rss_line(pid)}", flush=True)
            t = time.monotonic()
            fx, documents = setup(url)
            print(f"setup: 199 tools, a {documents}-document collection, inputs ready in {time.monotonic() - t:.0f} s; "
                  f"{args.clients} clients for {args.duration:.0f} s on {url}", flush=True)
            windows, samples = asyncio.run(phase(url, fx, args.clients, args.duration, pid, args.interval, 0))
            report(windows, samples, args.interval)
            totals("steady load", windows)
            print(f"RSS trend: {trend(samples)}; peak {max((r for _, r in samples), default=float('nan')):.0f} MiB; "
                  f"at the end: {rss_line(pid)}", flush=True)
            if args.overload:
                over, _ = asyncio.run(phase(url, fx, args.overload, 20, pid, 20, 1000))
                totals(f"deliberate overload ({args.overload} clients, 20 s)", over)
            metrics = httpx.get(f"{url}/metrics").text
            print("\n".join(line for line in metrics.splitlines() if line.startswith("ctxsieve_embedding_cache")))
        finally:
            if process is not None:
                process.terminate()
                process.wait(30)


if __name__ == "__main__":
    main()
