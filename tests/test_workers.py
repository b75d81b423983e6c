"""naiveopt's worker processes start with SIGINT blocked (naiveopt/workers.py): a Ctrl-C sent
to the whole job while a worker is still importing must not print a traceback from inside
multiprocessing's bootstrap (the batch's Ctrl-C test caught that on a slow CI machine, as a
flake: it depends on when the signal lands). These tests look at the signal masks directly."""
import signal
import sys

import pytest

from naiveopt import workers

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads the signal mask from /proc (Linux)")


def _blocked_signals() -> set[int]:
    with open("/proc/self/status", encoding="utf-8") as fh:
        mask = next(int(line.split()[1], 16) for line in fh if line.startswith("SigBlk:"))
    return {n for n in range(1, 65) if mask >> (n - 1) & 1}


def _report(conn) -> None:
    conn.send(_blocked_signals())


@linux_only
def test_a_worker_starts_with_sigint_blocked_and_the_parent_keeps_its_mask():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    ctx = workers.context()
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_report, args=(child,))
    proc.start()
    try:
        assert parent.poll(120), "the worker did not answer"
        assert signal.SIGINT in parent.recv()
    finally:
        proc.join(60)
    assert proc.exitcode == 0
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    assert signal.SIGINT not in before
