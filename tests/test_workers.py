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


def _start_child(command_line, sent: bytes):
    """Run a spawned child's command line on a preparation pipe that carries ``sent`` and is
    then closed, as when the parent goes away while the child starts."""
    import os
    import subprocess
    read, write = os.pipe()
    try:
        command = command_line(pipe_handle=read)
        proc = subprocess.Popen(command, pass_fds=(read,), stderr=subprocess.PIPE, text=True)
    finally:
        os.close(read)
    os.write(write, sent)
    os.close(write)
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, stderr


@linux_only
@pytest.mark.parametrize("sent", [b"", b"\x80\x04\x95\xff\x00"], ids=["nothing", "truncated"])
def test_a_child_whose_parent_went_away_while_it_started_exits_quietly(sent):
    # what the batch's Ctrl-C test caught on CI: a worker stopped while it launched its
    # verification worker left that child reading a closed pipe, and its EOFError traceback
    # reached the batch's stderr
    import multiprocessing.spawn as spawn
    plain = spawn.get_command_line
    code, stderr = _start_child(lambda **kw: workers.quiet_command(plain(**kw)), sent)
    assert (code, stderr) == (1, "")
    code, stderr = _start_child(plain, sent)        # multiprocessing's own program
    assert code != 0 and "Traceback" in stderr


def test_the_quiet_bootstrap_keeps_the_arguments_and_leaves_unknown_programs_alone():
    import multiprocessing.spawn as spawn
    plain = spawn.get_command_line(tracker_fd=5, pipe_handle=7)
    quiet = workers.quiet_command(plain)
    assert len(quiet) == len(plain) and quiet[-1] == "--multiprocessing-fork"
    program = quiet[quiet.index("-c") + 1]
    assert "spawn_main(tracker_fd=5, pipe_handle=7)" in program and "EOFError" in program
    frozen = ["/usr/bin/app", "--multiprocessing-fork", "tracker_fd=5", "pipe_handle=7"]
    assert workers.quiet_command(frozen) == frozen


def _report_command_line(conn) -> None:
    with open("/proc/self/cmdline", "rb") as fh:
        conn.send(fh.read().decode())


@linux_only
def test_this_contexts_children_start_through_the_quiet_bootstrap():
    ctx = workers.context()
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_report_command_line, args=(child,))
    proc.start()
    try:
        assert parent.poll(120), "the worker did not answer"
        assert "except (EOFError, pickle.UnpicklingError)" in parent.recv()
    finally:
        proc.join(60)
    assert proc.exitcode == 0
