"""Each content kind against its plain baseline at the same tokens, in one run (issue 37).

Usage: python -m bench.kinds [--splits dev,test,held-out] [--kinds code,grep,log,diff] [--limit N] [--url URL]

One scratch service (or --url), called as the Claude Code hook calls it at its defaults, and per kind the bench
that builds its cases and judges them (their docstrings say how; each counts ctxsieve's tokens as the model
receives them and gives the baseline exactly those tokens):
- code (bench.code, swe_dev): a Read of the file a fix edits; place shown / every edited line, against BM25 over
  20-line windows; targets place >= 0.92 and every line >= 0.75 at <= 1/3 of the file as received, each 3 points
  above the windows;
- grep (bench.grep, swe_dev): `grep -rnF` of an issue's identifiers at 1,500 tokens; the edited file shown / a line
  within 30 of an edit, against BM25 over single lines; targets >= 0.90 and >= 0.45 (and the lines' + 5);
- log (bench.logs, failing pytest -v runs of six libraries with injected bugs): every failing test named and its
  assertion line shown (`target`), against the log's tail; target >= 0.95;
- diff (bench.diffs, git show of the same libraries' commits): the file the message names shown / every changed
  line of it, against the diff's head.
Splits: code and grep hold out repositories by bench.grep's rule (dev, test, held-out); logs and diffs by
bench.logs' (dev, held-out). Per repository and pooled, then one summary line per kind and split: ctxsieve's
figures, the baseline's, and the difference in points.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable, Iterator

from bench import code, diffs, grep, logs
from bench.logs import Row, report
from ctxsieve_client import Client

FACTS = {"code": ("place", "every line"), "grep": ("edited file", "near an edit"), "log": ("target", "named",
                                                                                             "assertions"),
         "diff": ("file", "every line")}


def code_rows(client: Client, split: str, limit: int | None) -> list[Row]:
    rows = []
    for case in code.cases(limit, None, {split}):
        mine = code.ctxsieve(client, case, None)
        peer = code.windows(case, mine.tokens)
        share = {"share": mine.tokens / mine.whole}
        for name, o in (("ctxsieve", mine), ("windows", peer)):
            rows.append(Row("code", case.repo, split, name, case.instance, {"place": o.place, "every line": o.every},
                            o.tokens, extra=share))
    return rows


def grep_rows(client: Client, split: str, limit: int | None) -> list[Row]:
    rows = []
    chosen = [c for c in grep.build(grep.BUDGET) if c.split == split][:limit]
    for case in chosen:
        mine = grep.ctxsieve(client, case, grep.BUDGET)
        peer = grep.bm25_lines(case, mine.tokens)
        for name, o in (("ctxsieve", mine), ("bm25 lines", peer)):
            rows.append(Row("grep", case.repo, split, name, case.instance,
                            {"edited file": o.file, "near an edit": o.near}, o.tokens, o.ms))
    return rows


MEASURES: dict[str, Callable[[Client, str, int | None], list[Row]]] = {
    "code": code_rows, "grep": grep_rows,
    "log": lambda client, split, limit: logs.measure(split, client, limit=limit) if split in logs.SPLITS else [],
    "diff": lambda client, split, limit: diffs.measure(split, client, limit=limit) if split in diffs.SPLITS else [],
}


def summary(kind: str, split: str, rows: list[Row]) -> Iterator[str]:
    """Pooled: ctxsieve's facts, the baseline's, and the difference in points; code's share of the file too."""
    peers = sorted({r.peer for r in rows})
    if len(peers) != 2 or "ctxsieve" not in peers:
        return
    base = next(p for p in peers if p != "ctxsieve")

    def share(peer: str, fact: str) -> float:
        group = [r for r in rows if r.peer == peer]
        return sum(r.facts[fact] for r in group) / len(group)

    parts = [f"{fact} {share('ctxsieve', fact):.3f} vs {share(base, fact):.3f} "
             f"({100 * (share('ctxsieve', fact) - share(base, fact)):+.1f})" for fact in FACTS[kind]]
    mine = [r for r in rows if r.peer == "ctxsieve"]
    tokens = f"tokens median {statistics.median(r.tokens for r in mine):.0f}"
    if kind == "code":
        tokens += f", per case {statistics.median(r.extra['share'] for r in mine):.2f} of the file as received"
    yield f"{kind:<5} {split:<9} n={len(mine):<4} ctxsieve vs {base}: " + "; ".join(parts) + f"; {tokens}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--splits", default="dev,test,held-out")
    parser.add_argument("--kinds", default=",".join(MEASURES))
    parser.add_argument("--limit", type=int, default=None, help="at most N cases per kind and split")
    parser.add_argument("--url", default="", help="a running service instead of a scratch one")
    args = parser.parse_args()
    print(f"python -m bench.kinds --splits {args.splits} --kinds {args.kinds}"
          + (f" --limit {args.limit}" if args.limit else "") + f"; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(logs.origin(), flush=True)
    found: list[tuple[str, str, list[Row]]] = []
    with logs.client_for(args.url) as client:
        for kind in filter(None, args.kinds.split(",")):
            for split in filter(None, args.splits.split(",")):
                rows = MEASURES[kind](client, split, args.limit)
                if rows:
                    found.append((kind, split, rows))
                    for line in report(rows, FACTS[kind]):
                        print(f"{kind:<5} {line}", flush=True)
    print("\nsummary, pooled per kind and split:")
    for kind, split, rows in found:
        for line in summary(kind, split, rows):
            print(line, flush=True)


if __name__ == "__main__":
    main()
