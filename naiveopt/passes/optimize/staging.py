"""Helpers shared by the passes that stage data through shared memory."""
from __future__ import annotations

import sympy
from pycparser import c_ast

from ...ir import GProcedure, MemoryExpression
from ..manager import PassContext, reanalyse


def coalescing(m: MemoryExpression) -> str:
    """'coalesced', 'broadcast', 'uncoalesced' or 'unresolved' for neighbouring threads in x."""
    d = m.decomposition
    if not d.resolved:
        return "unresolved index"
    stride = sympy.simplify(d.coefficient("idx") + d.coefficient("tidx"))
    if stride == 0:
        return "broadcast (same address across a warp)"
    if stride == 1:
        return "coalesced (unit stride in x)"
    return "uncoalesced"


def staging_of(proc: GProcedure, m: MemoryExpression, kind: str):
    """A new Staging (tiling.py) for the read ``m`` of ``kind``: a 2-D access is staged by its
    ``(y, x)`` form; a 'vec' read (``A[k + c]``, the same for every thread, perhaps of a 1-D
    array) as one row indexed by its flat index."""
    from .tiling import VEC, Staging

    elem = proc.param(m.array).base_type
    if kind == VEC:
        return Staging(m.array, VEC, sympy.Integer(0), m.index, sympy.Integer(0), elem)
    return Staging(m.array, kind, m.two_d[0], m.two_d[1], m.width, elem)


def fresh(taken: set[str], base: str) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def shared_array(name: str, elem_type: str, dims: list[int]) -> c_ast.Decl:
    """``__shared__ elem_type name[d0][d1]...;``"""
    node: c_ast.Node = c_ast.TypeDecl(name, [], None, c_ast.IdentifierType([elem_type]))
    for dim in reversed(dims):
        node = c_ast.ArrayDecl(node, c_ast.Constant("int", str(dim)), [])
    return c_ast.Decl(name, [], [], ["__shared__"], [], node, None, None)


def adopt(proc: GProcedure, new: GProcedure, ctx: PassContext) -> None:
    """Take over a transformed copy's tree and launch facts, and redo the analyses on it."""
    proc.func = new.func
    proc.launch_block = new.launch_block
    proc.coarsen = new.coarsen
    proc.launch_multiple = new.launch_multiple
    proc.resources = new.resources
    reanalyse(proc, ctx)
