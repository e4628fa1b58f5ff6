"""bench.units_parse over a snapshot made here: a C# file the grammar misreads as written and reads whole as the
units reader gives it, a Python file it reads either way, a text file it does not parse."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import localize_data
from bench.units_parse import measure

READER = "\n".join([
    "class Reader", "{", "    bool Has(object v)", "    {", "        if (v == null)", "        {",
    "            return false;", "        }", "#if HAVE_DB", "        else if (v == DBNull.Value)", "        {",
    "            return false;", "        }", "#endif", "        else", "        {", "            return true;",
    "        }", "    }", "}", ""])


def test_files_misread_as_written_and_as_read_per_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "Reader.cs").write_text(READER, encoding="utf-8")
    (work / "tool.py").write_text("def run():\n    return 1\n", encoding="utf-8")
    (work / "notes.txt").write_text("not code\n", encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)
    snapshot = tmp_path / "mirror" / "owner+name" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(snapshot)], check=True)
    monkeypatch.setattr(localize_data, "MIRROR", tmp_path / "mirror")

    rows = measure("owner/name")

    assert set(rows) == {"csharp", "python"}, rows
    files, written, read, units = rows["csharp"]
    assert (files, written, read) == (1, 1, 0) and units >= 2, rows
    assert rows["python"][:3] == [1, 0, 0], rows
