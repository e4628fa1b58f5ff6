"""Diffs: a chunk per hunk, named by its file, the file's header going with its first hunk."""

from __future__ import annotations

from ctxsieve.ingest.kinds.diff import Diff

from .cutting import assert_exact, chunks_of


def hunk(start: int, body: str) -> str:
    return f"@@ -{start},3 +{start},3 @@ def f():\n" + body


DIFF = (
    "diff --git a/pkg/alpha.py b/pkg/alpha.py\nindex 1..2 100644\n--- a/pkg/alpha.py\n+++ b/pkg/alpha.py\n"
    + hunk(10, " a = 1\n-b = 2\n+b = 3\n c = 4\n")
    + hunk(40, " x = 1\n-y = 2\n+y = 5\n z = 4\n")
    + "diff --git a/pkg/beta.py b/pkg/beta.py\nindex 3..4 100644\n--- a/pkg/beta.py\n+++ b/pkg/beta.py\n"
    + hunk(5, " p = 1\n-q = 2\n+q = 9\n r = 4\n")
)


def test_each_hunk_is_a_chunk_named_by_its_file(tokenizer) -> None:
    view, chunks = chunks_of(DIFF, tokenizer, "auto", target=200)
    assert view.content_type == "diff"
    assert_exact(view, chunks, 200)
    assert [c.context for c in chunks] == ["file pkg/alpha.py", "file pkg/alpha.py", "file pkg/beta.py"]
    assert chunks[0].text(view.text).startswith("diff --git a/pkg/alpha.py") and "+b = 3" in chunks[0].text(view.text)
    assert chunks[1].text(view.text).startswith("@@ -40,3")
    assert chunks[2].text(view.text).startswith("diff --git a/pkg/beta.py")


def file_diff(path: str, *hunks: str) -> str:
    return f"diff --git a/{path} b/{path}\nindex 1..2 100644\n--- a/{path}\n+++ b/{path}\n" + "".join(hunks)


COMMIT = (
    "commit 0123456789abcdef\nAuthor: A <a@example.com>\n\n    Make frobnicate lazy\n\n"
    + file_diff("pkg/alpha.py", hunk(10, " a = 1\n-b = 2\n+b = 3\n c = 4\n"),
                "@@ -40,3 +40,3 @@ class Alpha:\n x = 1\n-y = 2\n+y = frobnicate(5)\n z = 4\n")
    + file_diff("pkg/beta.py", "@@ -5,3 +5,4 @@ import os\n \n-def frobnicate(x):\n+def frobnicate(x, lazy=True):\n"
                "     return x\n", "@@ -50,2 +51,2 @@ def frobnicate(x):\n-    pass\n+    return 1\n")
    + file_diff("pkg/beta.pyi", "@@ -1,1 +1,1 @@\n-def frobnicate(x: int) -> int: ...\n"
                "+def frobnicate(x: int, lazy: bool = ...) -> int: ...\n")
    + file_diff("tests/test_beta.py", "@@ -1,3 +1,3 @@ def test_frobnicate():\n-    assert frobnicate(1)\n"
                "+    assert frobnicate(1, lazy=False)\n")
)


def _files(view, chunks):  # type: ignore[no-untyped-def]
    return [c.context.removeprefix("file ") for c in chunks]


def test_each_hunk_is_its_files_and_names_the_definitions_it_touches(tokenizer) -> None:
    from ctxsieve.ingest.kinds.diff import _touched

    view, chunks = chunks_of(COMMIT, tokenizer, "auto", target=200)
    assert view.content_type == "diff"
    assert_exact(view, chunks, 200)
    assert _files(view, chunks) == ["", "pkg/alpha.py", "pkg/alpha.py", "pkg/beta.py", "pkg/beta.py", "pkg/beta.pyi",
                                    "tests/test_beta.py"]
    touched = [" ".join(_touched(c.text(view.text).split("\n"))) for c in chunks]
    assert touched == ["", "f", "Alpha", "frobnicate", "frobnicate", "frobnicate", "test_frobnicate"]


def test_the_named_files_hunks_go_first_the_stub_and_tests_after_the_source(tokenizer) -> None:
    diff = Diff()
    view, chunks = chunks_of(COMMIT, tokenizer, "auto", target=200)
    boost = diff.priorities("Make `frobnicate` lazy", view.text, chunks, None, lambda a, b: (a, b), 1500)
    assert boost is not None
    files = _files(view, chunks)
    beta = [b for f, b in zip(files, boost, strict=True) if f == "pkg/beta.py"]
    stub = [b for f, b in zip(files, boost, strict=True) if f == "pkg/beta.pyi"]
    rest = [b for f, b in zip(files, boost, strict=True) if f not in ("pkg/beta.py", "pkg/beta.pyi")]
    assert len(set(beta)) == 1 and min(beta) >= max(stub) + 1 and min(stub) >= max(rest) + 1  # a file's hunks together
    assert max(rest) == 0  # the test's `def test_frobnicate` is another name; alpha only calls it
    plain = diff.priorities("Make frobnicate lazy", view.text, chunks, None,  # a word of the diff's
                            lambda a, b: (a, b), 1500)
    assert plain is not None and list(plain) == list(boost)


def test_a_file_named_by_its_path_name_or_stem(tokenizer) -> None:
    diff = Diff()
    view, chunks = chunks_of(COMMIT, tokenizer, "auto", target=200)
    files = _files(view, chunks)
    for request in ("Tidy pkg/alpha.py", "Tidy alpha.py", "tidy the alpha module"):
        boost = diff.priorities(request, view.text, chunks, None, lambda a, b: (a, b), 1500)
        assert boost is not None, request
        assert {f for f, b in zip(files, boost, strict=True) if b > 0} == {"pkg/alpha.py"}, request
    # a test file named by its own name counts as source, ahead of the source that only defines the name
    boost = diff.priorities("Fix frobnicate in test_beta.py", view.text, chunks, None, lambda a, b: (a, b), 1500)
    assert boost is not None and files[int(boost.argmax())] == "tests/test_beta.py"


def test_a_request_naming_no_file_puts_none_first(tokenizer) -> None:
    view, chunks = chunks_of(COMMIT, tokenizer, "auto", target=200)
    assert Diff().priorities("Make it faster", view.text, chunks, None, lambda a, b: (a, b), 1500) is None
    assert Diff().priorities("", view.text, chunks, None, lambda a, b: (a, b), 1500) is None


def test_a_diff_without_prefixes_keeps_each_files_header_with_its_hunks(tokenizer) -> None:
    """`git diff --no-prefix` (or diff.noprefix) and `diff -ruN a b`: each header line starts its file."""
    no_prefix = DIFF.replace(" a/pkg/", " pkg/").replace(" b/pkg/", " pkg/")
    run = no_prefix.replace("diff --git pkg/alpha.py pkg/alpha.py", "diff -ruN old/alpha.py new/alpha.py")
    for text in (no_prefix, run):
        view, chunks = chunks_of(text, tokenizer, "diff", target=200)
        assert [c.context for c in chunks] == ["file pkg/alpha.py", "file pkg/alpha.py", "file pkg/beta.py"]
        assert chunks[0].text(view.text).startswith("diff ")
        assert chunks[2].text(view.text).startswith("diff --git pkg/beta")
