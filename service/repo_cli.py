"""`ctxsieve index [PATH]` and `ctxsieve search QUERY`: a repository's code search from the command line.

`index` registers the repository (default: the git repository around the current folder, named as its folder) with
the running service and prints a line per step, a progress line every few seconds on a long first index, and exits
0 once the repository can be searched. `--dry-run` counts the files the service would read and estimates the
definitions and the time from a sample it parses here; it writes nothing. `search` prints the definitions best first
with their true line numbers, as the agents' `search_code` tool shows them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ctxsieve_client.code_search import TOOL_MAX_TOKENS
from ctxsieve_client.errors import CtxsieveError
from ctxsieve_client.models import RepoProgress
from ctxsieve_client.names import MAX_K

if TYPE_CHECKING:
    from ctxsieve_client import Client, RepoInfo

PROGRESS_EVERY_S = 5.0
NAME_RULE = "a repository's name is 1 to 64 letters, digits, '.', '_' or '-', not dots alone"
SAMPLE_S = 5.0  # a dry run parses files for this long at most (all of ansible's), then scales by bytes
# what an index costs beyond the parse, on ansible (2 cores, Intel Xeon, at 393ad74): `ctxsieve index --dry-run`
# parses its 1,795 files in 2.2-2.3 s, `python -m bench.repos --peers "" --searches 100` makes it searchable by
# words in 5.2 s (bench/results/repos-stop59.txt)
INDEX_PER_PARSE = 2.3
# and its vectors, one per definition of the code it ships (`ranker.has_vector`: 5,663 of its 14,229 at the bench's
# commit), 75 s after it was searchable by words (bench/results/repos-stop71.txt): per definition over all of them,
# the estimate said 37 s for a trial's Kotlin repository, most of whose definitions are tests, that took minutes
VECTOR_S_PER_VECTOR = 0.0132


def add_index_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("path", nargs="?", help="the folder (default: the git repository around the current folder)")
    cmd.add_argument("--name", help="the repository's name: letters, digits, '.', '_', '-' (default: its folder's)")
    cmd.add_argument("--url", help="the service (default: CTXSIEVE_URL, else the one install wired)")
    cmd.add_argument("--api-key", help="for --url when keys are configured (also CTXSIEVE_API_KEY)")
    cmd.add_argument("--dry-run", action="store_true", help="count the files and estimate; write nothing")
    cmd.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for it to be searchable")


def add_search_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("query")
    cmd.add_argument("--repo", help="the repository (default: the one around the current folder)")
    cmd.add_argument("-k", type=int, default=10, help=f"definitions to return (1 to {MAX_K}; default 10)")
    cmd.add_argument("--path", help="only files matching this glob or under this folder")
    cmd.add_argument("--max-tokens", type=int,
                     help=f"tokens of the whole answer as printed (default 2000, at most {TOOL_MAX_TOKENS})")
    cmd.add_argument("--url", help="the service (default: CTXSIEVE_URL, else the one install wired)")
    cmd.add_argument("--api-key", help="for --url when keys are configured (also CTXSIEVE_API_KEY)")


def add_repos_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("action", nargs="?", choices=["list", "forget"], default="list")
    cmd.add_argument("name", nargs="?", help="forget: the repository whose index to drop (its folder is untouched)")
    cmd.add_argument("--url", help="the service (default: CTXSIEVE_URL, else the one install wired)")
    cmd.add_argument("--api-key", help="for --url when keys are configured (also CTXSIEVE_API_KEY)")


def repos(args: argparse.Namespace) -> int:
    """`ctxsieve repos`: the indexed repositories, a line each; `ctxsieve repos forget NAME` drops one's index (a
    trial user found neither but over HTTP)."""
    from ctxsieve_client.names import usable_name

    if args.action == "forget" and (args.name is None or not usable_name(args.name)):
        return _refused("repos", "forget NAME: name the repository to forget (`ctxsieve repos` lists them)"
                        if args.name is None else f"forget {args.name!r}: {NAME_RULE}")
    if args.action == "list" and args.name is not None:
        return _refused("repos", f"{args.name!r}: to drop a repository's index, `ctxsieve repos forget {args.name}`")
    client = _client(args)
    try:
        if args.action == "forget":
            client.delete_repo(args.name)
            _say(f"{args.name}: forgotten (its index is dropped; the folder is untouched; `ctxsieve index` makes it "
                 "again)")
            return 0
        listed = client.repos().repos
    except (CtxsieveError, httpx.HTTPError) as exc:
        missing = isinstance(exc, CtxsieveError) and exc.status == 404
        return _failed(exc, args, "; `ctxsieve repos` lists them" if missing else "")
    for info in listed:
        _say(f"{info.name}: {info.path}, {_count(info.files, 'file')}, {_count(info.definitions, 'definition')}, "
             f"state {_state(info)}" + (f", indexed {info.indexed_at}" if info.indexed_at else "")
             + (f"; the last sync failed: {info.error}" if info.error else ""))
    if not listed:
        _say("no repository is indexed: `ctxsieve index PATH` indexes one")
    return 0


def index(args: argparse.Namespace) -> int:
    from ctxsieve_client.code_search import folder_name, repo_around
    from ctxsieve_client.names import usable_name

    if args.path is None:
        default, root = repo_around(Path.cwd())
    elif Path(args.path).is_dir():  # a folder named is indexed as it is, even inside a larger git repository
        root = Path(args.path).resolve()
        default = folder_name(Path(os.path.abspath(args.path)))  # named as the user names it, a link too
    else:
        return _refused("index", f"{args.path}: {'not a folder' if Path(args.path).exists() else 'no such folder'}")
    name = args.name or default
    if not usable_name(name):
        return _refused("index", f"--name {name!r}: {NAME_RULE}")
    if args.dry_run:
        return _dry_run(name, root, own=not (args.url or os.environ.get("CTXSIEVE_URL")))
    client = _client(args)
    started = time.monotonic()
    _say(f"indexing {root} as repository {name} at {client_url(args)}")
    try:
        again = _said_if_moved(client, name, root)
        info = client.index_repo(name, str(root))
        info = _wait(client, name, info, args.timeout, started)
    except (CtxsieveError, httpx.HTTPError) as exc:
        return _failed(exc, args)
    if info.error:
        _say(f"{name}: the sync failed: {info.error}")
        return 1
    skipped = ", ".join(f"{n} {why}{_named(info.skipped_paths.get(why, []), n)}"
                        for why, n in sorted(info.skipped.items())) or "none"
    _say(f"{name}: {_count(info.files, 'file')}, {_count(info.definitions, 'definition')}, state {_state(info)} "
         f"({time.monotonic() - started:.1f} s; {_changes(info) + '; ' if again else ''}skipped: {skipped}); search it "
         f"with `ctxsieve search QUERY --repo {name}` or the agents' search_code")
    left = info.progress.vectors_left if info.progress is not None else None
    if info.state == "lexical" and left:
        _say(f"{name}: the vectors of {left:,} definitions of the code it ships are made in the background, while the "
             "service is idle (the code in tests, examples, docs and vendored folders is found by its words and "
             "names); the state is `ready` once they are (`ctxsieve search` and search_code answer meanwhile)")
    return 0 if info.state != "indexing" else 1


def _state(info: RepoInfo) -> str:
    """A repository's state as said: `lexical` said final where the service makes no vectors (two trials read it as a
    wait for them)."""
    return f"{info.state} (final: this service makes no vectors)" if info.vectors_off and info.state == "lexical" \
        else info.state


def _said_if_moved(client: Client, name: str, root: Path) -> bool:
    """A name already given to another folder is moved to this one (the service's PUT replaces): said, not silent.
    Whether this folder was indexed under this name before (its index is then brought up to date)."""
    try:
        known = client.repo(name)
    except CtxsieveError as exc:
        if exc.status == 404:
            return False
        raise
    if Path(known.path) != root:
        _say(f"{name}: was the repository at {known.path}; it is now {root} (index the other with --name)")
        return False
    return True


def _from_here(path: str | None) -> str | None:
    """`--path` as a shell means it: `.`, `./binding`, `../render` from the current folder (absolute: the service reads
    a path inside the repository's folder from its top); any other glob as it is, over the repository's paths."""
    if path is not None and (path in (".", "..") or path.startswith(("./", "../"))):
        return os.path.abspath(path)
    return path


def _changes(info: RepoInfo) -> str:
    """What the sync that brought an indexed folder up to date did (a trial user re-indexed after editing and
    deleting files and was told only the new totals)."""
    progress = info.progress or RepoProgress(done=0, total=0)
    read, dropped = progress.total, progress.dropped
    if not read and not dropped:
        return "no file changed since the last sync"
    said = [f"{_count(read, 'new or changed file')} read{_named(progress.read_paths, read)}"] if read else []
    return ", ".join(said + ([f"{_count(dropped, 'deleted file')} dropped{_named(progress.dropped_paths, dropped)}"]
                             if dropped else []))


def search(args: argparse.Namespace) -> int:
    from ctxsieve_client.code_search import render_hits, search_request
    from ctxsieve_client.names import usable_name

    if args.repo is not None and not usable_name(args.repo):
        return _refused("search", f"--repo {args.repo!r}: {NAME_RULE}")
    if not args.query.strip():
        return _refused("search", "the query is blank: say what to find (words, a name, a path or an error)")
    if not 1 <= args.k <= MAX_K:
        return _refused("search", f"-k {args.k}: from 1 to {MAX_K} definitions")
    if args.max_tokens is not None and not 1 <= args.max_tokens <= TOOL_MAX_TOKENS:
        return _refused("search", f"--max-tokens {args.max_tokens}: from 1 to {TOOL_MAX_TOKENS}")
    client = _client(args)
    call = search_request({"query": args.query, "repo": args.repo, "k": args.k, "path": _from_here(args.path),
                           "max_tokens": args.max_tokens})
    try:
        text = render_hits(client.send(call))
    except (CtxsieveError, httpx.HTTPError) as exc:
        return _failed(exc, args, _around_hint(exc, args))
    sys.stdout.write(text + "\n")
    return 0


def _around_hint(exc: CtxsieveError | httpx.HTTPError, args: argparse.Namespace) -> str:
    """What the folder around here has to do with a refusal, when no --repo named the repository."""
    from ctxsieve_client.code_search import in_git_repository

    if args.repo or not isinstance(exc, CtxsieveError):
        return ""
    if exc.status == 403:
        return "; that is the folder around here: name an indexed repository with --repo NAME"
    if exc.status == 404 and not in_git_repository(Path.cwd()):
        return (f"; {Path.cwd()} is in no git repository, so nothing was indexed for it: name an indexed "
                "repository with --repo NAME, or run the search inside a repository's folder")
    return ""


def _named(paths: list[str], count: int) -> str:
    """The files a count stands for, as far as the service names them: ` (a.bin, b.json and 3 more)`."""
    if not paths:
        return ""
    more = f" and {count - len(paths)} more" if count > len(paths) else ""
    return f" ({', '.join(paths)}{more})"


def _wait(client: Client, name: str, info: RepoInfo, timeout: float, started: float) -> RepoInfo:
    said = time.monotonic()
    while info.state == "indexing" and time.monotonic() - started < timeout:
        time.sleep(0.25)
        info = client.repo(name)
        if time.monotonic() - said >= PROGRESS_EVERY_S and info.progress is not None and info.progress.total:
            _say(f"{name}: {info.progress.done} of {info.progress.total} files read "
                 f"({time.monotonic() - started:.0f} s)")  # the time tells a slow file from a repeated line
            said = time.monotonic()
    return info


def _dry_run(name: str, root: Path, own: bool) -> int:
    """With `own`, no service named (`--url`, CTXSIEVE_URL): the user's own one would index it, whose read roots it
    checks (a trial's `--url` service read the folder, and the dry run said a service would refuse it)."""
    from ctxsieve.indexes.repos.walk import read_source, walk  # the parser and numpy: only for a dry run
    from ctxsieve.ingest.coderank.ranker import has_vector
    from ctxsieve.ingest.coderank.units import units_of

    walked = walk(root)  # (its own skips, a tracked build folder's files, are said as `index` says them)
    files = walked.files
    sizes = {f: (root / f).stat().st_size for f in files}
    started = time.perf_counter()
    definitions = vectors = sampled = parsed = 0
    skipped: dict[str, list[str]] = {}  # why -> the files read that `index` would count and leave out
    for f in _spread(files):  # in an order unrelated to the paths: the first 40 in path order were one folder's
        if parsed and time.perf_counter() - started > SAMPLE_S:
            break
        if (state := read_source(root, f)).text is not None:
            units = units_of(f, state.text)
            definitions, vectors = definitions + len(units), vectors + sum(map(has_vector, units))
        else:
            skipped.setdefault(state.why, []).append(f)
        sampled, parsed = sampled + sizes[f], parsed + 1
    spent = time.perf_counter() - started
    scale = sum(sizes.values()) / (sampled or 1)
    found = definitions * scale
    every = parsed == len(files)
    how = f"all parsed now in {spent:.1f} s" if every else f"estimated from {parsed} files parsed now in {spent:.1f} s"
    left = sum(len(paths) for paths in skipped.values())
    said = ", ".join([f"{len(paths)} {why}{_named(sorted(paths)[:3], len(paths))}"
                      for why, paths in sorted(skipped.items())]
                     + [f"{n} {why}{_named(walked.skipped.paths.get(why, [])[:3], n)}"
                        for why, n in sorted(walked.skipped.counts.items())])
    # (as `index` says it: the files it reads, and those it leaves out; of a sample, those found in it)
    files_said = _count(len(files) - left, "source file") if every else _count(len(files), "source file")
    skips = f" (skipped: {said})" if every and said else f" (skipped among those parsed: {said})" if said else ""
    _say(f"dry run: {root} as repository {name}: {files_said}{skips}, "
         f"{sum(sizes.values()) / 1e6:.1f} MB; {'' if every else 'about '}{found:,.0f} definitions "
         f"({how}); searchable by words in about {_duration(spent * scale * INDEX_PER_PARSE)} here, "
         f"{_by_meaning(_duration(vectors * scale * VECTOR_S_PER_VECTOR), own)}; nothing written"
         f"{_outside_own_roots(root) if own else ''}")
    return 0


def _by_meaning(duration: str, own: bool) -> str:
    """When its vectors would be made: a service started here with CTXSIEVE_REPO_VECTORS off makes none; a service
    named (`--url`) is not asked, so it is said as its setting's (a trial's vectorless service was promised them)."""
    if own and not _vectors_on():
        return "by meaning never (CTXSIEVE_REPO_VECTORS is off here: no vectors are made)"
    told = "" if own else ", if that service makes vectors (its CTXSIEVE_REPO_VECTORS)"
    return f"by meaning (its vectors, made behind it{told}) in about {duration} more"


def _vectors_on() -> bool:
    """Whether a service started here makes vectors: its settings read from the environment as it reads them (a
    setting it cannot read: it would refuse to start and say why; on, as its default is)."""
    from pydantic import ValidationError

    from .settings import Settings

    try:
        return Settings().repo_vectors
    except ValidationError:
        return True


def _outside_own_roots(root: Path) -> str:
    """A dry run asks no service; it says when the user's own service would refuse the folder (a trial user learnt
    it only from `index`'s 403), by the roots that service starts with and the reader it checks paths with."""
    from ctxsieve.indexes.errors import Forbidden
    from ctxsieve.indexes.files import FileReader

    from .settings import own_read_roots, root_paths

    roots = own_read_roots() or os.environ.get("CTXSIEVE_READ_ROOTS", "")
    try:
        FileReader(root_paths(roots), 1).resolve(str(root))
    except Forbidden:
        return (f"; a service started here (`make run`, `ctxsieve service start`) would refuse it: it reads only "
                f"{roots or 'nothing'} (CTXSIEVE_READ_ROOTS; restart it with this folder added, `{os.pathsep}` "
                "between folders)")
    return ""


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "a second"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _spread(files: list[str]) -> list[str]:
    """The files in an order fixed by their paths' hashes: any first part of it is a fair sample of the whole."""
    import hashlib

    return sorted(files, key=lambda f: hashlib.sha1(f.encode(), usedforsecurity=False).digest())


def _client(args: argparse.Namespace) -> Client:
    from ctxsieve_client import Client

    return Client(client_url(args), api_key=args.api_key or os.environ.get("CTXSIEVE_API_KEY"), timeout=120)


def client_url(args: argparse.Namespace) -> str:
    from ctxsieve_client.setup.state import service_url

    return str(args.url or service_url())


def _failed(exc: CtxsieveError | httpx.HTTPError, args: argparse.Namespace, hint: str = "") -> int:
    if isinstance(exc, httpx.TransportError):
        hint = "; is the service running? (`ctxsieve service start`, or `make run` in a clone)"
    sys.stderr.write(f"ctxsieve at {client_url(args)}: {exc}{hint}\n")
    return 1


def _refused(command: str, why: str) -> int:
    sys.stderr.write(f"ctxsieve {command}: {why}\n")
    return 2


def _count(n: int, thing: str) -> str:
    return f"{n:,} {thing}{'' if n == 1 else 's'}"


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
