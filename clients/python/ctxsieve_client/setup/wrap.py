"""`ctxsieve wrap AGENT [ARGS...]`: one run of an agent with its model API behind a proxy of its own.

The proxy (ctxsieve_client.proxy) is served in this process on a free loopback port for as long as the agent runs;
the agent is pointed at it the way it really reads its base URL (each agent of the registry says how: family.Agent.
point; any other command gets ANTHROPIC_BASE_URL and OPENAI_BASE_URL), and the base URL it had (its environment, its
config or settings, its arguments) becomes the proxy's upstream. The agent's stdin, stdout, stderr and exit status
pass through; nothing is written to its config, so a run without wrap is as before.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

from ..processes import waited
from .family import Pointing, pointed_by_environment
from .registry import by_command
from .state import state_dir


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", help="claude, codex, or any command that reads ANTHROPIC_BASE_URL / OPENAI_BASE_URL")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the agent's own arguments, as you would give them")


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
    agent = by_command(argv[0])
    return agent.point(argv) if agent is not None else pointed_by_environment(argv)


def _command(pointing: Pointing, proxy: str, found: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if pointing.by_environment:
        env.update(ANTHROPIC_BASE_URL=proxy, OPENAI_BASE_URL=proxy + "/v1")
    return [found, *pointing.flags(proxy), *pointing.argv[1:]], env


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
    code = waited(subprocess.Popen(command, env=env), passed=(signal.SIGTERM, signal.SIGHUP),
                  ignored=(signal.SIGINT, signal.SIGQUIT))
    return code if code >= 0 else 128 - code
