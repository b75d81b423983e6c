"""Worker processes that never re-run the caller's main module.

naiveopt starts worker processes in two places: the verification worker that runs kernels on
the OpenCL device (verify/opencl.py) and the pool of a batch (batch.py, through pebble). They
are spawned, not forked: forking a process that holds threads (pebble's, tqdm's, the user's)
or an OpenCL runtime is unsafe. But multiprocessing's spawn start method re-imports the parent's
main module in every child (as ``__mp_main__``) so that objects defined there can be unpickled,
and a script that calls ``naiveopt.optimize(...)`` at top level, without an
``if __name__ == "__main__":`` guard (the README's example as a script), would then call it
again inside the child while that child is still starting, and the child dies at start-up.

naiveopt's workers run only naiveopt's own functions, which they import by name, so they
never need the main module. :func:`context` returns a spawn context whose children are started
without it: the parent leaves the main module's name and path out of the preparation data it
sends the child, which is all that makes the child import it. Everything else is plain spawn
(the parent's sys.path, so the child imports the same naiveopt; its interpreter flags). So
the API works from a script without a guard, from ``python -c``, from a notebook and from the
``naiveopt`` command alike.

How: multiprocessing builds that data in ``multiprocessing.spawn.get_preparation_data``; this
module wraps it once, and the wrapper drops the main-module entries only while the current
thread is launching one of this context's processes (a thread-local flag), so any other use
of multiprocessing in the same program is untouched. That relies on two private details of
CPython's multiprocessing (``Popen._launch`` calls ``spawn.get_preparation_data``) that have
been stable since Python 3.4; tests/test_api_script.py runs the README example as a script and
fails if they change. On Windows (not supported by naiveopt's runtime anyway) plain spawn is
used.

Workers start with SIGINT blocked, inherited across exec. A Ctrl-C reaches the whole job (the
terminal signals its process group), and a worker still importing, before pebble's worker loop
or the verification worker has set SIGINT aside, printed a KeyboardInterrupt traceback from
inside multiprocessing's bootstrap onto the batch's stderr. The parent owns interruption: it
stops the pool (which terminates its workers) or, exiting, ends its daemonic verification
worker.
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.resource_tracker as _tracker
import multiprocessing.spawn as _spawn
import signal
import sys
import threading
from functools import cache

_LAUNCHING = threading.local()
_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")
_SPAWN_PROGRAM = "from multiprocessing.spawn import spawn_main; spawn_main("
# multiprocessing's own child program, except that a parent gone before the child has read
# what it needs (EOF, truncated pickle) ends the child quietly: nobody is left to report to
_QUIET_PROGRAM = ("import sys, pickle\n"
                  "from multiprocessing.spawn import spawn_main\n"
                  "try:\n"
                  "    spawn_main({})\n"
                  "except (EOFError, pickle.UnpicklingError):\n"
                  "    sys.exit(1)\n")


def _install() -> None:
    """Wrap multiprocessing's preparation data and child command line once (idempotent across
    reloads)."""
    original = _spawn.get_preparation_data
    if getattr(original, "_naiveopt", False):
        return
    original_command = _spawn.get_command_line

    def get_preparation_data(name):
        data = original(name)
        if getattr(_LAUNCHING, "active", False):
            for key in _MAIN_KEYS:
                data.pop(key, None)
        return data

    def get_command_line(**kwds):
        command = original_command(**kwds)
        if getattr(_LAUNCHING, "active", False):
            return quiet_command(command)
        return command

    get_preparation_data._naiveopt = True
    _spawn.get_preparation_data = get_preparation_data
    _spawn.get_command_line = get_command_line


def quiet_command(command: list[str]) -> list[str]:
    """multiprocessing's child command line with the quiet bootstrap (unchanged when it is not
    the program this module knows, e.g. a frozen executable)."""
    if "-c" not in command[:-1]:
        return command
    at = command.index("-c") + 1
    program = command[at]
    if not (program.startswith(_SPAWN_PROGRAM) and program.endswith(")")):
        return command
    arguments = program[len(_SPAWN_PROGRAM):-1]
    return [*command[:at], _QUIET_PROGRAM.format(arguments), *command[at + 1:]]


if sys.platform != "win32":
    from multiprocessing.popen_spawn_posix import Popen as _SpawnPopen

    class _Popen(_SpawnPopen):
        """Spawn's Popen, launching with the main-module entries left out."""

        def _launch(self, process_obj):
            _LAUNCHING.active = True
            # the child inherits the blocked SIGINT across exec: a Ctrl-C sent to the whole
            # job while it is still importing (before pebble's worker or the verification
            # worker could ignore SIGINT) no longer prints a KeyboardInterrupt traceback
            # from inside multiprocessing's bootstrap; the parent stops its workers itself.
            # The resource tracker is started first: starting it unblocks SIGINT again
            _tracker.ensure_running()
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                super()._launch(process_obj)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                _LAUNCHING.active = False

    class Process(mp.context.SpawnProcess):
        """A spawned process that does not import the parent's main module (module level:
        the child unpickles it by name)."""

        @staticmethod
        def _Popen(process_obj):
            _install()
            return _Popen(process_obj)

    class _Context(mp.context.SpawnContext):
        Process = Process


@cache
def context() -> mp.context.BaseContext:
    """A spawn context whose processes do not import the parent's ``__main__``."""
    if sys.platform == "win32":
        return mp.get_context("spawn")
    return _Context()
