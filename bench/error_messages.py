"""Pasted error messages: is the definition that raises one first?

Usage: python -m bench.error_messages [--splits dev,test] [--rankers bm25,ctxsieve-lexical] [--per-repo 40] [--alone]

An agent pastes the error its run printed (`requests.exceptions.InvalidSchema: No connection adapters were found for
'htp://x'`) and asks where it comes from. The cases are made from the code itself: every `raise Name("...")` of a
Python repository whose message holds four words or more, the message as Python prints it (its `{...}`, `%s` and
`%r` parts filled with a value: `'x'`, `42`), after the exception's name as a traceback's last line writes it (the
module path of a class the repository defines, `requests.exceptions.InvalidSchema`; a builtin's bare name). The
wanted definitions: every function or method that raises that message. At most --per-repo cases per repository, in
path order thinned evenly. Each repository is checked out at COMMITS from its snapshot in /work/.mirror (the search
tool's `fetch`). Printed: per split, the share of cases whose wanted definition is first, in the first 3 and in the
first 10, with each ranker. dev: requests, flask, httpx; test: click, starlette, fastapi, aiohttp (chosen before any
ranking was run). With --alone, the message is pasted alone, as a logger or a framework prints it (no exception's
name before it).
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.localize import WORK, Hit, checkout, ranker, workdir

REPOS = {  # owner/name: (commit, split, the package folder)
    "psf/requests": ("ef439eb779c1eba7cbdeeeb302b11e1e061b4b7d", "dev", "src/requests"),
    "pallets/flask": ("258d68b6ff5e2244386540f48b48bab90d6ab827", "dev", "src/flask"),
    "encode/httpx": ("ae1b9f66238f75ced3ced5e4485408435de10768", "dev", "httpx"),
    "pallets/click": ("04ef3a6f473deb2499721a8d11f92a7d2c0912f2", "test", "src/click"),
    "encode/starlette": ("cb8f84f5284dc301ca7a31eb732b9e140769dd48", "test", "starlette"),
    "fastapi/fastapi": ("c3c9dd6b1a08bcda766e7b43eafe72c4c5e9e193", "test", "fastapi"),
    "aio-libs/aiohttp": ("fc67cfdfd7d4bbf53ef76515fae69726626fe256", "test", "aiohttp"),
}
DEPTHS = (1, 3, 10)
_PLACEHOLDER = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfx]|%\([^)]*\)[sdrf]")


@dataclass(frozen=True)
class Case:
    query: str
    wanted: frozenset[tuple[str, int, int]]  # (path from the root, first line, last line) of each raising definition


def cases_of(root: Path, package: str, per_repo: int, alone: bool = False) -> list[Case]:
    """The repository's raise sites as pasted errors (see the module's docstring)."""
    classes: dict[str, str] = {}  # exception class name -> its module path
    raises: dict[str, set[tuple[str, int, int]]] = {}  # query -> raising definitions
    files = sorted(p for p in (root / package).rglob("*.py") if "test" not in p.relative_to(root).as_posix())
    trees = {}
    for path in files:
        try:
            trees[path] = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        module = ".".join(path.relative_to(root / package).with_suffix("").parts).removesuffix(".__init__")
        top = Path(package).name
        for node in ast.walk(trees[path]):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, f"{top}.{module}" if module != "__init__" else top)
    for path, tree in trees.items():
        rel = path.relative_to(root).as_posix()
        for definition in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            first = min([definition.lineno, *(d.lineno for d in definition.decorator_list)])
            for node in ast.walk(definition):
                pasted = _pasted(node, classes, alone)
                if pasted is not None:
                    raises.setdefault(pasted, set()).add((rel, first, definition.end_lineno or first))
    queries = sorted(raises)
    step = max(1, len(queries) // per_repo)
    return [Case(q, frozenset(raises[q])) for q in queries[::step][:per_repo]]


def _pasted(node: ast.AST, classes: dict[str, str], alone: bool = False) -> str | None:
    """`raise Name("message ...")` as the traceback's last line prints it (`alone`: its message), or None."""
    if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call) or not node.exc.args:
        return None
    func, message = node.exc.func, _message(node.exc.args[0])
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name is None or message is None or len(message.split()) < 4:
        return None
    if alone:
        return message
    return f"{classes[name]}.{name}: {message}" if name in classes else f"{name}: {message}"


def _message(arg: ast.AST) -> str | None:
    """The message as printed: a string's text, an f-string's with `'x'` for each value, `%` parts filled."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return _PLACEHOLDER.sub("'x'", arg.value)
    if isinstance(arg, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "'x'" for v in arg.values)
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod):
        return _message(arg.left)
    return None


def rank(hits: Sequence[Hit], wanted: frozenset[tuple[str, int, int]], prefix: str) -> int | None:
    """The place of the first hit that is a raising definition or a part of one (a function's code after a nested
    definition is a unit of its own), None beyond 10."""
    for i, hit in enumerate(hits[:10]):
        path, start, end = prefix + hit.path, hit.start_line, hit.end_line
        if any(path == p and first <= start and end <= last for p, first, last in wanted):
            return i + 1
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--splits", default="dev")
    parser.add_argument("--rankers", default="bm25,ctxsieve-lexical")
    parser.add_argument("--per-repo", type=int, default=40)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--alone", action="store_true", help="the message pasted without its exception's name")
    args = parser.parse_args()
    rankers = args.rankers.split(",")
    totals: dict[tuple[str, str], list[int | None]] = {}
    for repo, (commit, split, package) in REPOS.items():
        if split not in args.splits.split(","):
            continue
        with workdir(repo, WORK / "error_messages") as folder:
            checkout(folder, commit)
            cases = cases_of(folder, package, args.per_repo, args.alone)
            for name in rankers:
                localizer = ranker(name)()
                localizer.sync(folder)
                found = [rank(localizer.search(case.query, 10), case.wanted, "") for case in cases]
                totals.setdefault((split, name), []).extend(found)
                if args.verbose:
                    for case, place in zip(cases, found, strict=True):
                        print(f"  {repo:18} {name:17} {place or '-':>2} {case.query[:110]!r}", flush=True)
                print(f"{repo:18} {split:5} {name:17} {len(cases):>3} cases  " + "  ".join(
                    f"first {d}: {sum(1 for p in found if p and p <= d)}" for d in DEPTHS), flush=True)
    for (split, name), found in totals.items():
        print(f"{split:5} {name:17} {len(found):>3} cases  " + "  ".join(
            f"first {d}: {sum(1 for p in found if p and p <= d) / len(found):.3f}" for d in DEPTHS))


if __name__ == "__main__":
    main()
