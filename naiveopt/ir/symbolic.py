"""C index expressions as sympy expressions, and their decomposition (paper 002, pass (4)).

An index such as ``A[(idx)*width + i + 5]`` becomes ``idx*width + i + 5``; sympy expands it and
:func:`decompose` sorts each additive term by what varies in it: nothing (constant), a thread id
(predefined), a loop iterator (loop), or something naiveopt cannot model (unresolved).
"""
from __future__ import annotations

import sympy
from pycparser import c_ast

from .gprocedure import IndexDecomposition
from .literals import integer_value
from .nodes import PredefId

#: Thread ids that vary between threads of a block / between blocks.
THREAD_VARYING = {"idx", "idy", "tidx", "tidy", "bidx", "bidy"}


class Unresolved(sympy.Function):
    """An opaque value in an index (data-dependent read, division, call...)."""


class CDiv(sympy.Function):
    """C's integer division (truncating toward zero) of thread- and loop-invariant operands:
    ``MASK_WIDTH / 2`` in ``i - MASK_WIDTH / 2``. Opaque to the algebra but uniform, so an
    index holding it still decomposes (its term is constant); it folds once the operands are
    numbers and prints back as C division."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            q = abs(int(a)) // abs(int(b))
            return sympy.Integer(q if (int(a) < 0) == (int(b) < 0) else -q)
        return None

    def _ccode(self, printer) -> str:
        return f"(({printer._print(self.args[0])}) / ({printer._print(self.args[1])}))"


class SymbolEnv:
    """Maps identifiers to sympy symbols with a role each: predefined, loop, uniform, alias."""

    def __init__(self, uniforms: set[str], loops: set[str], aliases: dict[str, c_ast.Node]):
        self.uniforms = uniforms
        self.loops = loops
        self.aliases = aliases
        self._counter = 0

    def scoped(self, loops: set[str]) -> "SymbolEnv":
        """The same symbols with only ``loops`` (the enclosing loops) as loop iterators."""
        env = SymbolEnv(self.uniforms, loops, self.aliases)
        env._counter = self._counter
        return env

    def fresh_unresolved(self, text: str) -> sympy.Expr:
        self._counter += 1
        return Unresolved(sympy.Symbol(f"u{self._counter}_{text}"))


def to_sympy(node: c_ast.Node, env: SymbolEnv, depth: int = 0) -> sympy.Expr:
    """Convert an integer C expression into sympy; unknown parts become Unresolved(...)."""
    if depth > 50:
        return env.fresh_unresolved("deep")
    if isinstance(node, PredefId):
        return sympy.Symbol(node.name, integer=True)
    if isinstance(node, c_ast.Constant):
        value = integer_value(node.value) if node.type != "float" else None
        if value is None:
            return env.fresh_unresolved("const" if node.type != "float" else "float")
        return sympy.Integer(value)
    if isinstance(node, c_ast.ID):
        name = node.name
        if name in env.loops or name in env.uniforms:
            return sympy.Symbol(name, integer=True)
        if name in env.aliases:
            return to_sympy(env.aliases[name], env, depth + 1)
        return env.fresh_unresolved(name)
    if isinstance(node, c_ast.Cast):
        return to_sympy(node.expr, env, depth + 1)
    if isinstance(node, c_ast.UnaryOp):
        if node.op == "-":
            return -to_sympy(node.expr, env, depth + 1)
        if node.op == "+":
            return to_sympy(node.expr, env, depth + 1)
        return env.fresh_unresolved("unary")
    if isinstance(node, c_ast.BinaryOp):
        if node.op in ("+", "-", "*"):
            left = to_sympy(node.left, env, depth + 1)
            right = to_sympy(node.right, env, depth + 1)
            return left + right if node.op == "+" else (
                left - right if node.op == "-" else left * right)
        shift = integer_value(node.right.value) if node.op == "<<" and isinstance(
            node.right, c_ast.Constant) else None
        if shift is not None and 0 <= shift < 63:
            return to_sympy(node.left, env, depth + 1) * 2 ** shift
        if node.op == "/":
            left = to_sympy(node.left, env, depth + 1)
            right = to_sympy(node.right, env, depth + 1)
            if _uniform(left, env) and _uniform(right, env) and right != 0:
                return CDiv(left, right)
        return env.fresh_unresolved(
            {"/": "div", "%": "mod"}.get(node.op, "op"))
    return env.fresh_unresolved(type(node).__name__)


def _uniform(expr: sympy.Expr, env: SymbolEnv) -> bool:
    """Whether an integer expression is the same for every thread and loop iteration."""
    return not expr.has(Unresolved) and all(_classify(s, env) == "uniform"
                                            for s in expr.free_symbols)


def _classify(symbol: sympy.Symbol, env: SymbolEnv) -> str:
    if symbol.name in THREAD_VARYING or symbol.name in ("blockDimX", "blockDimY", "gridDimX",
                                                        "gridDimY"):
        return "uniform" if symbol.name.startswith(("blockDim", "gridDim")) else "predefined"
    if symbol.name in env.loops:
        return "loop"
    return "uniform"


def decompose(expr: sympy.Expr, env: SymbolEnv) -> IndexDecomposition:
    """Split an index into constant, predefined, loop and unresolved terms."""
    expanded = sympy.expand(expr)
    constant = sympy.Integer(0)
    predefined: dict[str, sympy.Expr] = {}
    loop: dict[str, sympy.Expr] = {}
    unresolved: list[sympy.Expr] = []
    for term in sympy.Add.make_args(expanded):
        if term.has(Unresolved):
            unresolved.append(term)
            continue
        varying = [s for s in term.free_symbols if _classify(s, env) != "uniform"]
        if not varying:
            constant += term
            continue
        if len(varying) > 1 or sympy.degree(term, varying[0]) != 1:
            unresolved.append(term)
            continue
        var = varying[0]
        coeff = sympy.simplify(term / var)
        bucket = predefined if _classify(var, env) == "predefined" else loop
        bucket[var.name] = bucket.get(var.name, sympy.Integer(0)) + coeff
    return IndexDecomposition(constant, predefined, loop, unresolved)


def recover_2d(expr: sympy.Expr, env: SymbolEnv
               ) -> tuple[tuple[sympy.Expr, sympy.Expr], sympy.Expr] | None:
    """Recover ``index = y*W + x`` as ((y, x), W), or None.

    W is a thread- and loop-invariant factor of the index as written — a size parameter, a
    macro constant, or a compound such as ``W + K - 1`` reached through a local — or, failing
    that, the largest integer coefficient that splits the terms cleanly. The best candidate
    puts the varying part in y and leaves x with none of y's thread ids and loop iterators.
    """
    if expr.has(Unresolved):
        return None
    expanded = sympy.expand(expr)
    best = None
    width = sympy.Dummy("width", integer=True)
    for w in _width_candidates(expr, expanded, env):
        y = sympy.expand(sympy.expand(expr.xreplace({w: width})).coeff(width, 1))
        if y == 0 or y.has(width):
            continue
        x = sympy.expand(expanded - sympy.expand(y * w))
        if x.has(width) or (w.is_Symbol and x.has(w)):
            continue
        varying_y = {s for s in y.free_symbols if _classify(s, env) != "uniform"}
        varying_x = {s for s in x.free_symbols if _classify(s, env) != "uniform"}
        score = (bool(varying_y), not (varying_y & varying_x), not w.is_Symbol)
        if best is None or score > best[0]:
            best = (score, (y, x), w)
    if best is not None:
        return best[1], best[2]
    return _recover_literal_width(expanded, env)


def _width_candidates(expr: sympy.Expr, expanded: sympy.Expr, env: SymbolEnv
                      ) -> list[sympy.Expr]:
    """Invariant factors of the index's terms as written, then invariant symbols."""
    def invariant(e: sympy.Expr) -> bool:     # a quotient (CDiv) is an offset, not a width
        return bool(e.free_symbols) and not e.has(CDiv) and all(
            _classify(s, env) == "uniform" and s.name not in ("blockDimX", "blockDimY")
            for s in e.free_symbols)

    out: list[sympy.Expr] = []
    for term in sympy.Add.make_args(expr):
        for factor in sympy.Mul.make_args(term):
            if invariant(factor) and not factor.is_Symbol and factor not in out:
                out.append(factor)
    out += sorted((s for s in expanded.free_symbols if invariant(s)), key=lambda s: s.name)
    return out


def _recover_literal_width(expanded: sympy.Expr, env: SymbolEnv
                           ) -> tuple[tuple[sympy.Expr, sympy.Expr], sympy.Expr] | None:
    coeffs = []
    for term in sympy.Add.make_args(expanded):
        c, _ = term.as_coeff_Mul()
        if term.free_symbols and c.is_Integer and abs(c) > 1:
            coeffs.append(abs(int(c)))
    if not coeffs:
        return None
    width = max(coeffs)
    y, x = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(expanded):
        c, rest = term.as_coeff_Mul()
        if term.free_symbols and c.is_Integer and int(c) % width == 0:
            y += (int(c) // width) * rest
        else:
            x += term
    if y == 0:
        return None
    return (y, x), sympy.Integer(width)
