"""The user's MCP servers behind the gateway: one upstream session per server for each client (clients.py).

FastMCP's proxy relays tools, resources, prompts, sampling, elicitation, roots, logging and progress; what is
ours here is the session strategy. Each client gets its own upstream sessions (a stdio server is started once
for it and reused by every request it makes, in either protocol era), so one client's roots, log level and
subscriptions never reach another; they close when the client is gone. A session speaks its client's era where
the upstream can: a 2026-07-28 client's negotiates (`server/discover`, falling back to the handshake for an old
server), a session-era client's shakes hands. A session declares roots, sampling and elicitation only where its
client did, so its server asks (or falls back) as it would with that client alone; the gateway's own listing
session declares none. A client whose server died is dropped, so the next call starts the server again. A stdio
server's stderr goes to a log file of its own, whose tail names what went wrong (a folder per gateway process,
removed as it stops: `LogsFolder`). Until a server has listed its tools once (at start, or later: server.py) a
client's listing leaves it out at once rather than wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
from fastmcp.client.transports import ClientTransport, SSETransport, StdioTransport, StreamableHttpTransport
from fastmcp.server.providers.proxy import ProxyClient, ProxyProvider, StatefulProxyClient
from mcp.client import stdio as sdk_stdio

from .asking import Asking
from .clients import ASKABLE, Identities, Who
from .config import Upstream

log = logging.getLogger("ctxsieve.gateway")
_PROC_STAT = Path("/proc/self/stat")  # a /proc to read processes from (Linux)
STDERR_TAIL = 1500  # characters of a server's stderr quoted in an error
# ProxyClient's argument for each capability: a handler given (or its default) declares it, None does not
HANDLERS = {"roots": "roots", "sampling": "sampling_handler", "elicitation": "elicitation_handler"}


def _settle(future: asyncio.Future[Any], outcome: Any) -> None:
    """A future's result, or its exception if `outcome` is one, unless it has one already (or was cancelled)."""
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def close_quickly(grace_s: float, term_s: float) -> None:
    """From now on a stdio server is closed in the MCP SDK's order (its stdin closed; SIGTERM to its process group
    after grace_s; SIGKILL after term_s more) on a shorter clock than its 2 s waits: the clock of an agent stopping
    the gateway, which kills the gateway soon after it asks it to stop (cli.py). The SDK starts each server in a
    session of its own, out of reach of the agent's signals, so a server the gateway leaves would outlive it."""
    sdk_stdio.PROCESS_TERMINATION_TIMEOUT = grace_s  # module constants the SDK reads at each close
    sdk_stdio.FORCE_KILL_TIMEOUT = term_s


def kill_leftover_servers() -> None:
    """SIGKILL to the process group of every process the gateway started that is still running: the last step of a
    stop with no time left (a server whose close began before the stop runs on the SDK's slower clock). Each is
    the leader of its group (the SDK starts a server in a session of its own), so its own children go too."""
    for pid in _children():
        with contextlib.suppress(OSError):  # gone meanwhile, or not a group's leader
            os.killpg(pid, signal.SIGKILL)


def record_servers(folder: Path) -> None:
    """The servers this gateway runs now (its children: process id and start time), written to `folder`'s SERVERS
    file after a line naming the gateway itself, the boot and the process namespace; nothing where there is no /proc
    to tell a process's start time (a reused id must not be taken for one)."""
    if not _PROC_STAT.exists():
        return
    me = os.getpid()
    lines = [f"{me} {_started(me)} {_boot_and_namespace()}"]
    lines += [f"{pid} {start}" for pid in sorted(_children()) if (start := _started(pid)) is not None]
    made = folder / f"{SERVERS}.new"
    made.write_text("\n".join(lines) + "\n")
    os.replace(made, folder / SERVERS)


def end_recorded_servers(folder: Path) -> list[int]:
    """SIGKILL to the process group of each server a dead gateway recorded in `folder` that still runs as it was
    recorded (the same process id and start time): the leftovers of a gateway killed before it could close them.
    Nothing while the gateway that wrote the record still runs, or when the record was written in another boot or
    process namespace (its ids name other processes here). The process ids killed."""
    try:
        gateway, *servers = (folder / SERVERS).read_text().split("\n")
    except (OSError, ValueError):
        return []
    pid, _, rest = gateway.partition(" ")
    start, _, where = rest.partition(" ")
    if not pid.isdigit() or where != _boot_and_namespace() or _started(int(pid)) == start:
        return []
    killed = []
    for line in servers:
        pid, _, start = line.partition(" ")
        if pid.isdigit() and start and _started(int(pid)) == start:
            with contextlib.suppress(OSError):
                os.killpg(int(pid), signal.SIGKILL)
                killed.append(int(pid))
    return killed


def _boot_and_namespace() -> str:
    """This boot's id and this process's pid namespace: a process id means the same process only within both."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot} {os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return "unknown"


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the command (field 3, the state, first); none for a process gone. Read as
    bytes: the command is cut at 15 bytes, which may split a character."""
    try:
        # "pid (command) state ppid ...": the command may hold spaces and parentheses, the rest does not
        return (Path("/proc") / str(pid) / "stat").read_bytes().rpartition(b")")[2].decode("ascii").split()
    except (OSError, ValueError):
        return []


def _started(pid: int) -> str | None:
    """A running process's start time (clock ticks after boot, field 22), which a later process given its id will
    not have; None for one gone, or dead and not yet reaped (a zombie: a killed gateway, reparented, waits for an
    init that may take its time)."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 and fields[0] not in ("Z", "X") else None


def _children() -> list[int]:
    """This process's children: from /proc where there is one (a slim image may have no `ps`), else from `ps`."""
    me = str(os.getpid())
    if _PROC_STAT.exists():
        return [int(entry.name) for entry in Path("/proc").iterdir()
                if entry.name.isdigit() and _stat_fields(int(entry.name))[1:2] == [me]]
    try:
        table = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [int(pid) for pid, parent in (line.split() for line in table.splitlines() if line.strip())
            if parent == me]


@dataclass
class _Held:
    client: ProxyClient[Any]
    idles: bool  # closed after client_idle_s without use (a 2026-07-28 client over HTTP)
    used: float  # time.monotonic() of its last request


class UpstreamServer:
    """One configured server: its transport recipe, its clients' sessions and its stderr log."""

    def __init__(self, upstream: Upstream, logs: Path, identities: Identities, asking: Asking,
                 on_message: Callable[[Any, Any], Awaitable[None]] | None = None) -> None:
        self.upstream = upstream
        self.name = upstream.name
        self.log_path = logs / f"{upstream.name}.stderr.log"
        self._identities = identities
        self._asking = asking
        self._on_message = on_message
        self._clients: dict[Hashable, _Held] = {}
        self.listed = False  # it has answered a listing of its tools (the gateway's, at start or later)
        self.provider = _Provider(self)  # a call resolves its tool from the last listing
        self._listings: set[asyncio.Task[None]] = set()  # listing sessions, until their server has stopped
        self._listing_scopes: set[anyio.CancelScope] = set()  # those still listing

    def transport(self) -> ClientTransport:
        u = self.upstream
        if u.transport == "stdio":
            assert u.command is not None
            self.log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # removed by hand meanwhile: again
            return _RecordedStdio(u.command, list(u.args), env=dict(u.env) or None, cwd=u.cwd, keep_alive=False,
                                  log_file=self.log_path, records=self.log_path.parent)
        assert u.url is not None
        if u.transport == "sse":
            return SSETransport(u.url, headers=dict(u.headers) or None)
        return StreamableHttpTransport(u.url, headers=dict(u.headers) or None)

    def new_client(self, *, modern: bool = False, declared: frozenset[str] = frozenset()) -> ProxyClient[Any]:
        """A session for a client that declared `declared` (of ASKABLE): the server is told it may ask just that."""
        made: list[ProxyClient[Any]] = []

        async def on_message(message: Any) -> None:  # the handler learns which client heard the message
            if self._on_message is not None and made:
                await self._on_message(made[0], message)

        timeout = self.upstream.options.timeout_s
        made.append(_Persistent(self.transport(), timeout=timeout, message_handler=on_message,
                                mode="auto" if modern else "legacy", **undeclared(declared)))
        if modern:  # an old server's questions to a 2026-07-28 client (a session-era one is asked by the proxy)
            self._asking.relay_through(made[0], declared, timeout)
        return made[0]

    def client(self) -> ProxyClient[Any]:
        """The session of the current request's client (made on its first request, kept while the client is)."""
        who = self._identities.current()
        key = who.key if who is not None else None
        held = self._clients.get(key)
        if held is None:
            held = self._clients[key] = self._open(who)
        held.used = time.monotonic()
        return held.client

    def _open(self, who: Who | None) -> _Held:
        client = self.new_client(modern=who is not None and who.modern,
                                 declared=who.declared if who is not None else frozenset())
        made = _Held(client, idles=who is not None and who.idles, used=time.monotonic())
        if who is not None and who.connection is not None:
            who.connection.exit_stack.push_async_callback(self._close, who.key)
        return made

    async def forget_current(self) -> None:
        """After a failure: the next call makes a new client (and so starts a stdio server again)."""
        who = self._identities.current()
        await self._close(who.key if who is not None else None)

    def touch(self, key: Hashable) -> None:
        """A request of this client has just ended: its idle time starts now."""
        held = self._clients.get(key)
        if held is not None:
            held.used = time.monotonic()

    async def close_idle(self, idle_s: float, busy: Collection[Hashable] = ()) -> int:
        """Close the sessions of clients that have sent nothing for idle_s (those no connection's end closes); a
        client whose request is being served (`busy`) is not idle, however long its server takes."""
        now = time.monotonic()
        idle = [key for key, held in self._clients.items()
                if held.idles and key not in busy and now - held.used >= idle_s]
        for key in idle:
            await self._close(key)
        return len(idle)

    async def _close(self, key: Hashable) -> None:
        held = self._clients.pop(key, None)
        if held is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await held.client._disconnect(force=True)

    async def close(self) -> None:
        for scope in self._listing_scopes:  # a listing still under way ends; a listing session closing is awaited
            scope.cancel()
        async with anyio.create_task_group() as group:  # every session at once: a stop has little time
            for key in list(self._clients):
                group.start_soon(self._close, key)
            for listing in list(self._listings):
                group.start_soon(asyncio.wait, {listing})

    async def list_tool_definitions(self, timeout: float | None = None) -> list[dict[str, Any]]:
        """The server's tools in MCP format, from a session of its own (start-up and list changes), within
        `timeout` (default timeout_s), its start included. The answer comes as soon as the tools are listed; the
        session closes behind it, since a server that stays after its stdin closes takes the SDK's waits to stop
        (seconds), which would have made it late for the gateway's start."""
        timeout = self.upstream.options.timeout_s if timeout is None else timeout
        listed: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        session = asyncio.get_running_loop().create_task(self._list_once(timeout, listed))
        self._listings.add(session)
        session.add_done_callback(self._listings.discard)
        return await listed

    async def _list_once(self, timeout: float, listed: asyncio.Future[list[dict[str, Any]]]) -> None:
        client = ProxyClient(self.transport(), timeout=timeout, init_timeout=timeout, **undeclared(frozenset()))
        try:
            async with contextlib.AsyncExitStack() as session:  # leaving it closes the server, on the SDK's clock
                with anyio.CancelScope() as scope:  # close() ends a listing under way, never a server's close
                    self._listing_scopes.add(scope)
                    try:
                        with anyio.fail_after(timeout):
                            await session.enter_async_context(client)
                            tools = await client.list_tools()
                        _settle(listed, [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
                    finally:
                        self._listing_scopes.discard(scope)
        except Exception as exc:  # a failure to start or list is the answer; one closing, said by no one
            _settle(listed, exc)
        _settle(listed, ConnectionError("the gateway closed before the server listed its tools"))

    def stderr_tail(self) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_TAIL:].strip()


def undeclared(declared: frozenset[str]) -> dict[str, Any]:
    """ProxyClient's handlers (each of which declares its capability) for what the client did not declare."""
    return {HANDLERS[name]: None for name in ASKABLE if name not in declared}


class _Provider(ProxyProvider):
    """A server's tools, resources and prompts, as nothing until it has listed its tools once: one server still
    starting (or hanging) never holds up a client's listing of the others."""

    def __init__(self, server: UpstreamServer) -> None:
        super().__init__(server.client)
        self._server = server

    async def _list_tools(self) -> Sequence[Any]:
        return await super()._list_tools() if self._server.listed else []

    async def _list_resources(self) -> Sequence[Any]:
        return await super()._list_resources() if self._server.listed else []

    async def _list_resource_templates(self) -> Sequence[Any]:
        return await super()._list_resource_templates() if self._server.listed else []

    async def _list_prompts(self) -> Sequence[Any]:
        return await super()._list_prompts() if self._server.listed else []


class _RecordedStdio(StdioTransport):
    """A stdio server's transport that, once the server runs, records the gateway's servers in its log folder
    (`record_servers`), for the next gateway to end them should this one be killed outright."""

    def __init__(self, *args: Any, records: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records = records

    async def connect(self, *args: Any, **kwargs: Any) -> Any:
        session = await super().connect(*args, **kwargs)
        with contextlib.suppress(OSError):  # a record missed leaves a server running, as before records
            record_servers(self.records)
        return session


class _Persistent(StatefulProxyClient[Any]):
    """Kept open across the requests of one client (its `async with` per call does not disconnect it)."""


LOGS_PREFIX = "ctxsieve-gateway-"
SERVERS = "servers"  # in a gateway's log folder: the servers it runs, a line each (`record_servers`)
# a folder's name as `LogsFolder.make` has tempfile.mkdtemp make it (`ctxsieve-gateway-4242-k3j9x_2a`); and as
# gateways named it before their folders carried a process id and a lock
_LOGS_NAME = re.compile(rf"{LOGS_PREFIX}(?:\d+-)?[a-z0-9_]{{8}}")
LOCK = ".lock"  # locked (flock) by the gateway whose folder it is, for as long as it runs
UNLOCKED_AGE_S = 86_400  # a folder without a lock file (named before them) is removed when untouched this long


class LogsFolder:
    """A gateway's folder for its servers' stderr logs, removed when the gateway stops (`remove`). A gateway killed
    before it could stop (an agent's SIGKILL, doctor's check) leaves it, unlocked: the next gateway to start ends the
    servers it recorded there that still run (`end_recorded_servers`; on Linux) and removes every such folder of
    this user's, and none whose gateway still runs (its lock is held, whichever process
    namespace shares the folder). On a filesystem without locks a folder has no lock file, and goes as one from
    before the locks: once a day untouched."""

    def __init__(self, path: Path, lock: IO[bytes] | None) -> None:
        self.path = path
        self._lock = lock

    @classmethod
    def make(cls, under: Path | None = None) -> LogsFolder:
        parent = Path(tempfile.gettempdir()) if under is None else under
        remove_orphans(parent)
        path = Path(tempfile.mkdtemp(prefix=f"{LOGS_PREFIX}{os.getpid()}-", dir=parent))
        return cls(path, _locked_new(path / LOCK))

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            self._lock.close()


def remove_orphans(parent: Path) -> list[Path]:
    """This user's log folders under `parent` whose gateway no longer runs, removed (best effort: a folder that
    cannot be read or removed is left); the folders removed."""
    removed = []
    for folder in parent.glob(f"{LOGS_PREFIX}*"):
        try:
            if _orphan(folder):
                end_recorded_servers(folder)
                shutil.rmtree(folder)
                removed.append(folder)
        except (OSError, ValueError):
            continue
    return removed


def _orphan(folder: Path) -> bool:
    if not _LOGS_NAME.fullmatch(folder.name):
        return False
    found = folder.lstat()  # a symbolic link is not a folder of ours
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        return False
    lock = folder / LOCK
    if not lock.exists():
        return time.time() - max([found.st_mtime, *(p.stat().st_mtime for p in folder.iterdir())]) > UNLOCKED_AGE_S
    with lock.open("ab") as probe:  # let go at once: the probe only asks whether another process holds it
        return _locked(probe, wait=False)


def _locked_new(lock: Path) -> IO[bytes] | None:
    """`lock` made already locked: locked under another name, then renamed, so no other gateway's `remove_orphans`
    ever finds it unlocked (and takes the folder for a dead gateway's) or holds it for a moment as this one locks it.
    None on a filesystem without locks (the folder is then left to its gateway's `remove`)."""
    descriptor, made = tempfile.mkstemp(prefix=f"{LOCK}-", dir=lock.parent)
    handle = os.fdopen(descriptor, "ab")
    if not _locked(handle, wait=True):  # a name no other process knows yet: at once, where locks exist
        handle.close()
        os.unlink(made)
        return None
    os.replace(made, lock)
    return handle


def _locked(handle: IO[bytes], wait: bool) -> bool:
    """`handle`'s file locked exclusively (waiting for it, or not); False if another process holds it or the
    filesystem has no locks."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True
