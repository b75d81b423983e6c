"""Predefined ids (paper 002, functional pass (2)).

Rewrites CUDA built-ins into the IR's unified ids: ``threadIdx.x`` -> tidx, ``blockIdx.y`` ->
bidy, ``blockDim.x`` -> blockDimX, and ``blockIdx.x*blockDim.x+threadIdx.x`` in any operand order
-> idx. It also reads the thread space the kernel needs from its bounds guard
(``if (i < n)`` / ``if (i >= n) return;`` with i = idx) when no #define or pragma gave it.

Two more facts make every naive thread part of the launch (issue 11):

* an axis the kernel indexes by ``blockIdx`` alone (``int row = blockIdx.y;`` with no
  threadIdx.y, blockDim.y or gridDim.y) was launched with one thread per block along it; with
  a block of 1 there ``blockIdx.y == blockIdx.y * blockDim.y + threadIdx.y``, so it is
  rewritten to the global id idy (GPragma.block_id_axes records it: the naive launch keeps
  block 1 there, launch.default_block) and the passes may then reshape it like any other;
* z ids (blockIdx.z, threadIdx.z, get_global_id(2)...) stay CUDA built-ins that the passes do
  not transform (launch.py); the z extent is read from a guard on blockIdx.z (or on
  blockIdx.z * blockDim.z + threadIdx.z, or a local defined once as either).
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.guards import GuardBounds, guard_bounds, is_id, is_return
from ...ir import GProcedure, PredefId, PREDEFINED_IDS
from ...ir.cgen import to_c
from ...launch import block_z, is_z_builtin, z_used
from ...ir.rewrite import assigned_names, identifiers, map_nodes, walk
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


class Predefined(Pass):
    name = "predefined"
    requires = ()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        def fn(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, c_ast.StructRef) and node.type == "." and \
                    isinstance(node.name, c_ast.ID) and isinstance(node.field, c_ast.ID):
                key = (node.name.name, node.field.name)
                if key in _BUILTIN_IDS:
                    return PredefId(_BUILTIN_IDS[key], node.coord)
            if isinstance(node, c_ast.Cast) and isinstance(node.expr, PredefId) and \
                    to_c(node.to_type) == "int":
                return node.expr          # ids are int already: (int)get_global_id(0)
            gid = _global_id(node)
            return PredefId(gid, node.coord) if gid else node

        map_nodes(proc.body, fn)
        self._block_id_axes(proc, ctx)
        ctx.am.tree_changed(proc)           # the guards are read below, in the new ids
        used = sorted({n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)})
        taken = identifiers(proc.func)
        for name in used:
            var, k = name, 0
            while var in taken:
                k += 1
                var = f"{name}_{k}"
            proc.predefined_names[name] = var
            taken.add(var)
        ctx.remark("analysis", self.name, proc,
                   "thread ids: " + (", ".join(used) if used else "none"))
        self._thread_space_from_guard(proc, ctx)
        self._z_from_guard(proc, ctx)

    def _block_id_axes(self, proc: GProcedure, ctx: PassContext) -> None:
        """Rewrite an axis indexed by blockIdx alone into its global id (module docstring)."""
        used = _ids_used(proc)
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
        for stmt in proc.body.block_items or []:
            if isinstance(stmt, c_ast.If):
                found = guard_bounds(stmt.cond, aliases, negated=is_return(stmt.iftrue),
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

    def _thread_space_from_guard(self, proc: GProcedure, ctx: PassContext) -> None:
        if proc.pragma.global_dim != (None, None):
            return
        bounds = {k: to_c(v) for k, v in ctx.am.get(proc, GuardBounds).items()}
        if bounds:
            proc.pragma.global_dim = (bounds.get("idx"), bounds.get("idy") or (
                "1" if "idy" not in _ids_used(proc) else None))
            proc.pragma.global_dim_source = "guard"
            ctx.remark("analysis", self.name, proc, "thread space from bounds guard: "
                       f"({proc.pragma.global_dim[0]}, {proc.pragma.global_dim[1]})")


def _ids_used(proc: GProcedure) -> set[str]:
    return {n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)}


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


__all__ = ["Predefined", "PREDEFINED_IDS"]
