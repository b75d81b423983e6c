"""May an array the kernel also writes be staged? An exact affine check with islpy.

A tile is loaded once per k-tile by the whole block and read afterwards, so staging is only
correct if no location read through the tile is written — by any thread, before the staged
loop ends — since the tile would hold a stale copy. The check builds, with islpy, the set of
(write instance, read instance) pairs that touch the same element:

    { [ids_w, iters_w, ids_r, k] : domains and y_w = y_r and x_w = x_r }

over the 2-D forms ``A(y, x)`` of the accesses, and stages only when it is empty. 2-D equality
is flat-index equality when both column indices stay within the row (0 <= x < W), which is
checked the same way. Anything not affine in thread ids, loop iterators and size parameters
makes the check fail, and the pass declines with the reason.
"""
from __future__ import annotations

import re

import sympy
from pycparser import c_ast

from ...analysis.shape import KernelShape
from ...ir import GProcedure, MemoryExpression
from ...ir.rewrite import walk
from ...ir.symbolic import SymbolEnv, to_sympy
from .shape import enclosing_loop

VARYING = ("idx", "idy", "tidx", "tidy", "bidx", "bidy")


class NotAffine(Exception):
    """A quantity the check needs is not an affine expression."""


def staging_conflict(proc: GProcedure, reads: list[MemoryExpression], before_end: list,
                     bounds: dict[str, c_ast.Node], env: SymbolEnv) -> str:
    """Why staging ``reads`` of a written array is unsafe ('' when islpy proves it safe).

    ``before_end`` are the statements that run before the staged loop ends (the statements
    before it and the loop itself); ``bounds`` the guard's bounds on idx / idy."""
    array = reads[0].array
    inside = {id(n) for stmt in before_end for n, _ in walk(stmt)}
    writes = [m for m in proc.memory_expressions
              if m.array == array and m.is_write and id(m.node) in inside]
    if not writes:
        return ""
    try:
        import islpy as isl
    except ImportError:  # pragma: no cover - islpy is a dependency
        return "islpy is not installed, so no dependence check can prove it safe"
    try:
        for r in reads:
            for w in writes:
                if w.two_d is None or r.two_d is None or sympy.simplify(w.width - r.width):
                    return f"{w.describe()} and {r.describe()} have no common 2-D form"
                within = _row_check(isl, (w, r), proc, bounds, env)
                if within:
                    return within
                pair = _set(isl, [(w, "_w"), (r, "_r")], proc, bounds, env,
                            [f"{_aff(w.two_d[0], '_w', w)} = {_aff(r.two_d[0], '_r', r)}",
                             f"{_aff(w.two_d[1], '_w', w)} = {_aff(r.two_d[1], '_r', r)}"])
                if not pair.is_empty():
                    return (f"{w.describe()} may write what {r.describe()} reads through the "
                            f"tile (islpy: {pair.coalesce()})")
    except NotAffine as exc:
        return f"the dependence check needs affine indices: {exc}"
    return ""


def _row_check(isl, accesses, proc, bounds, env) -> str:
    """'' if every access's column index provably stays in [0, width)."""
    for m in accesses:
        x, width = _aff(m.two_d[1], "", m), _aff(m.width, "", m)
        outside = _set(isl, [(m, "")], proc, bounds, env, [f"({x} < 0 or {x} >= {width})"])
        if not outside.is_empty():
            return f"cannot prove that {m.describe()} stays within a row"
    return ""


def _aff(expr: sympy.Expr, suffix: str, m: MemoryExpression) -> str:
    """An affine sympy expression as isl text: thread ids and ``m``'s loop iterators become
    the variables of that access instance (suffixed), everything else is a parameter."""
    expr = sympy.expand(expr)
    for term in sympy.Add.make_args(expr):
        if sum(sympy.degree(term, s) for s in term.free_symbols) > 1:
            raise NotAffine(str(expr))
    names = {}
    for s in expr.free_symbols:
        if s.name in VARYING:
            names[s] = sympy.Symbol(s.name + suffix)
        elif s.name in m.loops:
            names[s] = sympy.Symbol(f"it_{s.name}{suffix}")
    return str(expr.xreplace(names))


def _set(isl, accesses, proc: GProcedure, bounds, env: SymbolEnv, extra: list[str]):
    """The isl set of access instances (with their domains) satisfying ``extra``; each
    access's iterators are bounded by the loops that enclose it."""
    variables, constraints = [], []
    for m, suffix in accesses:
        for name in sorted({s.name for s in m.index.free_symbols if s.name in VARYING}):
            variables.append(name + suffix)
            constraints.append(f"{name}{suffix} >= 0")
            if name in bounds:
                constraints.append(f"{name}{suffix} < "
                                   f"{_aff(to_sympy(bounds[name], env), suffix, m)}")
        for it in m.loops:
            lp = enclosing_loop(proc, m, it)
            variables.append(f"it_{it}{suffix}")
            constraints.append(f"it_{it}{suffix} >= {_aff(to_sympy(lp.lower, env), suffix, m)}")
            constraints.append(f"it_{it}{suffix} < {_aff(to_sympy(lp.upper, env), suffix, m)}")
    constraints += extra
    params = {name for c in constraints for name in re.findall(r"[A-Za-z_]\w*", c)}
    params -= set(variables) | {"and", "or"}
    text = (f"[{', '.join(sorted(params))}] -> {{ [{', '.join(variables)}] : "
            f"{' and '.join(constraints)} }}")
    try:
        return isl.Set(text)
    except isl.Error as exc:
        raise NotAffine(text) from exc


def written_array_obstacle(proc: GProcedure, shape: KernelShape | None, m: MemoryExpression,
                           loop, env: SymbolEnv) -> str:
    """Why the read ``m`` of an array the kernel writes may not be staged in ``loop``
    (``shape``: the kernel's, analysis/shape.py)."""
    if shape is None or loop.node not in shape.body:
        return "the kernel also writes this array (and its shape defeats the dependence check)"
    end = shape.body.index(loop.node) + 1
    conflict = staging_conflict(proc, [m], shape.body[:end], shape.bounds, env)
    return f"the kernel also writes this array and {conflict}" if conflict else ""
