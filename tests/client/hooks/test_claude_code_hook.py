"""`ctxsieve hook claude-code` as Claude Code runs it: a process per call, the hook's JSON on stdin, the
documented answer on stdout. Payloads in the shapes Claude Code sends (checked against the Claude Agent SDK's
declared PostToolUse input type), answers checked against its declared output type."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import httpx
import pytest
from claude_agent_sdk.types import PostToolUseHookInput, PostToolUseHookSpecificOutput, SyncHookJSONOutput

BIN = Path(sys.executable).parent
LOG = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO worker {i % 7} synced shard {i} to the archive"
                for i in range(1500)) + "\n2026-11-30 11:00:00 ERROR shard 1234 checksum mismatch, archive rejected\n"


def payload(tool: str, tool_input: dict[str, Any], response: Any, transcript: Path | None = None) -> dict[str, Any]:
    sent = {"session_id": "s-1", "transcript_path": str(transcript or "/nonexistent"), "cwd": "/work",
            "hook_event_name": "PostToolUse", "tool_name": tool, "tool_input": tool_input,
            "tool_response": response, "tool_use_id": "toolu_1", "permission_mode": "default"}
    declared = typing.get_type_hints(PostToolUseHookInput)
    required = set(PostToolUseHookInput.__required_keys__)
    assert set(sent) <= set(declared) and required <= set(sent), "the payload drifted from the SDK's type"
    return sent


def hook(sent: dict[str, Any], url: str, *extra: str) -> tuple[dict[str, Any] | None, str]:
    done = subprocess.run([str(BIN / "ctxsieve"), "hook", "claude-code", "--url", url, *extra],
                          input=json.dumps(sent), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout) if done.stdout.strip() else None
    if answer is not None:
        assert set(answer) <= set(typing.get_type_hints(SyncHookJSONOutput))
        specific = answer["hookSpecificOutput"]
        assert set(specific) <= set(typing.get_type_hints(PostToolUseHookSpecificOutput))
        assert specific["hookEventName"] == "PostToolUse"
    return answer, done.stderr


def replaced(answer: dict[str, Any] | None) -> Any:
    assert answer is not None, "a large output is replaced"
    return answer["hookSpecificOutput"]["updatedToolOutput"]


def test_read_of_a_large_file_keeps_reads_shape(stub_url: str) -> None:
    response = {"type": "text", "file": {"filePath": "/work/sync.log", "content": LOG, "numLines": 1501,
                                         "startLine": 1, "totalLines": 1501}}
    answer = hook(payload("Read", {"file_path": "/work/sync.log"}, response), stub_url)[0]
    out = replaced(answer)
    assert answer is not None and out["type"] == "text" and set(out["file"]) == set(response["file"])
    assert out["file"]["numLines"] < 1501 and out["file"]["filePath"] == "/work/sync.log"
    shown = out["file"]["content"]
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert len(shown) < len(LOG) / 5 and "An outline" in context, "no query-like field: an outline"
    rows = [row.split("│", 1) for row in shown.split("\n") if row.strip() != "⋮"]
    assert rows and all(LOG.split("\n")[int(n) - 1] == text for n, text in rows), "each entry its own line, numbered"
    assert 'mcp__ctxsieve__fetch_ref(ref="src_' in context and "mcp__ctxsieve__filter_ref(" in context
    ref = context.split('fetch_ref(ref="', 1)[1].split('"', 1)[0]
    assert httpx.get(f"{stub_url}/v1/refs/{ref}").json()["text"] == LOG, "stored whole"


def test_bash_output_is_cut_to_the_command_and_keeps_stderr(stub_url: str) -> None:
    response = {"stdout": LOG, "stderr": "warning: slow disk", "interrupted": False, "isImage": False}
    out = replaced(hook(payload("Bash", {"command": "grep -n checksum sync.log; cat sync.log",
                                          "description": "find the checksum mismatch"}, response), stub_url)[0])
    assert set(out) == set(response) and out["stderr"] == "warning: slow disk" and out["interrupted"] is False
    assert "checksum mismatch" in out["stdout"] and len(out["stdout"]) < len(LOG) / 5


def test_webfetch_and_an_mcp_tool(stub_url: str, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in [
        {"type": "user", "message": {"role": "user", "content": "which shard failed its checksum?"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Let me fetch the log."}, {"type": "tool_use", "id": "t", "name": "WebFetch"}]}},
    ]) + "\n")
    web = {"bytes": len(LOG), "code": 200, "codeText": "OK", "result": LOG, "durationMs": 40,
           "url": "https://example.com/sync.log"}
    out = replaced(hook(payload("WebFetch", {"url": "https://example.com/sync.log"}, web, transcript), stub_url)[0])
    assert set(out) == set(web) and "checksum mismatch" in out["result"], "intent from the transcript"
    blocks = [{"type": "text", "text": LOG}, {"type": "image", "source": {"type": "base64", "data": "AA=="}}]
    mcp = replaced(hook(payload("mcp__logs__tail", {"query": "checksum mismatch"}, blocks), stub_url)[0])
    assert mcp[0]["type"] == "text" and "checksum mismatch" in mcp[0]["text"] and mcp[1] == blocks[1]


def test_ctxsieves_own_tools_are_left_alone(stub_url: str) -> None:
    """A ref tool's answer (a whole fetch, search_code's definitions and the line naming the rest) is what the model
    asked for, under any MCP server's name (`ctxsieve mcp`, a gateway); another server's `search_code` (GitHub's),
    or an upstream's behind a gateway (`fs__search_code`), is not ctxsieve's."""
    found = [{"type": "text", "text": LOG + "\n\n[ctxsieve search_code: 3 definitions of repository app, best first]"}]
    fetched = [{"type": "text", "text": LOG}]
    for tool, blocks in (("mcp__ctxsieve__fetch_ref", fetched), ("mcp__my_tools__filter_ref", fetched),
                         ("mcp__ctxsieve__search_code", found), ("mcp__gw__search_code", found)):
        sent = payload(tool, {"query": "checksum mismatch"}, blocks)
        assert hook(sent, stub_url)[0] is None, tool
        assert http_hook(sent, stub_url) == {}, tool
    for tool in ("mcp__github__search_code", "mcp__gw__fs__search_code"):
        other = replaced(hook(payload(tool, {"query": "checksum mismatch"}, fetched), stub_url)[0])
        assert len(other[0]["text"]) < len(LOG) / 5, tool


def test_small_outputs_other_events_and_a_dead_service_are_left_alone(stub_url: str) -> None:
    small = {"stdout": "3 files changed", "stderr": "", "interrupted": False, "isImage": False}
    assert hook(payload("Bash", {"command": "git commit"}, small), stub_url)[0] is None
    failure = {**payload("Bash", {"command": "false"}, small), "hook_event_name": "PostToolUseFailure"}
    assert hook(failure, stub_url)[0] is None
    answer, said = hook(payload("Bash", {"command": "cat sync.log"}, {"stdout": LOG, "stderr": ""}),
                        "http://127.0.0.1:9", "--timeout", "2")
    assert answer is None and "output left unchanged" in said, "never blocks or breaks the agent"


def test_file_lists_no_indexed_repository_holds_are_left_alone(stub_url: str) -> None:
    """A Glob's or Grep's list of files is ordered only by a repository that holds them (see
    test_claude_code_outputs for the real CLI over an indexed one); otherwise the tool's list goes as it is."""
    names = [f"lib/mod_{i}.py" for i in range(300)]
    glob = {"filenames": names, "durationMs": 9, "numFiles": 300, "truncated": True}
    assert hook(payload("Glob", {"pattern": "**/*.py"}, glob), stub_url) == (None, "")
    files = {"mode": "files_with_matches", "filenames": names, "numFiles": 300}
    assert hook(payload("Grep", {"pattern": "timeout"}, files), stub_url) == (None, "")
    from ctxsieve_client.hooks.claude_code import listed_files
    for response in ({"mode": "content", "filenames": [], "content": "a.py:1:x"}, {"filenames": ["one.py"]},
                     {"filenames": ["a.py", 3]}, {"mode": "count", "filenames": names}):
        assert listed_files(payload("Grep", {"pattern": "x"}, response)) is None, response
    assert listed_files(payload("Bash", {"command": "ls"}, glob)) is None


def http_hook(sent: Any, url: str) -> dict[str, Any]:
    from ctxsieve_client import Client

    with Client(url) as client:
        return client.claude_code_hook(sent)


def test_the_http_hook_answers_what_the_command_hook_prints(stub_url: str, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "which shard failed?"}})
                          + "\n")
    read = {"type": "text", "file": {"filePath": "/work/sync.log", "content": LOG, "numLines": 1501,
                                     "startLine": 1, "totalLines": 1501}}
    payloads = [payload("Read", {"file_path": "/work/sync.log"}, read),
                payload("Read", {"file_path": "/work/sync.log"}, read, transcript),
                payload("Bash", {"command": "cat sync.log", "description": "find the checksum mismatch"},
                        {"stdout": LOG, "stderr": "", "interrupted": False, "isImage": False}),
                payload("mcp__fs__read", {"path": "x"}, [{"type": "text", "text": LOG}]),
                payload("Bash", {"command": "true"}, {"stdout": "ok", "stderr": ""})]
    for sent in payloads:
        command, _ = hook(sent, stub_url)
        assert http_hook(sent, stub_url) == (command or {}), sent["tool_name"]
    assert "updatedToolOutput" in http_hook(payloads[0], stub_url)["hookSpecificOutput"]
    report = httpx.get(f"{stub_url}/v1/sessions/cc-s-1").json()
    assert report["requests"], "the payload's session is the ctxsieve session, as with the command hook"


@pytest.mark.parametrize("sent", [None, [], "text", {"hook_event_name": "PreToolUse", "tool_name": "Read"},
                                  {"hook_event_name": "PostToolUse", "tool_response": {"stdout": 7}}])
def test_the_http_hook_leaves_what_it_does_not_handle_alone(stub_url: str, sent: Any) -> None:
    response = httpx.post(f"{stub_url}/v1/hooks/claude-code", json=sent, timeout=120)
    assert response.status_code == 200 and response.json() == {}, "never a hook error"


def test_the_http_hook_reads_no_file_but_a_transcript(stub_url: str) -> None:
    """An odd tool_input and a transcript_path naming another file: the output is still cut (an outline: no
    intent), and /etc/passwd is never read as a transcript."""
    sent = {"hook_event_name": "PostToolUse", "tool_input": "not an object", "tool_response": {"stdout": LOG},
            "transcript_path": "/etc/passwd"}
    answer = httpx.post(f"{stub_url}/v1/hooks/claude-code", json=sent, timeout=120).json()
    assert answer["hookSpecificOutput"]["updatedToolOutput"]["stdout"].startswith("Outline")


def test_install_http_writes_an_http_hook_in_place_of_the_command_hook(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": "ctxsieve-hook claude-code --url http://old:8000"}]}]}}))
    for extra in ([], ["--http"], ["--http"]):
        done = subprocess.run([str(BIN / "ctxsieve"), "hook", "claude-code", "--install", "--project", "--url",
                               "http://127.0.0.1:8000/", *extra], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr
    hooks = [h for e in json.loads(settings.read_text())["hooks"]["PostToolUse"] for h in e["hooks"]]
    assert hooks == [{"type": "command", "command": "my-linter"},
                     {"type": "http", "url": "http://127.0.0.1:8000/v1/hooks/claude-code", "timeout": 30,
                      "headers": {"Authorization": "Bearer ${CTXSIEVE_API_KEY}"},
                      "allowedEnvVars": ["CTXSIEVE_API_KEY"]}], "the command hooks (bare or by path) replaced"
    failing = [h for e in json.loads(settings.read_text())["hooks"]["PostToolUseFailure"] for h in e["hooks"]]
    assert failing == hooks[1:], "a failing command's whole output goes through the same hook"
    prefix = tmp_path / ".local" / "share" / "ctxsieve" / "claude-code-capture.sh"
    captures = tmp_path / ".local" / "state" / "ctxsieve" / "captures"  # one folder, whatever each process's TMPDIR
    assert json.loads(settings.read_text())["env"] == {"CLAUDE_CODE_SHELL_PREFIX": str(prefix),
                                                       "CTXSIEVE_CAPTURE_DIR": str(captures)}
    assert done.stdout.splitlines() == [
        f"wrote {settings}: PostToolUse and PostToolUseFailure http hook to http://127.0.0.1:8000/v1/hooks/claude-code",
        f"wrote {settings}: env CLAUDE_CODE_SHELL_PREFIX={prefix} (each Bash command's whole output saved for the "
        f"hooks, in {captures})",
        f"wrote {tmp_path / '.mcp.json'}: MCP server ctxsieve: {BIN / 'ctxsieve-mcp'} --url http://127.0.0.1:8000"]
    ran = subprocess.run([str(prefix), "echo kept; exit 4"], capture_output=True, text=True, timeout=30)
    assert (ran.returncode, ran.stdout) == (4, "kept\n"), "the prefix runs what Claude Code hands it, as is"


def test_install_keeps_what_is_there_and_registers_the_mcp_server(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Read"]}, "hooks": {"PostToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}]}}))
    for _ in range(2):  # idempotent
        done = subprocess.run([str(BIN / "ctxsieve"), "hook", "claude-code", "--install", "--project", "--url",
                               "http://127.0.0.1:8000"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Read"]}
    commands = [h["command"] for e in data["hooks"]["PostToolUse"] for h in e["hooks"]]
    assert commands == ["my-linter", f"{BIN / 'ctxsieve-hook'} claude-code --url http://127.0.0.1:8000"]
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["ctxsieve"] == {"type": "stdio", "command": str(BIN / "ctxsieve-mcp"),
                                   "args": ["--url", "http://127.0.0.1:8000"]}


def test_install_writes_commands_that_run_without_the_venv_on_path(tmp_path: Path) -> None:
    """Claude Code runs the hook with `/bin/sh -c` and its own PATH: a bare name there was `not found` (exit 127),
    and every call went on silently without the hook; and it starts the MCP server by the command written."""
    import shlex

    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--install", "--project", "--url",
                           "http://127.0.0.1:9"], cwd=tmp_path, env=bare, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]["PostToolUse"]
    command = entry["hooks"][0]["command"]
    assert shlex.split(command)[0] == str(BIN / "ctxsieve-hook")
    sent = json.dumps(payload("Bash", {"command": "cat sync.log"}, {"stdout": LOG, "stderr": ""}))
    ran = subprocess.run(["/bin/sh", "-c", command], input=sent, env=bare, cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and "ctxsieve hook: output left unchanged" in ran.stderr, ran.stderr
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["ctxsieve"]
    helped = subprocess.run([server["command"], *server["args"], "--help"], env=bare, capture_output=True, text=True,
                            timeout=60)
    assert helped.returncode == 0 and "--url" in helped.stdout, helped.stderr


def test_the_hook_process_imports_only_what_it_sends_with(stub_url: str) -> None:
    """Claude Code starts the hook per tool call: httpx's command line (click, rich, pygments), the async backends
    (trio, anyio) and HTTP/2 (h2) cost it about 120 ms and are never used; the cut still arrives."""
    sent = json.dumps(payload("Bash", {"command": "cat sync.log"}, {"stdout": LOG, "stderr": ""}))
    done = subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--url", stub_url], input=sent,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0 and "updatedToolOutput" in done.stdout, done.stderr[-2000:]
    timed = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    imported = {row[-1].strip(): int(row[1]) for row in timed if row[1].strip().isdigit()}  # name: cumulative us
    assert "httpx" in imported and "ctxsieve_client.client" in imported, "the timing lines were read"
    # a blocked package's import (`h2.config` too) is still listed, tried and refused in microseconds; one that ran
    # takes milliseconds
    unused = ("click", "rich", "pygments", "trio", "anyio", "h2")
    assert not {name for name, us in imported.items() if name.split(".")[0] in unused and us > 1000}

def test_install_from_a_folder_with_a_space_and_from_the_light_client_alone(tmp_path: Path) -> None:
    """An environment at a path with a space (this venv seen through links): the commands written are quoted, and
    the light client's own MCP server is registered (no `ctxsieve` needed). With no `ctxsieve-mcp` it says so and
    writes nothing."""
    import shlex

    root = tmp_path / "my env"
    scripts = root / "bin dir"
    scripts.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text((BIN.parent / "pyvenv.cfg").read_text())
    (root / "lib").symlink_to(BIN.parent / "lib")
    (scripts / "python3").symlink_to(Path(sys.executable).resolve())
    runs = {"ctxsieve-hook": "from ctxsieve_client.hooks.cli import main",
            "ctxsieve-mcp": "from ctxsieve_client.mcp_cli import main"}
    for name, line in runs.items():
        (scripts / name).write_text(f'#!/bin/sh\nexec "$(dirname "$0")/python3" -c "import sys; {line}; '
                                    'sys.exit(main())" "$@"\n')
        (scripts / name).chmod(0o755)
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    install = [str(scripts / "ctxsieve-hook"), "claude-code", "--install", "--project", "--url", "http://127.0.0.1:9"]
    done = subprocess.run(install, cwd=tmp_path, env=bare, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]["PostToolUse"]
    command = entry["hooks"][0]["command"]
    assert command == f"'{scripts / 'ctxsieve-hook'}' claude-code --url http://127.0.0.1:9"
    sent = json.dumps(payload("Bash", {"command": "cat sync.log"}, {"stdout": LOG, "stderr": ""}))
    ran = subprocess.run(["/bin/sh", "-c", command], input=sent, env=bare, cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == 0 and "ctxsieve hook: output left unchanged" in ran.stderr, ran.stderr
    (mcp,) = [line for line in done.stdout.splitlines() if ": MCP server ctxsieve: " in line]
    assert shlex.split(mcp.split(": ", 2)[2])[0] == str(scripts / "ctxsieve-mcp")

    (scripts / "ctxsieve-mcp").unlink()
    (tmp_path / ".mcp.json").unlink()
    done = subprocess.run(install, cwd=tmp_path, env=bare, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no ctxsieve-mcp beside" in done.stderr and "ctxsieve-client[mcp]" in done.stderr
    assert not (tmp_path / ".mcp.json").exists(), "nothing written"


@pytest.mark.parametrize("response", [" ".join(f"plain text {i}" for i in range(800)),
                                      {"content": "".join(f"grep line {i}\n" for i in range(800)), "mode": "content"}])
def test_every_shape_with_text_is_read(stub_url: str, response: Any) -> None:
    out = replaced(hook(payload("Grep", {"pattern": "grep line"}, response), stub_url)[0])
    assert type(out) is type(response)


CLAUDE = Path(__import__("claude_agent_sdk").__file__).parent / "_bundled" / "claude"


def claude_hook(kind: str, url: str) -> dict[str, Any]:
    if kind == "command":
        return {"type": "command", "command": f"{BIN / 'ctxsieve'} hook claude-code --url {url}"}
    return {"type": "http", "url": f"{url}/v1/hooks/claude-code", "timeout": 30,
            "headers": {"Authorization": "Bearer ${CTXSIEVE_API_KEY}"}, "allowedEnvVars": ["CTXSIEVE_API_KEY"]}


@pytest.mark.parametrize("kind", ["command", "http", "http, service stopped"])
def test_real_claude_code_sends_the_model_the_hooks_replacement(stub_url: str, tmp_path: Path, kind: str) -> None:
    """Claude Code itself (the CLI the Claude Agent SDK bundles), headless, against a scripted Messages API on
    loopback: what the model is sent after Read is the hook's replacement, not the file; with the service stopped,
    the file itself."""
    from tests.client.scripted_anthropic import ScriptedModel

    log = tmp_path / "sync.log"
    log.write_text(LOG)
    model = ScriptedModel(str(log))
    api, server = model.serve()
    settings = tmp_path / "settings.json"
    url = "http://127.0.0.1:9" if "stopped" in kind else stub_url
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
        claude_hook(kind.split(",")[0], url)]}]}}))
    env = {"CTXSIEVE_API_KEY": "unused-without-keys",
           "PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_BASE_URL": api,
           "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    try:
        done = subprocess.run([str(CLAUDE), "-p", f"Read {log} and find the checksum mismatch", "--allowedTools",
                               "Read", "--settings", str(settings), "--output-format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    from tests.client.coding_scenarios import tool_results

    results = tool_results(model.requests)
    assert results, "the scripted model was sent Read's result"
    seen = results["toolu_00"]  # with the hook's context beside it
    if "stopped" in kind:
        assert "mcp__ctxsieve__" not in seen and "shard 1499" in seen, "the tool's own output reached the model"
        return
    assert "mcp__ctxsieve__fetch_ref(" in seen and "checksum mismatch" in seen
    assert len(seen) < len(LOG) / 4, "the model saw the cut, not the whole file"


# a shell script with no suffix (bats-core's `libexec/bats-core/bats`): read by its `#!` line, not as prose
SCRIPT = "#!/usr/bin/env bash\nset -e\n\n" + "\n".join(
    f"# Syncs shard {i}, retrying up to {i} times.\nhandler_{i}() {{\n  local tries=0\n"
    f"  while [ \"$tries\" -lt {i} ]; do\n    tries=$((tries + 1))\n    sync_shard \"$1\" || continue\n  done\n"
    + ("  echo 'handler 17 gave up after retries' >&2\n" if i == 17 else "") + "}\n" for i in range(40))


@pytest.mark.parametrize(("name", "asked", "named"), [
    ("handlers.py", "Handler17.dispatch gives up too early", 'raise RuntimeError("handler 17 gave up after retries")'),
    ("serve", "handler_17 gives up too early", "echo 'handler 17 gave up after retries' >&2")])
def test_real_claude_code_sees_the_files_own_line_numbers_in_a_cut_read(stub_url: str, tmp_path: Path, name: str,
                                                                         asked: str, named: str) -> None:
    """A source file read through the http hook: each file line the model is sent carries its true number
    (Claude Code's own numbering where the cut is one run, the number before │ where it is several). A script with
    no suffix (`serve`, `#!/usr/bin/env bash`) is cut as code too: at its functions, its lines whole and indented."""
    from tests.client.scripted_anthropic import ScriptedModel
    from tests.service.test_api_code import TEXT

    MODULE = TEXT if name.endswith(".py") else SCRIPT  # noqa: N806
    source = tmp_path / name
    source.write_text(MODULE)
    model = ScriptedModel(str(source))
    api, server = model.serve()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [
        claude_hook("http", stub_url)]}]}}))
    env = {"CTXSIEVE_API_KEY": "unused-without-keys", "PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(tmp_path),
           "ANTHROPIC_BASE_URL": api, "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
           "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    try:
        done = subprocess.run([str(CLAUDE), "-p", f"{asked}; read {source}",
                               "--allowedTools", "Read", "--settings", str(settings), "--output-format", "json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.should_exit = True
    assert done.returncode == 0, done.stderr[-2000:]
    sent = model.requests[-1]
    results = [b for m in sent["messages"] if isinstance(m.get("content"), list) for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    seen = results[-1]["content"]
    seen = seen if isinstance(seen, str) else "".join(b.get("text", "") for b in seen)
    file_lines = MODULE.split("\n")
    checked = 0
    for row in seen.split("\n"):
        match = re.match(r"^\s*(\d+)\t(.*)$", row)
        assert match, f"a line Claude Code did not number: {row!r}"
        own, rest = int(match.group(1)), match.group(2)
        marked = re.match(r"^\s*(\d+)│(.*)$", rest)
        if rest.strip() == "⋮":
            continue
        number, text = (int(marked.group(1)), marked.group(2)) if marked else (own, rest)
        assert file_lines[number - 1] == text, f"line {number} is not {text!r}"
        checked += 1
    assert 20 <= checked < len(file_lines) / 2, "a cut of the file, every line with its true number"
    assert checked <= len(file_lines) / 3, "cut as code (a third of the file), not as prose (1,500 tokens: 155 lines)"
    assert named in seen, "the named definition is shown"
    assert "mcp__ctxsieve__fetch_ref(" in json.dumps(sent), "the placeholder beside the output"
