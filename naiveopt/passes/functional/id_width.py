"""Id width: which global ids the kernel computes in 64 bits, so the output does too.

The IR's global ids (``idx``, ``idy``) are declared ``int`` by the postprocessor, which is
the kernel's own arithmetic where it writes ``int i = blockIdx.x * blockDim.x + threadIdx.x``
or ``int i = get_global_id(0)``. A kernel written for more than 2^31 threads (tensors of
more than 8 GiB of floats, ordinary on a 141 GB H200) says so instead:

* ``(int64_t)blockIdx.x * blockDim.x + threadIdx.x`` (the predefined pass reads the cast);
* ``size_t i = blockIdx.x * blockDim.x + threadIdx.x``: a 64-bit local holding the id
  (32-bit unsigned arithmetic in CUDA, exact up to 2^32 threads; OpenCL's get_global_id is
  a size_t);
* an OpenCL kernel that uses ``get_global_id(0)`` as it is (a size_t) rather than in an
  ``int``.

An ``int`` id there turns negative past 2^31 threads, and the kernel then writes before
its arrays or skips its elements; declared ``long long`` (OpenCL ``long``), the output
computes what the naive kernel computes, and more (a 32-bit unsigned id wraps at 2^32). The
block ids of such an axis are 64-bit too, and so are the locals the passes derive from them
(GProcedure.index_type) (a split output's row, the remapped block ids of
partition camping): a staged tile's rows ``A[(64 * bidx + r) * W + c]`` would wrap in int.
Thread ids within a block stay ``int``.
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure, PredefId
from ...ir.rewrite import walk
from ...ir.typenames import integer_type, is_wide_integer
from ..manager import Pass, PassContext


class IdWidth(Pass):
    name = "id-width"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses:
        why: dict[str, str] = {gid: "an operand cast to a 64-bit integer"
                               for gid in proc.wide_ids & {"idx", "idy"}}
        declared = {n.name: n.type for n, _ in walk(proc.body)
                    if isinstance(n, c_ast.Decl) and n.name}
        opencl = ctx.module.dialect == "opencl"
        for node, parent in walk(proc.body):
            if not (isinstance(node, PredefId) and node.name in ("idx", "idy")) or \
                    node.name in why:
                continue
            held = _holder(node, parent, declared)
            if held is not None and is_wide_integer(held):
                why[node.name] = "held in a 64-bit integer"
            elif held is None and opencl:
                why[node.name] = "get_global_id's size_t used as it is"
        # the block ids of a 64-bit axis too: the passes index by them (a staged tile's
        # ``A[(64 * bidx + r) * W + c]`` wraps in int)
        proc.wide_ids |= set(why) | {"bid" + gid[-1] for gid in why}
        if why:
            ctx.remark("analysis", self.name, proc, "; ".join(
                f"{gid} computed in 64 bits ({reason}): declared long long" for gid, reason
                in sorted(why.items())))
        return PreservedAnalyses.all()


def _holder(node: c_ast.Node, parent: c_ast.Node | None, declared: dict) -> c_ast.Node | None:
    """The integer type that ``node`` (an id) is converted to where it is read: a cast's, or
    the declared type of the local it initializes or is assigned to; None where it is read as
    it is (in arithmetic, an index, a comparison, a call)."""
    if isinstance(parent, c_ast.Cast) and parent.expr is node and integer_type(parent.to_type):
        return parent.to_type
    if isinstance(parent, c_ast.Decl) and parent.init is node:
        return parent.type if integer_type(parent.type) else c_ast.IdentifierType(["float"])
    if isinstance(parent, c_ast.Assignment) and parent.rvalue is node and \
            parent.op == "=" and isinstance(parent.lvalue, c_ast.ID) and \
            parent.lvalue.name in declared:
        t = declared[parent.lvalue.name]
        return t if integer_type(t) else c_ast.IdentifierType(["float"])
    return None
