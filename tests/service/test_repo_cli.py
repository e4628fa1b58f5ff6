"""`ctxsieve index` and `ctxsieve search` as a user runs them, against the real app on loopback: a folder named is
indexed as it is (not widened to the git repository around it), the definitions come back at their true lines, and
bad input is a line on stderr saying what to do, never a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.client.code_repository import check_hit, definition, hits_of, make_repository
from tests.conftest import make_settings, serve_on_loopback, stub_models

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("cli-work")
    root = make_repository(work)
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("cli-data"), read_roots=str(work)),
                                  stub_models())
    yield url, root
    stop()


def ctxsieve(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "ctxsieve"), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)


def test_index_then_search_from_the_command_line(served: tuple[str, Path]) -> None:
    url, root = served
    done = ctxsieve(root / "billing", "index", "--url", url)  # no PATH: the git repository around here
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"indexing {root} as repository ledger-app at {url}\n"), done.stdout
    assert "ledger-app: 3 files, " in done.stdout and done.stderr == ""
    found = ctxsieve(root, "search", "the tax rate of a region", "--repo", "ledger-app", "-k", "3", "--url", url)
    assert found.returncode == 0, found.stderr
    hits = {hit.name: hit for hit in hits_of(found.stdout)}
    check_hit(root, hits["TaxTable.rate_for"], definition(root, "billing/tax.py", "TaxTable.rate_for"))
    for path, folder in ((".", "billing/"), ("../app", "app/")):  # as the shell names a folder, from the current
        here = ctxsieve(root / "billing", "search", "the ledger", "--repo", "ledger-app", "--path", path, "--url", url)
        assert here.returncode == 0 and hits_of(here.stdout), here.stdout + here.stderr  # one (a review: `.` was
        assert all(hit.path.startswith(folder) for hit in hits_of(here.stdout)), (path, here.stdout)  # the top)


def test_index_names_the_files_it_left_out(served: tuple[str, Path]) -> None:
    """`skipped: 1 binary, 1 huge` left a user to find which files those were."""
    url, root = served
    folder = root.parent / "with-blobs"
    folder.mkdir()
    (folder / "app.py").write_text("def serve():\n    return 1\n")
    (folder / "blob.py").write_bytes(b"\x00\x01def binary_thing(): pass\n")
    (folder / "huge.py").write_text("x = 1\n" * 200_000)
    done = ctxsieve(root.parent, "index", str(folder), "--url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped: 1 binary (blob.py), 1 huge (huge.py))" in done.stdout, done.stdout
    planned = ctxsieve(root.parent, "index", str(folder), "--dry-run")  # rich's minified test file was counted
    assert "1 source file (skipped: 1 binary (blob.py), 1 huge (huge.py))," in planned.stdout, planned.stdout


def test_index_again_says_what_changed(served: tuple[str, Path]) -> None:
    """A trial user edited a file and deleted two, ran `ctxsieve index` again and was told only the new totals;
    another was told "1 new or changed file read" and not which."""
    url, root = served
    folder = root.parent / "changing"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    first = ctxsieve(root.parent, "index", str(folder), "--url", url)
    assert "changing: 3 files, 3 definitions, state " in first.stdout and "files read" not in first.stdout, first.stdout
    unchanged = ctxsieve(root.parent, "index", str(folder), "--url", url)
    assert "; no file changed since the last sync; skipped: none)" in unchanged.stdout, unchanged.stdout
    (folder / "a.py").write_text("def a():\n    return 2\n")
    (folder / "d.py").write_text("def d():\n    return 1\n")
    (folder / "b.py").unlink()
    again = ctxsieve(root.parent, "index", str(folder), "--url", url)
    assert "changing: 3 files, 3 definitions, " in again.stdout, again.stdout
    assert "; 2 new or changed files read (a.py, d.py), 1 deleted file dropped (b.py); skipped: none)" in \
        again.stdout, again.stdout


def test_repos_lists_and_forgets_from_the_command_line(served: tuple[str, Path]) -> None:
    """A trial user found no way to list or drop a repository's index but over HTTP."""
    url, root = served
    folder = root.parent / "forgettable"
    folder.mkdir()
    (folder / "a.py").write_text("def forgettable_thing():\n    return 1\n")
    assert ctxsieve(root.parent, "index", str(folder), "--url", url).returncode == 0
    listed = ctxsieve(root.parent, "repos", "--url", url)
    assert listed.returncode == 0 and f"forgettable: {folder}, 1 file, 1 definition, state " in listed.stdout, listed
    assert all(": " in line and ", state " in line for line in listed.stdout.splitlines()), listed.stdout
    gone = ctxsieve(root.parent, "repos", "forget", "forgettable", "--url", url)
    assert gone.returncode == 0 and gone.stdout.startswith("forgettable: forgotten (its index is dropped; the folder "
                                                           "is untouched"), gone.stdout
    assert "forgettable:" not in ctxsieve(root.parent, "repos", "--url", url).stdout and (folder / "a.py").exists()
    again = ctxsieve(root.parent, "repos", "forget", "forgettable", "--url", url)
    assert again.returncode == 1 and "`ctxsieve repos` lists them" in again.stderr, again.stderr
    for args, said in ((["repos", "forget"], "forget NAME: name the repository to forget"),
                       (["repos", "forget", "../x"], "a repository's name is 1 to 64"),
                       (["repos", "list", "ledger-app"], "`ctxsieve repos forget ledger-app`")):
        refused = ctxsieve(root.parent, *args, "--url", url)
        assert refused.returncode == 2 and said in refused.stderr, (args, refused.stderr)


def test_a_folder_named_is_indexed_as_it_is(served: tuple[str, Path]) -> None:
    url, root = served
    done = ctxsieve(root.parent, "index", str(root / "billing"), "--url", url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"indexing {root / 'billing'} as repository billing at "), done.stdout
    assert "billing: 2 files, " in done.stdout, "billing/'s own files, not the repository around it"
    indexed = re.search(r"billing: 2 files, ([\d,]+) definitions", done.stdout)
    estimated = ctxsieve(root.parent, "index", str(root / "billing"), "--dry-run")
    assert indexed and f"; {indexed[1]} definitions (all parsed now in " in estimated.stdout, (done.stdout,
                                                                                         estimated.stdout)
    found = ctxsieve(root, "search", "invoice total with discount", "--repo", "billing", "--url", url)
    hit = next(h for h in hits_of(found.stdout) if h.name == "compute_invoice_total")
    assert hit.path == "invoices.py", "paths from the folder indexed"
    planned = ctxsieve(root.parent, "index", str(root / "app"), "--dry-run")
    assert planned.returncode == 0 and f"dry run: {root / 'app'} as repository app: 1 source file," in planned.stdout
    here = ctxsieve(root / "app", "index", ".", "--dry-run")  # `.` names this folder; no PATH, the repository
    assert f"dry run: {root / 'app'} as repository app: 1 source file," in here.stdout, here.stdout
    around = ctxsieve(root / "app", "index", "--dry-run")
    assert f"dry run: {root} as repository ledger-app: 3 source files" in around.stdout, around.stdout


def test_a_dry_run_says_when_the_users_own_service_would_refuse_the_folder(served: tuple[str, Path]) -> None:
    """A trial user learnt only from `index`'s 403 that the folder was outside what the service reads; another, with
    `--url` naming a service that reads it, was told a service would refuse it."""
    _, root = served
    env = {k: v for k, v in os.environ.items() if k not in ("CTXSIEVE_READ_ROOTS", "CTXSIEVE_URL")}

    def dry_run(**changes: str) -> str:
        done = subprocess.run([str(BIN / "ctxsieve"), "index", str(root), "--dry-run"], cwd=root, text=True,
                              capture_output=True, timeout=300, check=False, env={**env, **changes})
        assert done.returncode == 0, done.stderr
        return done.stdout

    refused = dry_run(HOME=str(root / "billing"))  # the own service reads the home folder: not this one
    assert refused.rstrip().endswith(f"would refuse it: it reads only {root / 'billing'} (CTXSIEVE_READ_ROOTS; "
                                     "restart it with this folder added, `:` between folders)"), refused
    assert "refuse" not in dry_run(HOME=str(root.parent))
    assert "refuse" not in dry_run(HOME=str(root / "billing"), CTXSIEVE_READ_ROOTS=f"/nowhere:{root}")
    assert "it reads only /nowhere" in dry_run(CTXSIEVE_READ_ROOTS="/nowhere")
    assert "refuse" not in dry_run(HOME=str(root / "billing"), CTXSIEVE_URL="http://127.0.0.1:9")  # its own roots
    # (two trials' services made no vectors and were promised them "in about 7 s more")
    assert "by meaning never (CTXSIEVE_REPO_VECTORS is off here" in dry_run(CTXSIEVE_REPO_VECTORS="false")
    assert "made behind it, if that service makes vectors (its CTXSIEVE_REPO_VECTORS)" in dry_run(
        CTXSIEVE_URL="http://127.0.0.1:9", CTXSIEVE_REPO_VECTORS="false")
    assert "by meaning (its vectors, made behind it) in about" in dry_run(HOME=str(root.parent))


@pytest.mark.parametrize(("args", "said", "code"), [
    (["index", "/no/such/folder"], "ctxsieve index: /no/such/folder: no such folder", 2),
    (["index", "/no/such/folder", "--dry-run"], "ctxsieve index: /no/such/folder: no such folder", 2),
    (["index", "billing/tax.py"], "ctxsieve index: billing/tax.py: not a folder", 2),
    (["index", ".", "--name", "bad name/x"], "ctxsieve index: --name 'bad name/x': a repository's name is", 2),
    (["index", ".", "--name", "bad name/x", "--dry-run"], "a repository's name is 1 to 64 letters", 2),
    (["index", ".", "--name", ".."], "not dots alone", 2),
    (["search", "tax", "--repo", "never-indexed"], "run `ctxsieve index PATH --name never-indexed`", 1),
    (["search", "x", "--repo", "../etc"], "ctxsieve search: --repo '../etc': a repository's name is 1 to 64", 2),
    (["search", " ", "--repo", "ledger-app"], "ctxsieve search: the query is blank: say what to find", 2),
    (["search", "tax", "--repo", "ledger-app", "-k", "0"], "ctxsieve search: -k 0: from 1 to 50 definitions", 2),
    (["search", "tax", "--repo", "ledger-app", "-k", "100000"], "ctxsieve search: -k 100000: from 1 to 50", 2),
    (["search", "tax", "--repo", "ledger-app", "--max-tokens", "0"], "--max-tokens 0: from 1 to 6000", 2),
    (["search", "tax", "--repo", "ledger-app", "--max-tokens", "7000"], "--max-tokens 7000: from 1 to 6000", 2),
])
def test_bad_input_is_one_line_on_stderr(served: tuple[str, Path], args: list[str], said: str, code: int) -> None:
    url, root = served
    done = ctxsieve(root, *args, *([] if "--dry-run" in args else ["--url", url]))
    assert done.returncode == code, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr and done.stdout == "", done.stderr
    assert len(done.stderr.strip().split("\n")) == 1, done.stderr


def test_a_search_in_a_repository_the_service_may_not_read_says_to_name_one(served: tuple[str, Path],
                                                                             tmp_path: Path) -> None:
    url, _ = served
    done = ctxsieve(make_repository(tmp_path), "search", "tax", "--url", url)
    assert done.returncode == 1 and "outside the read roots" in done.stderr, done.stderr
    assert "name an indexed repository with --repo NAME" in done.stderr and done.stdout == ""


def test_a_folder_in_no_git_repository_is_searched_only_once_indexed(served: tuple[str, Path]) -> None:
    """An agent or a user in a plain folder (a home folder, say) does not index it by searching: the answer says how
    to; once `ctxsieve index` has run there, the same search answers from it."""
    url, root = served
    plain = root.parent / "plain-notes"
    plain.mkdir()
    (plain / "shelf.py").write_text("def count_shelves(room):\n    return len(room.shelves)\n")
    asked = ctxsieve(plain, "search", "how many shelves", "--url", url)
    assert asked.returncode == 1 and "run `ctxsieve index PATH --name plain-notes`" in asked.stderr, asked.stderr
    assert f"{plain} is in no git repository, so nothing was indexed for it" in asked.stderr, asked.stderr
    assert httpx.get(f"{url}/v1/repos/plain-notes").status_code == 404, "nothing indexed unasked"
    assert ctxsieve(plain, "index", ".", "--url", url).returncode == 0
    (root.parent / "plain-moved").mkdir()
    moved = ctxsieve(root.parent / "plain-moved", "index", ".", "--name", "plain-notes", "--url", url)
    assert moved.returncode == 0 and (f"plain-notes: was the repository at {plain}; it is now "
                                      f"{root.parent / 'plain-moved'}") in moved.stdout, moved.stdout
    assert ctxsieve(plain, "index", ".", "--url", url).returncode == 0
    found = ctxsieve(plain, "search", "how many shelves", "--url", url)
    assert found.returncode == 0 and "shelf.py:1-2 function count_shelves" in found.stdout, found.stdout


def test_no_service_is_said_with_how_to_start_one(tmp_path: Path) -> None:
    done = ctxsieve(tmp_path, "search", "tax", "--repo", "x", "--url", "http://127.0.0.1:9")
    assert done.returncode == 1 and "is the service running?" in done.stderr and "Traceback" not in done.stderr


def test_a_reader_that_goes_ends_the_output_without_a_traceback(served: tuple[str, Path]) -> None:
    """`ctxsieve index ... | head -1` printed a BrokenPipeError traceback: a command whose reader left stops quietly,
    with the status a shell gives such a command (141, as `yes | head`), and the service's work goes on."""
    url, root = served
    for args in (["index", "--url", url], ["search", "the tax rate of a region", "--repo", "ledger-app", "--url", url]):
        read, write = os.pipe()
        os.close(read)  # the reader gone before the first line
        with os.fdopen(write, "w") as stdout:
            done = subprocess.run([str(BIN / "ctxsieve"), *args], cwd=root, stdout=stdout, stderr=subprocess.PIPE,
                                  text=True, timeout=300, check=False)
        assert (done.returncode, done.stderr) == (141, ""), (args, done.stderr)
    found = ctxsieve(root, "search", "the tax rate of a region", "--repo", "ledger-app", "--url", url)
    assert found.returncode == 0 and "TaxTable.rate_for" in found.stdout
