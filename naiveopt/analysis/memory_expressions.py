"""Memory expressions (paper 002, functional pass (4)): every array access of a kernel.

Finds every array access, decides read/write, converts its index into sympy through
single-definition locals (``int row = idx; ... A[row*W + i]``), decomposes it into constant,
predefined, loop and unresolved terms, and recovers the 2-D form ``A(y, x)`` from ``y*W + x``.
The optimization passes work from these objects.
"""
from __future__ import annotations

from pycparser import c_ast

from ..ir import GLoop, GProcedure, MemoryExpression
from ..ir.cgen import to_c
from ..ir.references import reference_positions
from ..ir.rewrite import walk
from ..ir.symbolic import SymbolEnv, decompose, recover_2d, to_sympy
from ..ir.async_copy import AsyncCopy
from ..ir.vector import VectorLoad, VectorStore
from ..verify.expr import evaluate
from .loops import LoopAnalysis
from .manager import Analysis, AnalysisManager
from .symbols import SymbolAnalysis


class MemoryExpressionAnalysis(Analysis[list[MemoryExpression]]):
    """The accesses of a kernel in source order. Each loop of the kernel's LoopAnalysis gets
    the accesses inside it in its ``memory_expressions`` (GLoop keeps the accesses it affects,
    paper 002 Fig. 3): the one analysis that writes into another's result."""

    requires = (LoopAnalysis, SymbolAnalysis)

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> list[MemoryExpression]:
        module = am.module
        env = am.get(proc, SymbolAnalysis).env()
        # file-scope data (GModule.globals: read-only, the front end rejects writes) is
        # ``constant`` like a ``__constant`` parameter: the passes that move or rewrite
        # accesses take only ``global`` ones, so its reads stay as written
        local_arrays = {g.name: ("constant", g.extents) for g in module.globals if g.dims}
        local_arrays.update(declared_arrays(proc, module.macros))
        loops = am.get(proc, LoopAnalysis)
        loop_of = {id(lp.node): lp for lp in loops}
        out: list[MemoryExpression] = []
        for lp in loops:
            lp.memory_expressions = []
        _visit(proc.body, None, [], proc, env, local_arrays, loop_of, out,
               _bound_to_references(proc.body, module.helpers) | _stored_by_component(proc.body))
        return out


def _stored_by_component(body: c_ast.Node) -> set[int]:
    """The array elements ``body`` stores a component of (``pos[i].x += v.x * dt``,
    ``s[t].w = 0``, ``++count[b].y``): written, and read, as the element's other components
    keep their values (so that no pass takes the element for one it overwrites whole)."""
    out = set()
    for node, _ in walk(body):
        target = node.lvalue if isinstance(node, c_ast.Assignment) else \
            node.expr if isinstance(node, c_ast.UnaryOp) and \
            node.op in ("++", "--", "p++", "p--", "&") else None
        if not isinstance(target, c_ast.StructRef):
            continue
        while isinstance(target, c_ast.StructRef) and target.type == ".":
            target = target.name
        if isinstance(target, c_ast.ArrayRef):
            out.add(id(target))
    return out


def _bound_to_references(body: c_ast.Node, helpers: list[c_ast.FuncDef]) -> set[int]:
    """The array elements ``body`` passes to a helper's non-const reference parameter
    (``swap(s[i], s[j])``, ``set(out[i], v)``; ir/references.py): the helper may write
    them, and read them."""
    positions = reference_positions(helpers)
    if not positions:
        return set()
    return {id(node.args.exprs[k]) for node, _ in walk(body)
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)
            and node.name.name in positions and node.args is not None
            for k in positions[node.name.name] if k < len(node.args.exprs)}


def store_in_ir(proc: GProcedure, am: AnalysisManager) -> None:
    """Store the loops and memory expressions of ``proc`` in the IR (GProcedure.loops,
    .memory_expressions), computing what the manager does not hold."""
    proc.loops = am.get(proc, LoopAnalysis)
    proc.memory_expressions = am.get(proc, MemoryExpressionAnalysis)


def _visit(node: c_ast.Node, parent: c_ast.Node | None, loops: list[GLoop], proc: GProcedure,
           env: SymbolEnv, local_arrays: dict[str, tuple[str, list[int]]],
           loop_of: dict[int, GLoop], out: list[MemoryExpression],
           references: set[int] = frozenset()) -> None:
    if isinstance(node, c_ast.ArrayRef):
        base, indices = _flatten(node)
        space = _space(base, proc, local_arrays)
        if space is not None:
            m = _memory_expression(node, parent, base, indices, space, loops, env, local_arrays,
                                   id(node) in references)
            out.append(m)
            for lp in loops:
                lp.memory_expressions.append(m)
            for index in indices:   # indices may themselves read arrays
                _visit(index, node, loops, proc, env, local_arrays, loop_of, out, references)
            return
    inner = loops + [loop_of[id(node)]] if id(node) in loop_of else loops
    for _, child in node.children():
        _visit(child, node, inner, proc, env, local_arrays, loop_of, out, references)


def _memory_expression(node, parent, base, indices, space, loops, env, local_arrays,
                       by_reference=False):
    is_write = by_reference or (
        isinstance(parent, c_ast.Assignment) and parent.lvalue is node) or (
        isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++", "p--")) or (
        isinstance(parent, VectorStore) and parent.ref is node) or (
        isinstance(parent, AsyncCopy) and parent.dst is node) or (
        isinstance(parent, c_ast.UnaryOp) and parent.op == "&")   # an atomic's element
    is_read = not is_write or by_reference or \
        (isinstance(parent, c_ast.Assignment) and parent.op != "=") \
        or isinstance(parent, c_ast.UnaryOp)
    lanes = parent.width if isinstance(parent, (VectorLoad, VectorStore)) else 1
    env = env.scoped({lp.iterator for lp in loops if lp.canonical and lp.iterator})
    parts = [to_sympy(i, env) for i in indices]
    if len(parts) == 1:
        index = parts[0]
        two_d = recover_2d(index, env) if space == "global" else None
        yx, width = two_d if two_d else (None, None)
    else:
        dims = local_arrays[base][1]
        index = parts[0]
        for part, dim in zip(parts[1:], dims[1:]):
            index = index * dim + part
        yx, width = ((parts[-2], parts[-1]), dims[-1]) if len(parts) == 2 else (None, None)
    canon = [lp.iterator for lp in loops if lp.canonical and lp.iterator]
    return MemoryExpression(array=base, node=node, is_read=is_read, is_write=is_write,
                            space=space, index=index, decomposition=decompose(index, env),
                            two_d=yx, width=width, loops=canon, vector_width=lanes)


def _flatten(node: c_ast.ArrayRef) -> tuple[str | None, list[c_ast.Node]]:
    indices = []
    while isinstance(node, c_ast.ArrayRef):
        indices.insert(0, node.subscript)
        node = node.name
    return (node.name if isinstance(node, c_ast.ID) else None), indices


def declared_arrays(proc: GProcedure, macros: dict[str, str]
                    ) -> dict[str, tuple[str, list[int]]]:
    """The arrays ``proc`` declares: name -> ("shared" or "local", dims), 0 for a dim that
    is not a constant."""
    out = {}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.ArrayDecl):
            dims, t = [], node.type
            while isinstance(t, c_ast.ArrayDecl):
                try:        # 0: unknown (extern __shared__ s[] has its size at launch)
                    dims.append(0 if t.dim is None else
                                int(evaluate(to_c(t.dim), {k: int(evaluate(v, {}))
                                                           for k, v in macros.items()})))
                except ValueError:
                    dims.append(0)
                t = t.type
            out[node.name] = ("shared" if "__shared__" in node.storage else "local", dims)
    return out


def _space(base: str | None, proc: GProcedure, local_arrays) -> str | None:
    if base is None:
        return None
    param = proc.param(base)
    if param is not None and param.is_pointer:
        return {"constant": "constant", "local": "shared"}.get(param.address_space, "global")
    if base in local_arrays:
        return local_arrays[base][0]
    return None
