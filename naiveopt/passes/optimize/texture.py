"""Texture memory (``--memory texture``; paper 002, sect. 4: the texture-memory pass choice).

Arrays a kernel only reads can be read through the texture path instead of plain global loads:
a separate read-only cache with its own bandwidth, which tolerates uncoalesced and scattered
reads better than L1 on older GPUs and never needs shared-memory staging. With texture memory
the paper does not coalesce through shared memory and does not merge blocks (coalesce and
thread-block-merge decline); it always vectorizes (vectorization groups these fetches into
wider texels) and keeps thread merge.

The pass rewrites every read ``A[i]`` of such an array into a texture fetch (``TexFetch``,
printed as ``tex1Dfetch<float>(A, i)`` in CUDA and ``read_imagef(A, i).x`` in OpenCL) and the
parameter into a ``cudaTextureObject_t`` / ``read_only image1d_buffer_t`` (ir/textures.py).
1-D fetches of linear memory are what a drop-in replacement can use: the host keeps its
cudaMalloc'd / clCreateBuffer'd array and wraps it in a texture object or a 1-D buffer image
(the launch sidecar says how); tex2D would need pitched or cudaArray storage, i.e. a different
host allocation.

An array qualifies when the kernel never writes it, uses it only through subscripts (not
passed to a helper, no pointer arithmetic), its element type has a texture format (float,
int), it is not in OpenCL constant memory (already cached), and its indices have no side
effects. As with ``__restrict__``, the array is assumed not to be written through another
argument during the kernel (the texture cache is not coherent with such writes).
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure, MemoryExpression
from ...ir.nodes import TEXTURE_ELEMENTS, TexFetch
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.textures import bind_textures, texture_names
from ..manager import OptimizationPass, PassContext, reanalyse


class Texture(OptimizationPass):
    name = "texture"
    lane_safe = True
    requires = ("memory-expressions",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if ctx.options.memory != "texture":
            ctx.remark("missed", self.name, proc, "read-only arrays stay in global memory "
                       "(--memory global)")
            return PreservedAnalyses.all()
        if proc.host_launched:
            ctx.remark("missed", self.name, proc, "launched by this file's host code, which "
                       "passes arrays, not the texture objects a texture read needs")
            return PreservedAnalyses.all()
        chosen: dict[str, list[MemoryExpression]] = {}
        for param in proc.arrays:
            reads = [m for m in proc.memory_expressions if m.array == param.name]
            why = self._obstacle(proc, param.name, reads)
            if why:
                ctx.remark("missed", self.name, proc, f"{param.name}: not read through a "
                           f"texture: {why}")
                continue
            chosen[param.name] = reads
        if not chosen:
            ctx.remark("missed", self.name, proc, "no array qualifies for texture memory")
            return PreservedAnalyses.all()
        targets = {id(m.node): m.array for reads in chosen.values() for m in reads}

        def fetch(node: c_ast.Node) -> c_ast.Node:
            array = targets.get(id(node))
            if array is None:
                return node
            return TexFetch(array, node.subscript, 1, proc.param(array).base_type,
                            coord=node.coord)

        map_nodes(proc.body, fetch)
        bind_textures(proc, "cuda")
        reanalyse(proc, ctx)
        for array, reads in chosen.items():
            ctx.remark("applied", self.name, proc, f"{array}: {len(reads)} read(s) through a "
                       f"texture (tex1Dfetch<{proc.param(array).base_type}> on a texture "
                       "object over the linear buffer; OpenCL: a 1-D buffer image)")

    @staticmethod
    def _obstacle(proc: GProcedure, array: str, accesses: list[MemoryExpression]) -> str:
        """Why ``array`` cannot be read through a texture ('' when it can)."""
        param = proc.param(array)
        if param.address_space == "constant":
            return "in constant memory (already cached)"
        if param.base_type not in TEXTURE_ELEMENTS:
            return f"element type {param.base_type} has no texture format here"
        if any(m.is_write for m in accesses):
            return "written by the kernel"
        if any(len(_subscripts(m.node)) != 1 for m in accesses):
            return "indexed as a multi-dimensional array"
        bases = {id(m.node.name) for m in accesses}
        if any(isinstance(n, c_ast.ID) and n.name == array and id(n) not in bases
               for n, _ in walk(proc.body)):
            return "used other than by subscripts (passed to a function, or pointer " \
                "arithmetic)"
        if not accesses:
            return "not read"
        if any(_has_side_effects(m.node.subscript) for m in accesses):
            return "an index has side effects"
        clash = (texture_names(array) - {array}) & identifiers(proc.func)
        if clash:
            return f"the name {sorted(clash)[0]} is taken"
        return ""


def _subscripts(node: c_ast.ArrayRef) -> list[c_ast.Node]:
    subs = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    return subs


def _has_side_effects(node: c_ast.Node) -> bool:
    return any(isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in (
        "++", "--", "p++", "p--")) for n, _ in walk(node))
