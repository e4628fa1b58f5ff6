"""The dense model every benchmark runs, on the runtime the service uses unless told otherwise."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxsieve.ingest.embedding import Embedder, load_embedder

CACHE = Path.home() / ".cache" / "ctxsieve"


def add_runtime(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runtime", choices=("auto", "openvino", "onnx", "torch"), default="auto",
                        help="the dense model's runtime (the service's default: auto)")


def dense_model(runtime: str = "auto", int8: bool = False) -> Embedder:
    return load_embedder("multilingual-e5-small", CACHE / "models", int8=int8, runtime=runtime)
