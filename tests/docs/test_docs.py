"""The docs stay true to the code they describe: the HTTP reference names exactly the routes the app serves, the
settings page exactly the settings class's fields, the layout page every module; and no link in the README, the
docs or the measurements leaves the repository or points at a file that is not there. (`make docs` builds the site
with --strict for the links between pages, their anchors and the nav.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ctxsieve.service.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ROUTE = re.compile(r"^#{2,4} `(GET|POST|PUT|DELETE|PATCH) (/\S*)`$", re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# Code search's routes are in the contract and on the reference page while the lead lands them in the app: until the
# app serves any /v1/repos route, the page may name them unserved. Once one is served, both sides must agree.
BEING_BUILT = "/v1/repos"


def _documented() -> set[tuple[str, str]]:
    return {(method.lower(), path) for method, path in ROUTE.findall((DOCS / "reference" / "http.md").read_text())}


def test_the_reference_names_every_served_route_and_only_those(stub_client: TestClient) -> None:
    spec: dict[str, Any] = stub_client.get("/openapi.json").json()
    served = {(method, path) for path, ops in spec["paths"].items() for method in ops}
    documented = _documented()
    assert served - documented == set(), "served but not in docs/reference/http.md"
    unserved = documented - served
    if not any(path.startswith(BEING_BUILT) for _, path in served):
        unserved = {(m, p) for m, p in unserved if not p.startswith(BEING_BUILT)}
    assert unserved == set(), "in docs/reference/http.md but not served"


def test_the_settings_page_names_every_setting_and_only_those() -> None:
    table = (DOCS / "settings.md").read_text().split("## The surfaces' own variables")[0]
    named = set(re.findall(r"^\| `(CTXSIEVE_[A-Z0-9_]+)`", table, re.M))
    named |= {"CTXSIEVE_TAVILY_API_KEY"} if "`TAVILY_API_KEY` (or `CTXSIEVE_TAVILY_API_KEY`)" in table else set()
    fields = {f"CTXSIEVE_{name.upper()}" for name in Settings.model_fields}
    assert named == fields


def _modules() -> list[tuple[str, str]]:
    """(package folder, module name) for every module of the four packages."""
    packages = {"ingest": ROOT / "ingest", "indexes": ROOT / "indexes", "service": ROOT / "service",
                "ctxsieve_client": ROOT / "clients" / "python" / "ctxsieve_client"}
    return [(package, path.relative_to(folder).with_suffix("").as_posix())
            for package, folder in packages.items() for path in sorted(folder.rglob("*.py"))
            if path.stem != "__init__"]


def test_the_layout_page_names_every_module() -> None:
    layout = (DOCS / "layout.md").read_text()
    missing = [f"{package}/{module}" for package, module in _modules()
               if f"`{module.rsplit('/', 1)[-1]}`" not in layout]
    assert missing == [], "add them to docs/layout.md"


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_stays_in_the_repository_and_finds_its_file(page: Path) -> None:
    broken = []
    for url in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", url) or url.startswith("#"):
            continue
        target = (page.parent / url.split("#", 1)[0]).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            broken.append(url)
    assert broken == []
