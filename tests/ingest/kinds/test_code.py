"""Code cut at definitions (tree-sitter): whole lines with their indentation, each chunk named by its path."""

from __future__ import annotations

from ctxsieve.ingest.chunking import chunk_view
from ctxsieve.ingest.kinds.code import guess_language, import_lines, language_of
from ctxsieve.ingest.lines import LineIndex
from ctxsieve.ingest.normalize import Document, build_view
from ctxsieve_client.languages import first_line, is_absolute_folder, reads_to_end, source_path

from .cutting import chunks_of

PYTHON = '''import re

from .exceptions import ValidationError

EMPTY_VALUES = (None, "", [], (), {})


class RegexValidator:
    regex = ""
    message = "Enter a valid value."

    def __init__(self, regex=None, message=None):
        if regex is not None:
            self.regex = regex
        if message is not None:
            self.message = message

    def __call__(self, value):
        if not self.regex.search(str(value)):
            raise ValidationError(self.message)


@decorated
def validate_slug(value):
    # a comment inside
    return RegexValidator(r"^[-a-zA-Z0-9_]+$")(value)
'''
GO = '''package main

import "fmt"

type Server struct {
	name string
}

func (s *Server) Start() error {
	fmt.Println("starting", s.name)
	return nil
}

func main() {
	s := &Server{name: "a"}
	s.Start()
}
'''


def chunks(text: str, path: str | None, tokenizer, target: int = 60):  # type: ignore[no-untyped-def]
    view = build_view([Document(text)], "code")
    return view, chunk_view(view, tokenizer, target, path)


def test_python_definitions_are_whole_line_chunks_named_by_their_path(tokenizer) -> None:
    view, found = chunks(PYTHON, "django/core/validators.py", tokenizer)
    by_context = {c.context: c.text(view.text) for c in found}
    assert by_context["class RegexValidator > def __call__"].startswith("    def __call__(self, value):\n")
    assert by_context["class RegexValidator > def __call__"].endswith("raise ValidationError(self.message)")
    assert by_context["class RegexValidator"].startswith("class RegexValidator:\n    regex = ")
    assert by_context["def validate_slug"].startswith("@decorated\ndef validate_slug(value):")
    for chunk in found:  # whole lines of the view, indentation included
        assert chunk.start == 0 or view.text[chunk.start - 1] == "\n"
        assert chunk.end == len(view.text) or view.text[chunk.end] == "\n"


def test_a_long_definition_is_cut_between_statements(tokenizer) -> None:
    body = "".join(f"    total_{i} = compute_value({i}, factor={i * 3})\n" for i in range(60))
    view, found = chunks(f"def long_one():\n{body}    return total_59\n", "x.py", tokenizer, target=80)
    assert len(found) > 2 and all(c.context == "def long_one" and c.tokens <= 80 for c in found)
    assert all(c.text(view.text).startswith("    ") or c.text(view.text).startswith("def ") for c in found)


def test_other_languages_and_no_grammar(tokenizer) -> None:
    view, found = chunks(GO, "cmd/main.go", tokenizer, target=40)
    contexts = [c.context for c in found]
    assert "method Server.Start" in contexts and "function main" in contexts  # a Go method by its receiver
    text = "line one\nline two\n\nline three\n"  # no grammar: blank-line blocks, joined while they fit
    view, found = chunks(text, "notes.unknown", tokenizer)
    assert [c.text(view.text) for c in found] == ["line one\nline two\n\nline three"]


def test_paths_languages_and_line_numbers() -> None:
    assert source_path({"file_path": "/a/b.py", "limit": 5}) == "/a/b.py" and source_path({"q": "x"}) is None
    # Claude Code's Read numbers its text from `offset` (1-based; 0 and 1 both mean the first line); another tool's
    # `offset` may count bytes or from 0
    assert [first_line("Read", {"offset": v}) for v in (None, 0, 1, 40, True, "40")] == [1, 1, 1, 40, 1, 1]
    assert first_line("read_text_file", {"offset": 40}) == 1
    # a read's text runs to its file's end unless it is a window of it
    assert reads_to_end("Read", {"file_path": "/a/head.py"}, 800) and reads_to_end("Read", {"offset": 40}, 800)
    assert not reads_to_end("Read", {"file_path": "/a/b.py", "limit": 100}, 100)
    assert not reads_to_end("Read", {"file_path": "/a/b.py"}, 2_000), "Claude Code's first 2,000 lines of a longer file"
    assert reads_to_end("read_text_file", {"path": "/a/b.py", "tail": 50}, 50)
    assert not reads_to_end("read_text_file", {"path": "/a/b.py", "head": 50}, 50)
    assert reads_to_end("exec_command", {"cmd": "cat src/app.py"}, 300)
    assert reads_to_end("shell", {"command": ["bash", "-lc", "tail -n 40 src/app.py"]}, 40)
    assert not reads_to_end("exec_command", {"cmd": "sed -n '1,200p' src/app.py"}, 200)
    assert not reads_to_end("shell", {"command": ["bash", "-lc", "head -n 80 src/app.py"]}, 80)
    written = {"/work": True, "C:\\work": True, "C:/work": True, "\\\\server\\share": True, "work": False,
               "./work": False, "C:work": False, "\\work": False}
    assert {path: is_absolute_folder(path) for path in written} == written
    assert language_of("src/App.tsx") == "tsx" and language_of("README.md") is None
    assert guess_language(PYTHON) == "python" and guess_language("just prose, nothing else") is None
    index = LineIndex("a\nbb\n\nccc")
    assert [index.line_of(o) for o in (0, 1, 2, 4, 5, 6)] == [1, 1, 2, 2, 3, 4]
    assert index.span(2, 3, 9) == (2, 5) and index.span(4, 9, 9) == (6, 9)


def test_code_splits_at_definitions(tokenizer) -> None:
    text = "import os\n\ndef alpha():\n    return 1\ndef beta():\n    return 2\n\nclass Gamma:\n    pass\n"
    view, chunks = chunks_of(text, tokenizer, "code", target=8)
    starts = [view.text[c.start : c.end].split("\n")[0] for c in chunks]
    assert "def alpha():" in starts and "def beta():" in starts and "class Gamma:" in starts


def spans_of(text: str, tokenizer, target: int):  # type: ignore[no-untyped-def]
    """A code view, its chunks, and each chunk's 1-based lines (the `line_span` the sieve hands a kind)."""
    view, chunks = chunks_of(text, tokenizer, "code", target=target)
    index = LineIndex(view.text)

    def lines(start: int, end: int) -> tuple[int, int]:
        return index.line_of(start), index.line_of(max(start, end - 1))

    return view, chunks, lines


def test_a_named_definition_and_a_frame_into_this_file_come_first(tokenizer) -> None:
    from ctxsieve.ingest.kinds import kind_named

    text = ("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n\n\n"
            "class Gamma:\n    def delta(self):\n        pass\n")
    view, chunks, lines = spans_of(text, tokenizer, 16)
    code = kind_named("code")
    first = code.priorities("`beta` fails; see Gamma.delta", view.text, chunks, "pkg/mod.py", lines, None)
    assert first is not None
    by_name = {c.context: float(first[i]) for i, c in enumerate(chunks)}
    assert by_name["def beta"] == 1.0 and by_name["class Gamma > def delta"] == 2.0 and by_name["def alpha"] == 0.0
    framed = code.priorities('File "pkg/mod.py", line 2, in alpha', view.text, chunks, "pkg/mod.py", lines, None)
    assert framed is not None and framed[0] == 2.0
    assert code.priorities("nothing named here", view.text, chunks, "pkg/mod.py", lines, None) is None


def test_a_long_definition_the_request_only_mentions_goes_first_by_its_header(tokenizer) -> None:
    """sympy's `latex(asin(x), inv_trig_style="full")` in an issue names `def latex`, a long docstring away from the
    line the fix edits: over an eighth of the budget, only its header chunk goes first, the rest competes."""
    from ctxsieve.ingest.kinds import kind_named

    body = "".join(f"    step_{i} = settings.get('option_{i}')\n" for i in range(120))
    text = f"def latex(expr, **settings):\n{body}    return expr\n\n\ndef helper():\n    return 1\n"
    view, chunks, lines = spans_of(text, tokenizer, 256)
    latex = [i for i, c in enumerate(chunks) if c.context == "def latex"]
    assert len(latex) > 2, "a long definition is cut between its statements"
    code = kind_named("code")
    roomy = code.priorities("`latex(x)` prints asin wrong", view.text, chunks, None, lines, 100_000)
    tight = code.priorities("`latex(x)` prints asin wrong", view.text, chunks, None, lines, 2_000)
    assert roomy is not None and all(roomy[i] == 1.0 for i in latex), "short enough for the budget: whole"
    assert tight is not None and tight[latex[0]] == 1.0 and not any(tight[i] for i in latex[1:])


def test_a_definition_named_by_its_path_goes_first_whole_up_to_half_the_budget(tokenizer) -> None:
    """pvlib's `pvlib.iam.physical(aoi=100, n=1)` in an issue names `def physical` of pvlib/iam.py by its module:
    that is the function asked about, not a mention, so it goes first whole while it takes at most half the budget
    (four eighths); the same name unqualified, or qualified by another module, gets its header chunk alone."""
    from ctxsieve.ingest.kinds import kind_named

    body = "".join(f"    step_{i} = n * cosd(aoi + {i})\n" for i in range(40))
    text = f"def physical(aoi, n=1.526):\n{body}    return step_0\n\n\ndef ashrae(aoi):\n    return 1\n"
    view, chunks, lines = spans_of(text, tokenizer, 64)
    physical = [i for i, c in enumerate(chunks) if c.context == "def physical"]
    size = sum(chunks[i].tokens for i in physical)
    assert len(physical) > 2, "a long definition is cut between its statements"
    code = kind_named("code")
    budget = size * 8 // 3  # the definition is over an eighth of it and under half

    def first(request: str, path: str = "pvlib/iam.py"):  # type: ignore[no-untyped-def]
        found = code.priorities(request, view.text, chunks, path, lines, budget)
        assert found is not None
        return [float(found[i]) for i in physical]

    assert first("`pvlib.iam.physical(aoi=100, n=1)` returns nan") == [2.0] * len(physical)
    assert first("`physical(aoi=100, n=1)` returns nan")[1:] == [0.0] * (len(physical) - 1), "a mention: its header"
    assert first("`pvlib.other.physical(aoi=100)` returns nan")[1:] == [0.0] * (len(physical) - 1)
    package = first("`pvlib.iam.physical(aoi=100, n=1)` returns nan", "pvlib/iam/__init__.py")
    assert package == [2.0] * len(physical), "a package's module is its folder"
    tight = code.priorities("`iam.physical(aoi=100)` returns nan", view.text, chunks, "pvlib/iam.py", lines, size)
    assert tight is not None and tight[physical[0]] == 2.0 and not any(tight[i] for i in physical[1:]), "over half"


def test_the_modules_imports_go_first_within_a_quarter_of_the_budget(tokenizer) -> None:
    """An edit that calls code from elsewhere adds an import, and needs the imports' exact lines: the chunks of
    module code holding the top-level imports go first (an import inside a function does not count), in file order
    while they take at most a quarter of the budget."""
    from ctxsieve.ingest.kinds import kind_named

    text = ('"""Shards."""\nimport os\nfrom pathlib import Path\n\nLIMIT = 3\n\n\n'
            "def copy(shard):\n    import shutil\n    return shutil.copy(shard, Path(os.sep))\n")
    view, chunks, lines = spans_of(text, tokenizer, 12)
    code = kind_named("code")
    first = code.priorities("the copy is slow", view.text, chunks, "pkg/shards.py", lines, 2_000)
    assert first is not None
    put_first = [view.text[c.start:c.end] for i, c in enumerate(chunks) if first[i]]
    assert put_first and all(not c.startswith("def ") for c in put_first) and "import os" in put_first[0]
    assert "from pathlib import Path" in "\n".join(put_first)
    assert code.priorities("the copy is slow", view.text, chunks, "pkg/shards.py", lines, 8) is None, "no room"
    many = "".join(f"from shards.part_{i} import copy_{i}\n" for i in range(40)) + "\n\ndef copy(shard):\n    pass\n"
    view, chunks, lines = spans_of(many, tokenizer, 40)
    budget = 400
    capped = code.priorities("the copy is slow", view.text, chunks, "pkg/shards.py", lines, budget)
    assert capped is not None and 0 < capped.sum() < sum(1 for c in chunks if "import" in c.text(view.text))
    imports = [i for i, c in enumerate(chunks) if capped[i] and "import" in c.text(view.text)]
    spent = sum(code.cost(chunks[i].tokens, *lines(chunks[i].start, chunks[i].end)) for i in imports)
    assert imports and spent <= budget // 4, "a quarter of the budget, line numbers counted"


def test_the_files_last_chunk_goes_first_when_it_is_short(tokenizer) -> None:
    """A new definition is added at a module's end, and an edit there needs the file's last lines: its last chunk
    goes first when it takes at most an eighth of the budget as shown (a long one competes on the request's words),
    and only when the read runs to the file's end."""
    from ctxsieve.ingest.kinds import kind_named

    steps = "".join(f"def step_{i}(shard):\n    return shard.copy({i})\n\n\n" for i in range(20))
    text = steps + "def last_step(shard):\n    return shard\n"
    view, chunks, lines = spans_of(text, tokenizer, 16)
    code = kind_named("code")
    first = code.priorities("add a retry to the copy", view.text, chunks, "pkg/shards.py", lines, 800)
    assert first is not None and first[-1] == 1.0 and not first[:-1].any()
    assert "def last_step" in chunks[-1].text(view.text)
    tight = code.priorities("add a retry to the copy", view.text, chunks, "pkg/shards.py", lines, 40)
    assert tight is None, "over an eighth of the budget: no place ahead"
    assert code.priorities("add a retry to the copy", view.text, chunks, "pkg/shards.py", lines, None) is None
    window = code.priorities("add a retry to the copy", view.text, chunks, "pkg/shards.py", lines, 800, whole=False)
    assert window is None, "a window's last lines are not the file's end"


def test_the_imports_are_read_by_each_languages_grammar() -> None:
    assert import_lines('"""Shards."""\nimport os\nfrom pathlib import Path\n\nLIMIT = 3\n', "python") == {2, 3}
    assert import_lines('#include <stdio.h>\n#include "shard.h"\nint x;\n', "c") == {1, 2}
    assert import_lines('package m\n\nimport (\n\t"fmt"\n)\n', "go") == {3, 4, 5}
    assert import_lines("use std::fs;\nfn main() {}\n", "rust") == {1}
    assert import_lines('import { a } from "./a";\nconst b = 1;\n', "javascript") == {1}
    assert import_lines("x = 1\n", None) == frozenset()
    assert import_lines("#ifndef SHARD_H\n#define SHARD_H\n#include <stdio.h>\n#endif\n", "c") == {3}, "guarded"
    assert import_lines("package a\n\nimport x.Y\n\nclass A\n", "kotlin") >= {3}
    assert import_lines("    x = 1\n    import os\n    return os.sep\n", "python") == frozenset(), "a read inside a def"


def test_imports_that_are_calls_count_too() -> None:
    """Ruby's `require`, Lua's and CommonJS's `require(...)` bound to names: top-level statements only, and only a
    call to `require` itself."""
    assert import_lines("require 'json'\nrequire_relative 'lib/shard'\n\nclass A\n  require 'x'\nend\n",
                        "ruby") == {1, 2}
    assert import_lines('local json = require("json")\nlocal shard = require "shard"\nlocal n = 1\n', "lua") == {1, 2}
    assert import_lines('x = require("x")\nrequire "y"\nz = compute("z")\n', "lua") == {1, 2}
    php = "<?php\nrequire 'a.php';\nrequire_once 'b.php';\ninclude 'c.php';\n$x = 1;\n"
    assert import_lines(php, "php") == {2, 3, 4}
    js = ("const fs = require('fs');\nconst {\n  copy,\n  move,\n} = require('./shard');\nrequire('dotenv').config();\n"
          "const required = requireShard('x');\nfunction f() {\n  const os = require('os');\n}\n")
    assert import_lines(js, "javascript") == {1, 2, 3, 4, 5, 6}
    names = "".join(f"  name_{i} = {i},\n" for i in range(60))  # a destructuring over 300 bytes, with defaults
    bound = f"const {{\n{names}}} = require('./names');\nconst [first] = require('./first');\n"
    assert import_lines(bound, "javascript") == set(range(1, 64)), "every line of both declarations"
    assert import_lines("gi.require_version('Gtk', '3.0')\nrequire_version = 1\n", "python") == frozenset()


def test_a_chunk_of_several_lines_is_never_cut_inside_a_line(tokenizer) -> None:
    """Lines are cut into chunks by their own token counts, and a run of them can count a few more together (nvm's
    `nvm_echo "Setting colors to: ${INSTALLED_COLOR} ..."` split two characters before its end, its `}"` a snippet
    of its own): such a chunk stays whole; only a line over the target alone is cut inside."""
    from ctxsieve.ingest.kinds.code import code_spans
    from ctxsieve.ingest.lines import line_chunks

    body = "".join(f'  if [ -n "${{COLOR_{i}-}}" ]; then\n'
                   f'    nvm_echo "Setting colors to: ${{INSTALLED_{i}}} ${{LTS_{i}}} ${{CURRENT_{i}}}"\n'
                   f'    VERSION="$(echo "$1" | command awk \'{{ print substr($0, {i}) }}\')"\n'
                   f"  fi\n" for i in range(40))
    text = f"set_colors() {{\n{body}}}\n"
    for target in range(20, 120, 7):
        pieces = line_chunks(text, 0, code_spans(text, "bash"), tokenizer, target)
        ends = [0, *(e for p in pieces for e in (p.start, p.end)), len(text)]
        assert all(not text[a:b].strip() for a, b in zip(ends[::2], ends[1::2], strict=True)), "nothing dropped"
        for piece in pieces:
            lines = text[piece.start:piece.end].split("\n")
            assert len(lines) == 1 or (text[piece.start - 1 : piece.start] in ("", "\n")
                                       and text[piece.end : piece.end + 1] == "\n"), (target, lines[-1])


def test_a_cut_counts_each_lines_number_as_the_model_reads_it() -> None:
    """`12│` before each line: o200k_base reads digits in threes, then the bar. Counted by the numbers of each width,
    not a loop over a file's lines on every read; the same count as line by line, across widths and at line 0."""
    from ctxsieve.ingest.kinds.code import Code

    def by_line(first: int, last: int) -> int:
        return sum(-(-len(str(n)) // 3) + 1 for n in range(first, last + 1))

    spans = [(1, 1), (1, 9), (9, 10), (0, 12), (5, 999), (999, 1_001), (1, 12_345), (99_998, 1_000_002), (7, 6)]
    assert all(Code().cost(40, first, last) == 40 + by_line(first, last) for first, last in spans)
    assert Code().cost(0, 1, 1_000) == 999 * 2 + 3, "1-999: one token and the bar; 1000: two and the bar"
