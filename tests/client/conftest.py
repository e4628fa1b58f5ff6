"""Fixtures of the client's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.installing import Home, Machine, home_with


@pytest.fixture
def home(tmp_path: Path, stub_url: str) -> Home:
    """`home(files, agents, url=stub_url)`: the install tests' one set-up (installing.home_with)."""
    def make(files: dict[str, str], agents: dict[str, Path | None], url: str = stub_url) -> Machine:
        return home_with(tmp_path, url, files, agents)

    return make
