"""Prometheus metrics: one registry per app (no global state), exposed at /metrics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric


@dataclass
class Metrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    tokens_in: Counter
    tokens_out: Counter
    saved: Histogram
    repeated: Counter

    @classmethod
    def create(cls, engine: Callable[[], Any]) -> Metrics:
        r = CollectorRegistry()
        r.register(_EngineCollector(engine))
        return cls(
            registry=r,
            requests=Counter("ctxsieve_requests_total", "HTTP requests", ["route", "status"], registry=r),
            latency=Histogram("ctxsieve_request_seconds", "request latency", ["route"], registry=r,
                              buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)),
            tokens_in=Counter("ctxsieve_input_tokens_total", "tokens of tool output received", registry=r),
            tokens_out=Counter("ctxsieve_output_tokens_total", "tokens returned to agents", registry=r),
            saved=Histogram("ctxsieve_saved_ratio", "share of tokens kept out of context", registry=r,
                            buckets=(0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1)),
            repeated=Counter("ctxsieve_repeated_reads_total", "reads of a ref the session was already served",
                             registry=r),
        )


class _EngineCollector:
    """Reads the engine's own counters at scrape time (the engine knows nothing of Prometheus)."""

    def __init__(self, engine: Callable[[], Any]) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        engine = self.engine()
        if engine is None:
            return
        cache = CounterMetricFamily("ctxsieve_embedding_cache", "embedding lookups by result", labels=["result"])
        cache.add_metric(["hit"], engine.sieve.vectors.hits)
        cache.add_metric(["miss"], engine.sieve.vectors.misses)
        yield cache
        yield GaugeMetricFamily("ctxsieve_inference_queue_depth", "requests admitted and not finished",
                                value=engine.gate.depth)
        if engine.sieve.background is not None:
            yield GaugeMetricFamily("ctxsieve_background_pending", "chunks queued for embedding while idle",
                                    value=engine.sieve.background.pending)
