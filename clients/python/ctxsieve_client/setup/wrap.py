"""`ctxsieve wrap AGENT [ARGS...]`: one run of an agent with its model API behind a proxy of its own.

The proxy (ctxsieve_client.proxy) is served in this process on a free loopback port for as long as the agent runs;
the agent is pointed at it the way it really reads its base URL (Claude Code: ANTHROPIC_BASE_URL; Codex 0.169
ignores OPENAI_BASE_URL and reads `openai_base_url`, given as `-c`; Claude Code's settings put their env over its
environment, so where they set the base URL it is given as `--settings`; any other command gets both variables), and
the base URL it had (its environment, its config or settings, its `-c`) becomes the proxy's upstream. The agent's
stdin, stdout, stderr and exit status pass through; nothing is written to its config, so a run without wrap is as
before.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from .state import state_dir

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"
CHATGPT = "https://chatgpt.com/backend-api/codex"  # Codex's own default upstream under a ChatGPT login


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", help="claude, codex, or any command that reads ANTHROPIC_BASE_URL / OPENAI_BASE_URL")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the agent's own arguments, as you would give them")


@dataclass
class Pointing:
    """How one agent run is pointed at the proxy: its upstreams, and what its command line and environment gain."""

    anthropic: str = ANTHROPIC
    openai: str = OPENAI
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    settings: list[str] = field(default_factory=list)  # Codex: the -c settings that point it at the proxy
    claude_settings: bool = False  # Claude Code: its settings set the base URL, which its environment cannot beat


def run(argv: list[str], service_url: str,
        service: Callable[[], AbstractContextManager[None]] = nullcontext) -> int:
    found = shutil.which(argv[0])
    if found is None:
        sys.stderr.write(f"ctxsieve wrap: {argv[0]}: not found on PATH\n")
        return 127
    pointing = point(argv)
    with service(), _proxy(service_url, pointing) as proxy:
        command, env = _command(pointing, proxy, found)
        sys.stderr.write(f"ctxsieve wrap: {Path(found).name} through {proxy} (ctxsieve at {service_url}; "
                         f"proxy log {_log_path()})\n")
        return _run(command, env)


def point(argv: list[str]) -> Pointing:
    name = Path(argv[0]).name
    if name == "codex":
        return _codex(argv)
    env = os.environ
    own = _claude_settings_url() if name == "claude" else None
    return Pointing(own or env.get("ANTHROPIC_BASE_URL") or ANTHROPIC, env.get("OPENAI_BASE_URL") or OPENAI, argv,
                    claude_settings=own is not None)


def _claude_settings_url() -> str | None:
    """ANTHROPIC_BASE_URL from Claude Code's settings (local, project, user: the first that sets it), which Claude
    Code puts over its environment's."""
    user = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    for path in (Path(".claude") / "settings.local.json", Path(".claude") / "settings.json", user / "settings.json"):
        try:
            env = json.loads(path.read_text()).get("env") or {}
        except (OSError, ValueError, AttributeError):  # none there, or not settings Claude Code could read either
            continue
        if env.get("ANTHROPIC_BASE_URL"):
            return str(env["ANTHROPIC_BASE_URL"])
    return None


def _codex(argv: list[str]) -> Pointing:
    """Codex's upstream, in the order it reads it: a `-c openai_base_url=` given (taken out: the proxy's is given
    instead), its config's custom provider or `openai_base_url`, a ChatGPT login's backend, else OpenAI's API."""
    from .codex import read_config

    rest, given = _without_setting(argv[1:], "openai_base_url")
    try:
        config = read_config()
    except ValueError:  # Codex will say what is wrong with its config itself
        config = {}
    provider = str(config.get("model_provider", "openai"))
    custom = config.get("model_providers", {}).get(provider, {}) if provider != "openai" else {}
    if custom.get("base_url"):
        return Pointing(openai=str(custom["base_url"]), argv=[argv[0], *rest],
                        settings=[f"model_providers.{provider}.base_url"])
    upstream = given or config.get("openai_base_url") or (CHATGPT if _chatgpt_login() else OPENAI)
    return Pointing(openai=str(upstream), argv=[argv[0], *rest], settings=["openai_base_url"])


def _without_setting(args: list[str], key: str) -> tuple[list[str], str | None]:
    kept: list[str] = []
    value = None
    words = iter(args)
    for word in words:
        if word in ("-c", "--config"):
            setting = next(words, "")
            if setting.split("=", 1)[0].strip() == key:
                value = _toml_value(setting.split("=", 1)[1])
                continue
            kept += [word, setting]
        else:
            kept.append(word)
    return kept, value


def _toml_value(text: str) -> str:
    import tomllib

    try:
        return str(tomllib.loads(f"v = {text}")["v"])
    except tomllib.TOMLDecodeError:  # Codex takes a value that is not TOML as a string
        return text.strip()


def _chatgpt_login() -> bool:
    from .agents import codex_home

    try:
        auth = json.loads((codex_home() / "auth.json").read_text())
    except (FileNotFoundError, ValueError):
        return False
    return bool(auth.get("tokens")) and not auth.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_API_KEY")


def _command(pointing: Pointing, proxy: str, found: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if pointing.settings:  # Codex
        settings = [w for key in pointing.settings for w in ("-c", f"{key}={json.dumps(proxy + '/v1')}")]
        return [found, *settings, *pointing.argv[1:]], env
    env.update(ANTHROPIC_BASE_URL=proxy, OPENAI_BASE_URL=proxy + "/v1")
    flag = ["--settings", json.dumps({"env": {"ANTHROPIC_BASE_URL": proxy}})] if pointing.claude_settings else []
    return [found, *flag, *pointing.argv[1:]], env  # --settings is the one thing above a settings file


def _log_path() -> Path:
    return state_dir() / "wrap.log"


@contextmanager
def _proxy(service_url: str, pointing: Pointing) -> Iterator[str]:
    """The proxy on a free loopback port in a thread of this process, its lines in the state folder's wrap.log
    (not on the agent's terminal); stopped when the agent exits."""
    import uvicorn

    from ..proxy.cli import build, parser

    _log_to_file()
    args = parser().parse_args(["--url", service_url, "--anthropic-upstream", pointing.anthropic,
                                "--openai-upstream", pointing.openai, "--agent", Path(pointing.argv[0]).name])
    server = uvicorn.Server(uvicorn.Config(build(args), host="127.0.0.1", port=0, log_config=None,
                                           log_level="warning", access_log=False, lifespan="on", ws="none"))
    thread = threading.Thread(target=server.run, name="ctxsieve-proxy", daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.01)
    if not server.started:
        raise SystemExit(f"ctxsieve wrap: the proxy did not start; see {_log_path()}")
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


def _log_to_file() -> None:
    _log_path().parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(_log_path(), encoding="utf-8")
    handler.setFormatter(logging.Formatter(f"%(asctime)s wrap {os.getpid()}: %(message)s"))
    for name in ("ctxsieve", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def _run(command: list[str], env: dict[str, str]) -> int:
    """The agent in this terminal's foreground; a Ctrl-C reaches it from the terminal (this process ignores it, as
    a shell does), a TERM or HUP sent to this process is passed on. Killed by a signal: 128 + its number."""
    child = subprocess.Popen(command, env=env)

    def forward(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)

    handlers: dict[int, Any] = {signal.SIGINT: signal.SIG_IGN, signal.SIGQUIT: signal.SIG_IGN,
                                signal.SIGTERM: forward, signal.SIGHUP: forward}
    before = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        code = child.wait()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    return code if code >= 0 else 128 - code
