"""What the model is sent for a coding agent's large tool outputs, per scenario and surface, through the real agents.

Usage: python -m bench.agents [--held-out 5] [--parts project,held-out] [--surfaces ...] [--url URL]
                              [--out bench/results/agents.txt]

The real Claude Code CLI (the one claude-agent-sdk bundles) and the real Codex CLI (tests/mcp's npm `@openai/codex`)
run against scripted model APIs on loopback that record every request (tests/client/scripted_*.py; bench.agent_runs
runs each once); `ctxsieve serve` runs with the real embedding model on a fresh data dir. Scenarios
(tests/client/coding_scenarios.py's project):
- pytest: a failing `pytest -v` run over 30 KB (exit 1: Claude Code's PostToolUseFailure);
- cat log: the same log through `cat` (exit 0: over Claude Code's 30,000-character preview);
- build: a failing C build; read: a Read with offset 2000 / limit 1400 of the standard library's _pydecimal.py;
- grep: a Grep for `def ` in it, the user's request naming the definition it needs (Decimal.quantize);
- codex cat source / codex cat log: Codex's shell printing that file and that log, with Codex's `exec_command`
  function (gpt-5-codex) and with its JavaScript `exec` (any other model's tools, the command's JSON result).
Surfaces: Claude Code alone (the baseline); + the command hook and + the http hook, each written by
`ctxsieve-hook claude-code --install [--http]` into a fresh HOME (PostToolUse and PostToolUseFailure, the capture
prefix CLAUDE_CODE_SHELL_PREFIX, `ctxsieve mcp` as the MCP server); + `ctxsieve proxy` (ANTHROPIC_BASE_URL at it,
`ctxsieve mcp` as the MCP server, as the README sets it up); Codex alone; Codex + `ctxsieve proxy`, without and
with --serve-tools. Held out: the read and grep scenarios on swe_dev files of other repositories (one case per
repository, the largest file of 2,000 lines or more): the issue is the user's request, the Read is a window of
1,400 lines from 500 before the first edited line, and the Grep is `def ` over the file.

Per pair: tokens (tiktoken o200k_base) of what the model is sent for that call: the tool result plus any hook
context Claude Code adds beside it (coding_scenarios.tool_results: only the contexts new
with that result), or Codex's whole output item; facts kept:
- pytest, cat log, codex cat log: every failing test id, each assertion line and the summary;
- build: both compiler errors; grep: the needed `def` line (held out: the `def` enclosing the first edited line);
- read: the needed line shown after its true number (held out: each edited line in the window), and `false`, the
  shown lines whose number is not the file's (must be 0); codex cat source: the same, its numbers as the proxy
  gives them (`── lines A-B` headings, `N│` map rows); Codex alone gives none;
and whether a ref (`src_...`) was given. A pair passes when every fact is kept and no number is false.
Without --url, `ctxsieve serve` runs on a fresh data dir (HF_HUB_OFFLINE=1); BENCH_AGENTS_KEEP=DIR keeps each Claude
Code run's recorded requests there.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.agent_runs import run_claude, run_codex
from bench.code import DATA, TOKENS
from bench.hooks import load, machine
from bench.loadtest import scratch_service
from bench.proxy import Case

CLAUDE_SURFACES = ("claude code alone", "+ command hook", "+ http hook", "+ proxy")
CODEX_SURFACES = ("codex alone", "codex + proxy", "codex + proxy --serve-tools")
CODEX_SHAPES = (("exec_command", "gpt-5-codex"), ("exec", "gpt-6.1-sol"))
READ_LIMIT = 1400
HELD_OUT_LEAD = 500  # the held-out Read starts this many lines before the first edited line
REF = re.compile(r"\bsrc_[0-9a-f]{6,}")
NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")  # Claude Code's Read: `N<TAB>text`
MARKED = re.compile(r"^\s*(\d+)│(.*)$")  # a line's own number inside a cut of several runs, or a map row
HEADING = re.compile(r"^── lines (\d+)-(\d+)(?: · .*)? ──$")


@dataclass(frozen=True)
class Facts:
    texts: tuple[str, ...] = ()  # each must be in what the model is sent
    numbered: tuple[tuple[int, str], ...] = ()  # each must be shown after its true number
    file_lines: tuple[str, ...] | None = None  # shown numbers checked against these


@dataclass(frozen=True)
class Row:
    scenario: str
    surface: str
    tokens: int
    kept: int
    total: int
    false: int | None  # shown lines with a false number; None where nothing is numbered as the file's
    ref: bool

    @property
    def passes(self) -> bool:
        return self.kept == self.total and not self.false


def judged(scenario: str, surface: str, sent: str, facts: Facts, numbers: Callable[[str], list[tuple[int, str]]],
           shown: str | None = None) -> Row:
    """The row for what the model was sent (`sent`, counted), judged on `shown` (the text inside it, when the
    sent item is the text encoded, as Codex's JSON result)."""
    shown = sent if shown is None else shown
    claimed = numbers(shown) if facts.file_lines is not None else []
    lines = facts.file_lines or ()
    false = sum(not (0 < n <= len(lines) and lines[n - 1] == text) for n, text in claimed)
    kept = sum(fact in shown for fact in facts.texts) + sum(pair in claimed for pair in facts.numbered)
    return Row(scenario, surface, TOKENS.count(sent), kept, len(facts.texts) + len(facts.numbered),
               false if facts.file_lines is not None else None, bool(REF.search(shown)))


def read_numbers(shown: str) -> list[tuple[int, str]]:
    """(number, text) of every row a Read shows as a line of the file (`N<TAB>text`, or `N<TAB>  M│text` where a cut
    of several runs carries each line's own number; a `⋮` row names none)."""
    claimed = []
    for row in shown.split("\n"):
        match = NUMBERED.match(row)
        if not match or match.group(2).strip() == "⋮":
            continue
        marked = MARKED.match(match.group(2))
        claimed.append((int(marked.group(1)), marked.group(2)) if marked else (int(match.group(1)), match.group(2)))
    return claimed


def codex_numbers(shown: str) -> list[tuple[int, str]]:
    """(number, text) of every line the proxy's cut of a command's output names as the file's: under each
    `── lines A-B` heading, and in the map (`N│text`)."""
    rows = shown.split("\n")
    claimed = []
    for i, row in enumerate(rows):
        if heading := HEADING.match(row):
            first, last = int(heading.group(1)), int(heading.group(2))
            claimed += [(first + k, rows[i + 1 + k]) for k in range(last - first + 1) if i + 1 + k < len(rows)]
        elif mapped := MARKED.match(row):
            claimed.append((int(mapped.group(1)), mapped.group(2)))
    return claimed


# --- Codex ---------------------------------------------------------------------------------------------------------

def codex_call(shape: str, path: str) -> tuple[str, Any]:
    if shape == "exec_command":
        return "exec_command", {"cmd": f"cat {path}"}
    return "exec", f'const r = await tools.exec_command({{cmd: "cat {path}"}});\ntext(r);'


def codex_output(sent: str) -> str:
    """The command's output in the text Codex sends: the JSON result's `output` (after Codex's warning lines, if
    any), or the text after `Output:` of an exec_command result."""
    start = sent.find('{"')
    if 0 <= start < 300 and '"exit_code"' in sent[start:start + 400]:
        return str(json.loads(sent[start:])["output"])
    return sent.split("\nOutput:\n", 1)[1] if sent.startswith("Chunk ID: ") else sent


# --- Scenarios -----------------------------------------------------------------------------------------------------

REQUEST = ("The ledger tests fail and the C build breaks: find out why. Then check how Decimal.quantize rounds "
           "its result.")
OFFSET = 2000


def project_calls(project: Any) -> list[tuple[str, dict[str, Any]]]:
    """The first five calls tests/client/hooks/test_claude_code_outputs.py scripts, in its order (facts by index)."""
    from tests.client.hooks.test_claude_code_outputs import calls

    return calls(project)[:5]


HeldOut = Case  # a swe_dev case (bench.proxy's): its issue, its file, the lines its fix edits


def enclosing_def(text: str, line: int) -> int:
    """The line of the innermost `def` whose body holds the 1-based line (0: none; a file that does not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0
    spans = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    return max(spans, default=0)


def held_out_cases(count: int) -> list[HeldOut]:
    """The largest file of 2,000 lines or more of each repository, with a `def` enclosing its first edited line."""
    best: dict[str, HeldOut] = {}
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        case = HeldOut(row["instance_id"], row["repo"], row["path"], row["problem_statement"], row["file_text"],
                       tuple(row["gold_lines"]))
        lines = case.text.split("\n")
        if len(lines) < 2000 or not case.gold or not enclosing_def(case.text, case.gold[0]):
            continue
        current = best.get(case.repo)
        if current is None or (len(case.text), case.id) > (len(current.text), current.id):
            best[case.repo] = case
    return sorted(best.values(), key=lambda c: c.repo)[:count]


def project_rows(root: Path, service: str, surfaces: tuple[str, ...]) -> Iterator[Row]:
    from tests.client.coding_scenarios import make_project

    project = make_project(root / "ledger")
    lines = project.source.read_text().split("\n")
    needed = "    def quantize(self, exp, rounding=None, context=None):"
    number = lines.index(needed) + 1
    assert OFFSET <= number < OFFSET + READ_LIMIT, "the needed definition is in the Read's window"
    facts = [("pytest", Facts(tuple(project.facts["pytest"]))), ("cat log", Facts(tuple(project.facts["cat log"]))),
             ("build", Facts(tuple(project.facts["build"]))),
             ("read", Facts(numbered=((number, needed),), file_lines=tuple(lines))),
             ("grep", Facts(tuple(project.facts["grep"])))]
    for surface in surfaces:
        seen = run_claude(project.root, root, REQUEST, project_calls(project), surface, service)
        for n, (scenario, fact) in enumerate(facts):
            yield judged(scenario, surface, seen.get(f"toolu_{n:02d}", ""), fact, read_numbers)
    for shape, model in CODEX_SHAPES:
        for name, path, fact in (("codex cat source", project.source.name,
                                  Facts((needed.strip(),), file_lines=tuple(lines))),
                                 ("codex cat log", project.log.name, Facts(tuple(project.facts["cat log"])))):
            for surface in CODEX_SURFACES:
                sent = run_codex(project.root, root, REQUEST, codex_call(shape, path), model, surface, service)
                yield judged(f"{name} [{shape}]", surface, sent, fact, codex_numbers, codex_output(sent))


def held_out_rows(root: Path, service: str, cases: list[HeldOut], surfaces: tuple[str, ...]) -> Iterator[Row]:
    for case in cases:
        folder = root / case.id[:60]
        folder.mkdir()
        path = folder / Path(case.path).name
        path.write_text(case.text)
        lines = case.text.split("\n")
        offset = max(1, case.gold[0] - HELD_OUT_LEAD)
        window = [g for g in case.gold if offset <= g < offset + READ_LIMIT]
        read = Facts(numbered=tuple((g, lines[g - 1]) for g in window), file_lines=tuple(lines))
        grep = Facts((lines[enclosing_def(case.text, case.gold[0]) - 1].strip(),))
        calls = [("Read", {"file_path": str(path), "offset": offset, "limit": READ_LIMIT}),
                 ("Grep", {"pattern": "def ", "path": str(path), "output_mode": "content", "-n": True})]
        name = case.repo.split("/")[1]
        for surface in surfaces:
            seen = run_claude(folder, root, case.issue, calls, surface, service)
            yield judged(f"{name}: read", surface, seen.get("toolu_00", ""), read, read_numbers)
            yield judged(f"{name}: grep", surface, seen.get("toolu_01", ""), grep, read_numbers)


# --- Report --------------------------------------------------------------------------------------------------------

def table(rows: list[Row]) -> list[str]:
    out = [f"{'scenario':<31} {'surface':<27} {'tokens':>7} {'facts':>6} {'false':>5} {'ref':>3}  pass"]
    for r in rows:
        false = "-" if r.false is None else str(r.false)
        out.append(f"{r.scenario:<31} {r.surface:<27} {r.tokens:>7,} {f'{r.kept}/{r.total}':>6} {false:>5} "
                   f"{'yes' if r.ref else 'no':>3}  {'yes' if r.passes else 'no'}")
    return out


def summary(rows: list[Row], surfaces: tuple[str, ...]) -> list[str]:
    out = []
    for surface in surfaces:
        mine = [r for r in rows if r.surface == surface]
        if mine:
            out.append(f"{surface}: {sum(r.passes for r in mine)}/{len(mine)} pairs pass, "
                       f"{sum(r.kept for r in mine)}/{sum(r.total for r in mine)} facts, "
                       f"{sum(r.tokens for r in mine):,} tokens in all")
    return out


def passing(rows: list[Row]) -> str:
    ours = [r for r in rows if r.surface != CLAUDE_SURFACES[0]]
    alone = [r for r in rows if r.surface == CLAUDE_SURFACES[0]]
    return (f"held out: {sum(r.passes for r in ours)} of {len(ours)} scenario-surface pairs with ctxsieve pass "
            f"(Claude Code alone: {sum(r.passes for r in alone)} of {len(alone)})")


def versions() -> str:
    from tests.client.gateway.test_codex_gateway import CODEX
    from tests.client.hooks.test_claude_code_hook import CLAUDE

    claude = (CLAUDE.parent / "claude.version").read_text().split()[0]
    codex = json.loads((CODEX.resolve().parents[1] / "package.json").read_text())["version"]
    return f"Claude Code {claude} (claude-agent-sdk's), Codex CLI {codex} (npm @openai/codex)"


@contextmanager
def _same_pair(url: str) -> Iterator[tuple[str, Path]]:
    scratch = Path(tempfile.mkdtemp(prefix="bench-agents-"))
    try:
        yield url, scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agents")
    parser.add_argument("--held-out", type=int, default=5, help="swe_dev cases (one per repository)")
    parser.add_argument("--parts", default="project,held-out")
    parser.add_argument("--surfaces", default=",".join(CLAUDE_SURFACES), help="Claude Code's, comma-separated")
    parser.add_argument("--url", help="a service already running (default: `ctxsieve serve` on a fresh data dir)")
    parser.add_argument("--out", type=Path, default=Path("bench/results/agents.txt"))
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    surfaces = tuple(s for s in CLAUDE_SURFACES if s in args.surfaces.split(","))
    lines = [f"# python -m bench.agents --held-out {args.held_out} --parts {args.parts}", f"machine: {machine()}",
             f"agents: {versions()}"]
    started = time.monotonic()
    with (_same_pair(args.url) if args.url else scratch_service("bench-agents-")) as (service, scratch):
        root = Path(tempfile.mkdtemp(prefix="agents-", dir=scratch))
        try:
            if "project" in parts:
                rows = list(project_rows(root, service, surfaces))
                lines += ["", "## the project (tests/client/coding_scenarios.py)", *table(rows), "",
                          *summary(rows, CLAUDE_SURFACES + CODEX_SURFACES)]
                print("\n".join(lines), flush=True)
            if "held-out" in parts:
                cases = held_out_cases(args.held_out)
                held = list(held_out_rows(root, service, cases, surfaces))
                more = ["", "## held out (swe_dev: " + ", ".join(f"{c.id[:60]} {c.path}" for c in cases) + ")",
                        *table(held), "", *summary(held, surfaces), passing(held)]
                print("\n".join(more), flush=True)
                lines += more
        finally:
            shutil.rmtree(root, ignore_errors=True)
    lines.append(f"\n{time.monotonic() - started:.0f} s in all; at the end: {load()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
