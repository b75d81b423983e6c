"""Postprocessor (paper 002, functional pass (6)): GPU IR back to plain CUDA.

Predefined ids become local variables declared at the top of the kernel
(``int idx = blockIdx.x * blockDim.x + threadIdx.x;``), named so they clash with nothing in the
kernel (the predefined pass chose the names).
"""
from __future__ import annotations

from pycparser import c_ast

from ...ir import GProcedure, PredefId
from ...ir.rewrite import map_nodes, walk
from ..manager import Pass, PassContext
from .builtins import cuda_builtin


def predefined_value(name: str, wide: bool = False) -> c_ast.Node:
    """The CUDA expression a predefined id stands for (``wide``: a global id computed in 64
    bits, ``(long long)blockIdx.x * blockDim.x + threadIdx.x``)."""
    axis = "x" if name.endswith(("x", "X")) else "y"
    if name in ("idx", "idy"):
        block = cuda_builtin("blockIdx", axis)
        if wide:
            block = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                None, [], None, c_ast.IdentifierType(["long", "long"]))), block)
        return c_ast.BinaryOp("+", c_ast.BinaryOp("*", block, cuda_builtin("blockDim", axis)),
                              cuda_builtin("threadIdx", axis))
    struct = {"tid": "threadIdx", "bid": "blockIdx", "blockDim": "blockDim",
              "gridDim": "gridDim"}[name[:-1]]
    return cuda_builtin(struct, axis)


def lower_predefined(proc: GProcedure) -> None:
    """Replace PredefId nodes by variables and declare those variables first in the body."""
    used = [n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)]
    order = [name for name in ("idx", "idy", "tidx", "tidy", "bidx", "bidy", "blockDimX",
                               "blockDimY", "gridDimX", "gridDimY") if name in used]
    names = proc.predefined_names

    def fn(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, PredefId):
            return c_ast.ID(names.get(node.name, node.name))
        return node

    map_nodes(proc.body, fn)
    decls = [c_ast.Decl(names.get(n, n), ["const"], [], [], [],
                        c_ast.TypeDecl(names.get(n, n), ["const"], None, c_ast.IdentifierType(
                            proc.index_type(n).split())),
                        predefined_value(n, n in proc.wide_ids), None) for n in order]
    proc.body.block_items = decls + list(proc.body.block_items or [])


def drop_stray_loop_hints(proc: GProcedure) -> list[str]:
    """Remove the ``#pragma`` lines (``#pragma unroll 4``, kept from the input before their
    loops) that a pass left without a loop right after them; returns the pragmas dropped."""
    loops = (c_ast.For, c_ast.While, c_ast.DoWhile)
    dropped = []
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Compound) and node.block_items:
            items = node.block_items
            kept = [item for i, item in enumerate(items)
                    if not isinstance(item, c_ast.Pragma)
                    or (i + 1 < len(items) and isinstance(items[i + 1], loops))]
            dropped += [item.string for item in items if item not in kept]
            node.block_items = kept
    return dropped


class Postprocessor(Pass):
    name = "postprocessor"
    requires = ("predefined",)

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        lower_predefined(proc)
        for pragma in sorted(set(drop_stray_loop_hints(proc))):
            ctx.remark("analysis", self.name, proc, f"'#pragma {pragma}' dropped: the loop it "
                       "preceded was transformed away")
