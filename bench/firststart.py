"""A first start from a fresh HOME, timed to the first correct answer (issue 44).

Usage: .venv/bin/python -m bench.firststart [--command start|serve|make-run] [--rev REV] [--keep]
                                            [--out bench/results/firststart.txt]

In a fresh HOME (a temporary folder: no model cache, no state, pip's cache empty), `ctxsieve service start` (or
`ctxsieve serve`; or, with make-run, a clean clone of this checkout's HEAD or --rev in that HOME and `make run` in
it, the install included, as a developer's first command) is started on a free port while a client asks `/v1/filter`
the same fast-mode question about a long prose output every half second; the first answer whose cut holds the
paragraph the question is about is the first correct answer. `/readyz` is polled beside it: when it first says
ready, and when its stages say the background work is done (`stages`, when the service reports them); the same
question is asked again then, and its cut must still hold the paragraph. Each line the service logs is given with
the seconds since the start, and the load average (the machine is shared) at the start and at each mark.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
NEEDLE = ("The night ferry to Tallinn was cancelled because the harbour crane broke down; passengers were "
          "rebooked on the 07:30 sailing and given vouchers for the terminal café.")
QUESTION = "why was the ferry to Tallinn cancelled and when do passengers sail instead"
TOPICS = ("bread", "violins", "glaciers", "tax forms", "chess openings", "beekeeping", "railway signals",
          "volcanoes", "knitting", "satellites", "orchards", "printing presses")


def long_output() -> str:
    """About 70 paragraphs of unrelated prose around the one the question is about: more chunks than fast mode
    embeds, so its first stage chooses."""
    paragraphs = []
    for i in range(70):
        topic = TOPICS[i % len(TOPICS)]
        paragraphs.append(f"Note {i} on {topic}: the committee discussed {topic} at length, compared records from "
                          f"{1900 + i} and {1950 + i}, and agreed that {topic} need further study before the "
                          f"spring meeting; item {i} stays open and the minutes list who will report on it.")
    paragraphs.insert(41, NEEDLE)
    return "\n\n".join(paragraphs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Run:
    def __init__(self, url: str) -> None:
        self.url, self.began = url, time.monotonic()
        self.marks: list[tuple[float, float, str]] = []  # (seconds, load, what)
        self.lines: list[tuple[float, str]] = []
        self.ready: dict[str, object] | None = None

    def mark(self, what: str) -> None:
        self.marks.append((time.monotonic() - self.began, os.getloadavg()[0], what))

    def correct(self) -> tuple[bool, str]:
        """The question once: whether the cut holds the paragraph, and the cut's bytes (for comparing)."""
        try:
            answer = httpx.post(f"{self.url}/v1/filter", timeout=30, json={
                "query": QUESTION, "content": long_output(), "content_type": "text", "k": 3, "mode": "fast"})
        except httpx.HTTPError:
            return False, ""
        if answer.status_code != 200:
            return False, ""
        snippets = answer.json()["snippets"]
        return any("Tallinn" in s["text"] for s in snippets), json.dumps(snippets, sort_keys=True)

    def readyz(self) -> dict[str, object] | None:
        try:
            body: dict[str, object] = httpx.get(f"{self.url}/readyz", timeout=5).json()
            return body
        except (httpx.HTTPError, ValueError):
            return None


def settled(body: dict[str, object] | None) -> bool:
    """Ready with no background work left (a service without `stages` is settled once ready)."""
    if not body or not body.get("ready"):
        return False
    stages = body.get("stages")
    return not isinstance(stages, dict) or not stages.get("pending")


def watch(run: Run, deadline: float) -> None:
    first_ready = first_answer = False
    while time.monotonic() < deadline:
        body = run.readyz()
        if body and body.get("ready") and not first_ready:
            first_ready = True
            run.mark(f"/readyz ready: {json.dumps(body.get('stages'))}")
        if first_ready and not first_answer:
            ok, _ = run.correct()
            if ok:
                first_answer = True
                run.mark("first correct answer")
        if first_answer and settled(body):
            run.ready = body
            run.mark(f"background done: {json.dumps(body.get('stages'))}")
            ok, _ = run.correct()
            run.mark("correct after the background work" if ok else "WRONG after the background work")
            return
        time.sleep(0.5)
    run.mark("timed out")


def start(command: str, home: Path, url: str, port: int, rev: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HOME": str(home), "CTXSIEVE_URL": url, "HF_HUB_OFFLINE": "1",
           "CTXSIEVE_LOG_LEVEL": "warning"}
    env = {k: v for k, v in env.items() if not k.startswith("XDG_") and k not in (
        "CTXSIEVE_MODEL_DIR", "CTXSIEVE_DATA_DIR", "CTXSIEVE_TIKTOKEN_CACHE_DIR", "VIRTUAL_ENV", "PYTHONPATH")}
    if command == "make-run":  # `make run` serves on CTXSIEVE_URL's port; its own group, so the stop reaches serve
        clone = home / "ctxsieve"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", rev], check=True)
        log = (home / "serve.log").open("w")
        return subprocess.Popen(["make", "run"], cwd=clone, env=env, text=True, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    cli = [sys.executable, "-m", "ctxsieve.service.cli"]
    args = ["service", "start"] if command == "start" else ["serve", "--port", str(port), "--data-dir",
                                                             str(home / "data")]
    log = (home / "serve.log").open("w")  # `service start` writes the service's own log under the state folder
    return subprocess.Popen([*cli, *args], cwd=home, env=env, text=True, stdout=subprocess.DEVNULL, stderr=log)


def service_log(home: Path, command: str) -> Path:
    return home / ".local" / "state" / "ctxsieve" / "service.log" if command == "start" else home / "serve.log"


def tail(run: Run, path: Path, stop: threading.Event) -> None:
    """The service's lines as they are written, each with the seconds since the start."""
    offset = 0
    while not stop.is_set():
        if path.exists():
            with path.open("rb") as f:
                f.seek(offset)
                chunk = f.read()
            whole = chunk[: chunk.rfind(b"\n") + 1]
            offset += len(whole)
            now = time.monotonic() - run.began
            run.lines += [(now, line) for line in whole.decode("utf-8", "replace").splitlines()]
        stop.wait(0.2)


COMMANDS = {"start": "ctxsieve service start", "serve": "ctxsieve serve", "make-run": "make run"}


def said(line: str, command: str) -> bool:
    """A line of the service's (or, for make run, of make's and pip's too; not uvicorn's request lines)."""
    return "ctxsieve" in line or (command == "make-run" and not line.startswith("INFO:") and bool(line.strip()))


def report(run: Run, command: str, rev: str) -> str:
    out = [f"# bench.firststart: a fresh HOME, `{COMMANDS[command]}` ({time.strftime('%Y-%m-%d %H:%M')}, "
           f"{os.cpu_count()} cores, git {_head(rev)})", "", "## marks"]
    out += [f"{s:7.1f} s  load {load:4.2f}  {what}" for s, load, what in run.marks]
    out += ["", "## what the service said"]
    out += [f"{s:7.1f} s  {line}" for s, line in run.lines if said(line, command)]
    return "\n".join(out) + "\n"


def _head(rev: str = "HEAD") -> str:
    done = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--command", choices=list(COMMANDS), default="start")
    parser.add_argument("--rev", default="HEAD", help="make-run: the commit cloned (this checkout's HEAD)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="ctxsieve-firststart-"))
    port = free_port()
    run = Run(f"http://127.0.0.1:{port}")
    run.mark("started")
    process = start(args.command, home, run.url, port, args.rev)
    stop = threading.Event()
    reader = threading.Thread(target=tail, args=(run, service_log(home, args.command), stop), daemon=True)
    reader.start()
    try:
        watch(run, time.monotonic() + args.timeout)
    finally:
        _stop(args.command, process, home)
        time.sleep(0.5)
        stop.set()
        reader.join(timeout=5)
        if args.keep:
            sys.stderr.write(f"kept {home}\n")
        else:
            shutil.rmtree(home, ignore_errors=True)
    text = report(run, args.command, args.rev)
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text)
    return 0 if any(what == "correct after the background work" for _, _, what in run.marks) else 1


def _stop(command: str, process: subprocess.Popen[str], home: Path) -> None:
    if command == "start":
        env = {**os.environ, "HOME": str(home)}
        subprocess.run([sys.executable, "-m", "ctxsieve.service.cli", "service", "stop"], env=env,
                       capture_output=True, timeout=60)
    if process.poll() is None:
        if command == "make-run":
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.terminate()
    process.wait(timeout=60)


if __name__ == "__main__":
    raise SystemExit(main())
