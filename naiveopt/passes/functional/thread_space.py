"""Thread space (paper 002, part of functional pass (2)): how many threads the naive kernel
needs along x, y and z, where no #define, pragma or metadata said so.

It is read from the canonical kernel, so it runs after the canonicalization passes: from the
bounds guard (``if (i < n)`` / ``if (i >= n) return;`` with i = idx, or i = idx + 1 bounded by
``i <= n``), else from a grid-stride loop that the kernel's ids serve alone (any launch runs
it, and one of n threads does a single element each: the thread space is its bound n); the z
extent from a guard on blockIdx.z (or on blockIdx.z * blockDim.z + threadIdx.z, or a local
defined once as either).
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.guards import GuardBounds, guard_bounds, row_bound, thread_guards
from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure
from ...ir.cgen import to_c
from ...ir.rewrite import assigned_names, walk
from ...launch import block_z, is_z_builtin, z_used
from ..manager import Pass, PassContext
from .canonicalize.grid_stride import find_grid_stride
from .predefined import ids_used


class ThreadSpace(Pass):
    name = "thread-space"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        self._from_guard(proc, ctx)
        self._from_grid_stride(proc, ctx)
        self._z_from_guard(proc, ctx)

    def _from_guard(self, proc: GProcedure, ctx: PassContext) -> None:
        if proc.pragma.global_dim != (None, None):
            return
        bounds = {k: to_c(v) for k, v in ctx.am.get(proc, GuardBounds).items()}
        row = row_bound(proc) if not bounds and "idy" not in ids_used(proc) else None
        if row is not None:
            # ``row = idx / W; if (row < H)``: the threads past H * W do nothing
            height, width = row
            bounds = {"idx": to_c(c_ast.BinaryOp("*", height, width))}
        if bounds:
            proc.pragma.global_dim = (bounds.get("idx"), bounds.get("idy") or (
                "1" if "idy" not in ids_used(proc) else None))
            proc.pragma.global_dim_source = "guard"
            ctx.remark("analysis", self.name, proc, "thread space from bounds guard: "
                       f"({proc.pragma.global_dim[0]}, {proc.pragma.global_dim[1]})")

    def _from_grid_stride(self, proc: GProcedure, ctx: PassContext) -> None:
        if proc.pragma.global_dim != (None, None):
            return
        loop, _ = find_grid_stride(proc)
        if loop is None or loop.why_not_sole_user:
            return
        proc.pragma.global_dim = (to_c(loop.bound), "1")
        proc.pragma.global_dim_source = "grid-stride"
        ctx.remark("analysis", self.name, proc, "thread space from the grid-stride loop over "
                   f"{loop.iterator}: ({proc.pragma.global_dim[0]}, 1)")

    def _z_from_guard(self, proc: GProcedure, ctx: PassContext) -> None:
        if proc.pragma.global_dim_z is not None or not z_used(proc):
            return
        one = block_z(proc) == 1
        aliases = {}
        counts = assigned_names(proc.body)
        for node, _ in walk(proc.body):
            if isinstance(node, c_ast.Decl) and node.init is not None and \
                    counts.get(node.name) == 1 and _is_z_id(node.init, one):
                aliases[node.name] = "idz"
        for stmt, negated in thread_guards(proc):
            found = guard_bounds(stmt.cond, aliases, negated=negated,
                                 z_id=lambda n: _is_z_id(n, one))
            if "idz" in found:
                proc.pragma.global_dim_z = to_c(found["idz"])
        if proc.pragma.global_dim_z is not None:
            ctx.remark("analysis", self.name, proc, "z extent from bounds guard: "
                       f"{proc.pragma.global_dim_z}")
        else:
            ctx.remark("analysis", self.name, proc, "the kernel reads z ids but no guard, "
                       "metadata or pragma gives the z extent: launched over globalDimZ; "
                       "say '#pragma naiveopt threads(X, Y, Z)'")


def _is_z_id(node: c_ast.Node, block_z_one: bool) -> bool:
    """Whether ``node`` is the global z id: blockIdx.z * blockDim.z + threadIdx.z in any
    operand order, or blockIdx.z alone where the block has one thread along z."""
    while isinstance(node, c_ast.Cast):
        node = node.expr

    def named(n: c_ast.Node, base: str) -> bool:
        return is_z_builtin(n) and n.name.name == base

    if block_z_one and named(node, "blockIdx"):
        return True
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "+"):
        return False
    for mul, tid in ((node.left, node.right), (node.right, node.left)):
        if named(tid, "threadIdx") and isinstance(mul, c_ast.BinaryOp) and mul.op == "*" and \
                {(named(a, "blockIdx"), named(b, "blockDim")) for a, b in
                 ((mul.left, mul.right), (mul.right, mul.left))} & {(True, True)}:
            return True
    return False
