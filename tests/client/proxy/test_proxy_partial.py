"""Texts an agent cut before ctxsieve saw them (no service): each agent's marks read, the kept lines placed in the
whole output where they can be, a cut of them shown with only those numbers, and placeholders naming only the tools
the model has."""

from __future__ import annotations

from typing import Any

from ctxsieve_client.dialects import DIALECTS
from ctxsieve_client.models import FilterResult, More
from ctxsieve_client.partial import Partial, fetch_note, read, render_cut
from ctxsieve_client.placeholders import Source, Tools, line, source_of, without_ref_tools
from ctxsieve_client.proxy.formats import parts, tool_names

OUTPUT = "".join(f"    value_{n} = compute({n})  # line {n}\n" for n in range(1, 401))


def codex_cut(text: str, budget_bytes: int, header: bool) -> str:
    """Codex's middle truncation (codex-rs utils/string truncate.rs): half the budget's bytes each side, at a byte."""
    left = budget_bytes // 2
    head, tail = text[:left], text[len(text) - (budget_bytes - left):]
    cut = f"{head}…{(len(text) - budget_bytes + 3) // 4} tokens truncated…{tail}"
    warning = f"Warning: truncated output (original token count: {(len(text) + 3) // 4})\n" \
              f"Total output lines: {len(text.splitlines())}\n\n"
    return warning + cut if header else cut


def assert_placed_truly(kept: str, cut: Partial, output: str) -> tuple[int, int]:
    """Every kept line the cut places is that line of the output; (how many placed before, after the mark)."""
    out_lines = output.split("\n")
    before = after = 0
    for n, row in enumerate(kept.split("\n"), start=1):
        placed = cut.line(n)
        if placed is not None:
            assert out_lines[placed - 1] == row, (n, placed, row)
            before, after = (before + 1, after) if n <= cut.head else (before, after + 1)
    return before, after


def test_codex_marks_are_read_and_its_line_count_places_the_kept_tail() -> None:
    for output in (OUTPUT, OUTPUT.rstrip("\n")):
        found = read(codex_cut(output, 4000, header=True))
        assert found is not None
        kept, cut = found
        assert not kept.startswith("Warning") and cut.agent == "Codex"
        assert cut.dropped.endswith("tokens from its middle")
        before, after = assert_placed_truly(kept, cut, output)
        assert before > 30 and after > 30 and cut.shift is not None
        mark = cut.cuts[0][0]
        row = kept.split("\n")[mark - 1]
        assert cut.line(mark) is None and "tokens truncated" in row
        first, last = cut.dropped_lines() or (0, 0)
        out_lines = output.split("\n")
        assert out_lines[first - 1].startswith(row.split("…")[0]) and out_lines[last - 1].endswith(row.split("…")[-1])
    kept, cut = read(codex_cut(OUTPUT, 4000, header=False)) or ("", None)
    assert cut is not None and cut.shift is None, "without Codex's line count the tail cannot be placed"
    assert assert_placed_truly(kept, cut, OUTPUT)[1] == 0


def test_a_file_that_quotes_a_mark_is_not_a_cut() -> None:
    quoting = 'SHORTENED = "line two …1705 tokens truncated… line nine"\n' + OUTPUT
    assert read(quoting) is None
    assert read(OUTPUT) is None


def test_claude_code_and_opencode_marks() -> None:
    claude = OUTPUT[:5000] + f"\n\n... [{len(OUTPUT) - 10000} characters truncated] ...\n\n" + OUTPUT[-5000:]
    kept, cut = read(claude) or ("", None)
    assert cut is not None and cut.agent == "Claude Code" and cut.shift is None
    assert assert_placed_truly(kept, cut, OUTPUT)[0] == OUTPUT[:5000].count("\n"), "the whole lines before it"
    hint = "The tool call succeeded but the output was truncated. Full output saved to: /home/u/.local/tool_1\n" \
           "Use Grep to search the full content or Read with offset/limit to view specific sections."
    lines = OUTPUT.split("\n")
    head = "\n".join(lines[:120]) + "\n\n...281 lines truncated...\n\n" + hint
    kept, cut = read(head) or ("", None)
    assert cut is not None and (cut.agent, cut.head, cut.saved) == ("OpenCode", 120, "/home/u/.local/tool_1")
    tail = "...300 lines truncated...\n\n" + hint + "\n\n" + "\n".join(lines[300:])
    kept, cut = read(tail) or ("", None)
    assert cut is not None and cut.head == 0 and assert_placed_truly(kept, cut, OUTPUT)[1] == 101
    older = OUTPUT[:30000] + "\n\n(Output was truncated due to length limit)"
    kept, cut = read(older) or ("", None)
    assert cut is not None and cut.head == OUTPUT[:30000].count("\n"), "its last line, cut at a character, is not"


def snippet(first: int, last: int, text: str, context: str = "") -> dict[str, Any]:
    return {"id": f"src_1#{first}", "text": text, "score": 1, "start": 0, "end": 1, "tokens": 1,
            "line_start": first, "line_end": last, "context": context}


def test_a_cut_of_a_kept_text_shows_only_numbers_that_are_the_outputs() -> None:
    kept, cut = read(codex_cut(OUTPUT, 4000, header=False)) or ("", None)
    assert cut is not None
    rows = kept.split("\n")
    mark = cut.cuts[0][0]
    result = FilterResult.from_json({
        "ref": "src_1", "placeholder": "[ctxsieve src_1: ...]", "content_type": "code",
        "view": {"by_lines": True, "headed": True, "numbered": True}, "usage": {
            "input_tokens": 1, "output_tokens": 1, "saved_ratio": 0},
        "snippets": [snippet(mark - 2, mark + 2, "\n".join(rows[mark - 3:mark + 2]), "def f")],
        "map": [{"line": 3, "text": rows[2]}, {"line": mark + 5, "text": rows[mark + 4]}]})
    shown = render_cut(result, cut, "[ctxsieve src_1: placeholder]")
    assert f"3│{rows[2]}" in shown and f"{mark + 5}│" not in shown, "the map keeps what can be placed"
    assert f"── lines {mark - 2}-{mark - 1} · def f ──\n{rows[mark - 3]}\n{rows[mark - 2]}\n" \
           f"── Codex cut the output here, before ctxsieve saw it ──\n{rows[mark - 1]}\n" \
           f"── after Codex's cut: lines whose place in the output is unknown ──\n{rows[mark]}\n{rows[mark + 1]}" \
           in shown
    note = fetch_note(cut, mark - 2, mark + 2)
    assert f"lines {mark - 2}-{mark + 2} of the text it kept, not of the output (its lines {mark - 2}-{mark - 1} " \
           f"are the output's lines {mark - 2}-{mark - 1}; the rest cannot be placed)" in note


def test_a_codex_json_result_whose_escape_the_mark_split_is_read_whole() -> None:
    raw = '{"exit_code":0,"output":"import os\\' + "…12 tokens truncated…" + 'nimport sys\\u00' + \
          "…3 tokens truncated…" + 'e9"}'
    body = {"input": [{"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c", "output": raw}]}
    (part,) = parts(DIALECTS["responses"], body)
    assert part.text == "import os…12 tokens truncated…\nimport sys…3 tokens truncated…é"


def test_codex_text_result_has_only_its_output_cut_and_its_exit_code_read() -> None:
    header = "Chunk ID: 288970\nWall time: 0.0000 seconds\nProcess exited with code {}\nOriginal token count: 9\n" \
             "Output:\n"
    items: list[Any] = [{"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"}]
    items += [{"type": "function_call_output", "call_id": "c", "output": header.format(code) + "out"}
              for code in (0, 2)]
    ran, failed = parts(DIALECTS["responses"], {"input": items})
    assert (ran.text, ran.is_error, failed.is_error) == ("out", False, True)
    ran.put("cut")
    assert items[1]["output"] == header.format(0) + "cut"


def test_the_tools_a_request_offers() -> None:
    codex = {"input": [{"type": "additional_tools", "tools": [{"type": "namespace", "name": "functions", "tools": [
        {"type": "custom", "name": "exec"}]}, {"type": "function", "name": "wait"}]}]}
    assert tool_names(DIALECTS["responses"], codex) == {"functions", "exec", "wait"}
    assert tool_names(DIALECTS["openai"], {"tools": [{"type": "function", "function": {"name": "shell"}}]}) == {"shell"}


def test_placeholders_name_only_the_tools_the_model_has() -> None:
    more = More.from_json({"ref": "src_ab12", "chunks_shown": 3, "chunks_total": 9, "input_tokens": 900,
                           "output_tokens": 300, "lines": 120, "rerun": {"tool": "web_fetch", "args": {"url": "u"}}})
    plain = Tools(ref_tools=False)
    read_file = line(more, source_of({"file_path": "/a/b.py"}), Tools(ref_tools=False, read=True))
    assert read_file.endswith('the file\'s lines A-B (of 120): Read(file_path="/a/b.py", offset=A, limit=B-A+1)]')
    codex = source_of({"input": 'const r = await tools.exec_command({cmd: "cat src/app.py"});\ntext(r);'})
    assert codex == Source(path="src/app.py", command="cat src/app.py")
    assert "sed -n 'A,Bp' src/app.py]" in line(more, codex, plain)
    assert "re-run it narrower, pytest -q | sed -n 'A,Bp'" in line(more, source_of({"cmd": "pytest -q"}), plain)
    assert line(more, Source(), plain) == '[ctxsieve src_ab12: 3 of 9 chunks shown, 900 -> 300 tokens; re-run: ' \
                                          'web_fetch(url="u")]'
    assert source_of({"file_path": "/a/b.py", "offset": 40}).path is None, "not from its first line"
    cut = Partial(agent="Codex", dropped="5 tokens from its middle", cuts=((40, 40),), shift=None)
    with_tools = line(more, codex, Tools(ref_tools=True), cut)
    assert with_tools.startswith("[ctxsieve src_ab12: Codex cut this output before ctxsieve saw it (5 tokens from "
                                 "its middle); of what it kept, 3 of 9 chunks shown")
    assert "(its own numbering, the file's only to line 39): fetch_ref(ref=\"src_ab12\", lines=\"A-B\")" in with_tools
    assert "(of 120)" not in with_tools, "the kept text's line count is not the file's"
    cleared = ('[ctxsieve src_ab12: tool output cleared from the context, 900 tokens kept whole; more: filter_ref('
               'ref="src_ab12", query="..."); whole: fetch_ref(ref="src_ab12"); re-run: Read(file_path="/a; b.py")]')
    assert without_ref_tools(cleared) == '[ctxsieve src_ab12: tool output cleared from the context, 900 tokens ' \
                                         'kept whole; re-run: Read(file_path="/a; b.py")]'
