"""How often the grammar misreads a repository's source files, as they are written and as the units reader hands
them to it (its preprocessing for the grammar: C/C++ macros, C# and Swift `#if`, Kotlin Multiplatform), and how many
units the reader makes of them.

Usage: python -m bench.units_parse [--repos owner/name,...]

Each repository is read at its snapshot's HEAD (the snapshot bench.localize_data reads; bring one with the search
tool's fetch), every file whose language the code kind parses, up to 400 kB. Per repository and
language: files, files with a parse error as written, as the units reader parses them, and units.
"""

from __future__ import annotations

import argparse
import subprocess
from collections import defaultdict

from bench.localize_data import git_dir
from ctxsieve.ingest.coderank.units import units_of
from ctxsieve.ingest.kinds import code

REPOS = ("DaveGamble/cJSON", "JamesNK/Newtonsoft.Json", "Alamofire/Alamofire", "antirez/sds", "fmtlib/fmt",
         "gin-gonic/gin", "google/gson", "sinatra/sinatra", "sindresorhus/got", "slimphp/Slim", "square/okio",
         "tokio-rs/axum", "nvim-telescope/telescope.nvim", "com-lihaoyi/upickle")
LARGEST = 400_000  # bytes: larger files are generated or vendored more often than written


def sources(repo: str) -> list[tuple[str, str]]:
    """(path, text) of each file at HEAD of `repo`'s snapshot whose language the code kind parses (a blob the
    snapshot lacks is left out)."""
    folder = str(git_dir(repo))
    listed = subprocess.run(["git", "--git-dir", folder, "ls-tree", "-r", "-z", "--long", "HEAD"],
                            capture_output=True, check=True).stdout.decode("utf-8", "replace")
    wanted = []
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        _, kind, sha, size = meta.split()
        if kind == "blob" and size.isdigit() and int(size) <= LARGEST and code.language_of(path) is not None:
            wanted.append((path, sha))
    batch = subprocess.run(["git", "--git-dir", folder, "cat-file", "--batch"], capture_output=True, check=True,
                           input="".join(f"{sha}\n" for _, sha in wanted).encode()).stdout
    found, at = [], 0
    for path, _ in wanted:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        at = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        found.append((path, batch[at : at + size].decode("utf-8", "replace")))
        at += size + 1
    return found


def measure(repo: str) -> dict[str, list[int]]:
    """Per language: files, misparsed as written, misparsed as the units reader parses them, units."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for path, text in sources(repo):
        language = code.language_in(path, text)
        parser = code._parser(language)  # noqa: SLF001 -- the reader's own grammar and preprocessing
        if parser is None:
            continue
        source = text.encode("utf-8")
        row = rows[language or ""]
        row[0] += 1
        row[1] += parser.parse(source).root_node.has_error
        row[2] += code._tree(parser, source, language).root_node.has_error  # noqa: SLF001
        row[3] += len(units_of(path, text))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default=",".join(REPOS))
    args = parser.parse_args()
    print(f"{'repository':<26} {'language':<11} {'files':>6} {'misread as written':>19} {'as read':>8} {'units':>7}")
    for repo in args.repos.split(","):
        for language, (files, written, read, units) in sorted(measure(repo).items()):
            print(f"{repo:<26} {language:<11} {files:>6} {written:>19} {read:>8} {units:>7}", flush=True)


if __name__ == "__main__":
    main()
