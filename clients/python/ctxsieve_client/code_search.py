"""`search_code` as every surface offers it: which repository (the one around the agent's working folder unless
named, indexed by the service on first use), and the hits as the model reads them: each definition under its path,
qualified name and true line span, every line after its number, and for a definition the budget cut, the lines not
shown and how to read them."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .calls import Call, Requests
from .models import CodeSearchResult
from .rendering import numbered_line

__all__ = ["NOTE", "TOOL_MAX_TOKENS", "Caveats", "ShownHit", "closing_line", "folder_name", "hit_head", "render_answer",
           "render_hits", "repo_around", "rest_line", "search_request"]

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


def in_git_repository(folder: Path) -> bool:
    return _git_root(folder) is not None


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
    budget, k = args.get("max_tokens"), args.get("k")  # (0 or less is sent as it is: the service refuses it, saying
    options: dict[str, Any] = {"k": 10 if k is None else k, "path": args.get("path"),  # why; a trial's k=0 was 10)
                               "max_tokens": min(int(budget), TOOL_MAX_TOKENS) if budget is not None else None}
    if args.get("repo"):
        return Requests.search_code(str(args["repo"]), str(args["query"]), **options)
    here = folder or Path.cwd()
    root = _git_root(here)
    if root is None:
        return Requests.search_code(folder_name(here.resolve()), str(args["query"]), **options)
    return Requests.search_code(folder_name(root), str(args["query"]), folder=str(root), **options)


class ShownHit(Protocol):
    """A hit as it is shown: the client's `CodeHit`, or the service's result it packs within the budget."""

    @property
    def path(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def within(self) -> str: ...
    @property
    def shown_end_line(self) -> int: ...
    @property
    def shown_start_line(self) -> int: ...
    @property
    def whole(self) -> bool: ...
    @property
    def matched_lines(self) -> Sequence[int]: ...


@dataclass(frozen=True)
class Caveats:
    """What the search could not do as asked, said in the answer's closing line."""

    undefined: Sequence[str] = ()  # names alone asked for that no definition has
    by_meaning: bool = False  # no definition has a word or name of the request: the nearest by meaning alone
    missing: Sequence[str] = ()  # files or places asked for alone that the repository has nothing at
    elsewhere: Sequence[str] = ()  # a trace's frames whose line is not in the definition they name (another version)
    vectors_off: bool = False  # the service makes no vectors (`repo_vectors` off): `lexical` is final, not a wait
    foreign_words: bool = False  # words in Chinese, Japanese or Korean no definition holds (the code's are English)
    outside_path: Sequence[str] = ()  # of `undefined`, the names a definition outside the files `path` matches has
    listing: bool = False  # a request of file paths alone: their definitions in the files' order, not ranked
    between: Sequence[str] = ()  # places asked for alone whose line is in no definition: the nearest shown
    absent: Sequence[str] = ()  # words of a short search no definition holds in any form


def render_hits(result: CodeSearchResult) -> str:
    """Each hit as the model reads it, then a line naming the repository (and saying it is still being indexed)."""
    return render_answer(result.repo, result.results, result.usage.chunks_total, result.state,
                         Caveats(undefined=result.undefined, by_meaning=result.by_meaning, missing=result.missing,
                                 elsewhere=result.elsewhere, vectors_off=result.vectors_off,
                                 foreign_words=result.foreign_words, outside_path=result.outside_path,
                                 listing=result.listing, between=result.between, absent=result.absent))


def render_answer(repo: str, hits: Sequence[ShownHit], found: int, state: str, caveats: Caveats = Caveats()) -> str:
    """The answer as every surface shows it: the service packs the hits so that all of it is within the budget."""
    if not hits and found:
        return (f"{NOTE}{found} definition{'' if found == 1 else 's'} of repository {repo} found, none of which fits "
                "in the token budget: search with a larger max_tokens]")
    if not hits:
        nothing = f"; its indexed source has nothing at {_listed(caveats.missing)}" if caveats.missing else ""
        if state == "indexing":  # (a search just after a start, while the service loads what it holds: "no
            return (f"{NOTE}no definition of repository {repo} matches yet{nothing}: the repository is still being "
                    "indexed (or loaded after a start), files not yet read are missing: search again shortly]")
        unread = f"; {_unread(state, caveats)}" if caveats.foreign_words else ""  # (a question in Chinese alone)
        return (f"{NOTE}no definition of repository {repo} matches{nothing}{unread}; try other words, a name "
                "as it is written in the code, or a wider path if one was given]")  # (no definition matches" sent
        # the agent to other words)
    closing = closing_line(repo, len(hits), found - len(hits), state, caveats)
    return "\n\n".join([*(_hit(h) for h in hits), closing])


def closing_line(repo: str, shown: int, left: int, state: str, caveats: Caveats = Caveats()) -> str:
    """The answer's last line: how many are shown, how many more were found, what the search could not do."""
    order = "in their files' order" if caveats.listing else "best first"
    note = f"{NOTE}{shown} definition{'' if shown == 1 else 's'} of repository {repo}, {order}"
    if caveats.by_meaning:
        note += ("; none has a word or name of the request but the project's own name, if any: these are the "
                 "nearest by meaning alone, less sure (a "
                 "name or words as the code writes them find more)")
    if caveats.absent and not caveats.by_meaning:
        note += (f"; no definition holds the word{'' if len(caveats.absent) == 1 else 's'} "
                 f"{_listed(caveats.absent)}: these are the nearest the search found")
    if caveats.foreign_words:
        note += f"; {_unread(state, caveats)}"
    nowhere = [name for name in caveats.undefined if name not in caveats.outside_path]
    if nowhere:
        note += f"; no definition is named {_listed(nowhere)}: these are the nearest the search found"
    if caveats.outside_path:
        note += (f"; no definition in the files the path matches is named {_listed(caveats.outside_path)}, one "
                 "outside them is: search without the path to see it")
    if caveats.missing:
        note += (f"; its indexed source has nothing at {_listed(caveats.missing)}: these are the nearest the search "
                 "found")
    if caveats.between:
        note += (f"; {_listed(caveats.between)} {'is' if len(caveats.between) == 1 else 'are'} in no definition (a "
                 "blank line or a comment outside them): the nearest definitions are shown")
    if caveats.elsewhere:
        note += ("; a frame names a definition its line is not in here (the trace may come from another version of "
                 f"the file), the definition shown at its own lines: {_listed(caveats.elsewhere)}")
    if left > 0 and caveats.listing:  # (k and max_tokens have their most: a 448-definition file is read past them)
        note += (f"; {left} more found {_are(left)} not shown, after the last one shown: read on from its last line, "
                 "or search with a larger max_tokens or k")
    elif left > 0:  # (at a tool's most, k 50 and max_tokens 6000, a larger one is refused: a path or other words)
        from .names import MAX_K  # (names reads the ref tools, which read this module)

        note += (f"; {left} more found {_are(left)} not shown: a larger max_tokens or k shows more (an agent's tool "
                 f"takes up to {TOOL_MAX_TOKENS} and {MAX_K}), and so do a path or other words")
    if state == "indexing":
        note += "; the repository is still being indexed: files not yet read are missing, search again shortly"
    elif state == "lexical":  # (a search in plain words gains most from the vectors; a name looked up, nothing)
        why = "this service makes no vectors" if caveats.vectors_off else "its vectors not ready"
        note += f"; ranked by words and names alone, {why}: a name as the code writes it finds the most"
    return note + "]"


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


def _unread(state: str, caveats: Caveats) -> str:
    """What became of a request's words in Chinese, Japanese or Korean that no definition holds."""
    return ("its words in Chinese, Japanese or Korean are in no definition: "
            + ("they only re-rank by meaning what its other words found" if state == "ready"
               else "not read until the repository's vectors are made" if not caveats.vectors_off
               else "not read (this service makes no vectors)")
            + "; the code's own names and English words find more")


LISTED = 3  # names or places a closing line lists: a query of forty paths gets three and the count of the rest


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown if len(items) <= LISTED else f"{shown} and {len(items) - LISTED} more"


def hit_head(path: str, start_line: int, end_line: int, kind: str, name: str, within: str = "") -> str:
    """A hit's first line: where it is, its kind and qualified name (and the Rust trait impl it is in)."""
    return f"{path}:{start_line}-{end_line} {kind} {name}" + (f" (in {within})" if within else "")


def rest_line(path: str, first: int, last: int, matched: Sequence[int] = ()) -> str:
    """A cut hit's line saying which lines are not shown and how to read them, and where among them the request's
    words are most (`matched`: those of its lines in first-last)."""
    at = [line for line in matched if first <= line <= last]
    where = f" (the request's words most at lines {', '.join(map(str, at))})" if at else ""
    return f"⋮ lines {first}-{last} not shown: read {path} lines {first}-{last}{where}"


def _hit(hit: ShownHit) -> str:
    """A hit under its head line, its lines after their numbers; a cut one says how to read the lines not shown
    (all of it where not even its first line fitted), above its lines when it is shown around a place."""
    first = max(hit.shown_start_line, hit.start_line)
    lines = hit.text.split("\n")[:max(0, hit.shown_end_line - first + 1)]
    shown = "".join(f"\n{numbered_line(first + i, line)}" for i, line in enumerate(lines))
    head = hit_head(hit.path, hit.start_line, hit.end_line, hit.kind, hit.name, hit.within)
    above = f"\n{rest_line(hit.path, hit.start_line, first - 1, hit.matched_lines)}" if first > hit.start_line else ""
    below = f"\n{rest_line(hit.path, hit.shown_end_line + 1, hit.end_line, hit.matched_lines)}" \
        if hit.shown_end_line < hit.end_line else ""
    return f"{head}{above}{shown}{below}"
