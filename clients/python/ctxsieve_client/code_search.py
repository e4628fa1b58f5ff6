"""`search_code` as every surface offers it: which repository (the one around the agent's working folder unless
named), indexed on first use, and the hits rendered as the model reads them: each definition under its path,
qualified name and true line span, every line after its number, and for a definition the budget cut, the lines not
shown and how to read them."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .client import Client
from .errors import CtxsieveError
from .models import CodeHit, CodeSearchResult, RepoInfo

__all__ = ["FIRST_INDEX_WAIT_S", "RepoTarget", "ensure_indexed", "render_hits", "repo_around", "search_code"]

FIRST_INDEX_WAIT_S = 20.0  # a first search waits this long for the first index, then answers from what is indexed
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


@dataclass(frozen=True)
class RepoTarget:
    name: str
    path: Path | None  # None: a repository named by the caller, registered already


def repo_around(folder: Path) -> RepoTarget:
    """The git repository around `folder` (else the folder itself), named as its folder is, made URL-safe."""
    root = _git_root(folder) or folder.resolve()
    name = _UNSAFE.sub("-", root.name).strip("-.")[:64] or "repo"
    return RepoTarget(name, root)


def _git_root(folder: Path) -> Path | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def ensure_indexed(client: Client, target: RepoTarget, wait_s: float = FIRST_INDEX_WAIT_S) -> RepoInfo:
    """The repository's state; one not yet known is registered (with its folder) and waited for up to `wait_s`."""
    try:
        return client.repo(target.name)
    except CtxsieveError as exc:
        if exc.status != 404 or target.path is None:
            raise
    info = client.index_repo(target.name, str(target.path))
    deadline = time.monotonic() + wait_s
    while info.state == "indexing" and time.monotonic() < deadline:
        time.sleep(0.25)
        info = client.repo(target.name)
    return info


def search_code(client: Client, query: str, *, repo: str | None = None, folder: Path | None = None, k: int = 10,
                path: str | None = None, max_tokens: int | None = None) -> str:
    """What a surface answers: the repository named, or the one around `folder` (indexed on first use)."""
    target = RepoTarget(repo, None) if repo else repo_around(folder or Path.cwd())
    ensure_indexed(client, target)
    result = client.search_code(target.name, query, k=k, path=path, max_tokens=max_tokens)
    return render_hits(target.name, query, result)


def render_hits(repo: str, query: str, result: CodeSearchResult) -> str:
    """Each hit as the model reads it; a line saying the repository's state where it is still being indexed."""
    if not result.results:
        return (f"[ctxsieve search_code: no definition of repository {repo} matches {query!r}; try other words, "
                "a name as it is written in the code, or a wider path]")
    blocks = [_hit(h) for h in result.results]
    note = f"[ctxsieve search_code: {len(result.results)} definitions of repository {repo}, best first"
    if result.state == "indexing":
        note += "; the repository is still being indexed: files not yet read are missing, search again shortly"
    return "\n\n".join([*blocks, note + "]"])


def _hit(hit: CodeHit) -> str:
    lines = hit.text.split("\n")
    numbered = "\n".join(f"{hit.start_line + i}│{line}" for i, line in enumerate(lines))
    head = f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.kind} {hit.name}"
    if hit.whole:
        return f"{head}\n{numbered}"
    rest = f"{hit.shown_end_line + 1}-{hit.end_line}"
    return f"{head}\n{numbered}\n⋮ lines {rest} not shown: read {hit.path} lines {rest}"
