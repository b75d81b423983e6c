"""The top-level shape of a naive kernel: pure prologue, bounds guard, guarded body.

Staging passes restructure a kernel around its guard (passes/optimize/shape.py hoists it so
that every thread reaches the barriers); others only need to know whether there is one and what
it bounds. :class:`ShapeAnalysis` is the cached shape of a kernel, got through the analysis
manager by the passes, also for the copies of it that staging plans keep; :func:`kernel_shape`
computes it where no manager is at hand (the GPU kit reads whether a parsed kernel is guarded).
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from ..ir import GProcedure
from ..ir.rewrite import walk
from .guards import ThreadIdAliases, guard_bounds, id_aliases, is_return
from .manager import Analysis, AnalysisManager


@dataclass
class KernelShape:
    """prologue: leading pure declarations (and pure assignments to them); guard: the bounds
    condition (None when unguarded);
    body: the statements the guard protects, in order."""

    prologue: list[c_ast.Node]
    guard: c_ast.Node | None
    body: list[c_ast.Node]
    bounds: dict[str, c_ast.Node]      # exclusive bounds of idx / idy from the guard


def is_pure(node: c_ast.Node | None) -> bool:
    """An expression that reads no memory and calls nothing (safe for inactive threads)."""
    if node is None:
        return True
    for n, _ in walk(node):
        if isinstance(n, (c_ast.ArrayRef, c_ast.FuncCall, c_ast.Assignment)):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "*", "&"):
            return False
    return True


def is_pure_decl(stmt: c_ast.Node) -> bool:
    """A scalar declaration whose initializer is pure (:func:`is_pure`)."""
    return isinstance(stmt, c_ast.Decl) and not isinstance(stmt.type, c_ast.ArrayDecl) and \
        not stmt.storage and is_pure(stmt.init)


def _constant_table(stmt: c_ast.Node) -> bool:
    """``const float w[3] = {0.25f, 0.5f, 0.25f};``: a local table of pure values, the same
    for every thread, declared before the guard as naive kernels write their weights."""
    return isinstance(stmt, c_ast.Decl) and isinstance(stmt.type, c_ast.ArrayDecl) and \
        not stmt.storage and isinstance(stmt.init, c_ast.InitList) and is_pure(stmt.init) \
        and "const" in stmt.quals + getattr(stmt.type.type, "quals", [])


def _sets_prologue_local(stmt: c_ast.Node, prologue: list[c_ast.Node]) -> bool:
    """``c = 0.5f;`` for a scalar the prologue declared: constants set before the guard
    (PolyBench's coefficients) belong to the prologue too."""
    return isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
        isinstance(stmt.lvalue, c_ast.ID) and is_pure(stmt.rvalue) and \
        any(isinstance(d, c_ast.Decl) and d.name == stmt.lvalue.name for d in prologue)


def kernel_shape(proc: GProcedure, aliases: dict[str, str] | None = None
                 ) -> tuple[KernelShape | None, str]:
    """The kernel's shape, or (None, why it has none naiveopt can restructure). ``aliases``
    are its thread-id aliases (guards.id_aliases), computed when not given."""
    items = list(proc.body.block_items or [])
    prologue: list[c_ast.Node] = []
    while items and (is_pure_decl(items[0]) or _sets_prologue_local(items[0], prologue) or
                     _constant_table(items[0])):
        prologue.append(items.pop(0))
    aliases = id_aliases(proc) if aliases is None else aliases
    if items and isinstance(items[0], c_ast.If) and items[0].iffalse is None:
        first = items[0]
        if is_return(first.iftrue):
            if not is_pure(first.cond):
                return None, "the early-return condition reads memory"
            cond = c_ast.UnaryOp("!", first.cond)
            return KernelShape(prologue, cond, items[1:],
                               guard_bounds(first.cond, aliases, negated=True)), ""
        if len(items) == 1 and is_pure(first.cond):
            body = first.iftrue.block_items if isinstance(first.iftrue, c_ast.Compound) \
                else [first.iftrue]
            return KernelShape(prologue, first.cond, list(body or []),
                               guard_bounds(first.cond, aliases)), ""
    return KernelShape(prologue, None, items, {}), ""


class ShapeAnalysis(Analysis[tuple[KernelShape | None, str]]):
    """:func:`kernel_shape` of a kernel: (shape, '') or (None, why it has none)."""

    requires = (ThreadIdAliases,)

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> tuple[KernelShape | None, str]:
        return kernel_shape(proc, am.get(proc, ThreadIdAliases))
