"""A repository's history as the index reads it: the commits behind HEAD with the files each changed, relative to
the folder indexed, whatever bytes their messages hold."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ctxsieve.indexes.repos.index import sync_history
from ctxsieve.indexes.repos.memory import RepoMemory
from ctxsieve.indexes.repos.walk import history_of


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env).stdout.decode()


def test_commits_with_their_files_relative_to_the_folder_indexed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "app" / "core").mkdir(parents=True)
    (root / "docs").mkdir()
    git(root, "init", "-q")
    (root / "app" / "core" / "dates.py").write_text("def parse():\n    pass\n")
    (root / "docs" / "index.md").write_text("# docs\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add the date parser\n\nand its docs")
    (root / "docs" / "index.md").write_text("# the docs\n")
    git(root, "commit", "-qam", "Reword the docs")
    (root / "app" / "core" / "dates.py").write_text("def parse(text):\n    pass\n")
    git(root, "add", "-A")
    (root / "msg").write_bytes(b"Fix the parser for caf\xe9 input\n")  # a Latin-1 message, as old repositories have
    git(root, "commit", "-q", "-F", str(root / "msg"))

    whole = history_of(root)
    assert [c.files for c in whole] == [("app/core/dates.py",), ("docs/index.md",),
                                        ("app/core/dates.py", "docs/index.md")], "newest first, paths from the root"
    assert whole[0].message.startswith("Fix the parser for caf") and whole[0].message.endswith(" input\n")
    assert whole[2].message == "Add the date parser\n\nand its docs\n"
    inner = history_of(root / "app")
    assert [c.files for c in inner] == [("core/dates.py",), (), ("core/dates.py",)], "as the folder's index names them"
    assert history_of(root, depth=1) == whole[:1]
    assert history_of(tmp_path / "elsewhere") == [] and history_of(tmp_path) == []


def test_the_history_is_read_again_when_head_moves(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    memory = RepoMemory()
    git(root, "init", "-q")
    assert sync_history(memory, root) is None and memory.history_head is None, "no commit yet"
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    first = sync_history(memory, root)
    assert first == git(root, "rev-parse", "HEAD").strip() == memory.history_head
    git(root, "commit", "-q", "--allow-empty", "-m", "second")
    assert sync_history(memory, root) == memory.history_head != first
