"""A loop's start set just before it: ``unsigned int tid = blockIdx.x * blockDim.x +
threadIdx.x; for (; tid < n; tid += blockDim.x * gridDim.x)`` (and ``k = 0; for (; k < n;
k++)``), as tutorials write grid-stride loops and C code writes loops over a running index, is
the loop ``for (tid = ...; tid < n; ...)`` with ``unsigned int tid;`` before it.

Why: the loop passes read a loop's iterator and start from its header (analysis/loops.py);
with an empty init the iterator's start is a statement away, so the grid-stride loop stayed a
loop over an unknown start and the kernel was written unverified ("array shape unknown").
In the header, grid-stride and loop-iterators take the loop as they take a C89 loop.

The rewrite is exact: the statement setting the iterator is the one right before the loop in
the same block, and a loop's init runs once, right before its first test, as that statement
did. Only a loop whose step assigns the iterator is rewritten, and only from a declaration
with an initializer or a plain assignment of an integer local.
"""
from __future__ import annotations

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.rewrite import assigned_names, walk
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import declarations, is_integer, is_plain_local


class LoopInits(CanonicalizationPass):
    name = "loop-inits"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        integers = {name for name, decls in declarations(proc.body).items()
                    if all(is_plain_local(d) and is_integer(d) and "const" not in d.quals
                           for d in decls)}
        done = []
        for block in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Compound)]:
            items = block.block_items or []
            at = 1
            while at < len(items):
                loop, before = items[at], items[at - 1]
                name = _sets(before)
                if isinstance(loop, c_ast.For) and loop.init is None and name in integers \
                        and loop.next is not None and name in assigned_names(loop.next):
                    if isinstance(before, c_ast.Decl):
                        loop.init = c_ast.Assignment("=", c_ast.ID(name), before.init,
                                                     coord=before.coord)
                        before.init = None
                    else:
                        loop.init = before
                        del items[at - 1]
                        at -= 1
                    done.append(name)
                at += 1
        if done:
            self.applied(proc, ctx, f"{len(done)} loop(s) take the start set before them as "
                         "their init: " + ", ".join(done))
        return bool(done)


def _sets(stmt: c_ast.Node) -> str | None:
    """The local a declaration with an initializer or a plain assignment sets."""
    if isinstance(stmt, c_ast.Decl) and stmt.init is not None and \
            not isinstance(stmt.init, c_ast.InitList):
        return stmt.name
    if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
            isinstance(stmt.lvalue, c_ast.ID):
        return stmt.lvalue.name
    return None
