"""`processes.waited`, which `ctxsieve wrap` and the gateway's waiting parent run: a signal passed on reaches the
child, an ignored one leaves the parent waiting, and the parent's own handlers come back after."""

from __future__ import annotations

import signal
import subprocess
import sys

CHILD = ("import signal, sys, time\n"
         "signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))\n"
         "print('ready', flush=True)\n"
         "time.sleep(60)\n")
PARENT = ("import signal, subprocess, sys\n"
          "from ctxsieve_client.processes import waited\n"
          "child = subprocess.Popen([sys.executable, '-c', sys.argv[1]])\n"
          "code = waited(child, passed=(signal.SIGTERM,), ignored=(signal.SIGINT,))\n"
          "print(code, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, flush=True)\n")


def test_a_signal_passed_on_ends_the_child_and_an_ignored_one_does_not_end_the_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline() == "ready\n"
        parent.send_signal(signal.SIGINT)  # ignored: a terminal's Ctrl-C went to the child already
        parent.send_signal(signal.SIGTERM)  # passed on: the child exits 3
        out, _ = parent.communicate(timeout=60)
    finally:
        parent.kill()
    assert parent.returncode == 0 and out == "3 True\n", (parent.returncode, out)
