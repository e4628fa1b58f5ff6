"""`search_code` as every surface offers it: which repository (the one around the agent's working folder unless
named, indexed by the service on first use), and the hits as the model reads them: each definition under its path,
qualified name and true line span, every line after its number, and for a definition the budget cut, the lines not
shown and how to read them."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .calls import Call, Requests
from .models import CodeHit, CodeSearchResult

__all__ = ["NOTE", "TOOL_MAX_TOKENS", "folder_name", "render_hits", "repo_around", "search_request"]

NOTE = "[ctxsieve search_code: "  # the answer's closing line begins so (how a hook or proxy knows it)
# a tool's answer at most (an agent's `max_tokens`): inside the smallest per-result limit of the agents served, Codex's
# 10,000 tokens of 4 bytes (fitting.CODEX_CALL), with room for the lines' numbers and headings
TOOL_MAX_TOKENS = 6000

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def repo_around(folder: Path) -> tuple[str, Path]:
    """The git repository around `folder` (else the folder itself), and its name: its folder's, made URL-safe."""
    root = _git_root(folder) or folder.resolve()
    return folder_name(root), root


def folder_name(folder: Path) -> str:
    """A folder's name as a repository's: URL-safe, at most 64 characters."""
    return _UNSAFE.sub("-", folder.name).strip("-.")[:64] or "repo"


def _git_root(folder: Path) -> Path | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def search_request(args: Mapping[str, Any], folder: Path | None = None) -> Call[CodeSearchResult]:
    """The call for `search_code(query, k, path, repo, max_tokens)`: the repository named, else the git repository
    around `folder` (the working folder), sent with its folder so that the service indexes it on first use. A folder
    in no git repository is searched as the repository of its name, never indexed unasked (an agent started in a
    home folder would index all of it): the service's 404 says how to index it."""
    budget = args.get("max_tokens")  # (0 or less is sent as it is: the service refuses it, saying why)
    options: dict[str, Any] = {"k": args.get("k") or 10, "path": args.get("path"),
                               "max_tokens": min(int(budget), TOOL_MAX_TOKENS) if budget is not None else None}
    if args.get("repo"):
        return Requests.search_code(str(args["repo"]), str(args["query"]), **options)
    here = folder or Path.cwd()
    root = _git_root(here)
    if root is None:
        return Requests.search_code(folder_name(here.resolve()), str(args["query"]), **options)
    return Requests.search_code(folder_name(root), str(args["query"]), folder=str(root), **options)


def render_hits(result: CodeSearchResult) -> str:
    """Each hit as the model reads it, then a line naming the repository (and saying it is still being indexed)."""
    if not result.results:
        return (f"{NOTE}no definition of repository {result.repo} matches; try other words, a name "
                "as it is written in the code, or a wider path]")
    shown = len(result.results)
    note = f"{NOTE}{shown} definition{'' if shown == 1 else 's'} of repository {result.repo}, best first"
    if result.by_meaning:
        note += ("; none has a word or name of the request: these are the nearest by meaning alone, less sure (a "
                 "name or words as the code writes them find more)")
    if result.undefined:
        note += f"; no definition is named {', '.join(result.undefined)}: these are the nearest the search found"
    left = result.usage.chunks_total - len(result.results)
    if left > 0:
        note += f"; {left} more found did not fit in the token budget: search with a larger max_tokens"
    if result.state == "indexing":
        note += "; the repository is still being indexed: files not yet read are missing, search again shortly"
    return "\n\n".join([*(_hit(h) for h in result.results), note + "]"])


def _hit(hit: CodeHit) -> str:
    lines = hit.text.split("\n")
    numbered = "\n".join(f"{hit.start_line + i}│{line}" for i, line in enumerate(lines))
    head = f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.kind} {hit.name}"
    if hit.whole:
        return f"{head}\n{numbered}"
    rest = f"{hit.shown_end_line + 1}-{hit.end_line}"
    return f"{head}\n{numbered}\n⋮ lines {rest} not shown: read {hit.path} lines {rest}"
