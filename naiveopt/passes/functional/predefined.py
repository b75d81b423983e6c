"""Predefined ids (paper 002, functional pass (2)).

Rewrites CUDA built-ins into the IR's unified ids: ``threadIdx.x`` -> tidx, ``blockIdx.y`` ->
bidy, ``blockDim.x`` -> blockDimX, and ``blockIdx.x*blockDim.x+threadIdx.x`` in any operand order
-> idx. The thread space is read later, from the canonical form of the kernel (the
thread-space pass, thread_space.py).

Two more facts make every naive thread part of the launch (issue 11):

* an axis the kernel indexes by ``blockIdx`` alone (``int row = blockIdx.y;`` with no
  threadIdx.y, blockDim.y or gridDim.y) was launched with one thread per block along it; with
  a block of 1 there ``blockIdx.y == blockIdx.y * blockDim.y + threadIdx.y``, so it is
  rewritten to the global id idy (GPragma.block_id_axes records it: the naive launch keeps
  block 1 there, launch.default_block) and the passes may then reshape it like any other;
* z ids (blockIdx.z, threadIdx.z, get_global_id(2)...) stay CUDA built-ins that the passes do
  not transform (launch.py).
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.guards import is_id
from ...ir import GProcedure, PredefId, PREDEFINED_IDS
from ...ir.cgen import to_c
from ...ir.rewrite import identifiers, map_nodes, walk
from ..manager import Pass, PassContext

_BUILTIN_IDS = {("threadIdx", "x"): "tidx", ("threadIdx", "y"): "tidy",
                ("blockIdx", "x"): "bidx", ("blockIdx", "y"): "bidy",
                ("blockDim", "x"): "blockDimX", ("blockDim", "y"): "blockDimY",
                ("gridDim", "x"): "gridDimX", ("gridDim", "y"): "gridDimY"}
_GLOBAL_IDS = {"x": ("bidx", "blockDimX", "tidx", "idx"), "y": ("bidy", "blockDimY", "tidy", "idy")}


def _global_id(node: c_ast.Node) -> str | None:
    """'idx'/'idy' if node is block*dim + thread in some operand order."""
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "+"):
        return None
    for mul, tid in ((node.left, node.right), (node.right, node.left)):
        if not (isinstance(mul, c_ast.BinaryOp) and mul.op == "*"):
            continue
        for bid, dim, thread, result in _GLOBAL_IDS.values():
            if is_id(tid, thread) and ((is_id(mul.left, bid) and is_id(mul.right, dim)) or
                                       (is_id(mul.left, dim) and is_id(mul.right, bid))):
                return result
    return None


def to_predefined(node: c_ast.Node) -> c_ast.Node:
    """``node`` with CUDA's built-in ids as the IR's (module docstring); also for a helper's
    value written into a kernel (canonicalize/inline_helpers.py)."""
    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.StructRef) and n.type == "." and \
                isinstance(n.name, c_ast.ID) and isinstance(n.field, c_ast.ID):
            key = (n.name.name, n.field.name)
            if key in _BUILTIN_IDS:
                return PredefId(_BUILTIN_IDS[key], n.coord)
        if isinstance(n, c_ast.Cast) and isinstance(n.expr, PredefId) and \
                to_c(n.to_type) == "int":
            return n.expr          # ids are int already: (int)get_global_id(0)
        gid = _global_id(n)
        return PredefId(gid, n.coord) if gid else n

    return map_nodes(node, fn)


class Predefined(Pass):
    name = "predefined"
    requires = ()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        to_predefined(proc.body)
        self._block_id_axes(proc, ctx)
        used = name_ids(proc)
        ctx.remark("analysis", self.name, proc,
                   "thread ids: " + (", ".join(used) if used else "none"))

    def _block_id_axes(self, proc: GProcedure, ctx: PassContext) -> None:
        """Rewrite an axis indexed by blockIdx alone into its global id (module docstring)."""
        used = ids_used(proc)
        axes = ""
        for axis, block_dim in zip("xy", proc.pragma.block_dim):
            bid, dim, tid, gid = _GLOBAL_IDS[axis]
            grid = "gridDim" + axis.upper()
            if bid in used and not used & {dim, tid, gid, grid} and block_dim in (None, "1"):
                axes += axis
        if not axes:
            return

        def fn(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, PredefId) and node.name in ("bidx", "bidy") and \
                    node.name[-1] in axes:
                return PredefId("id" + node.name[-1], node.coord)
            return node

        map_nodes(proc.body, fn)
        proc.pragma.block_id_axes = axes
        ctx.remark("analysis", self.name, proc, "indexed by blockIdx alone along "
                   f"{' and '.join(axes)} (one thread per block there in the naive launch): "
                   "read as the global id, " + ", ".join(f"blockIdx.{a} -> id{a}"
                                                         for a in axes))


def name_ids(proc: GProcedure) -> list[str]:
    """Give each predefined id the kernel uses a C name that no identifier of the kernel
    takes (``idx``, else ``idx_1``...): the postprocessor declares them under these names.
    Ids named before keep their names. Returns the ids used, sorted."""
    used = sorted({n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)})
    taken = identifiers(proc.func) | set(proc.predefined_names.values())
    for name in used:
        if name in proc.predefined_names:
            continue
        var, k = name, 0
        while var in taken:
            k += 1
            var = f"{name}_{k}"
        proc.predefined_names[name] = var
        taken.add(var)
    return used


def ids_used(proc: GProcedure) -> set[str]:
    """The predefined ids the kernel uses."""
    return {n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)}


__all__ = ["Predefined", "PREDEFINED_IDS"]
