"""Coding agents' reads: does the view of a source file keep the lines an issue's fix edits?

Usage: python -m bench.code [--budgets 1000,1500,2000,3000] [--limit N] [--repos a,b]

On ../shared/data/swe_dev (430 cases: an issue's text, the Python file its fix edits at the issue's base commit,
and the lines the gold patch edits), each file is read as Claude Code's Read would send it to the hook: the issue
is the intent (its end, within the API's 4,000-character query), the call names the file (`file_path`), the
service chooses the kind and the view. Per case and budget:
- place shown: at least one edited line visible together with a line next to it;
- every edited line shown;
- tokens shown (tiktoken o200k_base of the snippets and the map of the file), and the p50 latency of the call.
Peers in the same run, at the same budgets: the whole file, its head (the first lines within the budget), and
BM25 over fixed 20-line windows (the issue's terms, best windows first, within the budget). `--default` also
runs the service's own budget for code (max_tokens unset). Results per repository and pooled. Each file is read
fresh at the first budget run only (later budgets re-filter the stored ref): that run's p50 is a fresh read's,
also given for the files of 8-12k tokens.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.loadtest import scratch_service
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.ingest.lines import LineIndex
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.cutting import MAX_INTENT_CHARS

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe_dev" / "cases.jsonl"
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")
WINDOW = 20


@dataclass(frozen=True)
class Case:
    repo: str
    path: str
    issue: str
    text: str
    gold: tuple[int, ...]
    tokens: int  # of the file


@dataclass(frozen=True)
class Outcome:
    place: bool
    every: bool
    tokens: int
    ms: float
    file_tokens: int = 0


def cases(limit: int | None, repos: set[str] | None) -> list[Case]:
    out = []
    with DATA.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if repos and row["repo"] not in repos:
                continue
            out.append(Case(row["repo"], row["path"], row["problem_statement"], row["file_text"],
                            tuple(row["gold_lines"]), TOKENS.count(row["file_text"])))
    return out[:limit] if limit else out


def judged(case: Case, shown: set[int], tokens: int, ms: float) -> Outcome:
    place = any(line in shown and (line - 1 in shown or line + 1 in shown) for line in case.gold)
    return Outcome(place, all(line in shown for line in case.gold), tokens, ms, case.tokens)


def lines_of(spans: Iterable[tuple[int, int]], index: LineIndex) -> set[int]:
    """The file lines a set of character spans shows."""
    return {n for start, end in spans for n in range(index.line_of(start), index.line_of(max(start, end - 1)) + 1)}


def ctxsieve(client: Client, case: Case, budget: int | None) -> Outcome:
    started = time.perf_counter()
    result = client.filter(case.issue[-MAX_INTENT_CHARS:], case.text, source={"tool": "Read", "args": {
        "file_path": case.path}}, k=50, max_tokens=budget, placeholder="tools")
    ms = (time.perf_counter() - started) * 1000
    index = LineIndex(case.text)
    shown = lines_of(((s.start, s.end) for s in result.snippets), index) | {m.line for m in result.map or []}
    return judged(case, shown, result.usage.output_tokens, ms)  # the map's lines are file lines the agent sees


def head(case: Case, budget: int) -> Outcome:
    lines = case.text.split("\n")
    used, shown = 0, set()
    for number, line in enumerate(lines, 1):
        cost = TOKENS.count(line + "\n")
        if used + cost > budget:
            break
        used += cost
        shown.add(number)
    return judged(case, shown, used, 0.0)


def windows(case: Case, budget: int) -> Outcome:
    lines = case.text.split("\n")
    spans = [(i, min(i + WINDOW, len(lines))) for i in range(0, len(lines), WINDOW)]
    texts = ["\n".join(lines[a:b]) for a, b in spans]
    scores = Bm25Index.build(texts).scores(case.issue)
    used, shown = 0, set()
    for i in sorted(range(len(texts)), key=lambda j: (-scores[j], j)):
        cost = TOKENS.count(texts[i])
        if used + cost > budget:
            continue
        used += cost
        shown.update(range(spans[i][0] + 1, spans[i][1] + 1))
    return judged(case, shown, used, 0.0)


def whole(case: Case) -> Outcome:
    return judged(case, set(range(1, case.text.count("\n") + 2)), case.tokens, 0.0)


def report(name: str, rows: dict[str, list[Outcome]], files: dict[str, list[int]]) -> Iterator[str]:
    pooled = [o for outcomes in rows.values() for o in outcomes]
    every_file = [t for tokens in files.values() for t in tokens]
    for repo, outcomes in [*sorted(rows.items()), ("pooled", pooled)]:
        if repo != "pooled" and len(outcomes) < 20:
            continue  # the small Lite-dev repositories are in the pooled figure
        n = len(outcomes)
        tokens = statistics.median(o.tokens for o in outcomes)
        of_file = statistics.median(files.get(repo, every_file))
        latency = statistics.median(o.ms for o in outcomes) if any(o.ms for o in outcomes) else None
        tenk = [o.ms for o in outcomes if 8000 <= o.file_tokens <= 12000]
        near = f" (files of 8-12k tokens: {statistics.median(tenk):.0f} ms, n={len(tenk)})" \
            if repo == "pooled" and tenk and latency is not None else ""
        yield (f"{name:<28} {repo:<30} n={n:<4} place {sum(o.place for o in outcomes) / n:.3f}  every line "
               f"{sum(o.every for o in outcomes) / n:.3f}  tokens median {tokens:>6.0f} "
               f"({tokens / of_file:.2f} of the file's {of_file:.0f})"
               + (f"  p50 {latency:.0f} ms{near}" if latency is not None else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="1000,1500,2000,3000")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repos", default="")
    parser.add_argument("--default", action="store_true", help="also the service's own budget for code")
    parser.add_argument("--peers", action="store_true", help="also the whole file, its head and BM25 windows")
    args = parser.parse_args()
    chosen = cases(args.limit, set(filter(None, args.repos.split(","))))
    budgets: list[int | None] = [int(b) for b in args.budgets.split(",") if b]
    if args.default:
        budgets.insert(0, None)
    files: dict[str, list[int]] = defaultdict(list)
    for case in chosen:
        files[case.repo].append(case.tokens)
    print(f"{len(chosen)} cases from {DATA.parent.name}; file tokens median "
          f"{statistics.median(t for ts in files.values() for t in ts):.0f}", flush=True)
    with scratch_service("bench-code-") as (url, _):
        client = Client(url, timeout=600)
        for budget in budgets:
            rows: dict[str, list[Outcome]] = defaultdict(list)
            for case in chosen:
                rows[case.repo].append(ctxsieve(client, case, budget))
            for line in report(f"ctxsieve @{budget or 'default'}", rows, files):
                print(line, flush=True)
    if args.peers:
        for budget in [b for b in budgets if b is not None]:
            for name, peer in (("head", head), ("bm25 20-line windows", windows)):
                rows = defaultdict(list)
                for case in chosen:
                    rows[case.repo].append(peer(case, budget))
                for line in report(f"{name} @{budget}", rows, files):
                    print(line, flush=True)
        rows = defaultdict(list)
        for case in chosen:
            rows[case.repo].append(whole(case))
        for line in report("whole file", rows, files):
            print(line, flush=True)


if __name__ == "__main__":
    main()
