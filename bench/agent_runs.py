"""How bench.agents runs each real agent once, as a user has it set up, against a scripted model API that records
every request: Claude Code (`claude -p`, in a fresh HOME written by `ctxsieve-hook claude-code --install` or
naming `ctxsieve mcp`) and Codex (`codex exec`, a provider whose base URL is the API or `ctxsieve proxy`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def proxy(service: str, anthropic: str = "http://127.0.0.1:9", openai: str = "http://127.0.0.1:9/v1",
          serve_tools: bool = False) -> Iterator[str]:
    """`ctxsieve proxy` as a user starts it (its defaults), in front of the scripted API; its URL."""
    port = free_port()
    command = [str(BIN / "ctxsieve"), "proxy", "--port", str(port), "--url", service, "--anthropic-upstream",
               anthropic, "--openai-upstream", openai] + (["--serve-tools"] if serve_tools else [])
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while not _listening(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"ctxsieve proxy did not start: {log.read()[-2000:].decode(errors='replace')}")
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(30)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


# --- Claude Code ---------------------------------------------------------------------------------------------------

def claude_home(root: Path, surface: str, service: str) -> Path:
    """A fresh HOME set up for the surface: the hooks by `ctxsieve-hook --install`, the MCP server as it writes it."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=root))
    if surface in ("+ command hook", "+ http hook"):
        http = ["--http"] if surface == "+ http hook" else []
        subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--install", "--url", service, *http], cwd=root,
                       env={**os.environ, "HOME": str(home)}, check=True, capture_output=True, timeout=300)
    elif surface == "+ proxy":
        server = {"type": "stdio", "command": str(BIN / "ctxsieve"), "args": ["mcp", "--url", service]}
        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"ctxsieve": server}}))
    return home


def run_claude(cwd: Path, root: Path, request: str, calls: list[tuple[str, dict[str, Any]]], surface: str,
               service: str) -> dict[str, str]:
    """Claude Code run once (`claude -p`) as the surface has it; what the model was sent per call (toolu_NN)."""
    from tests.client.coding_scenarios import tool_results
    from tests.client.hooks.test_claude_code_hook import CLAUDE
    from tests.client.scripted_anthropic import ScriptedModel

    model = ScriptedModel(calls=calls)
    api, server = model.serve()
    home = claude_home(root, surface, service)
    try:
        with proxy(service, anthropic=api) if surface == "+ proxy" else _same(api) as base:
            env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(home), "ANTHROPIC_BASE_URL": base,
                   "ANTHROPIC_API_KEY": "sk-bench", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            done = subprocess.run([str(CLAUDE), "-p", request, "--allowedTools", "Bash,Read,Grep",
                                   "--output-format", "json"], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=900)
    finally:
        server.should_exit = True
    if done.returncode != 0:
        raise SystemExit(f"claude ({surface}) exited {done.returncode}: {done.stderr[-2000:]}")
    if os.environ.get("BENCH_AGENTS_KEEP"):  # a folder to keep each run's requests in, for a look at them
        kept = Path(os.environ["BENCH_AGENTS_KEEP"], f"{surface}-{time.time():.0f}.json")
        kept.write_text(json.dumps(model.requests))
    return tool_results(model.requests)


@contextmanager
def _same(url: str) -> Iterator[str]:
    yield url



# --- Codex ---------------------------------------------------------------------------------------------------------

def run_codex(cwd: Path, root: Path, request: str, call: tuple[str, Any], model: str, surface: str,
              service: str) -> str:
    """Codex run once (`codex exec`, a provider whose base URL is the API or the proxy); the model's text of the
    command's output item."""
    from tests.client.gateway.test_codex_gateway import CODEX
    from tests.client.scripted_openai import ScriptedResponses

    api = ScriptedResponses(calls=[call])
    url, server = api.serve()
    home = Path(tempfile.mkdtemp(prefix="codex-home-", dir=root))
    (home / ".codex").mkdir()
    try:
        through = proxy(service, openai=url, serve_tools=surface.endswith("--serve-tools")) \
            if surface != "codex alone" else _same(url.removesuffix("/v1"))
        with through as base:
            (home / ".codex" / "config.toml").write_text("\n".join([
                f'model = "{model}"', 'model_provider = "p"', 'approval_policy = "never"',
                'sandbox_mode = "read-only"', "", "[model_providers.p]", 'name = "bench"',
                f'base_url = "{base}/v1"', 'env_key = "OPENAI_API_KEY"', 'wire_api = "responses"', ""]))
            env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
                   "OPENAI_API_KEY": "sk-bench"}
            done = subprocess.run([str(CODEX), "exec", "--skip-git-repo-check", request], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=600)
    finally:
        server.should_exit = True
    if done.returncode != 0:
        raise SystemExit(f"codex ({surface}) exited {done.returncode}: {done.stderr[-2000:]}")
    (item,) = api.outputs(api.requests[-1])
    output = item["output"]
    return output if isinstance(output, str) else "".join(p.get("text", "") for p in output if isinstance(p, dict))
