"""The real Codex CLI (npm `@openai/codex` 0.169, `codex exec`) through `ctxsieve proxy`, against a scripted Responses
API that records every request: what the model is sent after Codex ran `cat` on a large source file or a long test
log.

What Codex 0.169 sends, seen by running it against the scripted API (and in codex-rs `utils/output-truncation`):
- A command's output over its call's `max_output_tokens` (default 10,000 tokens, counted as bytes / 4) reaches the
  request already cut: its head and tail, `…N tokens truncated…` (`…N chars truncated…` under a byte budget) between
  them at a byte (mid-line), under `Warning: truncated output (original token count: N)\\nTotal output lines: L\\n\\n`.
  In its JavaScript `exec` (an unknown model's tools) the cut is of the script's text: `text(r)` is the command's
  JSON result, so the mark is inside its `output` and the line count is of the JSON (1); `text(r.output)` is the
  output itself. `gpt-5-codex` gets an `exec_command` function instead, whose result is `Chunk ID: ...`, `Wall time:
  ...`, `Process exited with code 0`, `Original token count: N`, `Output:` and the output, cut to 10,000 bytes.
- `-c tool_output_token_limit=N` is read (it sets the budget every tool output is cut to in the history), but alone
  it leaves the warning: the call's own `max_output_tokens` (exec_command's argument, exec's `// @exec:` pragma)
  still cuts. With both raised the output arrives whole.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi import Request

from ctxsieve_client import Client
from tests.client.proxy import test_proxy
from tests.client.proxy.test_proxy import proxy, run_codex
from tests.client.scripted_openai import ScriptedResponses

serve = test_proxy.serve  # the fixture serving an app on loopback for the test

REQUEST = "Why does percentile interpolate between the wrong values?"
BIG = Path(str(getattr(importlib.util.find_spec("numpy"), "origin", ""))).parent / "lib" / "_function_base_impl.py"
RUN = 'const r = await tools.exec_command({{cmd: "cat {}"}});\ntext({});'
WHOLE = 'const r = await tools.exec_command({cmd: "cat big.py", max_output_tokens: 100000});\ntext(r.output);'
LOG_TESTS = '''import pytest

BROKEN = {97: "archive rejected", 255: "stale replica", 331: "checksum mismatch"}


def synced(shard: int) -> str:
    return BROKEN.get(shard, "ok")


@pytest.mark.parametrize("shard", range(400))
def test_shard_sync(shard: int) -> None:
    assert synced(shard) == "ok", f"shard {shard}: {synced(shard)}"
'''


class Scripted(ScriptedResponses):
    """The scripted API, a call's arguments computed from the request it answers when given as a function (a fetch
    of the ref the cut it was sent names)."""

    async def responses(self, request: Request) -> Any:
        body = await request.json()
        done = len(self.outputs(body))
        if done < len(self.calls) and callable(self.calls[done][1]):
            self.calls[done] = (self.calls[done][0], self.calls[done][1](body))
        return await super().responses(request)


def codex_through_proxy(serve: Any, service: str, tmp_path: Path, calls: list[Any], model: str = "gpt-6.1-sol",
                        config: tuple[str, ...] = (), request: str = REQUEST, home: Path | None = None,
                        **options: Any) -> Scripted:
    """Codex run once in `tmp_path` through a proxy in front of the scripted API; the API, with every request it was
    sent."""
    api = Scripted(calls=calls)
    url, server = api.serve()
    try:
        done = run_codex(proxy(serve, service, openai_api=url, budget_s=60.0, **options), tmp_path, request,
                         model, config, home)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    return api


def shown_output(item: dict[str, Any]) -> str:
    """What the model was sent as the command's output: the JSON result's `output`, or the text after Codex's
    header lines."""
    text = item["output"] if isinstance(item["output"], str) else item["output"][-1]["text"]
    start = text.find('{"')
    if 0 <= start < 300 and '"exit_code"' in text[start:start + 400]:
        return str(json.loads(text[start:])["output"])
    return text.split("\nOutput:\n", 1)[1] if text.startswith("Chunk ID: ") else text


def claimed_lines(shown: str) -> list[tuple[int, str]]:
    """Every (number, text) the model is shown as a line of the file: under each `── lines A-B` heading, and in
    the map of the file. Any other heading names no line number."""
    rows = shown.split("\n")
    claimed = []
    for i, row in enumerate(rows):
        if heading := re.match(r"── lines (\d+)-(\d+)(?: · .*)? ──$", row):
            first, last = int(heading.group(1)), int(heading.group(2))
            claimed += [(first + k, rows[i + 1 + k]) for k in range(last - first + 1)]
        elif mapped := re.match(r" *(\d+)│(.*)$", row):
            claimed.append((int(mapped.group(1)), mapped.group(2)))
        else:
            assert not (row.startswith("── ") and re.search(r"\blines? \d", row)), row
    return claimed


def assert_true_numbers(shown: str, file_text: str) -> list[int]:
    lines = file_text.split("\n")
    claimed = claimed_lines(shown)
    assert len(claimed) > 20, "a cut of the file, with its line numbers"
    wrong = [(n, text) for n, text in claimed if not 0 < n <= len(lines) or lines[n - 1] != text]
    assert not wrong, f"{len(wrong)} of {len(claimed)} numbered lines are not the file's: {wrong[:3]}"
    return [n for n, _ in claimed]


def placeholder_of(shown: str) -> str:
    return shown.rstrip().rsplit("\n", 1)[-1]


def ran_in(service: str, shown: str) -> Path | None:
    """The folder the service stored for the output whose cut is `shown` (its placeholder's ref): where the proxy
    read that the agent ran the tool."""
    stored = Client(service).fetch_ref(placeholder_of(shown).split(":", 1)[0].removeprefix("[ctxsieve ")).source
    return Path(stored.cwd).resolve() if stored is not None and stored.cwd else None


@pytest.mark.parametrize(("model", "call", "placed"), [
    ("gpt-6.1-sol", ("exec", RUN.format("big.py", "r")), False),
    ("gpt-6.1-sol", ("exec", RUN.format("big.py", "r.output")), True),
    ("gpt-5-codex", ("exec_command", {"cmd": "cat big.py"}), True),
], ids=["exec-json", "exec-text", "exec_command"])
def test_a_file_codex_cut_first_is_shown_with_only_true_line_numbers(stub_url: str, serve: Any, tmp_path: Path,
                                                                      model: str, call: Any, placed: bool) -> None:
    """Codex keeps ~10k tokens (10 KB for gpt-5-codex) of a 190 KB file; the model is sent a cut of that whose every
    line number is the file's, after Codex's line count placed the kept tail when Codex gave one (the lines after
    Codex's mark are unnumbered otherwise); the placeholder says Codex cut it, names no tool the request does not
    offer, and gives the file's lines with sed."""
    source = BIG.read_text()
    (tmp_path / "big.py").write_text(source)
    api = codex_through_proxy(serve, stub_url, tmp_path, [call], model)
    (result,) = api.outputs(api.requests[-1])
    shown = shown_output(result)
    numbers = assert_true_numbers(shown, source)
    line = placeholder_of(shown)
    assert line.startswith("[ctxsieve src_") and "Codex cut this output before ctxsieve saw it" in line
    assert "fetch_ref" not in shown and "filter_ref" not in shown, "Codex offers its model no ctxsieve tool"
    assert "sed -n 'A,Bp' big.py" in line
    assert ran_in(stub_url, shown) == tmp_path.resolve(), "the folder Codex runs in, read from its request"
    total = len(source.split("\n"))
    if placed:
        assert max(numbers) > total - 500 and "on both sides of the cut" in line, "the kept tail, placed"
        first, last = map(int, re.findall(r"the cut, which spans the file's lines (\d+)-(\d+)", line)[0])
        assert not any(first <= n <= last for n in numbers), "the lines Codex's cut took are named, none shown"
    else:
        assert max(numbers) < total / 2 and "lines have no number" in line
        assert "── after Codex's cut: lines whose place in the output is unknown" in shown


def test_with_serve_tools_a_fetch_by_line_numbers_says_they_are_the_kept_texts(stub_url: str, serve: Any,
                                                                               tmp_path: Path) -> None:
    """`--serve-tools`: the placeholder names fetch_ref, saying its line numbers are the kept text's; the model's
    fetch of lines across Codex's mark is answered with those lines after a line saying what they are, each
    number it gives for the file true."""
    source = BIG.read_text()
    (tmp_path / "big.py").write_text(source)
    asked: dict[str, Any] = {}

    def across_the_mark(body: dict[str, Any]) -> dict[str, Any]:
        shown = shown_output(ScriptedResponses.outputs(body)[-1])
        ref = re.findall(r"\[ctxsieve (src_[0-9a-f]+): ", shown)[-1]
        kept = Client(stub_url).fetch_ref(ref).text.split("\n")
        mark = next(n for n, row in enumerate(kept, start=1) if re.search(r"…\d+ tokens truncated…", row))
        asked.update(shown=shown, kept=kept, first=mark - 3, last=mark + 3)
        return {"ref": ref, "lines": f"{mark - 3}-{mark + 3}"}

    api = codex_through_proxy(serve, stub_url, tmp_path, [("exec", RUN.format("big.py", "r.output")),
                                                          ("fetch_ref", across_the_mark)], serve_tools=True)
    line = placeholder_of(asked["shown"])
    assert "Codex cut this output before ctxsieve saw it" in line
    assert re.search(r'lines A-B of the text Codex kept \(its own numbering, the file\'s only to line \d+\): '
                     r'fetch_ref\(ref="src_', line)
    fetched = api.outputs(api.requests[-1])[-1]["output"]
    note, _, text = fetched.partition("\n")
    first, last = asked["first"], asked["last"]
    assert text == "\n".join(asked["kept"][first - 1:last]), "the kept text's own lines"
    assert note.startswith("[ctxsieve: Codex cut this output before ctxsieve saw it") and \
        f"lines {first}-{last} of the text it kept, not of the output" in note
    file_lines = source.split("\n")
    spans = re.findall(r"its lines (\d+)-(\d+) are the output's lines (\d+)-(\d+)", note)
    assert len(spans) == 2, note  # before the mark and after it
    for a, b, x, y in (map(int, span) for span in spans):
        assert y - x == b - a and asked["kept"][a - 1:b] == file_lines[x - 1:y], "each number given is the file's"


@pytest.mark.parametrize(("model", "call"), [
    ("gpt-5-codex", ("exec_command", {"cmd": "cat big.py", "max_output_tokens": 100000})),
    ("gpt-6.1-sol", ("exec", '// @exec: {"max_output_tokens": 100000}\n' + WHOLE)),
], ids=["exec_command", "exec"])
def test_with_codex_limits_raised_the_proxy_cuts_the_whole_file_with_true_numbers(
        stub_url: str, serve: Any, tmp_path: Path, model: str, call: Any) -> None:
    """`tool_output_token_limit` raised and the call's own `max_output_tokens` too: Codex sends the whole file, and
    the model is sent ctxsieve's cut of it, its numbers the file's from the first line to the last."""
    source = BIG.read_text()
    (tmp_path / "big.py").write_text(source)
    api = codex_through_proxy(serve, stub_url, tmp_path, [call], model, ("tool_output_token_limit=100000",))
    (result,) = api.outputs(api.requests[-1])
    sent = json.dumps(result)
    assert "Warning: truncated output" not in sent and "truncated…" not in sent, "Codex sent it whole"
    shown = shown_output(result)
    numbers = assert_true_numbers(shown, source)
    total = len(source.splitlines())
    assert max(numbers) > total - 500 and min(numbers) < 500
    line = placeholder_of(shown)
    assert "cut this output" not in line and f"the file's lines A-B (of {total}): sed -n 'A,Bp' big.py" in line
    assert len(shown) < len(source) / 3


def test_a_long_failing_test_log_reaches_the_model_with_every_failure(stub_url: str, serve: Any,
                                                                      tmp_path: Path) -> None:
    """`cat` of a real `pytest -v` log over 30 KB (under Codex's limit) with three failures: the model is sent a
    cut in which every failing test's id and its assertion lines are."""
    (tmp_path / "test_fleet.py").write_text(LOG_TESTS)
    log = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_fleet.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
    (tmp_path / "pytest.log").write_text(log)
    assert 30_000 < len(log.encode()) < 38_000 and log.count("FAILED") == 6
    api = codex_through_proxy(serve, stub_url, tmp_path, [("exec", RUN.format("pytest.log", "r"))])
    shown = shown_output(api.outputs(api.requests[-1])[0])
    assert len(shown) < len(log) / 3, "cut"
    for shard, why in ((97, "archive rejected"), (255, "stale replica"), (331, "checksum mismatch")):
        assert f"FAILED test_fleet.py::test_shard_sync[{shard}] - AssertionError: shard {shard}" in shown
        assert f"E       AssertionError: shard {shard}: {why}" in shown
        assert f"E       assert '{why}' == 'ok'" in shown
    assert "fetch_ref" not in shown and "sed -n 'A,Bp' pytest.log" in placeholder_of(shown)



@pytest.mark.parametrize(("model", "call"), [
    ("gpt-6.1-sol", ("exec", 'const r = await tools.exec_command({cmd: "grep -rn timeout ."});\ntext(r.output);')),
    ("gpt-5-codex", ("exec_command", {"cmd": "grep -rn timeout ."})),
], ids=["exec", "exec_command"])
def test_codexs_grep_over_an_indexed_repository_reaches_the_file_the_request_is_about(serve: Any, tmp_path: Path,
                                                                                      model: str, call: Any) -> None:
    """`grep -rn` through Codex's shell, run in a subfolder of a repository the service indexed (its paths relative
    to it): the model is sent the lines of the file whose code the request is about, though they share no word with
    it, since the proxy reads the folder Codex runs in from its `<environment_context>` (which each model's
    instructions put after a different number of developer messages)."""
    from tests.client.hooks.test_claude_code_outputs import indexed_tree
    from tests.service.test_api_repos import GREP_REQUEST

    with indexed_tree(tmp_path, files=120, about=110, note="  # scaled by the configured multiplier for each pool"
                      ) as (root, url):
        api = codex_through_proxy(serve, url, root / "pkg", [call], model, request=GREP_REQUEST,
                                  home=tmp_path / "home")
        shown = shown_output(api.outputs(api.requests[-1])[0])
        assert "ctxsieve src_" in shown and len(shown) < 12_000, "the output was cut"
        folder = ran_in(url, shown)
    assert folder == (root / "pkg").resolve()
    assert "\n./mod_110.py:2:    timeout_0 = settings.timeout * 0  # scaled" in shown, shown[:1500]
