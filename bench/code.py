"""Coding agents' reads: does the view of a source file keep the lines an issue's fix edits?

Usage: python -m bench.code [--splits dev,test,held-out] [--budgets 1500,3000] [--limit N] [--repos a,b] [--url URL]
                            [--repository]

On ../shared/data/swe_dev (430 cases: an issue's text, the Python file its fix edits at the issue's base commit,
and the lines the gold patch edits), each file is read as Claude Code's Read sends it to the hook
(ctxsieve_client.hooks.claude_code): the intent is the issue with the call's words (intent.step_intent), its end
within the API's 4,000 characters; the filter call is cutting.cut_request's (max_tokens unset: the service's
budget for code), and the view is the hook's `_numbered_read` of the answer. Facts, per case:
- place shown: at least one edited line visible together with a line next to it;
- every edited line shown, beside the share of cases where any view of that many tokens could show them all
  (`every_fits`: the edited lines alone fit).
Tokens are counted as the model receives them (o200k_base), one line number per line: the whole file as Claude
Code's Read numbers it (`N\\t` before each line); the cut as the hook renders it: its lines (one run as Read
numbers it, several runs with the hook's `N│` numbers and its `⋮` between runs, without Claude Code's second
numbering), the note, the placeholder and the map in its additional context.
Peer, per case, at exactly the cut's tokens: BM25 over fixed 20-line windows (the intent's terms, best windows
first while they fit), rendered the same way (numbers and `⋮` included). `--budgets` also runs the service at
fixed budgets (the windows again at each view's tokens).

--repository: each file is read (by its absolute path, as Claude Code's Read names it) from its repository's tree,
bench.grep's (the files the cases hold, each case's own version of its file written and synced first), indexed on
the service, so the cut also counts the repository's ranking of the file's definitions.

Splits, the rule bench.grep uses: a repository is held out when the first byte of sha256(its name) is odd
(openlibrary and pyvista here); the other repositories' cases are `dev` when the first byte of sha256(instance
id) is even, else `test`. The code view's rule was chosen on `dev` alone. Per repository (>= 20 cases) and
pooled, per split.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.grep import Trees, case_rows, tree_service
from ctxsieve.indexes.lexical import Bm25Index
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.cutting import CutOptions, cut_request, was_cut
from ctxsieve_client.hooks.claude_code import _numbered_read, _spans
from ctxsieve_client.intent import step_intent
from ctxsieve_client.models import FilterResult

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swe_dev" / "cases.jsonl"
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")
WINDOW = 20
SPLITS = ("dev", "test", "held-out")
GAP = "\n     ⋮\n"  # the hook's mark between runs of a cut


@dataclass(frozen=True)
class Case:
    repo: str
    instance: str
    path: str
    intent: str
    text: str
    gold: tuple[int, ...]
    split: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


@dataclass(frozen=True)
class Outcome:
    place: bool
    every: bool
    tokens: int  # as the model receives them
    whole: int  # the whole file's tokens as the model receives them
    reachable: bool = True  # the edited lines alone, rendered as the hook renders runs, fit in `tokens`


def split_of(repo: str, instance: str) -> str:
    if hashlib.sha256(repo.encode()).digest()[0] % 2:
        return "held-out"
    return "dev" if hashlib.sha256(instance.encode()).digest()[0] % 2 == 0 else "test"


def cases(limit: int | None, repos: set[str] | None, splits: set[str]) -> list[Case]:
    out = []
    with DATA.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            split = split_of(row["repo"], row["instance_id"])
            if (repos and row["repo"] not in repos) or split not in splits:
                continue
            intent = (step_intent(row["problem_statement"], None, {"file_path": row["path"]}) or "")
            out.append(Case(row["repo"], row["instance_id"], row["path"], intent, row["file_text"],
                            tuple(row["gold_lines"]), split))
    return out[:limit] if limit else out


def read_numbered(lines: list[str], first: int = 1) -> str:
    """Lines as Claude Code's Read shows them: `N\\t` before each."""
    return "\n".join(f"{first + i}\t{line}" for i, line in enumerate(lines))


def rendered(runs: list[tuple[int, int]], lines: list[str]) -> str:
    """Runs of file lines (1-based, inclusive) as the hook's cut of a Read shows them, one number per line: one
    run as Read numbers it, several with the hook's `N│` numbers and `⋮` between them."""
    if len(runs) == 1:
        return read_numbered(lines[runs[0][0] - 1:runs[0][1]], runs[0][0])
    return GAP.join("\n".join(f"{n}│{lines[n - 1]}" for n in range(a, b + 1)) for a, b in runs)


def judged(case: Case, shown: set[int], tokens: int) -> Outcome:
    place = any(line in shown and (line - 1 in shown or line + 1 in shown) for line in case.gold)
    whole = TOKENS.count(read_numbered(case.lines))
    return Outcome(place, all(line in shown for line in case.gold), tokens, whole, every_fits(case, tokens))


def every_fits(case: Case, tokens: int) -> bool:
    """Whether any cut could show every edited line at these tokens: the edited lines alone (no note, no map, no
    line around them), rendered as the hook renders its runs, fit. The ceiling of "every edited line" for a view
    of this size, whatever its ranking."""
    runs = _joined([(line, line) for line in sorted(set(case.gold))])
    return not runs or TOKENS.count(rendered(runs, case.lines)) <= tokens


def read_payload(case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read's tool_response for the whole file, and its `file`."""
    file = {"filePath": case.path, "content": case.text, "numLines": len(case.lines), "startLine": 1,
            "totalLines": len(case.lines)}
    return {"type": "text", "file": file}, file


def ctxsieve(client: Client, case: Case, budget: int | None, file_path: str | None = None) -> Outcome:
    """The hook's path for a Read (of `file_path`, as Claude Code names it: absolute): cut_request, the service,
    `_numbered_read`."""
    options = CutOptions(max_tokens=budget)
    request = cut_request(case.text, case.intent, "Read", {"file_path": file_path or case.path}, options)
    result: FilterResult | None = client.send(request) if request is not None else None
    if result is None or not was_cut(result, options) or result.content_type != "code":
        return judged(case, set(range(1, len(case.lines) + 1)), TOKENS.count(read_numbered(case.lines)))
    response, file = read_payload(case)
    answer = _numbered_read(response, file, result)["hookSpecificOutput"]
    runs = _spans(result, case.lines)
    content = rendered(runs, case.lines)  # the hook's content, with Read's numbers on a single run
    sent = answer["updatedToolOutput"]["file"]["content"]
    assert sent == (content if len(runs) > 1 else "\n".join(case.lines[runs[0][0] - 1:runs[0][1]])), "as the hook"
    tokens = TOKENS.count(content) + TOKENS.count(answer["additionalContext"])
    shown = {n for a, b in runs for n in range(a, b + 1)} | {m.line for m in result.map or []}
    return judged(case, shown, tokens)


def windows(case: Case, budget: int) -> Outcome:
    """BM25 over 20-line windows, best first while the rendered cut stays within `budget` tokens."""
    lines = case.lines
    spans = [(i + 1, min(i + WINDOW, len(lines))) for i in range(0, len(lines), WINDOW)]
    scores = Bm25Index.build(["\n".join(lines[a - 1:b]) for a, b in spans]).scores(case.intent)
    chosen: list[tuple[int, int]] = []
    used = 0
    for i in sorted(range(len(spans)), key=lambda j: (-scores[j], j)):
        cost = TOKENS.count(rendered([spans[i]], lines)) + TOKENS.count(GAP)
        if used + cost > budget:
            continue
        trial = _joined(sorted([*chosen, spans[i]]))
        if TOKENS.count(rendered(trial, lines)) > budget:
            continue
        chosen.append(spans[i])
        used += cost
    runs = _joined(sorted(chosen))
    shown = {n for a, b in runs for n in range(a, b + 1)}
    return judged(case, shown, TOKENS.count(rendered(runs, lines)) if runs else 0)


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for a, b in spans:
        if runs and a <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], max(b, runs[-1][1]))
        else:
            runs.append((a, b))
    return runs


def report(name: str, rows: dict[str, list[Outcome]]) -> Iterator[str]:
    pooled = [o for outcomes in rows.values() for o in outcomes]
    for repo, outcomes in [*sorted(rows.items()), ("pooled", pooled)]:
        if not outcomes or (repo != "pooled" and len(outcomes) < 20):
            continue  # the small Lite-dev repositories are in the pooled figure
        n = len(outcomes)
        share = statistics.median(o.tokens / o.whole for o in outcomes)
        tokens, whole = statistics.median(o.tokens for o in outcomes), statistics.median(o.whole for o in outcomes)
        yield (f"{name:<26} {repo:<28} n={n:<4} place {sum(o.place for o in outcomes) / n:.3f}  every line "
               f"{sum(o.every for o in outcomes) / n:.3f} (reachable {sum(o.reachable for o in outcomes) / n:.3f})"
               f"  tokens median {tokens:>5.0f}"
               f" of the file's {whole:>5.0f} as received (per case {share:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default="dev")
    parser.add_argument("--budgets", default="", help="fixed budgets besides the default (max_tokens unset)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repos", default="")
    parser.add_argument("--url", default="", help="a running service instead of a scratch one")
    parser.add_argument("--repository", action="store_true", help="each file read from its repository's tree, "
                        "indexed (bench.grep's trees: the files the cases hold)")
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s]
    chosen = cases(args.limit, set(filter(None, args.repos.split(","))), set(splits))
    budgets: list[int | None] = [None, *(int(b) for b in args.budgets.split(",") if b)]
    for split in splits:
        mine = [c for c in chosen if c.split == split]
        print(f"  {split}: {len(mine)} cases from {', '.join(sorted({c.repo for c in mine}))}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-code-trees-") as folder, \
            tree_service(args.url, Path(folder) if args.repository else None) as url:
        client = Client(url, timeout=600)
        trees = Trees(client, Path(folder), case_rows(None)) if args.repository else None
        for split in splits:
            for budget in budgets:
                shipped: dict[str, list[Outcome]] = defaultdict(list)
                peer: dict[str, list[Outcome]] = defaultdict(list)
                for case in (c for c in chosen if c.split == split):
                    read = str(trees.as_in(case)) if trees is not None else None
                    outcome = ctxsieve(client, case, budget, read)
                    shipped[case.repo].append(outcome)
                    peer[case.repo].append(windows(case, outcome.tokens))
                at = f"@{budget or 'default'}"
                for line in [*report(f"{split}: ctxsieve {at}", shipped), *report(f"{split}: windows {at}", peer)]:
                    print(line, flush=True)


if __name__ == "__main__":
    main()
