"""Coding agents' test logs: does the cut of a failing `pytest -v` run keep every failing test, its assertion line
and the summary, against the log's tail given exactly the same tokens?

Usage: python -m bench.logs [--splits dev,held-out] [--repos a,b] [--limit N] [--url URL] [--out FILE]
       python -m bench.logs --rebuild [--repos a,b]   (runs the suites again: an hour on a busy 2-core machine)

Runs, built once into ~/.cache/ctxsieve/bench/logs (a JSONL file per library; the bench reads them):
- libraries (LIBRARIES): small pure-Python libraries whose suites run here, each at a pinned commit of its public
  repository (the newest its mirror held when the runs were built: `fetch github:OWNER/NAME` lays the mirror); the
  suites run with pytest 9.2.0 in a venv of their own beside the cache (PINS), `-p no:cacheprovider
  --hypothesis-seed=0`, 80 columns, as a pipe shows them. A test that fails on the unchanged library here is
  deselected (attrs: 5, its packaging metadata and an annotation), a test module that cannot be collected here is
  ignored (click's test_deprecations: it reads installed metadata); the Bash call's command is `python -m pytest -v
  tests`;
- injected bugs: one token of the library's own source changed (a comparison flipped, `+` and `-` swapped, `and`
  and `or` swapped, True and False swapped, an integer made one larger), the sites of every file in one list in
  file and token order shuffled by random.Random(the repository's name); tried in that order, a mutation is kept
  when its run ends in failures only (no error, no interruption, no timeout) with 1 to MAX_FAILURES failed tests,
  until RUNS_PER_LIBRARY are kept or MAX_TRIES were tried (markupsafe has 23 sites in all);
- per run: the log (stdout), the failing test ids (the summary's `FAILED id` lines), per failure the line of its
  first `E   ` line in the FAILURES section (its exception as pytest prints it, the assertion line), and the line of
  the final `=== N failed, ... in Xs ===` summary.
Facts, judged on what the model is sent: every failing test named (its id, or its name as pytest heads its failure
section, `Class.test_x[param]`, on a shown line or a snippet's heading), every failure's assertion line shown (its
line number among the lines shown), the summary line shown; `target` is the first two together (issue 37: >= 0.95).

Splits: a library is held out when the first byte of sha256(its repository's name) is divisible by 3 (bench.grep's
odd rule would hold out all six): attrs, tenacity and boltons are held out; more-itertools, markupsafe and
click are dev. pytest-dev/pluggy is not used (pytest itself runs on it), nor pallets/itsdangerous (most of its tests
need freezegun) and pyparsing (99 s a run).

Peers, per run, at the same tokens: ctxsieve through the service as the Claude Code hook sends a Bash output
(cutting.cut_request: content_type auto, the Bash call as the source, k 50, max_tokens 1,500, fast mode, the
`tools` placeholder; the intent by intent.step_intent from the user's request below and the command), its tokens
counted as the model receives them (o200k_base of the snippets as ctxsieve_client.wrap renders a line kind: each
under its `── lines A-B ──` heading, joined by the separator; the placeholder, which any cut needs, left out of
both; a cut the hook would not use, no shorter than the log, counted as the whole log), with the call's latency;
and the log's tail: its last lines while they fit in exactly ctxsieve's tokens for that run, each with its newline.
Per repository and pooled, per split, with the tokens' median; then each run ctxsieve misses. The ctxsieve measured
is the one this Python imports (the report's third line says which: PYTHONPATH may point at a clean export), the
scratch service started with the same environment. In Claude Code a command that exits non-zero fires
PostToolUseFailure, whose request differs (content_type log, 1,000 tokens, beside Claude Code's own error): this
bench measures a log as PostToolUse cuts it (`cat` of a saved log, a run piped through `tee`, any exit 0).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import tokenize
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.hooks import machine
from bench.loadtest import service_url
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.cutting import CutOptions, cut_request, cut_text
from ctxsieve_client.intent import step_intent
from ctxsieve_client.models import FilterResult, Snippet
from ctxsieve_client.rendering import SEPARATOR, View, snippet

CACHE = Path.home() / ".cache" / "ctxsieve" / "bench" / "logs"
MIRROR = Path("/work/.mirror")  # where the search tool's `fetch` lays each repository's bare git dir
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")
SPLITS = ("dev", "held-out")
PINS = ("pytest==9.2.0", "hypothesis==6.170.17", "cloudpickle==3.1.3", "pympler==1.1", "tornado==6.6.1",
        "typeguard==4.6.1")
COMMAND = "python -m pytest -v tests"  # the Bash call as the agent types it
RUN_FLAGS = ("-p", "no:cacheprovider", "--hypothesis-seed=0")  # this machine's, not shown as the agent's command
REQUEST = "The test suite fails since my last change to the library: which tests fail, and why?"
RUNS_PER_LIBRARY = 16
MAX_TRIES = 40
MAX_FAILURES = 40
FACTS = ("named", "assertions", "summary", "target")


@dataclass(frozen=True)
class Library:
    repo: str
    commit: str  # the newest commit the mirror held when the runs were built
    sources: tuple[str, ...]  # the library's own package folders (mutated)
    pythonpath: str = "."

    @property
    def name(self) -> str:
        return self.repo.replace("/", "+")


LIBRARIES = (
    Library("more-itertools/more-itertools", "2fe1b2eeb9d75f994113fe3ac76d14b6bcd6fb10", ("more_itertools",)),
    Library("pallets/markupsafe", "1251593f6b0e3b45f2cc8aba662622bc22d6a5e2", ("src/markupsafe",), "src"),
    Library("pallets/click", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", ("src/click",), "src"),
    Library("python-attrs/attrs", "c1dc5dcba16ed827aa6dcad896b41a3afedb4e32", ("src/attr", "src/attrs"), "src"),
    Library("jd/tenacity", "c650fb45204635f07910948d5fc59a8c551ffdda", ("tenacity",)),
    Library("mahmoud/boltons", "967864f89791509f9eb36b22b4579d36b72a6df2", ("boltons",)),
)


@dataclass(frozen=True)
class LogRun:
    repo: str
    commit: str
    mutation: str  # path:line: the token before -> after
    command: str
    log: str
    failing: tuple[str, ...]
    assertions: tuple[int, ...]  # per failing test, the 1-based line of its first `E   ` line (0: none found)
    summary: int  # the 1-based line of the final summary

    @property
    def split(self) -> str:
        return split_of(self.repo)

    @property
    def intent(self) -> str:
        return step_intent(REQUEST, None, {"command": self.command}) or ""


@dataclass(frozen=True)
class Row:
    """One case and one peer: what a later bench.kinds pools across kinds."""

    kind: str
    repo: str
    split: str
    peer: str
    case: str
    facts: dict[str, bool]
    tokens: int
    ms: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


def split_of(repo: str) -> str:
    return "held-out" if hashlib.sha256(repo.encode()).digest()[0] % 3 == 0 else "dev"


# --- building the runs ---------------------------------------------------------------------------------------

_REPLACE = {"==": "!=", "!=": "==", "<": ">=", ">": "<=", "<=": ">", ">=": "<", "+": "-", "-": "+",
            "and": "or", "or": "and", "True": "False", "False": "True"}
_SUMMARY = re.compile(r"^=+ (.*\bin [0-9.]+s.*) =+$")
_COUNTS = re.compile(r"(\d+) (failed|passed|errors?|skipped|deselected|xfailed|xpassed)\b")


@dataclass(frozen=True)
class Site:
    path: str
    line: int  # 1-based
    col: int
    before: str
    after: str


def sites(root: Path, library: Library) -> list[Site]:
    """Every token of the library's source a mutation may change, in file and token order."""
    found = []
    for folder in library.sources:
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                after = _REPLACE.get(token.string) if token.type in (tokenize.OP, tokenize.NAME) else None
                if token.type == tokenize.NUMBER and token.string.isdigit():
                    after = str(int(token.string) + 1)
                if after is not None:
                    found.append(Site(str(path.relative_to(root)), token.start[0], token.start[1], token.string,
                                      after))
    return found


def mutated(text: str, site: Site) -> str:
    lines = text.split("\n")
    line = lines[site.line - 1]
    lines[site.line - 1] = line[:site.col] + site.after + line[site.col + len(site.before):]
    return "\n".join(lines)


def _venv() -> Path:
    python = CACHE / "venv" / "bin" / "python"
    if not python.exists():
        base = Path(getattr(sys, "_base_executable", sys.executable))
        subprocess.run([str(base), "-m", "venv", str(CACHE / "venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *PINS], check=True)
    return python


def git_dir(library: Library) -> Path:
    """The library's bare git dir (the search tool's `fetch github:OWNER/NAME` lays it there)."""
    return MIRROR / library.name / "repo"


def _tree(library: Library) -> tuple[Path, str]:
    """The library at its pinned commit, laid anew under the cache; and that commit."""
    git, commit = git_dir(library), library.commit
    root = CACHE / "trees" / library.name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(git), "archive", commit], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(root, filter="data")
    return root, commit


def _pytest(python: Path, root: Path, library: Library, extra: list[str], timeout: float
            ) -> tuple[int, str] | None:
    """(exit code, stdout) of the suite, or None on a timeout."""
    env = {**os.environ, "PYTHONPATH": str(root / library.pythonpath), "COLUMNS": "80", "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    command = [str(python), "-m", "pytest", "-v", *RUN_FLAGS, "tests", *extra]
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)  # the suite's own children too (a mutation may loop forever)
        process.communicate()
        return None
    return process.returncode, out


def counts(log: str) -> dict[str, int]:
    """The final summary's counts (`failed`, `passed`, `error`, ...)."""
    last = next((line for line in reversed(log.split("\n")) if _SUMMARY.match(line)), "")
    return {word.rstrip("s") if word.startswith("error") else word: int(n) for n, word in _COUNTS.findall(last)}


def failing_ids(log: str, word: str = "FAILED") -> list[str]:
    return list(dict.fromkeys(line[len(word) + 1:].split(" - ", 1)[0].strip()
                              for line in log.split("\n") if line.startswith(word + " ")))


def section_name(test_id: str) -> str:
    """How pytest heads a failure's section: `TestClass.test_x[param]` for `path::TestClass::test_x[param]`."""
    return ".".join(test_id.split("::")[1:])


def _header(line: str) -> str | None:
    """The test a failure section's heading names (`____ Class.test_x ____`, a single `_` each side when the name
    is long), else None (also for the `_ _ _` line between a traceback's entries)."""
    match = re.match(r"^_+ (.+?) _+$", line)
    return match.group(1) if match and match.group(1).strip("_ ") else None


def facts_of(log: str) -> tuple[list[str], list[int], int]:
    """The failing ids, each failure's first `E   ` line (1-based; 0 when its section has none) and the summary's."""
    lines = log.split("\n")
    failing = failing_ids(log)
    headers: dict[str, int] = {}
    in_failures = False
    for i, line in enumerate(lines):
        if re.match(r"^=+ FAILURES =+$", line):
            in_failures = True
        elif line.startswith("====="):
            in_failures = False
        elif in_failures and (name := _header(line)):
            headers.setdefault(name, i)
    assertions = []
    for test in failing:
        start = headers.get(section_name(test))
        found = 0
        if start is not None:
            for j in range(start + 1, len(lines)):
                if _header(lines[j]) or lines[j].startswith("====="):
                    break
                if lines[j].startswith("E   "):
                    found = j + 1
                    break
        assertions.append(found)
    summary = next((i + 1 for i in range(len(lines) - 1, -1, -1) if _SUMMARY.match(lines[i])), 0)
    return failing, assertions, summary


def build(library: Library, out: Path) -> Iterator[LogRun]:
    """The library's kept runs, written to `out` as they are kept."""
    python = _venv()
    root, commit = _tree(library)
    started = time.monotonic()
    base = _pytest(python, root, library, [], 900)
    if base is None:
        raise SystemExit(f"{library.repo}: the unchanged suite did not finish")
    took = time.monotonic() - started
    extra = [f"--deselect={t}" for t in failing_ids(base[1])] + \
        [f"--ignore={t}" for t in failing_ids(base[1], "ERROR") if "::" not in t]
    order = sites(root, library)
    random.Random(library.repo).shuffle(order)
    kept = 0
    with out.open("w", encoding="utf-8") as f:
        for tried, site in enumerate(order[:MAX_TRIES], 1):
            path = root / site.path
            original = path.read_text(encoding="utf-8")
            text = mutated(original, site)
            try:
                compile(text, site.path, "exec")
            except SyntaxError:
                continue
            path.write_text(text, encoding="utf-8")
            try:
                done = _pytest(python, root, library, extra, max(60.0, 5 * took))
            finally:
                path.write_text(original, encoding="utf-8")
            run = _kept(library, commit, site, done)
            print(f"  {library.repo} try {tried}: {site.path}:{site.line} {site.before} -> {site.after}: "
                  f"{'kept, ' + str(len(run.failing)) + ' failing' if run else 'not kept'}", flush=True)
            if run is None:
                continue
            f.write(json.dumps(asdict(run)) + "\n")
            f.flush()
            yield run
            kept += 1
            if kept >= RUNS_PER_LIBRARY:
                break


def _kept(library: Library, commit: str, site: Site, done: tuple[int, str] | None) -> LogRun | None:
    if done is None or done[0] != 1:
        return None
    log = done[1]
    found = counts(log)
    if found.get("error") or not 1 <= found.get("failed", 0) <= MAX_FAILURES or "!!!!" in log:
        return None
    failing, assertions, summary = facts_of(log)
    if len(failing) != found["failed"]:
        return None
    return LogRun(library.repo, commit, f"{site.path}:{site.line}: {site.before} -> {site.after}", COMMAND, log,
                  tuple(failing), tuple(assertions), summary)


def runs(repos: Iterable[str] = ()) -> list[LogRun]:
    """The cached runs (of `repos`, or all)."""
    wanted = set(repos)
    out = []
    for library in LIBRARIES:
        path = CACHE / f"{library.name}.jsonl"
        if wanted and library.repo not in wanted or not path.exists():
            continue
        with path.open(encoding="utf-8") as f:
            rows = [json.loads(line) for line in f][:RUNS_PER_LIBRARY]  # a longer build's first are this one's
        for row in rows:  # the facts read again from the log: a fix of the rule needs no rebuild
            failing, assertions, summary = facts_of(row["log"])
            out.append(LogRun(**{**row, "failing": tuple(failing), "assertions": tuple(assertions),
                                 "summary": summary}))
    return out


# --- measuring -----------------------------------------------------------------------------------------------

def rendered(snippets: list[Snippet]) -> tuple[str, set[int]]:
    """The snippets as the model receives a line kind's (wrap.render without the placeholder), and the lines shown."""
    text = SEPARATOR.join(snippet(s, View(by_lines=True)) for s in snippets)
    shown = {n for s in snippets if s.line_start for n in range(s.line_start, (s.line_end or s.line_start) + 1)}
    return text, shown


def sent(client: Client, text: str, intent: str, command: str) -> tuple[FilterResult | None, str, set[int], float]:
    """What the Claude Code hook makes of a Bash output: (the service's answer, the text the model is sent but the
    placeholder, the output's lines shown, ms); the whole output when the hook would not cut it."""
    options = CutOptions()
    request = cut_request(text, intent, "Bash", {"command": command}, options)
    lines = text.split("\n")
    if request is None:
        return None, text, set(range(1, len(lines) + 1)), 0.0
    started = time.perf_counter()
    result = client.send(request)
    ms = (time.perf_counter() - started) * 1000
    if cut_text(result, options, original=text) is None:  # the hook passes the output as it is
        return result, text, set(range(1, len(lines) + 1)), ms
    shown_text, shown = rendered(result.snippets)
    return result, shown_text, shown, ms


def tail(text: str, budget: int) -> tuple[str, set[int]]:
    """The output's last lines while they fit in `budget` tokens (each with its newline)."""
    lines = text.split("\n")
    used, first = 0, len(lines)
    while first > 0 and used + (cost := TOKENS.count(lines[first - 1] + "\n")) <= budget:
        used += cost
        first -= 1
    return "\n".join(lines[first:]), set(range(first + 1, len(lines) + 1))


def named(test_id: str, text: str) -> bool:
    """The test's id, or its name as pytest heads its failure section, stands in the text as a whole name."""
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?![\w\[])", text)
               for name in (test_id, section_name(test_id)) if name)


def judged(run: LogRun, text: str, shown: set[int]) -> dict[str, bool]:
    facts = {"named": all(named(t, text) for t in run.failing),
             "assertions": all(line in shown for line in run.assertions if line),
             "summary": run.summary in shown}
    return {**facts, "target": facts["named"] and facts["assertions"]}


def measure(split: str, client: Client | None = None, repos: Iterable[str] = (), limit: int | None = None
            ) -> list[Row]:
    """Per cached run of `split`: ctxsieve's row and the log tail's at ctxsieve's tokens (a scratch service when no
    client is given)."""
    chosen = [r for r in runs(repos) if r.split == split][:limit]
    if client is None:
        with client_for("") as scratch:
            return measure(split, scratch, repos, limit)
    rows = []
    for run in chosen:
        _, text, shown, ms = sent(client, run.log, run.intent, run.command)
        tokens = TOKENS.count(text)
        rows.append(Row("log", run.repo, split, "ctxsieve", run.mutation, judged(run, text, shown), tokens, ms,
                        {"failing": len(run.failing), "log tokens": TOKENS.count(run.log)}))
        base_text, base_shown = tail(run.log, tokens)
        rows.append(Row("log", run.repo, split, "log tail", run.mutation, judged(run, base_text, base_shown),
                        TOKENS.count(base_text)))
    return rows


def report(rows: list[Row], facts: tuple[str, ...], least: int = 5) -> Iterator[str]:
    """Per split and peer, per repository (>= `least` cases) and pooled: each fact's share, tokens median, p50."""
    groups: dict[tuple[str, str], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        groups[(row.split, row.peer)][row.repo].append(row)
    for (split, peer), by_repo in groups.items():
        pooled = [r for repo_rows in by_repo.values() for r in repo_rows]
        for repo, group in [*sorted(by_repo.items()), ("pooled", pooled)]:
            if repo != "pooled" and len(group) < least:
                continue
            n = len(group)
            shares = "  ".join(f"{fact} {sum(r.facts[fact] for r in group) / n:.3f}" for fact in facts)
            latency = f"  p50 {statistics.median(r.ms for r in group):.0f} ms" if any(r.ms for r in group) else ""
            yield (f"{split + ': ' + peer:<20} {repo:<30} n={n:<4} {shares}  tokens median "
                   f"{statistics.median(r.tokens for r in group):.0f}{latency}")


def misses(rows: list[Row]) -> Iterator[str]:
    """ctxsieve's runs that miss the target, each with the log tail's facts at the same tokens."""
    tails = {(r.repo, r.case): r for r in rows if r.peer != "ctxsieve"}
    for row in rows:
        if row.peer == "ctxsieve" and not row.facts["target"]:
            other = tails[(row.repo, row.case)]
            yield (f"  missed: {row.repo} {row.case}: {row.extra['failing']:.0f} failing, log "
                   f"{row.extra['log tokens']:.0f} tokens, shown {row.tokens}: "
                   + " ".join(f"{k}={int(v)}" for k, v in row.facts.items())
                   + "  (tail: " + " ".join(f"{k}={int(v)}" for k, v in other.facts.items()) + ")")


def describe(chosen: list[LogRun]) -> Iterator[str]:
    for split in SPLITS:
        of = [r for r in chosen if r.split == split]
        if not of:
            continue
        failing = [len(r.failing) for r in of]
        yield (f"  {split}: {len(of)} runs from {', '.join(sorted({r.repo for r in of}))}; failing tests per run "
               f"median {statistics.median(failing):.0f} (1: {failing.count(1)}, over 10: "
               f"{sum(f > 10 for f in failing)}, most {max(failing)}); log tokens median "
               f"{statistics.median(TOKENS.count(r.log) for r in of):.0f}")


def command_line(module: str) -> str:
    """The bench's command as run, with the PYTHONPATH that chose the ctxsieve measured."""
    path = os.environ.get("PYTHONPATH")
    return f"# {'PYTHONPATH=' + path + ' ' if path else ''}python -m {module} {' '.join(sys.argv[1:])}".rstrip()


def origin() -> str:
    """Which ctxsieve the bench measures: the folder its packages are imported from, and its commit there (a scratch
    service runs the same, with this environment)."""
    import ctxsieve.indexes

    root = Path(next(iter(ctxsieve.indexes.__path__))).resolve().parent
    git = ["git", "-C", str(root)]
    commit = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=False)
    if commit.returncode:
        return f"ctxsieve: {root} (no git work tree)"
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "ingest", "indexes", "service", "clients"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return f"ctxsieve: {root} at {commit.stdout.strip()}" + (" with uncommitted changes" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--splits", default=",".join(SPLITS))
    parser.add_argument("--repos", default="")
    parser.add_argument("--limit", type=int, default=None, help="at most N runs per split")
    parser.add_argument("--url", default="", help="a running service instead of a scratch one")
    parser.add_argument("--rebuild", action="store_true", help="run the suites again (the cache is replaced)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    repos = [r for r in args.repos.split(",") if r]
    if args.rebuild:
        CACHE.mkdir(parents=True, exist_ok=True)
        for library in LIBRARIES:
            if not repos or library.repo in repos:
                kept = list(build(library, CACHE / f"{library.name}.jsonl"))
                print(f"{library.repo}: {len(kept)} runs kept", flush=True)
        return
    lines = [command_line("bench.logs"), f"machine: {machine()}", origin()]
    chosen = runs(repos)
    lines += [f"{len(chosen)} failing pytest -v runs from {CACHE} (python -m bench.logs --rebuild)",
              *describe(chosen)]
    print("\n".join(lines), flush=True)
    with client_for(args.url) as client:
        for split in [s for s in args.splits.split(",") if s]:
            rows = measure(split, client, repos, args.limit)
            for line in [*report(rows, FACTS), *misses(rows)]:
                print(line, flush=True)
                lines.append(line)
    lines.append(f"after: {machine()}")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


@contextlib.contextmanager
def client_for(url: str) -> Iterator[Client]:
    with service_url(url, "bench-logs-") as served:
        yield Client(served, timeout=600)


if __name__ == "__main__":
    main()
