"""A bench stopped by SIGTERM (`pkill -f bench.code`) unwinds, so the scratch server it started is stopped on the
way out instead of staying on its port."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BENCH = """
import sys, time
from bench.loadtest import unwind_on_sigterm
unwind_on_sigterm()
try:
    print("running", flush=True)
    time.sleep(60)
finally:
    open(sys.argv[1], "w").write("stopped")
"""


def test_a_terminated_bench_runs_its_finally(tmp_path: Path) -> None:
    marker = tmp_path / "stopped"
    bench = subprocess.Popen([sys.executable, "-c", BENCH, str(marker)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert bench.stdout is not None and bench.stdout.readline() == "running\n"
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(30) == 128 + signal.SIGTERM
    assert marker.read_text() == "stopped"


def test_a_handler_the_program_set_is_kept() -> None:
    from bench.loadtest import unwind_on_sigterm

    def own(_signum: int, _frame: object) -> None:
        time.sleep(0)

    previous = signal.signal(signal.SIGTERM, own)
    try:
        unwind_on_sigterm()
        assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, previous)
