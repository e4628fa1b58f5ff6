"""Coding agents' diffs: does the cut of a `git show` keep the changes of the file its commit message is about,
against the diff's head given exactly the same tokens?

Usage: python -m bench.diffs [--splits dev,held-out] [--repos a,b] [--limit N] [--url URL] [--out FILE]

Cases, built from the bare git dirs of bench.logs' libraries (each at its pinned commit; `fetch github:OWNER/NAME`
lays them), no merge commits, newest first:
- the output: `git show <commit>` as git prints it (the header, the message, the patch: --no-color, renames found),
  kept when it is over the budget in tokens (under it the service passes it whole) and at most MAX_TOKENS;
- the question: the message's first line (the user's request), with the command, by intent.step_intent;
- the file it is about: the one changed file that the first line names, by its path's stem (`more.py`: `more`) or
  by a definition its changes touch (a `def`/`class` name on a changed line or in a hunk's `@@` heading, of 4
  characters or more), each as a whole word; a commit whose first line names no changed file, or two, is left out;
- at most PER_REPO cases per repository.
Facts, judged on the output's lines shown: the file shown (at least one of its changed lines, `+`/`-` in a hunk),
and every changed line of it shown; `fits` is the share of cases whose file's hunks (its `diff --git` block) fit in
the tokens shown at all.

Splits and peers as in bench.logs: a repository is held out when the first byte of sha256(its name) is divisible by
3; ctxsieve through the service as the Claude Code hook sends a Bash output (content_type auto, the Bash call as the
source, k 50, max_tokens 1,500), its tokens as the model receives them; the diff's head, its first lines while they
fit in exactly ctxsieve's tokens for that case. Per repository and pooled, per split.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bench.hooks import machine
from bench.logs import (
    LIBRARIES,
    TOKENS,
    Library,
    Row,
    client_for,
    command_line,
    git_dir,
    origin,
    report,
    sent,
    split_of,
)
from ctxsieve_client import Client
from ctxsieve_client.cutting import PROSE_TOKENS
from ctxsieve_client.intent import step_intent

SPLITS = ("dev", "held-out")
MAX_TOKENS = 20_000
PER_REPO = 30
FACTS = ("file", "every line", "fits")

_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")
_DEFINES = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class DiffCase:
    repo: str
    commit: str
    subject: str
    command: str
    output: str
    path: str  # the file the subject is about
    changed: tuple[int, ...]  # its changed lines (1-based lines of the output)
    block: tuple[int, int]  # its `diff --git` block's first and last line

    @property
    def split(self) -> str:
        return split_of(self.repo)

    @property
    def intent(self) -> str:
        return step_intent(self.subject, None, {"command": self.command}) or ""


@dataclass
class _File:
    path: str
    first: int
    last: int = 0
    changed: list[int] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


def files_of(output: str) -> list[_File]:
    """Each file's `diff --git` block: its lines, its changed lines and the definitions its changes touch."""
    files: list[_File] = []
    in_hunk = False
    for n, line in enumerate(output.split("\n"), 1):
        if match := _FILE.match(line):
            if files:
                files[-1].last = n - 1
            files.append(_File(match.group(2), n))
            in_hunk = False
        elif not files:
            continue
        elif hunk := _HUNK.match(line):
            in_hunk = True
            files[-1].names.update(_DEFINES.findall(hunk.group(1)))
        elif in_hunk and line[:1] in ("+", "-"):
            files[-1].changed.append(n)
            files[-1].names.update(_DEFINES.findall(line))
    if files:
        files[-1].last = output.count("\n") + 1
    return files


def about(subject: str, files: list[_File]) -> _File | None:
    """The one changed file the subject names (its path's stem or a definition its changes touch), else None."""
    words = set(re.findall(r"[A-Za-z_][\w-]*", subject))
    lowered = {w.lower() for w in words}
    hits = [f for f in files if f.changed and (
        len(stem := PurePosixPath(f.path).stem) >= 3 and stem.lower() in lowered
        or any(len(name) >= 4 and name in words for name in f.names))]
    return hits[0] if len(hits) == 1 else None


def _git(library: Library, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir(library)), *args], capture_output=True, text=True,
                          check=True, errors="replace").stdout


def cases(library: Library, budget: int = PROSE_TOKENS) -> Iterator[DiffCase]:
    """The library's commits, newest first, whose `git show` is over `budget` tokens and names one file."""
    found = 0
    for commit in _git(library, "rev-list", "--no-merges", library.commit).split():
        subject = _git(library, "log", "-1", "--format=%s", commit).strip()
        output = _git(library, "-c", "diff.renames=true", "show", "--no-color", "--no-ext-diff", commit
                      ).rstrip("\n")
        if not budget < TOKENS.count(output) <= MAX_TOKENS:
            continue
        target = about(subject, files_of(output))
        if target is None:
            continue
        yield DiffCase(library.repo, commit, subject, f"git show {commit[:12]}", output, target.path,
                       tuple(target.changed), (target.first, target.last))
        found += 1
        if found >= PER_REPO:
            return


def head(text: str, budget: int) -> tuple[str, set[int]]:
    """The output's first lines while they fit in `budget` tokens (each with its newline)."""
    lines = text.split("\n")
    used, count = 0, 0
    while count < len(lines) and used + (cost := TOKENS.count(lines[count] + "\n")) <= budget:
        used += cost
        count += 1
    return "\n".join(lines[:count]), set(range(1, count + 1))


def judged(case: DiffCase, shown: set[int], tokens: int) -> dict[str, bool]:
    lines = case.output.split("\n")
    block = "\n".join(lines[case.block[0] - 1:case.block[1]])
    return {"file": any(n in shown for n in case.changed), "every line": all(n in shown for n in case.changed),
            "fits": TOKENS.count(block) <= tokens}


def measure(split: str, client: Client | None = None, repos: Iterable[str] = (), limit: int | None = None
            ) -> list[Row]:
    """Per case of `split`: ctxsieve's row and the diff head's at ctxsieve's tokens (a scratch service when no
    client is given)."""
    wanted = set(repos)
    chosen = [c for library in LIBRARIES if split_of(library.repo) == split and (not wanted or library.repo in wanted)
              for c in cases(library)][:limit]
    if client is None:
        with client_for("") as scratch:
            return measure(split, scratch, repos, limit)
    rows = []
    for case in chosen:
        _, text, shown, ms = sent(client, case.output, case.intent, case.command)
        tokens = TOKENS.count(text)
        rows.append(Row("diff", case.repo, split, "ctxsieve", case.commit[:12], judged(case, shown, tokens), tokens,
                        ms, {"diff tokens": TOKENS.count(case.output)}))
        base_text, base_shown = head(case.output, tokens)
        rows.append(Row("diff", case.repo, split, "diff head", case.commit[:12], judged(case, base_shown, tokens),
                        TOKENS.count(base_text)))
    return rows


def describe(split: str, rows: list[Row]) -> Iterator[str]:
    cases = [r for r in rows if r.peer == "ctxsieve"]
    if cases:
        per_repo = ", ".join(f"{repo} {sum(r.repo == repo for r in cases)}" for repo in sorted({r.repo for r in cases}))
        yield (f"{split}: {len(cases)} git show outputs ({per_repo}); output tokens median "
               f"{statistics.median(r.extra['diff tokens'] for r in cases):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--repos", default="")
    parser.add_argument("--limit", type=int, default=None, help="at most N cases per split")
    parser.add_argument("--url", default="", help="a running service instead of a scratch one")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    repos = [r for r in args.repos.split(",") if r]
    lines = [command_line("bench.diffs"), f"machine: {machine()}", origin()]
    print("\n".join(lines), flush=True)
    with client_for(args.url) as client:
        for split in [s for s in args.splits.split(",") if s]:
            rows = measure(split, client, repos, args.limit)
            for line in [*describe(split, rows), *report(rows, FACTS)]:
                print(line, flush=True)
                lines.append(line)
    lines.append(f"after: {machine()}")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
