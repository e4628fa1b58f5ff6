"""Fixtures of the client's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.failing_runs import Run, make_runs
from tests.client.installing import Home, Machine, home_with


@pytest.fixture
def home(tmp_path: Path, stub_url: str) -> Home:
    """`home(files, agents, url=stub_url)`: the install tests' one set-up (installing.home_with)."""
    def make(files: dict[str, str], agents: dict[str, Path | None], url: str = stub_url) -> Machine:
        return home_with(tmp_path, url, files, agents)

    return make


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Run]]:
    """Failing runs with 1, 8, 30 and 100 failing tests and a 50-error build (failing_runs.py), made once a session:
    every surface's test of them reads the same outputs."""
    root = tmp_path_factory.mktemp("billing")
    return root, make_runs(root)
