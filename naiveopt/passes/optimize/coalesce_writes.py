"""Coalescing a transposed write through a padded shared tile (the classic transpose).

A kernel whose output write moves by a non-unit stride between neighbouring threads in x —
``out(idx, idy) = value`` with ``out[idx*H + idy]`` — cannot be fixed by staging reads. Each
square block instead writes its values into a shared tile, waits, and writes the tile back
transposed: thread (tx, ty) stores the value of thread (ty, tx), so neighbouring threads store
neighbouring addresses:

    if (active) { ...; tile[tidy][tidx] = value; }
    __syncthreads();
    if (bidx*B + tidy < W && bidy*B + tidx < H)
        out[(bidx*B + tidy)*H + bidy*B + tidx] = tile[tidx][tidy];

The tile rows are padded by the gcd rule so reading a column is conflict-free.

Preconditions: the kernel's last guarded statement is the only write to that array, its 2-D
form is (idx + c0, idy + c1), the guard bounds idx and idy and nothing else, and nothing before
the write has side effects in global memory.
"""
from __future__ import annotations

import copy

import sympy
from pycparser import c_ast

from ...analysis.coalescing import coalescing
from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis
from ...analysis.symbols import SymbolAnalysis
from ...ir import GProcedure, PredefId
from ...ir.build import fresh, from_sympy, shared_array, statements
from ...ir.elements import element_bytes
from ...ir.rewrite import identifiers, walk
from ...ir.symbolic import decompose
from ...launch import allowed_blocks, default_block, relied_multiple
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .banks import interleaved, pad_and_degree
from .selection import Variant, choose
from .shape import contains_barrier

IDX, IDY = sympy.Symbol("idx", integer=True), sympy.Symbol("idy", integer=True)


class CoalesceWrites(OptimizationPass):
    name = "coalesce-writes"
    requires = ("memory-expressions", "nvcc")

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        writes = [m for m in proc.memory_expressions if m.space == "global" and m.is_write]
        bad = [m for m in writes if coalescing(m) == "uncoalesced"]
        if not bad:
            ctx.remark("missed", self.name, proc, "no global write moves by a non-unit stride "
                       "between neighbouring threads")
            return PreservedAnalyses.all()
        m = bad[0]
        why = self._obstacle(proc, ctx, m, writes)
        if why:
            ctx.remark("missed", self.name, proc, f"{m.describe()}: uncoalesced write, not "
                       f"staged: {why}")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        variants = []
        guarded = ctx.am.get(proc, ShapeAnalysis)[0].guard is not None
        squares = [(side, side) for side in target.candidates.transpose_sides]
        for side, _ in allowed_blocks(proc, squares, guarded):
            pad = _pad(side, target)
            variants.append(Variant(f"tile {side}x{side}", (side, side), (side,),
                                    shared_bytes=side * (side + pad) *
                                    element_bytes(proc.param(m.array).base_type)))
        if not variants:
            ctx.remark("missed", self.name, proc, "no square tile divides the kernel's "
                       f"unguarded launch (naive block {default_block(proc)})")
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants,
                      lambda v: _transform(proc, m, v.block[0], target, ctx))
        if best is None:
            ctx.remark("missed", self.name, proc, "no tile fits the target")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        side = best.block[0]
        pad, order = _layout(side, target)
        rows = f" (rows {order[1]} apart in the tile for each warp's {order[0]} rows, " \
            "against bank conflicts)" if order else ""
        ctx.remark("applied", self.name, proc, f"{m.describe()}: uncoalesced write "
                   f"transposed through s_{m.array}[{side}][{side + pad}]{rows}; "
                   f"{best.describe()}")

    @staticmethod
    def _obstacle(proc: GProcedure, ctx: PassContext, m, writes) -> str:
        if any(w.array == m.array and w is not m for w in writes) or any(
                r.array == m.array and not r.is_write for r in proc.memory_expressions):
            return "the array is accessed elsewhere in the kernel"
        if m.is_read or m.loops:
            return "the write is a read-modify-write or inside a loop"
        if contains_barrier(proc.body):
            return "the kernel already has barriers"
        shape, why = ctx.am.get(proc, ShapeAnalysis)
        if shape is None:
            return why
        last = shape.body[-1] if shape.body else None
        if not (isinstance(last, c_ast.Assignment) and last.lvalue is m.node and
                last.op == "="):
            return "the write is not the last statement of the kernel"
        if any(isinstance(n, (c_ast.Return, c_ast.Break)) for s in shape.body for n, _ in
               walk(s)) or any(w is not m for w in writes):
            return "other writes or early exits before it"
        if shape.guard is not None and (set(shape.bounds) != {"idx", "idy"} or
                                        _comparisons(shape.guard) != 2):
            return "the guard is not 'idx < X && idy < Y'"
        if m.two_d is None:
            return "no 2-D form"
        env = ctx.am.get(proc, SymbolAnalysis).env()
        dy, dx = decompose(m.two_d[0], env), decompose(m.two_d[1], env)
        if not (dy.resolved and dx.resolved) or dy.loop or dx.loop or \
                dy.predefined != {"idx": 1} or dx.predefined != {"idy": 1}:
            return f"the write is not out(idx + c, idy + c) but {m.describe()}"
        return ""


def _layout(side: int, target) -> tuple[int, tuple[int, int] | None]:
    """Pad and row order of a side x side tile stored row-wise and read column-wise by warps
    of lanes (tx, ty) = (lane % side, lane // side): thread row ty is tile row
    interleaved(ty, *order) (banks.interleaved), or row ty where order is None.

    A warp of a block narrower than the warp stores several rows (two of 16 in a 16x16
    block); one pitch apart, no pad keeps those stores and the column reads both
    conflict-free (16x16 with pitch 18: 2-way stores; 17: 2-way stores). Interleaved rows
    ``spacing`` pitches apart can be: 16x16 takes rows t and t + 8 together with pitch 18,
    conflict-free both ways. The order and pad of least total conflict degree win, the
    natural order on a tie."""
    lanes = range(min(target.warp_size, side * side))
    orders: list[tuple[int, int] | None] = [None]
    if len(lanes) > side and len(lanes) % side == 0:
        per_warp, spacing = len(lanes) // side, 2
        while per_warp * spacing <= side:
            if side % (per_warp * spacing) == 0:
                orders.append((per_warp, spacing))
            spacing *= 2

    def row(t, order):
        return interleaved(t, *order) if order else t

    def option(order):
        stores = [(row(lane // side, order), lane % side) for lane in lanes]
        reads = [(row(lane % side, order), lane // side) for lane in lanes]
        pad, degree = pad_and_degree(side, [stores, reads], target)
        return degree, pad, order

    degree, pad, order = min((option(o) for o in orders), key=lambda o: o[:2])
    return pad, order


def _pad(side: int, target) -> int:
    return _layout(side, target)[0]


def _tile_row(t: str, side: int, order: tuple[int, int] | None) -> str:
    """The tile row of thread row ``t`` (tidx or tidy, below ``side``), in C."""
    if not order:
        return f"@{t}"
    per_warp, spacing = order
    group = per_warp * spacing
    if group == side:
        return f"@{t} % {per_warp} * {spacing} + @{t} / {per_warp}"
    return (f"@{t} / {group} * {group} + @{t} % {per_warp} * {spacing} + "
            f"@{t} % {group} / {per_warp}")


def _comparisons(cond: c_ast.Node) -> int:
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        return _comparisons(cond.left) + _comparisons(cond.right)
    return 1


def _transform(proc: GProcedure, m, side: int, target, ctx: PassContext) -> GProcedure:
    """The kernel with its write ``m`` staged through a ``side`` x ``side`` tile (a new
    GProcedure; its body is built from copies of ``proc``'s shape, so ``proc`` stays as it
    is for the other variants)."""
    p = copy.deepcopy(proc)
    shape = copy.deepcopy(ctx.am.get(proc, ShapeAnalysis)[0])
    taken = identifiers(p.func)
    tile = fresh(taken, f"s_{m.array}")
    elem = p.param(m.array).base_type
    value = shape.body[-1].rvalue
    pad, order = _layout(side, target)
    decl = shared_array(tile, elem, [side, side + pad])
    store = statements(f"{tile}[{_tile_row('tidy', side, order)}][@tidx] = VALUE;",
                       VALUE=value)
    work = shape.body[:-1] + store
    items: list[c_ast.Node] = [decl] + list(shape.prologue)
    items += [c_ast.If(copy.deepcopy(shape.guard), c_ast.Compound(work), None)] \
        if shape.guard is not None else work
    bidx, bidy = sympy.Symbol("bidx", integer=True), sympy.Symbol("bidy", integer=True)
    tidx, tidy = sympy.Symbol("tidx", integer=True), sympy.Symbol("tidy", integer=True)
    sx, sy = bidx * side + tidy, bidy * side + tidx      # the thread whose value we store
    y, x = m.two_d
    target_index = {"Y": from_sympy(y.subs(IDX, sx)), "W": from_sympy(m.width),
                    "X": from_sympy(x.subs(IDY, sy))}
    if shape.guard is not None:
        cond = "SX < BX && SY < BY"
        bounds = {"SX": from_sympy(sx), "SY": from_sympy(sy),
                  "BX": copy.deepcopy(shape.bounds["idx"]),
                  "BY": copy.deepcopy(shape.bounds["idy"])}
    else:
        cond, bounds = "1", {}
    items += statements(f"__syncthreads(); if ({cond}) {m.array}[(Y) * W + X] = "
                        f"{tile}[{_tile_row('tidx', side, order)}][@tidy];", **bounds,
                        **target_index)
    p.body.block_items = items
    p.launch_block = (side, side)
    p.launch_multiple = relied_multiple(p, (side, side), shape.guard is not None)
    return p


__all__ = ["CoalesceWrites", "PredefId"]
