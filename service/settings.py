"""The one settings class. Every field is also an environment variable `CTXSIEVE_<NAME>`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ctxsieve.indexes.sieve import FAST_CANDIDATES, FAST_NEIGHBOURS

_CACHE = Path.home() / ".cache" / "ctxsieve"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CTXSIEVE_", extra="ignore")

    host: str = Field("127.0.0.1", description="address to serve on")
    port: int = Field(8000, ge=1, le=65535, description="port to serve on")
    instance: str | None = Field(None, description="an id /healthz reports, so `ctxsieve service` tells the server "
                                                   "it started from another on the port (it sets this itself)")
    data_dir: Path = Field(Path("data"), description="embedded Qdrant Edge's folder (when no qdrant_url)")
    qdrant_url: str | None = Field(None, description="a Qdrant server or cluster instead of the embedded store")
    qdrant_api_key: str | None = Field(None, description="API key for qdrant_url")
    qdrant_timeout: float = Field(10.0, gt=0, description="seconds per store call")
    min_free_mb: int = Field(256, ge=0, description="embedded store: writes pause (503) while the data dir's disk "
                                                    "has less free space than this")
    model_dir: Path = Field(_CACHE / "models", description="where converted models are cached")
    embed_model: str = Field("multilingual-e5-small",
                             description="multilingual-e5-small (default), all-MiniLM-L6-v2, or any "
                                         "sentence-transformers name or path")
    encoding: str = Field("o200k_base", description="tiktoken encoding for every token count")
    tiktoken_cache_dir: Path = Field(_CACHE / "tiktoken", description="verified tiktoken files")
    chunk_tokens: int = Field(96, ge=16, le=1024, description="target chunk size in tokens")
    dense_weight: float = Field(0.6, ge=0, le=1, description="weight of dense vs BM25 in the fused score")
    code_chunk_tokens: int = Field(256, ge=16, le=1024, description="target chunk size of source code (whole lines, "
                                                                     "cut at definitions)")
    code_candidates: int = Field(5, ge=0, le=64, description="fast mode's dense candidates for logs and diffs "
                                                                 "(0: none)")
    tool_dense_weight: float = Field(0.74, ge=0, le=1, description="the same for tool selection (z-score fusion)")
    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024, description="largest request body accepted")
    max_running: int = Field(2, ge=1, le=64, description="filter requests running at once")
    max_queued: int = Field(32, ge=0, le=10_000, description="requests waiting beyond that; more get 429")
    static_stage: bool = Field(True, description="a static embedding (the model's token table) for fast mode's "
                                                 "first stage")
    fast_candidates: int = Field(FAST_CANDIDATES, ge=1, le=1000,
                                 description="first-stage chunks embedded per fresh input in fast mode")
    fast_neighbours: int = Field(FAST_NEIGHBOURS, ge=0, le=100,
                                 description="then the chunks either side of this many best dense hits")
    runtime: Literal["auto", "openvino", "onnx", "torch"] = Field(
        "auto", description="runs the dense model: auto is OpenVINO bf16 where the CPU has native bf16 (AMX or "
                            "AVX-512 BF16), else ONNX Runtime fp32 (both read the export made at prepare; same "
                            "vectors, checked at start); torch on request")
    int8: bool = Field(False, description="int8 linear layers in the dense model: faster, but lower recall "
                                          "(docs/settings.md)")
    background_embedding: bool = Field(True, description="embed the rest of a fresh input while idle, so "
                                                         "re-filtering it needs no inference")
    repo_vectors: bool = Field(True, description="embed a repository's definitions while idle once it is "
                                                 "searchable (state lexical, then ready): search_code re-ranks "
                                                 "its best hits by them")
    malloc_trim_seconds: float = Field(5.0, ge=0, description="how often `serve` hands freed heap pages back to "
                                                              "the kernel (0: never)")
    inference_threads: int | None = Field(None, ge=1, description="torch threads (default: all cores)")
    read_roots: str = Field("", description=f"folders /v1/read may read, separated by '{os.pathsep}'; "
                                             "empty = reading is off")
    max_read_bytes: int = Field(20 * 1024 * 1024, ge=1, description="largest file /v1/read reads")
    tavily_api_key: str | None = Field(None, validation_alias=AliasChoices("CTXSIEVE_TAVILY_API_KEY",
                                                                          "TAVILY_API_KEY", "tavily_api_key"),
                                       description="Tavily API key (TAVILY_API_KEY also works)")
    tavily_base_url: str | None = Field(None, description="Tavily endpoint (default: Tavily's own)")
    tavily_timeout: float = Field(30.0, gt=0, le=120, description="seconds to wait for Tavily")
    session_retention_days: float = Field(7.0, gt=0, description="how long a session's diagnostics are kept")
    source_retention_days: float = Field(30.0, ge=0, description="how long a stored tool output is kept (0: forever); "
                                                                "past it its ref answers 410")
    sweep_seconds: float = Field(3600.0, gt=0, description="how often expired sources and session reads are "
                                                          "forgotten")
    api_keys: str | None = Field(None, description="'key1:tenant1,key2:tenant2'; unset = no auth, one tenant")
    api_keys_file: Path | None = Field(None, description="file with one 'key:tenant' per line")
    log_level: str = Field("info", description="uvicorn log level")

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.qdrant_api_key and not self.qdrant_url:
            raise ValueError("CTXSIEVE_QDRANT_API_KEY is set but CTXSIEVE_QDRANT_URL is not")
        return self

    def read_root_paths(self) -> list[Path]:
        return root_paths(self.read_roots)

    def key_table(self) -> dict[str, str]:
        """API key -> tenant, from CTXSIEVE_API_KEYS and the keys file."""
        entries = [e for e in (self.api_keys or "").split(",") if e.strip()]
        if self.api_keys_file is not None:
            lines = self.api_keys_file.read_text().splitlines()
            entries += [ln for ln in lines if ln.strip() and not ln.startswith("#")]
        table = {}
        for entry in entries:
            key, sep, tenant = entry.strip().rpartition(":")
            if not sep or not key or not tenant:
                raise ValueError("each API key entry must look like 'key:tenant'")
            table[key] = tenant
        return table


def root_paths(read_roots: str) -> list[Path]:
    """CTXSIEVE_READ_ROOTS's folders."""
    return [Path(p).expanduser() for p in read_roots.split(os.pathsep) if p.strip()]


def own_read_roots() -> str | None:
    """The folders this user's own service (`make run`, `ctxsieve service start`) reads when CTXSIEVE_READ_ROOTS
    leaves it to ctxsieve: the home folder, so that `ctxsieve index` and search_code reach the user's repositories.
    None when CTXSIEVE_READ_ROOTS is set: then it says."""
    return None if "CTXSIEVE_READ_ROOTS" in os.environ else str(Path.home())
