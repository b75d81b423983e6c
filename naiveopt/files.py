"""What every naiveopt command does with files and command-line text, in one place.

Reading a kernel file, writing an output atomically, parsing ``-D NAME=VALUE`` and printing a
NaiveoptError as ``file:line:col: error: message`` are shared by the ``naiveopt`` command
(cli.py), its batch runner (batch.py) and ``naiveopt bench`` (bench.py). They live here, below
all three, so that the runners do not import the command line that imports them.
"""
from __future__ import annotations

import os
import sys
import tempfile

from .errors import NaiveoptError


def read_source(path: str) -> str:
    """A kernel file's text, or a NaiveoptError naming the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise NaiveoptError("the file is not UTF-8 text", path) from exc
    except OSError as exc:
        raise NaiveoptError(f"cannot read: {exc.strerror}", path) from exc


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (no partial files)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".naiveopt-", dir=directory)
    except OSError as exc:
        raise NaiveoptError(f"cannot write '{path}': {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            os.fchmod(fh.fileno(), 0o666 & ~_UMASK)    # mkstemp's 0600 is for the temporary
        os.replace(tmp, path)
    except BaseException as exc:      # OSError, or Ctrl-C: leave no temporary behind
        os.unlink(tmp)
        if isinstance(exc, OSError):
            raise NaiveoptError(f"cannot write '{path}': {exc.strerror}") from exc
        raise


def parse_defines(items: list[str]) -> dict[str, str]:
    """``-D NAME=VALUE`` options as a dict (``-D NAME`` alone means ``NAME=1``, as in C). A
    struct parameter's member (``-D p.n=1000``) names the size it is read as
    (ir/structs.member_symbol)."""
    from .ir.structs import member_symbol

    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        struct, dot, member = name.partition(".")
        if dot and struct.isidentifier() and member.isidentifier():
            name = member_symbol(struct, member)
        if not name.isidentifier():
            raise NaiveoptError(f"bad -D '{item}': expected NAME=VALUE")
        out[name] = value if eq else "1"
    return out


def located(exc: NaiveoptError, path: str) -> str:
    """The error's message, prefixed by ``path`` when it does not name a file of its own."""
    return str(exc) if exc.file else f"{path}: {exc}"


def report_error(exc: NaiveoptError, path: str) -> int:
    """Print an error the way every naiveopt command does; the exit status is 1."""
    print(located(exc, path), file=sys.stderr)
    return 1
