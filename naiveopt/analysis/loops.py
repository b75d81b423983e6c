"""Loops (paper 002, functional pass (3)): every loop of a kernel and its iterator, bounds and
step.

A loop is canonical when it has one integer iterator initialised in its header, a condition
``it < / <= / != bound`` (or the mirrored form), a constant positive step (a literal, or a
``#define`` of one: ``k += STEP``), and a body that never assigns the iterator. Optimization
passes only transform canonical loops; others are recorded with the reason.
"""
from __future__ import annotations

from pycparser import c_ast

from ..ir import GLoop, GProcedure
from ..ir.literals import integer_value
from ..ir.rewrite import assigned_names
from .manager import Analysis, AnalysisManager


class LoopAnalysis(Analysis[list[GLoop]]):
    """The loops of a kernel, outer before inner, in source order (each with its parent and
    depth; their ``memory_expressions`` are filled by the memory-expression analysis)."""

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> list[GLoop]:
        loops: list[GLoop] = []
        _visit(proc.body, None, loops, am.module.macros)
        return loops


def _visit(node: c_ast.Node, parent: GLoop | None, loops: list[GLoop],
           macros: dict[str, str]) -> None:
    if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)):
        loop = analyse_loop(node, parent, macros)
        loops.append(loop)
        parent = loop
    for _, child in node.children():
        _visit(child, parent, loops, macros)


def analyse_loop(node: c_ast.Node, parent: GLoop | None,
                 macros: dict[str, str] | None = None) -> GLoop:
    """Build the GLoop of a loop statement (``macros``: the file's object-like macros, which
    a step may name)."""
    depth = parent.depth + 1 if parent else 0
    if not isinstance(node, c_ast.For):
        return GLoop(node, None, None, None, None, depth, parent, False,
                     f"{type(node).__name__.lower()} loop")
    it, lower = _init(node.init)
    if it is None:
        return GLoop(node, None, None, None, None, depth, parent, False,
                     "no single iterator initialised in the header")
    upper = _upper(node.cond, it)
    step = _step(node.next, it, macros or {})
    why = ""
    if upper is None:
        why = f"condition is not '{it} < bound'"
    elif step is None:
        why = f"step of {it} is not a positive constant"
    elif assigned_names(node.stmt).get(it):
        why = f"the body assigns {it}"
    return GLoop(node, it, lower, upper, step, depth, parent, not why, why)


def _init(init: c_ast.Node | None) -> tuple[str | None, c_ast.Node | None]:
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init:
        return init.decls[0].name, init.decls[0].init
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue,
                                                                            c_ast.ID):
        return init.lvalue.name, init.rvalue
    return None, None


def _upper(cond: c_ast.Node | None, it: str) -> c_ast.Node | None:
    if not isinstance(cond, c_ast.BinaryOp):
        return None
    op, left, right = cond.op, cond.left, cond.right
    if isinstance(right, c_ast.ID) and right.name == it:
        op, left, right = {">": "<", ">=": "<=", "!=": "!="}.get(op, ""), right, left
    if not (isinstance(left, c_ast.ID) and left.name == it):
        return None
    if op in ("<", "!="):
        return right
    if op == "<=":
        return c_ast.BinaryOp("+", right, c_ast.Constant("int", "1"))
    return None


def _step(nxt: c_ast.Node | None, it: str, macros: dict[str, str]) -> int | None:
    def const(n: c_ast.Node) -> int | None:
        value = None
        if isinstance(n, c_ast.Constant) and n.type == "int":
            value = integer_value(n.value)
        elif isinstance(n, c_ast.ID) and n.name in macros:
            value = integer_value(macros[n.name].strip())
        return value if value is not None and value > 0 else None

    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and \
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == it:
        return 1
    if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and \
            nxt.lvalue.name == it:
        if nxt.op == "+=":
            return const(nxt.rvalue)
        rv = nxt.rvalue
        if nxt.op == "=" and isinstance(rv, c_ast.BinaryOp) and rv.op == "+":
            if isinstance(rv.left, c_ast.ID) and rv.left.name == it:
                return const(rv.right)
            if isinstance(rv.right, c_ast.ID) and rv.right.name == it:
                return const(rv.left)
    return None
