"""`ctxsieve service start|stop|status` and the service `ctxsieve wrap` shares, run as a user runs them in a fresh HOME:
the real service in the background (the real model: about 20-60 s to start here), its pid, log and data under the
user's state folder."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.gateway_stops import gone
from tests.conftest import CACHE

BIN = Path(sys.executable).parent
SHARE = """
"$CS" service status | head -1
"$CS" wrap true
"$CS" service status | head -1
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ctxsieve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "ctxsieve"), *args], env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_the_service_in_the_background_and_wraps_sharing_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    url = f"http://127.0.0.1:{free_port()}"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "CTXSIEVE_URL": url, "CS": str(BIN / "ctxsieve"),
           "CTXSIEVE_MODEL_DIR": str(CACHE / "models"), "CTXSIEVE_TIKTOKEN_CACHE_DIR": str(CACHE / "tiktoken")}
    state = home / ".local" / "state" / "ctxsieve"
    stopped = ctxsieve(env, "service", "status")
    assert stopped.returncode == 1 and stopped.stdout.startswith("ctxsieve service: not running")

    shared = ctxsieve(env, "wrap", "sh", "-c", SHARE)  # a wrap starts it; a wrap inside shares it
    assert shared.returncode == 0, shared.stderr
    assert shared.stdout.splitlines()[0].startswith("ctxsieve service: running (pid ")
    assert "started by ctxsieve wrap" in shared.stdout.splitlines()[0]
    assert shared.stdout.splitlines()[1] == shared.stdout.splitlines()[0], "the inner wrap left it running"
    assert f"log: {state / 'service.log'}" in shared.stderr and f"ready at {url}" in shared.stderr
    after = ctxsieve(env, "service", "status")
    assert after.returncode == 1 and "not running" in after.stdout, "the last wrap stopped what a wrap started"
    assert not (state / "service.pid").exists()

    started = ctxsieve(env, "service", "start")
    assert started.returncode == 0, started.stderr
    assert f"log: {state / 'service.log'}" in started.stderr and f"ready at {url}" in started.stderr
    status = ctxsieve(env, "service", "status")
    assert status.returncode == 0 and "started by you)" in status.stdout
    assert f"  url:     {url} (ready)" in status.stdout and f"  data:    {state / 'data'}" in status.stdout
    assert "  version: 0.1.0" in status.stdout and (state / "data").is_dir()
    pid = json.loads((state / "service.pid").read_text())["pid"]
    (home / "src" / "app").mkdir(parents=True)  # the user's own service may read the home folder, nothing else
    (tmp_path / "elsewhere").mkdir()
    assert httpx.put(f"{url}/v1/repos/app", json={"path": str(home / "src" / "app")}).status_code == 202
    assert httpx.put(f"{url}/v1/repos/x", json={"path": str(tmp_path / "elsewhere")}).status_code == 403

    again = ctxsieve(env, "service", "start")
    assert again.returncode == 0 and f"running (pid {pid})" in again.stderr, "a second start finds it"
    launched = time.time()
    timed = ctxsieve(env, "wrap", sys.executable, "-c", "import time; print(time.time())")
    added = float(timed.stdout) - launched
    sys.stderr.write(f"wrap added {added:.2f} s before the agent started (service up)\n")
    assert added < 10, "wrap with the service up starts the agent at once (goal: under 2 s)"
    assert ctxsieve(env, "service", "status").returncode == 0, "a wrap never stops the user's service"

    assert ctxsieve(env, "service", "stop").returncode == 0
    assert ctxsieve(env, "service", "status").returncode == 1 and not (state / "service.pid").exists()
    assert gone(pid), "the service's process ended"


def test_own_service_reads_the_home_folder_on_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve --own` (make run, service start): the home folder on loopback unless CTXSIEVE_READ_ROOTS is set
    (even empty: reading off); on another address nothing it is not told."""
    from ctxsieve.service.cli import _own
    from ctxsieve.service.settings import Settings

    monkeypatch.delenv("CTXSIEVE_READ_ROOTS", raising=False)
    assert _own(Settings(host="127.0.0.1")).read_roots == str(Path.home())
    assert _own(Settings(host="localhost")).read_roots == str(Path.home())
    assert _own(Settings(host="0.0.0.0")).read_roots == ""
    monkeypatch.setenv("CTXSIEVE_READ_ROOTS", "")
    assert _own(Settings(host="127.0.0.1")).read_roots == ""
    monkeypatch.setenv("CTXSIEVE_READ_ROOTS", "/srv/code")
    assert _own(Settings(host="127.0.0.1")).read_roots == "/srv/code"


@pytest.mark.slow
def test_the_foreground_service_logs_the_users_requests_not_its_probes(tmp_path: Path) -> None:
    """`make run`'s service prints an access line per request; a health probe polled until it is ready gets none, and
    a poll answered as the one before it one line (`ctxsieve index` polled four times a second while it indexed)."""
    port = free_port()
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "CTXSIEVE_MODEL_DIR": str(CACHE / "models"),
           "CTXSIEVE_TIKTOKEN_CACHE_DIR": str(CACHE / "tiktoken"), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([str(BIN / "ctxsieve"), "serve", "--own", "--port", str(port), "--data-dir",
                               str(tmp_path / "data")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 300
        while not _answers(f"{url}/readyz"):
            assert time.monotonic() < deadline and server.poll() is None, "the service got ready"
            time.sleep(0.2)
        assert httpx.get(f"{url}/v1/repos").status_code == 200 and httpx.get(f"{url}/healthz").status_code == 200
        for _ in range(20):  # `ctxsieve index` polling its repository's state while it indexes
            assert httpx.get(f"{url}/v1/repos/polled").status_code == 404
        assert httpx.post(f"{url}/v1/repos/polled/sync").status_code == 404
        assert httpx.get(f"{url}/v1/repos/polled").status_code == 404
    finally:
        server.terminate()
        log = server.communicate(timeout=60)[0]  # uvicorn's access lines go to stdout
    assert '"GET /v1/repos HTTP/1.1" 200' in log, log
    assert "/readyz" not in log and "/healthz" not in log, log
    polled = [line for line in log.splitlines() if "/v1/repos/polled" in line]
    assert len(polled) == 3 and '"POST /v1/repos/polled/sync HTTP/1.1" 404' in polled[1], polled


def _answers(url: str) -> bool:
    try:
        return httpx.get(url).status_code == 200
    except httpx.TransportError:
        return False


def test_status_of_a_service_started_elsewhere_names_no_folders_it_does_not_know(stub_url: str,
                                                                                   tmp_path: Path) -> None:
    """A service `make run` or `serve` started keeps its data where it was told: status says it runs and is ready,
    and does not claim the state folder's data and log (a user trial found both paths absent)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "CTXSIEVE_URL": stub_url}
    status = ctxsieve(env, "service", "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith("ctxsieve service: running, not started here")
    assert f"  url:     {stub_url} (ready)" in status.stdout
    assert ".local/state" not in status.stdout and "  log:" not in status.stdout
    assert "  data:    the running service's own" in status.stdout
