"""Short searches written by another project: semble's annotated queries, scored as semble scores them.

Usage: python -m bench.short_queries [--splits dev,test] [--rankers bm25,ctxsieve-lexical,ctxsieve]
       [--annotations DIR] [--verbose]

The localization bench's requests are issues (57 words or more); an agent's own searches are a few words ("radix
tree path matching", `RouterGroup`). semble (MinishLab/semble, MIT) published such queries for 62 repositories,
each with the files that answer it (`relevant`, `secondary`; a few with a line span), and its NDCG@10 on them. This
bench reads their annotation files from --annotations (default ~/.cache/ctxsieve/bench/semble/annotations: copies of
semble's `benchmarks/annotations/<repo>.json`, at the commits in ANNOTATIONS), checks each repository out at the
revision semble pinned (its snapshot in /work/.mirror, as the search tool's `fetch` leaves it) and indexes the
folder semble indexed (`benchmark_root`), then ranks each query's first 10 hits with each ranker and scores them as
semble's benchmarks/bench_hybrid.py does: a target's rank is that of the first hit in its file (and overlapping its
span, when it has one); NDCG@10 with binary gains over the targets the index holds; a repository's figure is the
mean of its queries', a split's the mean of its repositories'. No rule was chosen on these queries before they were
first run: `dev` holds the repositories earlier user trials searched (gin, gson, axum, sinatra, zod, express, cobra),
`test` eight more none of them did, copied to disk by a helper so that their queries were not read here
before the run. semble's own figure for each repository (its published results, potion-code-16M-v2, another run
on another machine: not comparable to the millisecond) is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.localize import WORK, Hit, checkout, ranker, workdir
from bench.localize_data import CACHE

ANNOTATIONS = CACHE.parent / "semble" / "annotations"
K = 10


@dataclass(frozen=True)
class Repo:
    name: str  # semble's name for it, its annotation file's
    github: str  # owner/name
    revision: str  # semble's pin
    root: str  # the folder semble indexes, "" for all of it
    split: str
    semble: float  # semble's published NDCG@10 (benchmarks/results/semble-hybrid-a772a37d558c.json)


REPOS = (
    Repo("gin", "gin-gonic/gin", "d3ffc9985281dcf4d3bef604cce4e662b1a327a6", "", "dev", 0.890),
    Repo("gson", "google/gson", "f4d371d29c04066dbe7fdb31f642831f9c7f40cd", "gson", "dev", 0.817),
    Repo("axum", "tokio-rs/axum", "309d1bd9530eec2217134cb262760af1df42ee3b", "axum/src", "dev", 0.817),
    Repo("sinatra", "sinatra/sinatra", "f891dd2b6f4911e356600efe6c3b82af97d262c6", "lib", "dev", 0.982),
    Repo("zod", "colinhacks/zod", "c7805073fef5b6b8857307c3d4b3597a70613bc2", "packages/zod/src", "dev", 0.643),
    Repo("express", "expressjs/express", "8e022edc9185f540a3fcecaf5e56b850d919cdac", "lib", "dev", 0.949),
    Repo("cobra", "spf13/cobra", "61968e893eee2f27696c2fbc8e34fa5c4afaf7c4", "", "dev", 0.971),
    Repo("chi", "go-chi/chi", "a54874f0e2f12647a19e82ee70dfa8185014100c", "", "test", 0.870),
    Repo("rack", "rack/rack", "ca8a404704ed043797c4f9d482c97d722c0dc719", "lib/rack", "test", 0.911),
    Repo("serde", "serde-rs/serde", "fa7da4a93567ed347ad0735c28e439fca688ef26", "", "test", 0.725),
    Repo("fastapi", "fastapi/fastapi", "c3c9dd6b1a08bcda766e7b43eafe72c4c5e9e193", "fastapi", "test", 0.784),
    Repo("trpc", "trpc/trpc", "c188dab0822caf3615199e4ac95147bc7560d26f", "packages/server/src", "test", 0.849),
    Repo("commons-lang", "apache/commons-lang", "0ba92dc402312a38252a3398931ffbfbb4a88f7d",
         "src/main/java/org/apache/commons/lang3", "test", 0.883),
    Repo("aiohttp", "aio-libs/aiohttp", "fc67cfdfd7d4bbf53ef76515fae69726626fe256", "aiohttp", "test", 0.855),
    Repo("alamofire", "Alamofire/Alamofire", "e938f8c66708e7352fc7e3512647fa54255b267a", "Source", "test", 0.978),
    # test 2: to judge a change chosen on dev after test had been run (copied to disk as test's were)
    Repo("model2vec", "MinishLab/model2vec", "b3012ee04e41c634383a5d735cb3c7c51e806a18", "model2vec", "test2", 0.738),
    Repo("ktor", "ktorio/ktor", "5913745a96101e8c78e47565e52d2baa8414441f", "ktor-client/ktor-client-core/common/src",
         "test2", 0.852),
    Repo("libuv", "libuv/libuv", "40178b916e5937ed43c557aa051bdb3f86f6ca93", "src", "test2", 0.624),
    Repo("fmtlib", "fmtlib/fmt", "382609a920d2c43c00f2951233bc0d578a783982", "include/fmt", "test2", 0.916),
    Repo("exposed", "JetBrains/Exposed", "7c80ed943b529f293b33ee7e0facdfd880cf4aec", "exposed-core/src/main/kotlin",
         "test2", 0.648),
    Repo("cats", "typelevel/cats", "2102251a2f24a6ee14e087fc5da7768d267f2d6e", "core/src/main/scala", "test2", 0.911),
)


@dataclass(frozen=True)
class Target:
    path: str  # from the repository's root
    start_line: int | None = None
    end_line: int | None = None


@dataclass(frozen=True)
class Query:
    text: str
    targets: tuple[Target, ...]  # relevant, then secondary: each a gain of 1
    category: str


def queries(folder: Path, repo: Repo) -> list[Query]:
    raw = json.loads((folder / f"{repo.name}.json").read_text(encoding="utf-8"))
    return [Query(item["query"], tuple(_target(t) for t in [*item.get("relevant", []), *item.get("secondary", [])]),
                  item.get("category", "")) for item in raw]


def _target(raw: str | dict[str, object]) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    start, end = raw.get("start_line"), raw.get("end_line")
    return Target(str(raw["path"]), int(str(start)) if start is not None else None,
                  int(str(end)) if end is not None else None)


def covers(hit_path: str, start: int, end: int, target: Target) -> bool:
    """A hit (its path from the repository's root) is in the target's file and, when it has a span, overlaps it."""
    if hit_path != target.path and not hit_path.endswith("/" + target.path):
        return False
    return target.start_line is None or target.end_line is None or not (
        end < target.start_line or start > target.end_line)


def ndcg(hits: Sequence[Hit], targets: Sequence[Target], held: int, prefix: str) -> float:
    """semble's NDCG@10: each target's rank is its first covering hit's; binary gains; the ideal over the targets
    the index holds (`held`)."""
    if held == 0:
        return 0.0
    ranks = {next((i + 1 for i, h in enumerate(hits[:K]) if covers(prefix + h.path, h.start_line, h.end_line, t)),
                  None) for t in targets}
    gains = [0.0] * K
    for rank in ranks:
        if rank is not None:
            gains[rank - 1] = 1.0
    ideal = sum(1 / math.log2(i + 2) for i in range(min(K, held)))
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains)) / ideal


def run(repo: Repo, asked: list[Query], rankers: list[str], verbose: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    with workdir(repo.github, WORK / "short_queries") as folder:
        checkout(folder, repo.revision)
        root = folder / repo.root if repo.root else folder
        prefix = f"{repo.root}/" if repo.root else ""
        files = {p.relative_to(folder).as_posix() for p in root.rglob("*") if p.is_file()}
        for name in rankers:
            localizer = ranker(name)()
            localizer.sync(root)
            scores = []
            for query in asked:
                held = sum(1 for t in query.targets if any(f == t.path or f.endswith("/" + t.path) for f in files))
                hits = localizer.search(query.text, K)
                scores.append(ndcg(hits, query.targets, held, prefix))
                if verbose:
                    print(f"  {repo.name:12} {name:17} {scores[-1]:.3f} {query.text!r} -> "
                          f"{[prefix + h.path for h in hits[:3]]}", flush=True)
            out[name] = sum(scores) / len(scores)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--splits", default="dev")
    parser.add_argument("--rankers", default="bm25,ctxsieve-lexical,ctxsieve")
    parser.add_argument("--repos", default="", help="only these (semble's names, comma-separated)")
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    rankers = args.rankers.split(",")
    splits = args.splits.split(",")
    chosen = [r for r in REPOS if r.split in splits and (not args.repos or r.name in args.repos.split(","))
              and (args.annotations / f"{r.name}.json").exists()]  # (another set of queries may cover some only)
    width = max(18, *(len(n) + 2 for n in rankers))
    print(f"{'repository':14}{'split':6}{'queries':>8}" + "".join(f"{n:>{width}}" for n in rankers)
          + f"{'semble (pub.)':>15}")
    table: dict[str, list[tuple[Repo, dict[str, float]]]] = {}
    for repo in chosen:
        asked = queries(args.annotations, repo)
        found = run(repo, asked, rankers, args.verbose)
        table.setdefault(repo.split, []).append((repo, found))
        print(f"{repo.name:14}{repo.split:6}{len(asked):>8}" + "".join(f"{found[n]:>{width}.3f}" for n in rankers)
              + f"{repo.semble:>15.3f}", flush=True)
    for split, rows in table.items():
        means = {n: sum(found[n] for _, found in rows) / len(rows) for n in rankers}
        semble = sum(repo.semble for repo, _ in rows) / len(rows)
        print(f"{'mean ' + split:14}{'':6}{'':>8}" + "".join(f"{means[n]:>{width}.3f}" for n in rankers)
              + f"{semble:>15.3f}")


if __name__ == "__main__":
    main()
