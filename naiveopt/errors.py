"""User-facing errors.

Every problem naiveopt reports about its input is a :class:`NaiveoptError` carrying a source
location, so the CLI can print the compiler-style ``file:line:col: error: message`` line and exit
with status 1 instead of a traceback.
"""
from __future__ import annotations


class NaiveoptError(Exception):
    """An error in the user's input or request, with an optional source location."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line:
                where += f":{self.line}:{self.col or 1}"
            where += ": "
        return f"{where}error: {self.message}"


class UnsupportedConstruct(NaiveoptError):
    """The kernel uses a construct naiveopt does not model (goto, inline asm, recursion...)."""


def error_at(coord: object, message: str, path: str = "") -> NaiveoptError:
    """A NaiveoptError located at a c_ast node's coord (the front end stores 'file:line:col')."""
    if coord:
        file, _, rest = str(coord).partition(":")
        line, _, col = rest.partition(":")
        if line.isdigit():
            return NaiveoptError(message, file or path, int(line),
                                 int(col) if col.isdigit() else None)
    return NaiveoptError(message, path or None)
