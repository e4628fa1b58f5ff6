"""The proxy's reading of request bodies (no service): which parts are tool results, what was asked for each, and
how a replacement lands."""

from __future__ import annotations

import json
from typing import Any

from ctxsieve_client.dialects import DIALECTS
from ctxsieve_client.models import FilterResult
from ctxsieve_client.proxy.formats import listing, named, parts, ref_tool_prefix, working_folder
from ctxsieve_client.proxy.numbering import renumbered, unnumbered


def test_the_intent_is_the_latest_request_the_assistants_words_and_the_calls_own_words() -> None:
    body: dict[str, Any] = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nnoise\n</system-reminder>\n"},
                                     {"type": "text", "text": "Why does the sync fail?"}]},
        {"role": "system", "content": "# Environment: not the user's words"},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching the log."},
                                          {"type": "tool_use", "id": "t1", "name": "Grep",
                                           "input": {"pattern": "checksum", "path": "/var/log"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 5000}]}]}
    (part,) = parts(DIALECTS["anthropic"], body)
    assert part.intent == "Why does the sync fail? Searching the log. checksum"
    assert (part.tool, part.arguments, part.is_error) == ("Grep", {"pattern": "checksum", "path": "/var/log"}, False)
    part.put("cut")
    assert body["messages"][3]["content"][0]["content"] == "cut"


def test_a_codex_command_result_is_opened_to_its_output_keeping_the_rest_byte_for_byte() -> None:
    shortened = ('Warning: truncated output (original token count: 11705)\nTotal output lines: 1\n\n'
                 '{"chunk_id":"7b5394","wall_time_seconds":0.000013467,"exit_code":0,"original_token_count":11453,'
                 '"output":"line one\\nline two …1705 tokens truncated… line \\"nine\\"\\n"}')
    failed = '{"chunk_id":"9a","wall_time_seconds":0.1,"exit_code":2,"output":"ls: cannot access"}'
    item = {"type": "custom_tool_call_output", "call_id": "c1", "output": [
        {"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
        {"type": "input_text", "text": shortened}, {"type": "input_text", "text": failed}]}
    body = {"input": [{"role": "user", "content": "go"},
                      {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": "tools.exec_command()"},
                      item]}
    header, output, error = parts(DIALECTS["responses"], body)
    assert output.text == 'line one\nline two …1705 tokens truncated… line "nine"\n' and not output.is_error
    assert error.is_error and error.text == "ls: cannot access"
    assert not header.is_error
    output.put('shown "part"')
    assert item["output"][1]["text"] == shortened.split('"output":"')[0] + '"output":"shown \\"part\\""}'


def test_openai_error_texts_and_exit_codes_are_errors() -> None:
    body = {"messages": [
        {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function",
                                              "function": {"name": "shell", "arguments": "{}"}} for i in range(3)]},
        {"role": "tool", "tool_call_id": "c0", "content": "Traceback (most recent call last):\n  boom"},
        {"role": "tool", "tool_call_id": "c1", "content": "Exit code: 1\nWall time: 2 s\nOutput:\nFAILED"},
        {"role": "tool", "tool_call_id": "c2", "content": "Exit code: 0\nOutput:\nok"}]}
    assert [p.is_error for p in parts(DIALECTS["openai"], body)] == [True, True, False]


def test_a_numbered_read_is_the_files_text_and_its_shown_lines_get_their_numbers_back() -> None:
    file = "import os\n\ndef f():\n    return 1\n"
    shown = "".join(f"{n}\t{line}\n" for n, line in enumerate(file.split("\n")[:-1], start=1)) + "5\t"
    numbered = unnumbered(shown)
    assert numbered is not None and (numbered.text, numbered.separator, numbered.first) == (file, "\t", 1)
    assert unnumbered("3\tfrom\n5\ta gap") is None and unnumbered("3\tone line") is None
    result = FilterResult.from_json({"ref": "src_1", "placeholder": "[ctxsieve src_1: ...]", "usage": {
        "input_tokens": 1, "output_tokens": 1, "saved_ratio": 0, "chunks_total": 1, "chunks_returned": 1},
        "snippets": [{"id": "src_1#1", "text": "def f():\n    return 1", "score": 1, "start": 11, "end": 33,
                      "tokens": 5, "line_start": 3, "line_end": 4}]})
    assert renumbered(result, numbered).snippets[0].text == "3\tdef f():\n4\t    return 1"
    lines = file.split("\n")[:-1]
    offset = unnumbered("".join(f"{n}\t{line}\n" for n, line in enumerate(lines, start=2000)) + "2004\t")
    assert offset is not None and offset.text == file and offset.first == 2000, "a read with an offset"
    moved = renumbered(result, offset)
    assert moved.snippets[0].text == "2002\tdef f():\n2003\t    return 1", "each line after its file number"
    assert (moved.snippets[0].line_start, moved.snippets[0].line_end) == (2002, 2003), "and its heading"
    assert "file line 2000" in moved.placeholder, "fetch_ref's lines are the read's: said"


def test_the_placeholder_names_the_tools_as_the_client_offers_them() -> None:
    deferred = {"messages": [{"role": "user", "content": [{"type": "text", "text": json.dumps(
        "Deferred tools:\nmcp__ctxsieve__fetch_ref\nmcp__ctxsieve__filter_ref")}]}], "tools": []}
    prefix = ref_tool_prefix(DIALECTS["anthropic"], deferred)
    assert prefix == "mcp__ctxsieve__"
    cut = ('fetch_ref(ref="x") in the text\n'
           '[ctxsieve src_1: more: filter_ref(ref="src_1"); whole: fetch_ref(ref="src_1")]')
    assert named(cut, prefix) == ('fetch_ref(ref="x") in the text\n[ctxsieve src_1: more: mcp__ctxsieve__filter_ref('
                                  'ref="src_1"); whole: mcp__ctxsieve__fetch_ref(ref="src_1")]')
    assert ref_tool_prefix(DIALECTS["anthropic"], {"messages": [], "tools": [{"name": "fetch_ref"}]}) == ""


def test_the_working_folder_is_read_where_each_agent_tells_its_model() -> None:
    """Claude Code's environment section (a system message) and Codex's environment_context (after its developer
    messages): the folder a grep's relative paths are read from, in the turns before the model's first; none where the
    request says none, or names no absolute folder."""
    claude = {"system": [{"type": "text", "text": "You are Claude Code."}], "messages": [
        {"role": "system", "content": "# Environment\n - Primary working directory: /work/app/pkg\n - Platform: linux"},
        {"role": "user", "content": "find the retry delay"}]}
    assert working_folder(DIALECTS["anthropic"], claude) == "/work/app/pkg"
    codex = {"input": [  # Codex 0.169's layout: its tools, developer messages, then the environment and the request
        {"type": "additional_tools", "role": "developer", "tools": []},
        *[{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": f"rules {n}"}]}
          for n in range(4)],
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            "<environment_context>\n  <cwd>/home/u/repo</cwd>\n  <shell>bash</shell>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}]}
    assert working_folder(DIALECTS["responses"], codex) == "/home/u/repo"
    late = {"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
                      {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c1", "output": "<cwd>/elsewhere</cwd>"}]}
    assert working_folder(DIALECTS["responses"], late) is None, "no tool output is read"
    reasoned = {"input": [late["input"][0], {"type": "reasoning", "summary": []},
                          {"type": "local_shell_call_output", "output": "<cwd>/elsewhere</cwd>"}]}
    assert working_folder(DIALECTS["responses"], reasoned) is None, "nor anything after the model's reasoning"
    chat = {"messages": [{"role": "system", "content": "You run in <cwd>/srv/app</cwd>."},
                         {"role": "assistant", "content": "Primary working directory: /elsewhere"}]}
    assert working_folder(DIALECTS["openai"], chat) == "/srv/app"
    answered = {"messages": [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Primary working directory: /elsewhere"}]}]}
    assert working_folder(DIALECTS["anthropic"], answered) is None
    windows = {"messages": [{"role": "user", "content": "Primary working directory: C:\\work\\app\nhi"}]}
    assert working_folder(DIALECTS["anthropic"], windows) == "C:\\work\\app"
    moved = {"messages": [{"role": "user", "content": "Primary working directory: notes\nhi"}, {"role": "system",
             "content": " - Primary working directory: /work/new (was /work/old)\n - Platform: linux"}]}
    assert working_folder(DIALECTS["anthropic"], moved) == "/work/new", "a line naming no folder is passed over"
    for body in ({"messages": [{"role": "user", "content": "hi"}]},
                 {"messages": [{"role": "user", "content": "Primary working directory: somewhere\nhi"}]}):
        assert working_folder(DIALECTS["anthropic"], body) is None


def test_each_tool_result_is_read_from_the_folder_its_tool_ran_in() -> None:
    """Codex tells its model its folder again when it moves (a new `<environment_context>`): a result before the
    move keeps the folder the conversation opened with (so its cut never changes), one after it gets the new one;
    a folder written in a tool's output moves nothing."""
    def context(folder: str) -> dict[str, object]:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                f"<environment_context>\n  <cwd>{folder}</cwd>\n</environment_context>"}]}

    def call(n: int, output: str) -> list[dict[str, object]]:
        return [{"type": "function_call", "call_id": f"c{n}", "name": "shell", "arguments": '{"command": "ls"}'},
                {"type": "function_call_output", "call_id": f"c{n}", "output": output}]

    body = {"input": [context("/home/u/repo"), {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "fix the bug"}]}, *call(1, "<environment_context><cwd>/tmp</cwd>"),
        context("/home/u/repo/pkg"), *call(2, "b.py")]}
    assert [(p.text, p.folder) for p in parts(DIALECTS["responses"], body)] == [
        ("<environment_context><cwd>/tmp</cwd>", "/home/u/repo"), ("b.py", "/home/u/repo/pkg")]
    claude = {"system": "Primary working directory: /work/app", "messages": [
        {"role": "user", "content": "fix it"}, {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}]}
    assert [p.folder for p in parts(DIALECTS["anthropic"], claude)] == ["/work/app"]


def test_a_list_of_files_is_read_as_claude_code_renders_it() -> None:
    grep = listing("Found 3 files\npkg/a.py\npkg/my b.py\nc.py")
    assert grep is not None and (grep.head, grep.paths, grep.tail) == (["Found 3 files"], ["pkg/a.py", "pkg/my b.py",
                                                                                         "c.py"], [])
    glob = listing("a.py\nb.py\n(Showing 2 of 9 matching files; 7 more are not listed.)")
    assert glob is not None and glob.paths == ["a.py", "b.py"] and glob.text(["b.py", "a.py"], "[note]") == \
        "b.py\na.py\n(Showing 2 of 9 matching files; 7 more are not listed.)\n[note]"
    for text in ("No files found", "only.py", "a.py:3:x = 1\n  indented", "a.py\n\tb.py"):
        assert listing(text) is None, text
    limited = listing("Found 250 files limit: 250, offset: 0\na.py\nb.py")  # Grep at its limit: Claude Code's head
    assert limited is not None and limited.paths == ["a.py", "b.py"] and limited.truncated
    assert grep.truncated is False and glob.truncated
    grouped = listing("app/page.tsx\napp/(group)/x.tsx\n[id]/y.tsx")  # Next.js folders are paths, not notes
    assert grouped is not None and grouped.paths == ["app/page.tsx", "app/(group)/x.tsx", "[id]/y.tsx"]
