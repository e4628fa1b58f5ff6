"""One namespace: everything installs under `ctxsieve.*` (and the light client's `ctxsieve_client`, which the
wheel carries so that `pip install .`, `pipx install .` or `uv tool install .` gives every command); nothing generic
(`service`, `indexes`, `ingest`) lands at the top level of a user's environment, and the package data and the entry
points come along."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERIC = ("service", "indexes", "ingest")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """What `pip install .` installs: the wheel pip builds from the tree (a copy: the build leaves build/ behind)."""
    tree, out = tmp_path_factory.mktemp("tree"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    for folder in (*GENERIC, "clients/python/ctxsieve_client"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(tree)], check=True, capture_output=True)
    (built,) = out.glob("ctxsieve-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_only_the_ctxsieve_namespace(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    assert tops == {"ctxsieve", "ctxsieve_client", "ctxsieve-0.1.0.dist-info"}
    names = set(wheel.namelist())
    assert {"ctxsieve/service/app.py", "ctxsieve/indexes/store/edge.py", "ctxsieve/ingest/chunking.py",
            "ctxsieve/service/static/inspector.html", "ctxsieve_client/hooks/cli.py", "ctxsieve_client/mcp_server.py",
            "ctxsieve_client/proxy/server.py", "ctxsieve_client/setup/install.py",
            "ctxsieve_client/dialects/chat.py"} <= names, "the core's compaction imports the dialects from the client"
    assert "ctxsieve/__init__.py" not in names, "ctxsieve is a namespace package"
    entry_points = wheel.read("ctxsieve-0.1.0.dist-info/entry_points.txt").decode()
    for command in ("ctxsieve = ctxsieve.service.cli:main", "ctxsieve-hook =", "ctxsieve-mcp =", "ctxsieve-proxy =",
                    "ctxsieve-gateway ="):
        assert command in entry_points, command
    capture = wheel.getinfo("ctxsieve_client/hooks/capture.sh")
    assert capture.external_attr >> 16 & 0o111, "the capture script the hook install copies stays executable"


def test_the_installed_environment_imports_no_generic_top_level_name(tmp_path: Path) -> None:
    """Run isolated from the checkout (-I: no cwd on the path), as a user's program would."""
    probe = ("import importlib.util as u, ctxsieve.service.app, ctxsieve.indexes.store, ctxsieve.ingest.tokens;"
             f"print([n for n in {GENERIC!r} if u.find_spec(n) is not None])")
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
