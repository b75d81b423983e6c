"""Clamped coordinates: an index whose row or column is clamped into the array, the way image
filters read past the border (``in[min(max(y + dy, 0), H - 1) * W + min(max(x + dx, 0), W - 1)]``,
OpenCL's ``clamp(x + dx, 0, W - 1)``, Sobel's ``x > 0 ? x - 1 : 0``).

Such an index is opaque to the affine analyses (two threads may read one clamped element);
:func:`clamped_index` takes it apart for a pass that can use it (the stencil's window
analysis): per axis the unclamped coordinate (``y + dy``) and the :class:`Clamp` applied to
it. A clamp is a monotone function of its coordinate, which is what lets a staged window hold
the clamped elements of the unclamped window (passes/optimize/stencil.py says why).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy
from ..ir.symbolic import IntMax, IntMin, SymbolEnv, Unresolved, decompose, recover_2d


@dataclass(frozen=True)
class Clamp:
    """``v -> min(max(v, lo), hi)`` as written; a side that is None is not clamped.
    ``max_outside``: written ``max(min(v, hi), lo)``, the same value where lo <= hi."""

    lo: sympy.Expr | None
    hi: sympy.Expr | None
    max_outside: bool = False

    def describe(self, coordinate: str) -> str:
        lo = "" if self.lo is None else str(self.lo)
        hi = "" if self.hi is None else str(self.hi)
        return f"clamp({coordinate}, {lo or '-inf'}, {hi or 'inf'})"


@dataclass(frozen=True)
class ClampedIndex:
    """An index ``row * width + column`` (``width`` 0 and row 0 for a 1-D array) whose row
    and column are the unclamped coordinates, each with its clamp (None: not clamped)."""

    forms: tuple[sympy.Expr, sympy.Expr]
    width: sympy.Expr
    clamps: tuple[Clamp | None, Clamp | None]


def clamped_index(index: sympy.Expr, env: SymbolEnv) -> tuple[ClampedIndex | None, str]:
    """An index (converted by an env that models clamps: ``SymbolEnv.signed``) as a
    :class:`ClampedIndex`, or (None, why not; '' when it holds no clamp)."""
    atoms = _outermost(index)
    if not atoms:
        return None, ""
    marks = {a: sympy.Dummy(f"clamp{i}", integer=True) for i, a in enumerate(atoms)}
    written = index.xreplace(marks)
    marked = sympy.expand(written)
    if marked.has(Unresolved):
        return None, "its index holds a clamp and values naiveopt cannot model"
    rows, cols = [], []
    for atom, mark in marks.items():
        parsed, why = _clamp(atom, env)
        if parsed is None:
            return None, why
        coeff = sympy.expand(marked.coeff(mark, 1))
        if coeff.free_symbols & set(marks.values()) or sympy.degree(marked, mark) != 1:
            return None, "a clamped coordinate is multiplied by another"
        (cols if coeff == 1 else rows).append((mark, coeff, parsed))
    if len(rows) > 1 or len(cols) > 1:
        return None, "two clamped coordinates on one axis"
    # the rest as written (linear in the marks: zero them), so that a width such as N + 2
    # stays a factor of its row for recover_2d
    rest = written.xreplace({m: 0 for m in marks.values()})
    if rows:
        _, width, (row, row_clamp) = rows[0]
        d = decompose(width, env)
        if not d.resolved or d.predefined or d.loop or (width.is_number and width <= 0):
            return None, "a clamped row is scaled by a width that varies or is not positive"
        if cols:
            if sympy.expand(rest) != 0:
                return None, "an offset is added to a clamped column"
            column, column_clamp = cols[0][2]
        else:
            column, column_clamp = rest, None
        return ClampedIndex((row, column), width, (row_clamp, column_clamp)), ""
    column, column_clamp = cols[0][2]
    if sympy.expand(rest) == 0:
        return ClampedIndex((sympy.Integer(0), column), sympy.Integer(0),
                            (None, column_clamp)), ""
    two_d = recover_2d(rest, env)
    if two_d is None or two_d[0][1] != 0:
        return None, "an offset is added to a clamped index"
    (row, _), width = two_d
    return ClampedIndex((row, column), width, (None, column_clamp)), ""


def _outermost(expr: sympy.Expr) -> list[sympy.Expr]:
    """The IntMin/IntMax subexpressions not inside another, in a stable order."""
    if isinstance(expr, (IntMin, IntMax)):
        return [expr]
    out: list[sympy.Expr] = []
    for arg in expr.args:
        out += [a for a in _outermost(arg) if a not in out]
    return out


def _clamp(atom: sympy.Expr, env: SymbolEnv) -> tuple[tuple[sympy.Expr, Clamp] | None, str]:
    """(the clamped coordinate, its Clamp) of ``min(max(v, lo), hi)`` and its one-sided and
    swapped forms, bounds the same for all threads and iterations; or (None, why not)."""
    ops: list[tuple[str, sympy.Expr]] = []     # outermost first
    e = atom
    while isinstance(e, (IntMin, IntMax)):
        a, b = e.args
        ua, ub = _uniform(a, env), _uniform(b, env)
        if ua == ub:
            return None, ("a min/max of two values that both vary" if not ua else
                          "a min/max of values the same for all threads")
        ops.append(("min" if isinstance(e, IntMin) else "max", a if ua else b))
        e = b if ua else a
    if e.has(Unresolved):
        return None, "a clamped coordinate holds values naiveopt cannot model"
    kinds = [k for k, _ in ops]
    if kinds == ["max"]:
        return (e, Clamp(ops[0][1], None)), ""
    if kinds == ["min"]:
        return (e, Clamp(None, ops[0][1])), ""
    if kinds == ["min", "max"]:
        return (e, Clamp(ops[1][1], ops[0][1])), ""
    if kinds == ["max", "min"]:
        return (e, Clamp(ops[0][1], ops[1][1], max_outside=True)), ""
    return None, "a coordinate clamped by more than one min and one max"


def _uniform(expr: sympy.Expr, env: SymbolEnv) -> bool:
    d = decompose(expr, env)
    return d.resolved and not d.predefined and not d.loop
