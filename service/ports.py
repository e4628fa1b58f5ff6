"""Whether the service's port is free here and, when it is not, what holds it: the process (when it is this user's,
from /proc) and what answers on it (a ctxsieve, another HTTP server, or nothing that speaks HTTP)."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import httpx


def held(host: str, port: int) -> bool:
    """Something is bound to the address (the service could not listen there)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closing socket is no holder
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def holder(url: str, port: int) -> str:
    """What holds the port, in a phrase: `pid 123 (python -m http.server 8000), an HTTP server (SimpleHTTP/0.6)`."""
    return ", ".join(p for p in (_process(port), _answer(url)) if p) or "another program"


def _answer(url: str) -> str:
    try:
        answer = httpx.get(f"{url}/readyz", timeout=5)  # a busy machine's ctxsieve answered in over 2 s in CI
    except httpx.HTTPError:
        return "not answering HTTP"
    try:
        body = answer.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and {"ready", "model", "store"} <= set(body):
        return "a ctxsieve that `ctxsieve service` did not start here (its own `ctxsieve serve`, or another user's)"
    server = answer.headers.get("server")
    return f"an HTTP server ({server})" if server else "an HTTP server that is not ctxsieve"


def _process(port: int) -> str:
    """The listening process when /proc shows it (only this user's processes can be looked into)."""
    inodes = _listening_inodes(port)
    if not inodes:
        return ""
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            links = {os.readlink(fd) for fd in fd_dir.iterdir()}
        except OSError:  # another user's process, or gone
            continue
        if links & {f"socket:[{i}]" for i in inodes}:
            pid = fd_dir.parent.name
            words = (fd_dir.parent / "cmdline").read_bytes().split(b"\0")
            return f"pid {pid} ({b' '.join(w for w in words if w).decode('utf-8', 'replace')[:120]})"
    return "a process of another user (or in a container)"


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(fields[9])
    return inodes
