"""`ctxsieve service start|stop|status`: the service in the background for this user.

Its files are in the user's state folder (ctxsieve_client.setup.state): `service.pid` (the process, its URL and who
started it), `service.log`, `data/` (the embedded store, unless CTXSIEVE_DATA_DIR says otherwise). `ctxsieve wrap`
shares it (`shared`): each running wrap leaves a file named by its pid in `users/`, and a service a wrap started is
stopped when the last wrap using it exits; one started by `service start` runs until `service stop`. A lock file
orders the starts and stops of concurrent commands.

A server is this user's service only when its /healthz reports the instance id `start` gave it (kept in the pid
file): `start` never takes a server it cannot identify as its own, and when the port is held by anything else it
says what holds it and how to choose another port (CTXSIEVE_PORT, which every command then reads), and exits 1.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from ctxsieve_client.setup.state import CAPTURE_VARIABLE, capture_dir, is_loopback, state_dir

from .ports import held, holder

Say = Callable[[str], None]
LOG_KEPT = 10 << 20  # a log past this is moved to service.log.1 at the next start
STILL_EVERY = 30.0  # seconds without a start-up line before `start` says the step still runs


def say_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def pid(self) -> Path:
        return self.root / "service.pid"

    @property
    def log(self) -> Path:
        return self.root / "service.log"

    @property
    def data(self) -> Path:
        return Path(os.environ.get("CTXSIEVE_DATA_DIR") or self.root / "data")

    @property
    def users(self) -> Path:
        return self.root / "users"

    @classmethod
    def here(cls) -> Paths:
        return cls(state_dir())


class NotLocal(Exception):
    """The URL is not this machine's: there is nothing to start here."""


def running(paths: Paths) -> dict[str, Any] | None:
    """The pid file's record when its process is the service and alive; a stale file is removed."""
    try:
        record: dict[str, Any] = json.loads(paths.pid.read_text())
    except (FileNotFoundError, ValueError):
        return None
    if _alive(int(record.get("pid", 0))):
        return record
    paths.pid.unlink(missing_ok=True)
    return None


def _alive(pid: int) -> bool:
    """The process is running and is a ctxsieve serve (a pid reused by another program is not ours)."""
    if pid <= 0:
        return False
    with contextlib.suppress(ChildProcessError):  # not this process's child
        os.waitpid(pid, os.WNOHANG)  # reaps it if this process started it and it exited (a zombie answers kill 0)
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    proc = Path(f"/proc/{pid}")
    if not Path("/proc/self").exists():  # no /proc here (macOS): the pid is taken as it is
        return True
    try:
        ended = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[:1] == ["Z"]  # a zombie init has not reaped
        return not ended and b"ctxsieve" in (proc / "cmdline").read_bytes()
    except OSError:  # it ended between the two looks
        return False


def ready(url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """/readyz's answer (ready or not), None when nothing answers at the URL."""
    try:
        answer = httpx.get(f"{url.rstrip('/')}/readyz", timeout=timeout)
        body: dict[str, Any] = answer.json()
        return body
    except (httpx.HTTPError, ValueError):
        return None


def bind_address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not is_loopback(host):
        raise NotLocal(f"{url} is not on this machine: start the service there")
    return host, parts.port or (443 if parts.scheme == "https" else 80)


def start(url: str, by: str = "user", wait: float = 900.0, say: Say = say_stderr) -> int:
    """Start the service unless it runs; return once /readyz answers 200 (0), or the process died, timed out, or
    the port is another's (1)."""
    paths = Paths.here()
    record = running(paths)
    if record is not None:
        return _running(paths, record, url, by, wait, say)
    host, port = bind_address(url)
    if held(host, port):
        say(f"ctxsieve service: not started: port {port} at {host} is held by {holder(url, port)}; it is not taken "
            f"as this user's ctxsieve. Stop it, or choose another port for ctxsieve: CTXSIEVE_PORT={port + 1} "
            "ctxsieve service start (set CTXSIEVE_PORT where you run ctxsieve, then `ctxsieve install` again so the "
            "agents reach it there)")
        return 1
    instance = secrets.token_hex(16)
    pid = _spawn(paths, host, port, instance)
    _write_record(paths, {"pid": pid, "url": url, "by": by, "started": time.time(), "instance": instance,
                          "capture_dir": str(capture_dir())})
    say(f"ctxsieve service: starting at {url} (pid {pid}); log: {paths.log}")
    return _wait_ready(url, pid, paths, wait, say, instance)


def _running(paths: Paths, record: dict[str, Any], url: str, by: str, wait: float, say: Say) -> int:
    """The service this user started: at the URL asked for, and the server answering there is it."""
    if record["url"].rstrip("/") != url.rstrip("/"):
        say(f"ctxsieve service: running (pid {record['pid']}) at {record['url']}, not at {url}: `ctxsieve service "
            "stop` first to start it there (CTXSIEVE_URL / CTXSIEVE_PORT say where every command finds it)")
        return 1
    if by == "user" and record.get("by") != "user":
        _write_record(paths, {**record, "by": "user"})  # now the user's: no wrap stops it
    say(f"ctxsieve service: running (pid {record['pid']}) at {record['url']}; log: {paths.log}")
    return _wait_ready(record["url"], int(record["pid"]), paths, wait, say, record.get("instance"))


def identified(url: str, instance: str | None) -> bool:
    """The server at the URL reports this instance id on /healthz (None: a record written before ids: any)."""
    if instance is None:
        return True
    try:
        body = httpx.get(f"{url.rstrip('/')}/healthz", timeout=2).json()
    except (httpx.HTTPError, ValueError):
        return False
    return isinstance(body, dict) and body.get("instance") == instance


def _spawn(paths: Paths, host: str, port: int, instance: str) -> int:
    paths.root.mkdir(parents=True, exist_ok=True)
    if paths.log.exists() and paths.log.stat().st_size > LOG_KEPT:
        paths.log.replace(paths.log.with_name("service.log.1"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CTXSIEVE_INSTANCE": instance, CAPTURE_VARIABLE: str(capture_dir())}
    env.setdefault("CTXSIEVE_LOG_LEVEL", "warning")  # no access log line per hook call
    # --own: this user's own service, bound to loopback, may read what the user's agents read (search_code)
    command = [sys.executable, "-m", "ctxsieve.service.cli", "serve", "--own", "--host", host, "--port", str(port),
               "--data-dir", str(paths.data)]
    with paths.log.open("ab") as log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n".encode())
        log.flush()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)  # a Ctrl-C in this terminal does not reach it
    return process.pid


def _write_record(paths: Paths, record: dict[str, Any]) -> None:
    partial = paths.pid.with_name("service.pid.partial")
    partial.write_text(json.dumps(record) + "\n")
    partial.replace(paths.pid)


def _wait_ready(url: str, pid: int, paths: Paths, wait: float, say: Say, instance: str | None = None) -> int:
    """Polls /readyz, saying each of the service's own start-up steps from its log as it goes, and, when a step
    runs long (a first start exports the dense model: minutes on a busy machine), that it still runs; ready only
    when the server answering is the one started (its instance id)."""
    deadline, seen, began = time.monotonic() + wait, _log_size(paths), time.monotonic()
    said = [began]  # when a line was last said

    def step(line: str) -> None:
        said[0] = time.monotonic()
        say(line)

    while time.monotonic() < deadline:
        seen = _say_steps(paths, seen, step)
        if time.monotonic() - said[0] >= STILL_EVERY:
            step(f"ctxsieve service: still on the step above ({time.monotonic() - began:.0f} s since the start)")
        answer = ready(url)
        if answer is not None and answer.get("ready"):
            if not identified(url, instance):
                say(f"ctxsieve service: what answers at {url} is not the service started here (pid {pid}); see "
                    f"{paths.log}")
                return 1
            say(f"ctxsieve service: ready at {url} ({time.monotonic() - began:.1f} s){_later(answer)}")
            return 0
        if not _alive(pid):
            say(f"ctxsieve service: exited before it was ready; the end of {paths.log}:\n{_tail(paths.log)}")
            paths.pid.unlink(missing_ok=True)
            return 1
        time.sleep(0.25)
    say(f"ctxsieve service: not ready after {wait:.0f} s (still starting, pid {pid}); see {paths.log}")
    return 1


def _later(answer: dict[str, Any]) -> str:
    """What a first start still prepares in the background, said with its ready line."""
    stages = answer.get("stages")
    if not isinstance(stages, dict) or not stages.get("pending"):
        return ""
    return (f"; serving on {stages.get('dense')} with BM25 alone as fast mode's first stage while the final stages "
            "are prepared in the background (a few minutes; `ctxsieve doctor` says when they serve)")


def _log_size(paths: Paths) -> int:
    return paths.log.stat().st_size if paths.log.exists() else 0


def _say_steps(paths: Paths, offset: int, say: Say) -> int:
    """The service's `ctxsieve: ...` lines written since offset (model loaded, store open, what is wrong)."""
    if _log_size(paths) <= offset:
        return offset
    with paths.log.open("rb") as log:
        log.seek(offset)
        chunk = log.read()
    complete = chunk[: chunk.rfind(b"\n") + 1]
    for line in complete.decode("utf-8", "replace").splitlines():
        if line.startswith("ctxsieve: "):
            say(f"ctxsieve service: {line.removeprefix('ctxsieve: ')}")
    return offset + len(complete)


def _tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def stop(say: Say = say_stderr) -> int:
    paths = Paths.here()
    record = running(paths)
    if record is None:
        say("ctxsieve service: not running (nothing started by `ctxsieve service` here)")
        return 0
    pid = int(record["pid"])
    os.kill(pid, signal.SIGTERM)  # uvicorn shuts down and closes the store
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    paths.pid.unlink(missing_ok=True)
    say(f"ctxsieve service: stopped (pid {pid})")
    return 0


def status(url: str, version: str) -> tuple[int, list[str]]:
    """0 and its lines when the service answers ready, 1 otherwise."""
    paths = Paths.here()
    record = running(paths)
    url = record["url"] if record else url
    answer = ready(url)
    if record is not None:
        by = "you" if record.get("by") == "user" else "ctxsieve wrap, until its last wrap exits"
        state = f"running (pid {record['pid']}, started by {by})"
    else:
        state = ("running, not started here (`ctxsieve service stop` leaves it)" if answer is not None
                 else "not running")
    readiness = "ready" if answer and answer.get("ready") else f"not ready: {answer}" if answer else "not answering"
    lines = [f"ctxsieve service: {state}", f"  url:     {url} ({readiness})", *_folders(paths, record, answer),
             f"  version: {version}"]
    return (0 if answer and answer.get("ready") else 1), lines


def _folders(paths: Paths, record: dict[str, Any] | None, answer: dict[str, Any] | None) -> list[str]:
    """The data folder and log of a service started here; of one started elsewhere (make run, serve) a line saying
    its folders are its own, which this command does not know; where one started here would keep them when none
    runs."""
    if record is not None:
        return [f"  data:    {paths.data}", f"  log:     {paths.log}"]
    if answer is not None:
        return ["  data:    the running service's own (it was not started by `ctxsieve service`)"]
    return [f"  data:    {paths.data} (when `ctxsieve service start` starts it)",
            f"  log:     {paths.log} (likewise)"]


@contextmanager
def _locked(paths: Paths) -> Iterator[None]:
    paths.root.mkdir(parents=True, exist_ok=True)
    with (paths.root / "service.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _others(paths: Paths) -> list[int]:
    """The pids of the other wraps still running (a wrap that was killed leaves a file: removed here)."""
    others = []
    for user in paths.users.glob("*") if paths.users.is_dir() else []:
        pid = int(user.name) if user.name.isdigit() else 0
        if pid != os.getpid() and _process_exists(pid):
            others.append(pid)
        elif pid != os.getpid():
            user.unlink(missing_ok=True)
    return others


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process holds that pid now: not a wrap of ours
        return False
    return pid > 0


@contextmanager
def shared(url: str, say: Say = say_stderr) -> Iterator[None]:
    """The service for one wrap: started if nothing answers (and stopped after, if no other wrap uses it then).
    A service that cannot be started is said and the wrap goes on: the proxy passes everything through whole."""
    paths = Paths.here()
    mine = paths.users / str(os.getpid())
    with _locked(paths):
        paths.users.mkdir(parents=True, exist_ok=True)
        mine.write_text(url)
        answer = ready(url)
        if running(paths) is None and not (answer is not None and {"ready", "model", "store"} <= set(answer)):
            try:
                start(url, by="wrap", say=say)
            except NotLocal as exc:
                say(f"ctxsieve wrap: {exc}; going on without it")
    try:
        yield
    finally:
        with _locked(paths):
            mine.unlink(missing_ok=True)
            record = running(paths)
            if record is not None and record.get("by") == "wrap" and not _others(paths):
                stop(say=lambda _line: None)
