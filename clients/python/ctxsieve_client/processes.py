"""A process that waits for a child of its own, and ends as a signal ended it: `ctxsieve wrap` (the agent its
child) and the gateway over stdio (the gateway the child of the process the agent started)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what asks a server of an agent's to stop


def waited(child: subprocess.Popen[Any], passed: Iterable[int], ignored: Iterable[int] = ()) -> int:
    """`child`'s exit status (negative: the signal that ended it), waited for with each signal of `passed` passed on
    to it and each of `ignored` ignored (as a shell ignores the Ctrl-C its terminal sent its foreground child too);
    this process's own handlers restored after."""
    handlers: dict[int, Any] = dict.fromkeys(ignored, signal.SIG_IGN)
    for signum in passed:
        handlers[signum] = lambda got, _frame: child.send_signal(got)  # (a no-op once it has ended)
    before = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        return child.wait()  # (a signal's handler runs, and the wait goes on)
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def end_by(signum: int) -> None:
    """End this process as `signum` would have (its exit status says so), at once: a thread may still be blocked
    reading stdin, which no cancellation ends."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP take no handler, and need none
        signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal whose default is to go on (the status a shell would give)
