"""The admission gate: bounded running and waiting, then a refusal that says when to retry."""

from __future__ import annotations

import threading

import pytest

from ctxsieve.indexes.errors import Overloaded
from ctxsieve.service.admission import AdmissionGate


def test_gate_refuses_past_running_plus_waiting() -> None:
    gate = AdmissionGate(running=1, waiting=1, retry_after=2.0)
    release = threading.Event()
    entered = threading.Event()

    def hold() -> None:
        with gate.admit():
            entered.set()
            release.wait(5)

    first = threading.Thread(target=hold)
    first.start()
    entered.wait(5)
    second = threading.Thread(target=hold)  # waits in the queue
    second.start()
    for _ in range(100):
        if gate.depth == 2:
            break
        threading.Event().wait(0.01)
    assert gate.depth == 2
    with pytest.raises(Overloaded) as refused, gate.admit():
        pass
    assert refused.value.retry_after == 2.0
    release.set()
    first.join(5)
    second.join(5)
    assert gate.depth == 0
    with gate.admit():
        assert gate.depth == 1
