"""Every module of the tree is in the wheel: `pyproject.toml` lists the packages one by one (the folders install
under other names), so a new subpackage left off that list installs a `ctxsieve` that fails at its first import
(`pipx install .` gave `No module named 'ctxsieve.ingest.kinds'`) while the editable checkout works."""

from __future__ import annotations

import zipfile

from tests.service.test_packaging import ROOT, wheel

__all__ = ["wheel"]  # the fixture: the wheel pip builds from the tree

INSTALLED_AS = {"ingest": "ctxsieve/ingest", "indexes": "ctxsieve/indexes", "service": "ctxsieve/service",
                "clients/python/ctxsieve_client": "ctxsieve_client"}


def test_every_module_and_data_file_of_the_tree_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = []
    for folder, installed in INSTALLED_AS.items():
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            name = f"{installed}/{path.relative_to(ROOT / folder).as_posix()}"
            if name not in names:
                missing.append(name)
    assert not missing, f"not in the wheel (add the package to [tool.setuptools] packages): {missing}"
