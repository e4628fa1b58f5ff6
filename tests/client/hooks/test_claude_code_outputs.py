"""The outputs that matter most to a coding agent, through the real Claude Code CLI (bundled in claude-agent-sdk) with
its own limits in place, against a scripted Messages API that records every request: a failing `pytest -v` run over
Claude Code's 30,000-character preview (PostToolUseFailure), the same log through `cat` (exit 0: Claude Code saves it
and hands the hook a preview), a failing C build, a Read with offset/limit of a large source file, and a Grep with a
request naming the definition it needs. Each scenario runs through the command hook and the HTTP hook, with
ctxsieve's capture prefix (CLAUDE_CODE_SHELL_PREFIX) as `install` writes it, and is judged by what the model was
sent."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ctxsieve_client.hooks.whole import capture_script
from ctxsieve_client.proxy.projection import ProxyOptions
from ctxsieve_client.proxy.server import ProxyApp, Upstreams
from ctxsieve_client.setup.state import CAPTURE_VARIABLE, capture_dir
from tests.client.coding_scenarios import Project, false_numbers, make_project, read_window, tool_results
from tests.client.scripted_anthropic import ScriptedModel, serve_on_loopback

BIN = Path(sys.executable).parent
CLAUDE = Path(__import__("claude_agent_sdk").__file__).parent / "_bundled" / "claude"
REQUEST = ("The ledger tests fail and the C build breaks: find out why. Then check how Decimal.quantize rounds "
           "its result.")
OFFSET, LIMIT = 2000, 1400


def calls(project: Project) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Bash", {"command": f"{sys.executable} -m pytest -v -p no:cacheprovider tests", "description": "run tests"}),
        ("Bash", {"command": f"cat {project.log}", "description": "print the saved log"}),
        ("Bash", {"command": f"gcc -Wall -Wextra -c {project.c_file} -o /dev/null", "description": "build"}),
        ("Read", {"file_path": str(project.source), "offset": OFFSET, "limit": LIMIT}),
        ("Grep", {"pattern": "def ", "path": str(project.source), "output_mode": "content", "-n": True}),
        ("Bash", {"command": f"grep -rn 'def ' {project.root}", "description": "find the definitions"}),
    ]


def hook(kind: str, url: str) -> dict[str, Any]:
    if kind == "command":
        return {"type": "command", "command": f"{BIN / 'ctxsieve-hook'} claude-code --url {url}", "timeout": 60}
    return {"type": "http", "url": f"{url}/v1/hooks/claude-code", "timeout": 60}


def claude(model_calls: list[tuple[str, dict[str, Any]]], request: str, tools: str, folder: Path, home: Path,
           url: str, via: str, settings: dict[str, Any] | None = None) -> ScriptedModel:
    """The real Claude Code CLI run in `folder` against a scripted Messages API making `model_calls`, with
    `settings` (its hooks), or with ANTHROPIC_BASE_URL at a proxy in front of the service at `url` (`via` "proxy");
    the model, whose recorded requests are what it was sent."""
    model = ScriptedModel(calls=model_calls)
    api, server = model.serve()
    proxy = None
    if via == "proxy":
        served = ProxyApp(url, None, Upstreams(anthropic=api, openai="http://127.0.0.1:9"), ProxyOptions())
        api, proxy = serve_on_loopback(served)
    written = home / "settings.json"
    written.write_text(json.dumps({} if via == "proxy" else settings or {}))
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "ANTHROPIC_BASE_URL": api, "ANTHROPIC_API_KEY": "sk-test",
           "CLAUDE_CONFIG_DIR": str(home / ".claude"), "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    try:
        done = subprocess.run([str(CLAUDE), "-p", request, "--allowedTools", tools, "--settings", str(written),
                               "--output-format", "json"], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=600)
    finally:
        server.should_exit = True
        if proxy is not None:
            proxy.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    return model


def run_claude(project: Project, home: Path, url: str, kind: str) -> ScriptedModel:
    """Claude Code with the hook of `kind` (and the capture prefix, as install writes it: the capture folder the
    service, this process, reads), or with ANTHROPIC_BASE_URL at a proxy."""
    wired = [{"matcher": "*", "hooks": [hook(kind, url)]}] if kind != "proxy" else []
    settings = {"env": {"CLAUDE_CODE_SHELL_PREFIX": str(capture_script()), CAPTURE_VARIABLE: str(capture_dir())},
                "hooks": {"PostToolUse": wired, "PostToolUseFailure": wired}}
    return claude(calls(project), REQUEST, "Bash,Read,Grep", project.root, home, url, kind, settings)


@contextlib.contextmanager
def indexed_tree(tmp_path: Path, files: int, about: int, note: str = "") -> Iterator[tuple[Path, str]]:
    """`grep_tree` (one line of each file matches `timeout`; only pkg/mod_<about>.py is about GREP_REQUEST) indexed
    as repository `repo` on a service of its own: the tree, and the service's URL."""
    from tests.conftest import make_settings, stub_models
    from tests.conftest import serve_on_loopback as serve_service
    from tests.service.test_api_repos import grep_tree

    root = tmp_path / "repo"
    grep_tree(root, files=files, about=about, lines=1, note=note)
    url, stop = serve_service(make_settings(tmp_path / "data", read_roots=str(root)), stub_models())
    try:
        assert httpx.put(f"{url}/v1/repos/repo", json={"path": str(root)}).status_code == 202
        while httpx.get(f"{url}/v1/repos/repo").json()["state"] == "indexing":
            pass
        yield root, url
    finally:
        stop()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("ledger"))


@pytest.mark.parametrize("kind", ["command", "http", "proxy"])
def test_what_claude_codes_model_is_sent(live_url: str, project: Project, tmp_path: Path, kind: str) -> None:
    model = run_claude(project, tmp_path, live_url, kind)
    seen = tool_results(model.requests)
    assert len(seen) == 6, "every call's result reached the model"

    failing = seen["toolu_00"]
    assert failing.startswith("Exit code 1\n") and "characters truncated" in failing, "Claude Code's own error, as is"
    # through the proxy alone a failing command's whole output is nowhere to be had (Claude Code saves none)
    for fact in project.facts["pytest"] if kind != "proxy" else []:
        assert fact in failing, f"a failing run's {fact!r} reached the model"
    assert kind == "proxy" or 'mcp__ctxsieve__fetch_ref(ref="src_' in failing

    printed = seen["toolu_01"]
    assert "<persisted-output>" not in printed, "the cut replaced Claude Code's 2 KB preview"
    for fact in project.facts["cat log"]:
        assert fact in printed, f"the log's {fact!r} reached the model"
    ref = re.search(r"src_[0-9a-f]{20}", printed).group(0)  # type: ignore[union-attr]
    assert httpx.get(f"{live_url}/v1/refs/{ref}").json()["text"] == project.log.read_text(), "the whole log stored"

    build = seen["toolu_02"]
    assert build.startswith("Exit code 1\n")
    for fact in project.facts["build"] if kind != "proxy" else []:
        assert fact in build, f"the build's {fact!r} reached the model"

    checked, wrong = false_numbers(seen["toolu_03"], project.source.read_text().split("\n"))
    assert checked >= 20 and not wrong, f"{len(wrong)} of {checked} shown lines carry a false number: {wrong[:3]}"
    assert all(OFFSET <= int(r.split("\t")[0]) < OFFSET + LIMIT for r in seen["toolu_03"].split("\n")
               if r.split("\t")[0].strip().isdigit() and "│" not in r and "⋮" not in r), "within the Read's window"

    for fact in project.facts["grep"]:
        assert fact in seen["toolu_04"], f"the line the request needs, {fact!r}, reached the model"
        assert fact in seen["toolu_05"], f"grep -rn: the line the request needs, {fact!r}, reached the model"
    assert "<persisted-output>" not in seen["toolu_05"], "the cut of the whole grep output, not Claude Code's preview"


def test_the_http_hook_answers_byte_for_byte_as_the_command_hook(live_url: str, project: Project,
                                                                 tmp_path: Path) -> None:
    """The same payloads (a source file's Read with an offset, a log, a grep output) to both hooks."""
    source = project.source.read_text()
    window = "\n".join(read_window(project, OFFSET, LIMIT))
    grep = "\n".join(f"{i}:{line}" for i, line in enumerate(source.split("\n"), 1) if "def " in line)
    base = {"session_id": "same", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project.root),
            "hook_event_name": "PostToolUse", "tool_use_id": "toolu_1", "permission_mode": "default"}
    (tmp_path / "t.jsonl").write_text(json.dumps({"type": "user", "message": {"role": "user", "content": REQUEST}})
                                      + "\n")
    payloads = [
        {**base, "tool_name": "Read", "tool_input": {"file_path": str(project.source), "offset": OFFSET,
                                                     "limit": LIMIT},
         "tool_response": {"type": "text", "file": {"filePath": str(project.source), "content": window,
                                                    "numLines": LIMIT, "startLine": OFFSET,
                                                    "totalLines": source.count("\n") + 1}}},
        {**base, "tool_name": "Bash", "tool_input": {"command": f"cat {project.log}"},
         "tool_response": {"stdout": project.log.read_text(), "stderr": "", "interrupted": False}},
        {**base, "tool_name": "Grep", "tool_input": {"pattern": "def ", "path": str(project.source)},
         "tool_response": {"mode": "content", "content": grep, "numLines": grep.count("\n") + 1}},
    ]
    for sent in payloads:
        done = subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--url", live_url], input=json.dumps(sent),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout, done.stderr
        over_http = httpx.post(f"{live_url}/v1/hooks/claude-code", json=sent, timeout=120)
        assert over_http.content == done.stdout.encode(), f"{sent['tool_name']}: the same bytes"


def test_a_failing_runs_failures_reach_the_model_whatever_each_processs_tmpdir(
        live_url: str, project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code and the service each with a TMPDIR of its own (as when the service was started from another
    shell): Claude Code as `ctxsieve install` wired it, its http hook and a failing `pytest -v` run. The capture
    prefix, running in Claude Code's environment, and the http hook, running in the service, find the same capture
    folder (the one install wrote into Claude Code's settings and the state), so the failures reach the model."""
    import tempfile

    home = tmp_path / "home"
    home.mkdir()
    own = {"HOME": str(home), "PATH": f"{BIN}:/usr/bin:/bin", "LANG": "C.UTF-8", "CTXSIEVE_URL": live_url}
    own.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
    installed = subprocess.run([str(BIN / "ctxsieve"), "install", "--yes", "--agent", "claude-code"], cwd=home,
                               env=own, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for name, folder in (("service", tmp_path / "service-tmp"), ("claude", tmp_path / "claude-tmp")):
        folder.mkdir()
        if name == "service":  # the http hook runs in this process: the service's environment
            monkeypatch.setenv("TMPDIR", str(folder))
            monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv("CTXSIEVE_CAPTURE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))  # the service's state: the user's
    model = ScriptedModel(calls=calls(project)[:1])
    api, server = model.serve()
    env = {**own, "TMPDIR": str(tmp_path / "claude-tmp"), "ANTHROPIC_BASE_URL": api, "ANTHROPIC_API_KEY": "sk-test",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    try:
        done = subprocess.run([str(CLAUDE), "-p", REQUEST, "--allowedTools", "Bash", "--output-format", "json"],
                              cwd=project.root, env=env, capture_output=True, text=True, timeout=600)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    failing = tool_results(model.requests)["toolu_00"]
    for fact in project.facts["pytest"]:
        assert fact in failing, f"a failing run's {fact!r} reached the model"
    assert not list((tmp_path / "claude-tmp").glob("ctxsieve-captures-*")), "no capture under a TMPDIR"


@pytest.mark.parametrize("kind", ["http", "proxy"])
def test_claude_codes_grep_over_an_indexed_repository_reaches_the_file_the_request_is_about(tmp_path: Path,
                                                                                           kind: str) -> None:
    """Claude Code's own Grep (content mode, run in a subfolder: its paths are relative to it) over a repository the
    service has indexed: the model is sent the lines of the file whose code the request is about, though they share
    no word with it, cut within the hook's budget; through the proxy too, which reads the working folder from
    Claude Code's own environment section of the request."""
    from tests.service.test_api_repos import GREP_REQUEST

    # more lines than the hook's budget holds (the file's lines must earn their place), fewer than the 250 lines
    # Claude Code's Grep passes on in content mode (its default head_limit): 120 files of 2 matching lines
    with indexed_tree(tmp_path, files=120, about=110, note="  # scaled by the configured multiplier for each pool"
                      ) as (root, url):
        settings = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook("http", url)]}]}}
        model = claude([("Grep", {"pattern": "timeout", "output_mode": "content", "-n": True})], GREP_REQUEST, "Grep",
                       root / "pkg", tmp_path, url, kind, settings)
    sent = tool_results(model.requests)["toolu_00"]
    assert "ctxsieve src_" in sent, "the output was cut"
    assert "\nmod_110.py:2:    timeout_0 = settings.timeout * 0  # scaled" in sent, sent[:1500]


SPREAD_REQUEST = "each pool's share of the retry budget is too large"
OTHERS = ("adapter", "client", "limits", "queue", "scheduler", "session", "transport", "worker")


def spread_tree(root: Path) -> None:
    """pkg/pool.py with 120 lines that match the request best, and eight modules with one weaker line each."""
    (root / "pkg").mkdir(parents=True)
    shares = "".join(f"        self.retry_budget_{n} = self.retry_budget * {n}  # the pool's share {n}\n"
                     for n in range(120))
    (root / "pkg" / "pool.py").write_text(f"class Pool:\n    def split(self):\n{shares}")
    for name in OTHERS:
        (root / "pkg" / f"{name}.py").write_text(
            f"def take(pool):\n    budget = pool.retry_budget  # given back after a failed request by {name}\n")


@pytest.mark.parametrize("kind", ["http", "proxy"])
def test_claude_codes_grep_of_no_indexed_repository_reaches_past_its_best_file(live_url: str, tmp_path: Path,
                                                                             kind: str) -> None:
    """Claude Code's own Grep (content mode) over a folder no repository index holds: one file's 120 lines all match
    the request better than any other file's line. The cut counts a file's later lines less, so the model is sent
    lines of the other files too and can see where else the name is used, not 50 lines of one file."""
    root = tmp_path / "repo"
    spread_tree(root)
    settings = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook("http", live_url)]}]}}
    model = claude([("Grep", {"pattern": "retry_budget", "output_mode": "content", "-n": True})], SPREAD_REQUEST,
                   "Grep", root, tmp_path, live_url, kind, settings)
    sent = tool_results(model.requests)["toolu_00"]
    assert "ctxsieve src_" in sent, "the output was cut"
    assert "pkg/pool.py:3:        self.retry_budget_0 = self.retry_budget * 0  # the pool's share 0" in sent
    reached = [name for name in OTHERS if f"pkg/{name}.py:2:    budget = pool.retry_budget  # given back" in sent]
    assert len(reached) >= 6, (reached, sent[:2000])


LISTING = [("Glob", {"pattern": "**/*.py"}), ("Grep", {"pattern": "timeout"})]  # (Grep's default: files_with_matches)


def listed(result: str) -> list[str]:
    return [line for line in result.split("\n") if line.endswith(".py")]


def test_claude_codes_glob_and_grep_file_lists_come_ranked_by_the_indexed_repository(tmp_path: Path) -> None:
    """Claude Code's Glob and its Grep in its default mode (files_with_matches) list files relative to its working
    folder, newest first; over an indexed repository the model is sent the file the request is about first, every
    file still listed, and a line saying who ordered them. Both hooks answer the same bytes."""
    from tests.service.test_api_repos import GREP_REQUEST

    with indexed_tree(tmp_path, files=120, about=11) as (root, url):  # more than the 100 files Glob lists
        dump = tmp_path / "payloads.jsonl"
        record = {"type": "command", "command": f"tee -a {dump} > /dev/null; echo >> {dump}"}
        settings = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook("command", url), record]}]}}
        model = claude(LISTING, GREP_REQUEST, "Glob,Grep", root / "pkg", tmp_path, url, "command", settings)
        for line in dump.read_text().split("\n"):
            if line.strip():
                sent = json.loads(line)
                command = subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--url", url], input=line,
                                         capture_output=True, text=True, timeout=120)
                over_http = httpx.post(f"{url}/v1/hooks/claude-code", json=sent, timeout=120)
                assert over_http.content == command.stdout.encode(), f"{sent['tool_name']}: the same bytes"
    seen = tool_results(model.requests)
    globbed, grepped = listed(seen["toolu_00"]), listed(seen["toolu_01"])
    assert globbed[0] == "mod_011.py" and grepped[0] == "mod_011.py", (seen["toolu_00"][:300], seen["toolu_01"][:300])
    assert len(globbed) == len(set(globbed)) == 100, "Glob's own limit: every file it listed, still listed"
    assert sorted(grepped) == sorted(f"mod_{i:03}.py" for i in range(120)), "every file Grep listed, still listed"
    assert "(Showing 100 of 120 matching files" in seen["toolu_00"], "Claude Code's own note on a truncated Glob stays"
    notes = json.dumps(model.requests[-1]["messages"])
    assert "PostToolUse:Glob hook additional context: ctxsieve ordered these 100 files best first by repository " \
           "repo's search for the request. Glob listed only some of the matches: mcp__ctxsieve__search_code " \
           "searches every definition." in notes, notes[-1500:]
    assert "PostToolUse:Grep hook additional context: ctxsieve ordered these 120 files best first by repository " \
           "repo's search for the request." in notes, notes[-1500:]


def test_claude_codes_file_lists_come_ranked_through_the_proxy_too(tmp_path: Path) -> None:
    """The same Glob and Grep through the proxy instead of a hook: the list the model is sent is ordered by the
    indexed repository (the working folder read from Claude Code's own request), with the line saying so."""
    from tests.service.test_api_repos import GREP_REQUEST

    with indexed_tree(tmp_path, files=120, about=11) as (root, url):
        model = claude(LISTING, GREP_REQUEST, "Glob,Grep", root / "pkg", tmp_path, url, "proxy")
    seen = tool_results(model.requests)
    globbed, grepped = listed(seen["toolu_00"]), listed(seen["toolu_01"])
    assert globbed[0] == "mod_011.py" and grepped[0] == "mod_011.py", (seen["toolu_00"][:300], seen["toolu_01"][:300])
    assert len(globbed) == len(set(globbed)) == 100 and len(grepped) == len(set(grepped)) == 120
    assert seen["toolu_01"].startswith("Found 120 files\n"), "Claude Code's own head line stays"
    assert "(Showing 100 of 120 matching files" in seen["toolu_00"], "and its own note on a truncated Glob"
    assert seen["toolu_00"].endswith("\n[ctxsieve ordered these 100 files best first by repository repo's search for "
                                     "the request.]"), seen["toolu_00"][-300:]


IMPORTS = ("import hashlib\nimport os\nfrom pathlib import Path\n\nfrom storage.codecs import decode_block, "
           "encode_block\nfrom storage.errors import StorageError\n"
           + "".join(f"from storage.layouts.v{n} import read_layout_v{n}, write_layout_v{n}\n" for n in range(8)))


@pytest.mark.parametrize("kind", ["command", "proxy"])
def test_a_whole_file_read_reaches_the_model_with_its_imports_and_the_definition_asked_about(tmp_path: Path,
                                                                                           live_url: str,
                                                                                           kind: str) -> None:
    """Claude Code's Read of a whole 1,000-line module, the request about a definition 30 from the end (every other
    definition calls a digest check too): the model is sent that definition, the module's imports (where a fix
    calling other code adds one) and the file's end (where a new definition goes), each line with the file's own
    number, through the hook and through the proxy."""
    steps = ["".join(f"\n\ndef copy_shard_{i}(archive, shard):\n    \"\"\"Copy shard {i} into the archive"
                     f".\"\"\"\n    data = archive.read(shard + {i})\n    check_digest_mismatch(data, shard)\n"
                     f"    archive.write(encode_block(data))\n    return len(data)\n" for i in part)
             for part in (range(100), range(100, 130))]
    asked = ("\n\ndef verify_digest(archive, shard):\n    \"\"\"Raise when the shard's digest differs.\"\"\"\n"
             "    digest = hashlib.sha256(archive.read(shard)).hexdigest()\n    if digest != archive.digest(shard):\n"
             "        raise StorageError(f'digest mismatch on shard {shard}')\n")
    end = "\n\ndef block_count(archive):\n    return len(archive.blocks())\n"
    source = tmp_path / "work" / "shard_ops.py"
    source.parent.mkdir()
    source.write_text(IMPORTS + steps[0] + asked + steps[1] + end)
    shown, lines = model_read(source, "verify_digest raises a digest mismatch for good shards", tmp_path, live_url,
                              kind, least=20)
    raised = next(n for n, line in enumerate(lines, 1) if "raise StorageError" in line)
    shown_with_numbers(shown, lines, (1, 2, 3, 6, raised, len(lines) - 2, len(lines) - 1))  # the imports, the line
    # asked about, the end


def model_read(source: Path, request: str, tmp_path: Path, live_url: str, kind: str, least: int
               ) -> tuple[str, list[str]]:
    """What Claude Code's model is sent for its Read of `source` (through the command hook, or the proxy), checked to
    be cut and to carry the file's own number on each of at least `least` lines; and the file's lines."""
    settings = {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [hook("command", live_url)]}]}}
    model = claude([("Read", {"file_path": str(source)})], request, "Read", source.parent, tmp_path, live_url, kind,
                   settings)
    shown = tool_results(model.requests)["toolu_00"]
    lines = source.read_text().split("\n")
    checked, wrong = false_numbers(shown, lines)
    assert checked >= least and not wrong, f"{len(wrong)} of {checked} shown lines carry a false number: {wrong[:3]}"
    assert len(shown) < len(source.read_text()) / 2, "cut"
    return shown, lines


def shown_with_numbers(shown: str, lines: list[str], numbers: tuple[int, ...]) -> None:
    """Each of the file's lines `numbers` reached the model whole, after its own number."""
    for number in numbers:
        line = re.escape(lines[number - 1])
        assert re.search(rf"^(?:\d+\t{number}│|{number}\t){line}$", shown, re.M), (number, shown[:600])


@pytest.mark.parametrize("kind", ["command", "proxy"])
def test_a_later_part_of_a_long_function_reaches_the_model_under_its_def_line(tmp_path: Path, live_url: str,
                                                                             kind: str) -> None:
    """Claude Code's Read of a module whose one long function holds, far below its `def` line, the lines the request
    is about: the model is sent those lines and the function's `def` line with its own number (it was sent lines of
    no named function), through the hook and through the proxy."""
    body = "".join(f"    block_{i} = archive.copy_block({i}, codec=encode_block)\n" for i in range(260))
    asked = ("    if archive.digest(key) != hashlib.sha256(data).hexdigest():\n"
             "        raise StorageError(f'digest mismatch on shard {key}')\n    return data\n")
    source = tmp_path / "work" / "rebuild.py"
    source.parent.mkdir()
    before = "".join(f"\n\ndef copy_block_{i}(archive):\n    return archive.copy_block({i}, codec=encode_block)\n"
                     for i in range(120))
    source.write_text(IMPORTS + before + "\n\ndef rebuild_archive(archive, key, data, strict=False):\n" + body + asked)
    shown, lines = model_read(source, "why is a digest mismatch raised for a good shard", tmp_path, live_url, kind,
                              least=5)
    head = next(n for n, line in enumerate(lines, 1) if line.startswith("def rebuild_archive("))
    raised = next(n for n, line in enumerate(lines, 1) if "raise StorageError" in line)
    assert raised - head > 200, "fixture: the lines asked about are far below the def line"
    shown_with_numbers(shown, lines, (head, raised))
