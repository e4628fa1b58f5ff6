"""One URL for every command, and `ctxsieve service start` with its port already taken, run as a user runs them in a
fresh HOME: a ctxsieve it did not start (the real app on loopback) and a plain HTTP server on the port are never
taken as this user's service (what holds the port is said, with how to choose another, exit 1); CTXSIEVE_PORT is
the port every command reaches; a CTXSIEVE_URL and a CTXSIEVE_PORT that disagree are said before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.service.test_service_cli import free_port

BIN = Path(sys.executable).parent


def user(tmp_path: Path, **env: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **env}
    return {**base, "PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else base


def ctxsieve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "ctxsieve"), *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=env["HOME"])


@pytest.fixture
def http_server() -> Iterator[tuple[int, int]]:
    """A plain HTTP server of this user on a free port: (its port, its pid)."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdout is not None
    server.stdout.readline()  # "Serving HTTP on ...": listening
    yield port, server.pid
    server.kill()
    server.wait()


def test_a_ctxsieve_not_started_here_is_not_taken_as_the_users_service(tmp_path: Path, stub_url: str) -> None:
    env = user(tmp_path, CTXSIEVE_URL=stub_url)
    done = ctxsieve(env, "service", "start")
    port = urlsplit(stub_url).port
    assert done.returncode == 1, done.stderr
    assert f"not started: port {port} at 127.0.0.1 is held by pid {os.getpid()} (" in done.stderr, done.stderr
    assert "a ctxsieve that `ctxsieve service` did not start here" in done.stderr
    assert f"CTXSIEVE_PORT={port + 1} ctxsieve service start" in done.stderr
    assert not (Path(env["HOME"]) / ".local" / "state" / "ctxsieve" / "service.pid").exists(), "nothing recorded"
    stopped = ctxsieve(env, "service", "stop")
    assert "not running" in stopped.stderr, "stop never touches a server it did not start"


def test_a_port_held_by_another_program_is_said_with_how_to_choose_another(tmp_path: Path,
                                                                           http_server: tuple[int, int]) -> None:
    port, pid = http_server
    done = ctxsieve(user(tmp_path, CTXSIEVE_PORT=str(port)), "service", "start")
    assert done.returncode == 1, done.stderr
    assert f"port {port} at 127.0.0.1 is held by pid {pid} (" in done.stderr and "http.server" in done.stderr
    assert "an HTTP server (SimpleHTTP/" in done.stderr and f"CTXSIEVE_PORT={port + 1}" in done.stderr


def test_ctxsieve_port_is_the_port_every_command_reaches(tmp_path: Path) -> None:
    env = user(tmp_path, CTXSIEVE_PORT="8123")
    planned = ctxsieve(env, "install", "--dry-run", "--agent", "claude-code")
    assert planned.returncode == 0, planned.stderr
    assert '"url": "http://127.0.0.1:8123/v1/hooks/claude-code"' in planned.stdout
    doctor = ctxsieve(env, "doctor")
    assert doctor.stdout.startswith("ctxsieve doctor (service: http://127.0.0.1:8123)"), doctor.stdout
    status = ctxsieve(env, "service", "status")
    assert "  url:     http://127.0.0.1:8123 (not answering)" in status.stdout


def test_wrap_with_the_port_held_goes_on_through_its_proxy_and_says_why(tmp_path: Path,
                                                                        http_server: tuple[int, int]) -> None:
    port, _pid = http_server
    wrapped = ctxsieve(user(tmp_path, CTXSIEVE_PORT=str(port)), "wrap", "sh", "-c", "echo $OPENAI_BASE_URL")
    assert wrapped.returncode == 0, wrapped.stderr
    assert f"port {port} at 127.0.0.1 is held by" in wrapped.stderr, "not taken as the user's ctxsieve"
    assert f"(ctxsieve at http://127.0.0.1:{port};" in wrapped.stderr and wrapped.stdout.endswith("/v1\n")


def test_a_url_and_a_port_that_disagree_are_said_before_anything_runs(tmp_path: Path) -> None:
    env = user(tmp_path, CTXSIEVE_PORT="8123", CTXSIEVE_URL="http://127.0.0.1:8000")
    for command in (["service", "start"], ["doctor"], ["install", "--dry-run", "--agent", "codex"], ["serve"]):
        done = ctxsieve(env, *command)
        assert done.returncode != 0, command
        assert "CTXSIEVE_URL=http://127.0.0.1:8000 and CTXSIEVE_PORT=8123 name different ports" in done.stderr, command


def test_the_health_route_reports_the_instance_it_was_given(stub_url: str) -> None:
    import httpx

    assert json.loads(httpx.get(f"{stub_url}/healthz").text) == {"status": "ok", "instance": None}
