"""Thread-id aliases and the bounds a kernel's guards put on the global ids.

Naive kernels name their global ids (``int i = idx;``) and guard their work with them
(``if (i < n) { ... }`` or ``if (i >= n) return;``). The predefined pass reads the thread space
from those bounds; the kernel shape (shape.py) keeps the bounds of the guard it recognises.
"""
from __future__ import annotations

from pycparser import c_ast

from ..ir import GProcedure, PredefId
from ..ir.rewrite import assigned_names, walk
from .manager import Analysis, AnalysisManager


def is_id(node: c_ast.Node, name: str) -> bool:
    """Whether ``node`` is the predefined id ``name``, through casts."""
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return isinstance(node, PredefId) and node.name == name


def id_aliases(proc: GProcedure) -> dict[str, str]:
    """Locals defined once as a global id: ``int i = idx;`` -> {'i': 'idx'}."""
    counts = assigned_names(proc.body)
    out = {}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.init is not None and counts.get(node.name) == 1:
            for gid in ("idx", "idy"):
                if is_id(node.init, gid):
                    out[node.name] = gid
    return out


class ThreadIdAliases(Analysis[dict[str, str]]):
    """:func:`id_aliases` of a kernel."""

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> dict:
        return id_aliases(proc)


def is_return(stmt: c_ast.Node) -> bool:
    if isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    return isinstance(stmt, c_ast.Return)


def guard_bounds(cond: c_ast.Node, aliases: dict[str, str], negated: bool = False,
                 z_id=None) -> dict[str, c_ast.Node]:
    """Exclusive upper bounds a guard puts on idx / idy: ``i < n && j < m`` -> {idx: n, idy: m}.

    ``negated`` reads the condition of an early return (``if (i >= n) return;``)."""
    out: dict[str, c_ast.Node] = {}
    joiner = "||" if negated else "&&"
    if isinstance(cond, c_ast.BinaryOp) and cond.op == joiner:
        out.update(guard_bounds(cond.left, aliases, negated, z_id))
        out.update(guard_bounds(cond.right, aliases, negated, z_id))
        return out
    if not isinstance(cond, c_ast.BinaryOp):
        return out
    ops = {">=": "<", ">": "<="} if negated else {"<": "<", "<=": "<="}
    flipped = {"<=": "<", "<": "<="} if negated else {">": "<", ">=": "<="}
    for var, bound, table in ((cond.left, cond.right, ops), (cond.right, cond.left, flipped)):
        if cond.op not in table:
            continue
        gid = var.name if isinstance(var, PredefId) else (
            aliases.get(var.name) if isinstance(var, c_ast.ID) else None)
        if gid is None and z_id is not None and z_id(var):
            gid = "idz"     # only where the caller asks for z (predefined._z_from_guard)
        if gid in ("idx", "idy", "idz"):
            out[gid] = bound if table[cond.op] == "<" else c_ast.BinaryOp(
                "+", bound, c_ast.Constant("int", "1"))
    return out


class GuardBounds(Analysis[dict[str, c_ast.Node]]):
    """The bounds on idx / idy of every top-level ``if`` of a kernel (a later guard's bound
    on an id replaces an earlier one's)."""

    requires = (ThreadIdAliases,)

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> dict:
        aliases = am.get(proc, ThreadIdAliases)
        bounds: dict[str, c_ast.Node] = {}
        for stmt in proc.body.block_items or []:
            if isinstance(stmt, c_ast.If):
                bounds.update(guard_bounds(stmt.cond, aliases, negated=is_return(stmt.iftrue)))
        return bounds
