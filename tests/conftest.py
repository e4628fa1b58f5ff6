"""Fixtures: the real app with the real model, real tiktoken files and a real embedded Qdrant Edge; and, for
tests where the model is not what is tested, the same app with a small deterministic stand-in model.

Tests that use the real model are marked `slow` (by the fixtures they use, or by hand): `pytest -m "not slow"`
is the fast tier; `make test` runs everything."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve.service.app import create_app
from ctxsieve.service.engine import Models
from ctxsieve.service.settings import Settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CACHE = Path.home() / ".cache" / "ctxsieve"


def shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (evaluation data lives in ../shared/data, outside the repo)")
    return path


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": data_dir, "model_dir": CACHE / "models",
                                 "tiktoken_cache_dir": CACHE / "tiktoken"}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


def wait_ready(client: TestClient, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get("/readyz").status_code == 200:
            return
        time.sleep(0.2)
    raise AssertionError(f"service not ready: {client.get('/readyz').json()}")


# Fixtures that load the real model: a test using any of them is slow.
REAL_MODEL_FIXTURES = {"client", "live_url", "big", "service", "base_url", "served"}


# Files whose tests mostly wait (a niced child exporting the model for minutes): run first, so that under
# `make test`'s two workers (pytest-xdist, a file per worker at a time) every other file runs meanwhile.
FIRST = ("tests/service/test_first_start.py",)
# Then the files that took over 30 s each under `make test` (2 cores), longest first: a long file handed out last
# keeps one worker busy after the other has finished. The rest follow with the most tests first.
LONGEST = ("tests/client/gateway/test_gateway_eras.py", "tests/client/gateway/test_gateway_conformance.py",
           "tests/client/gateway/test_gateway.py", "tests/ingest/test_tokens_and_model.py",
           "tests/service/test_faults.py", "tests/client/hooks/test_failing_runs_fit.py",
           "tests/client/setup/test_install_agents.py", "tests/client/test_search_code.py",
           "tests/client/setup/test_install_codex.py", "tests/service/test_api_collections.py",
           "tests/client/hooks/test_claude_code_outputs.py", "tests/client/setup/test_install_cursor.py",
           "tests/service/test_api_repos.py", "tests/client/hooks/test_claude_code_hook.py",
           "tests/client/setup/test_install_gemini.py", "tests/client/gateway/test_gateway_startup.py",
           "tests/client/setup/test_install_opencode.py", "tests/service/test_service_cli.py",
           "tests/indexes/test_fast_pool.py")


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist hands out files by how many tests each has unless told to keep the order given here (its
    default put the first-start test after 8 minutes of other files, so its minutes of waiting came at the end)."""
    if getattr(config.option, "loadscopereorder", None) is not None:
        config.option.loadscopereorder = False


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def run_order(items: list[pytest.Item]) -> dict[str, tuple[int, int, int]]:
    """Each file's place: FIRST, then LONGEST in its order, then the most tests first (ties: as collected)."""
    counts: dict[str, int] = {}
    for item in items:
        counts[file_of(item)] = counts.get(file_of(item), 0) + 1
    rank = {name: i for i, name in enumerate(LONGEST)}
    return {name: (name not in FIRST, rank.get(name, len(LONGEST)), -count) for name, count in counts.items()}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    order = run_order(items)
    items.sort(key=lambda item: order[file_of(item)])  # stable: a file's tests stay together, in their order


@cache
def stub_models() -> Models:
    """Real tiktoken, a hashing stand-in for the embedder (64-d), no static first stage: loads in ~0.1 s."""
    from ctxsieve.ingest.embedding import HashingEmbedder
    from ctxsieve.ingest.tokens import load_tokenizer

    return Models(load_tokenizer("o200k_base", CACHE / "tiktoken"), HashingEmbedder(), None)


def open_client(settings: Settings, models: Models | None = None) -> TestClient:
    client = TestClient(create_app(settings, models))
    client.__enter__()
    wait_ready(client)
    return client


def serve_on_loopback(settings: Settings, models: Models | None = None) -> tuple[str, Callable[[], None]]:
    """The real app under uvicorn on 127.0.0.1 (a free port); returns its URL and a stop function."""
    import threading

    import httpx
    import uvicorn

    app = create_app(settings, models)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:  # a loaded machine (CI, two workers loading models) can keep even /readyz waiting for seconds
            if httpx.get(f"{url}/readyz", timeout=60).status_code == 200:
                break
        except httpx.TimeoutException:
            pass
        time.sleep(0.2)
    else:
        server.should_exit = True
        raise AssertionError(f"{url} not ready within 300 s")

    def stop() -> None:
        server.should_exit = True
        thread.join(10)

    return url, stop


@pytest.fixture(scope="session")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("live-data")))
    yield url
    stop()


@pytest.fixture(scope="session")
def stub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real app and store on loopback with the stand-in model: for what runs beside it in other processes."""
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("stub-live")), stub_models())
    yield url
    stop()


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ctxsieve-data")


@pytest.fixture(scope="session")
def stub_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The real app and store with the stand-in model: for HTTP behaviour that does not depend on ranking."""
    c = open_client(make_settings(tmp_path_factory.mktemp("stub-data")), stub_models())
    yield c
    c.__exit__(None, None, None)


@pytest.fixture(scope="session")
def client(data_dir: Path) -> Iterator[TestClient]:
    c = open_client(make_settings(data_dir))
    yield c
    c.__exit__(None, None, None)


@pytest.fixture(scope="session")
def tokenizer():  # type: ignore[no-untyped-def]
    from ctxsieve.ingest.tokens import load_tokenizer

    return load_tokenizer("o200k_base", CACHE / "tiktoken")
