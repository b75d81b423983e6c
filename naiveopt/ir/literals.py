"""C literals as text: the one place that reads them.

A literal travels through naiveopt as the text the user wrote (``c_ast.Constant.value``), so the
output reproduces it exactly: ``1e-5f``, ``0x1.8p3``, ``010``, ``10UL``, ``'\\n'``. Reading it
must follow C's grammar, not a guess:

- the token is a *preprocessing number* (C11 6.4.8: a digit or ``.digit``, then digits,
  letters, ``_``, ``.``, and ``e+ e- E+ E- p+ p- P+ P-``; C++14 adds ``'`` digit separators),
  so ``1e-5f`` is one token and ``1e`` never is;
- an integer's value depends on its base: ``010`` is octal 8, ``0x10`` is 16, ``0b10`` is 2
  (reading ``010`` as decimal 10 would silently miscompile an index), and suffixes (``u``,
  ``l``, ``ll`` in any case and order) do not change the value.

:func:`integer_value` is the single conversion from a C integer literal to its value; every
analysis that needs the number of a constant (index decomposition, loop steps, shared array
extents, work-item dimensions) goes through it.
"""
from __future__ import annotations

import re

#: A C/C++ preprocessing number (with C++14 digit separators).
PP_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.]|'(?=[0-9A-Za-z_]))*")
#: A character literal, with its optional encoding prefix.
CHAR_LITERAL = re.compile(r"(?:u8|[uUL])?'(?:\\.|[^'\\\n])+'")

_INT_SUFFIX = re.compile(r"(?:[uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?)?$")
_INT_BODY = re.compile(r"0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*")
_FLOAT = re.compile(r"(?:(?:[0-9]*\.[0-9]+|[0-9]+\.)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+"
                    r"|0[xX](?:[0-9a-fA-F]*\.[0-9a-fA-F]+|[0-9a-fA-F]+\.?)[pP][+-]?[0-9]+)"
                    r"([fFlLhH]?)")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
            "'": 39, '"': 34, "?": 63}


def literal_token(text: str) -> str:
    """The literal (pp-number or character literal) that ``text`` starts with, or ''."""
    m = CHAR_LITERAL.match(text) or PP_NUMBER.match(text)
    return m.group(0) if m else ""


def split_integer(text: str) -> tuple[str, str] | None:
    """(digits, suffix) of a C integer literal (digit separators removed), or None."""
    text = text.replace("'", "")
    m = _INT_SUFFIX.search(text)
    body, suffix = text[:m.start()], m.group(0)
    return (body, suffix) if _INT_BODY.fullmatch(body) else None


def integer_value(text: str) -> int | None:
    """The value of a C integer literal (``0x10`` 16, ``010`` 8, ``0b11`` 3, ``10UL`` 10) or of a
    plain character literal (``'a'`` 97); None for anything else (floats, names)."""
    if text.startswith("'"):
        return char_value(text)
    parts = split_integer(text)
    if parts is None:
        return None
    body = parts[0]
    if body[:2] in ("0x", "0X"):
        return int(body[2:], 16)
    if body[:2] in ("0b", "0B"):
        return int(body[2:], 2)
    if body.startswith("0"):
        return int(body, 8)
    return int(body)


def char_value(text: str) -> int | None:
    """The value of an unprefixed one-character literal (``'a'``, ``'\\n'``, ``'\\x41'``,
    ``'\\101'``), or None."""
    m = re.fullmatch(r"'(?:([^'\\])|\\([ntr0abfv\\'\"?])|\\x([0-9a-fA-F]+)|\\([0-7]{1,3}))'",
                     text)
    if m is None:
        return None
    plain, esc, hexa, octal = m.groups()
    if plain is not None:
        return ord(plain) if ord(plain) < 128 else None
    if esc is not None:
        return _ESCAPES[esc]
    return int(hexa, 16) if hexa is not None else int(octal, 8)


def float_suffix(text: str) -> str | None:
    """The suffix of a C floating literal ('' for double, 'f', 'l', 'h' lowered), or None if
    ``text`` is not one."""
    m = _FLOAT.fullmatch(text.replace("'", ""))
    return m.group(1).lower() if m else None


def is_integer_literal(text: str) -> bool:
    return split_integer(text) is not None


def integer_literals_to_decimal(text: str) -> str:
    """C expression text with every integer literal written as a plain decimal (``010`` ->
    ``8``, ``0x10u`` -> ``16``), for evaluating ``#define`` values with a Python-syntax
    evaluator; a floating literal is left alone (the caller's evaluator rejects it)."""
    def repl(m: re.Match) -> str:
        value = integer_value(m.group(0))
        return m.group(0) if value is None else str(value)

    return re.sub(r"(?<![\w.])" + PP_NUMBER.pattern, repl, text)


def opencl_literal(text: str) -> tuple[str, str | None]:
    """A CUDA literal's OpenCL C spelling and, when the meaning changes, why.

    The same text, except: C++14 digit separators are dropped; C++14 binary literals
    (``0b101``) are written in hex (OpenCL C has none); ``ll``/``LL`` become ``l``/``L``
    (OpenCL's ``long`` is the 64-bit type CUDA's ``long long`` is); a ``long double`` literal
    (``1e-5L``) becomes ``double`` (OpenCL has no long double; on the GPU CUDA computes it in
    double too, so the value is the same), which the second item says."""
    out = text.replace("'", "") if not text.startswith(("'", "u8'", "u'", "U'", "L'")) else text
    if float_suffix(out) == "l":
        return out[:-1], f"long double literal '{text}' written as double '{out[:-1]}' " \
                         "(OpenCL has no long double)"
    parts = split_integer(out)
    if parts is None:
        return out, None
    body, suffix = parts
    if body[:2] in ("0b", "0B"):
        body = hex(int(body[2:], 2))
    return body + suffix.replace("ll", "l").replace("LL", "L"), None
