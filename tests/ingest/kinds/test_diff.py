"""Diffs: a chunk per hunk, named by its file, the file's header going with its first hunk."""

from __future__ import annotations

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
