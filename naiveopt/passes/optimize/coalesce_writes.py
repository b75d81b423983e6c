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

A tile as wide as a warp can also be filled by fewer threads: a block of side x side/R
threads, each storing and writing back R tile rows side/R apart (the classic 32x8 transpose at
R = 4). Each thread then keeps R independent loads in flight instead of one, and the block's
index arithmetic is shared by R values; the cost model sees the loads in flight (its latency
bound) and the instructions, and chooses among the tiles and row counts
(``Candidates.transpose_rows``). The R copies of the kernel's code are guarded each; they
need the kernel to use no thread ids but idx and idy, which the copies rewrite.

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
from ...ir.rewrite import walk
from ...ir.symbolic import decompose
from ...launch import allowed_blocks, default_block, relied_multiple
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .banks import interleaved, pad_and_degree
from .selection import Variant, choose
from .shape import contains_barrier
from .tiling import local_names, rewrite_copy, uses_raw_thread_ids
from .tiling.bounds_guard import guard_obstacle, guard_remark, with_bounds_guard

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
        variants, rows_of = [], {}
        guarded = ctx.am.get(proc, ShapeAnalysis)[0].guard is not None
        squares = [(side, side) for side in target.candidates.transpose_sides]
        raw = uses_raw_thread_ids(proc)
        allowed = allowed_blocks(proc, squares, guarded)
        kernels = {square: (proc, m) for square in allowed}
        if len(allowed) < len(squares) and not guard_obstacle(proc, ctx.module):
            # the larger tiles overhang an unguarded kernel's thread space: on a copy given
            # the bounds guard it lacks (tiling/bounds_guard.py)
            alt = with_bounds_guard(proc, ctx)
            alt_m = alt.memory_expressions[proc.memory_expressions.index(m)]
            if not self._obstacle(alt, ctx, alt_m, [w for w in alt.memory_expressions
                                                     if w.space == "global" and w.is_write]):
                kernels.update({sq: (alt, alt_m) for sq in squares if sq not in kernels})
        for side, _ in [sq for sq in squares if sq in kernels]:
            pad, order = _layout(side, target)
            shared = side * (side + pad) * element_bytes(proc.param(m.array).base_type)
            for rows in target.candidates.transpose_rows:
                if rows > 1 and (raw or order is not None or side % rows or
                                 side != target.warp_size):
                    continue
                label = f"tile {side}x{side}" + (f", {rows} rows per thread" if rows > 1
                                                   else "")
                # among ties the larger tile, and then the fewer rows per thread: more
                # rows than the model credits only cost registers
                variants.append(Variant(label, (side, side // rows), (side, -rows),
                                        shared_bytes=shared))
                rows_of[id(variants[-1])] = (rows, *kernels[(side, side)])
        if not variants:
            ctx.remark("missed", self.name, proc, "no square tile divides the kernel's "
                       f"unguarded launch (naive block {default_block(proc)})")
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants,
                      lambda v: _transform(rows_of[id(v)][1], rows_of[id(v)][2], v.block[0],
                                           rows_of[id(v)][0], target, ctx))
        if best is None:
            ctx.remark("missed", self.name, proc, "no tile fits the target")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        side = best.block[0]
        pad, order = _layout(side, target)
        rows = f" (rows {order[1]} apart in the tile for each warp's {order[0]} rows, " \
            "against bank conflicts)" if order else ""
        per_thread, base, _ = rows_of[id(best)]
        if base is not proc:
            ctx.remark("applied", self.name, proc, guard_remark(
                base, f"its blocks now cover {side}x{side} outputs"))
        each = f", each thread {per_thread} rows {side // per_thread} apart" \
            if per_thread > 1 else ""
        ctx.remark("applied", self.name, proc, f"{m.describe()}: uncoalesced write "
                   f"transposed through s_{m.array}[{side}][{side + pad}]{rows}{each}; "
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


def _plus(text: str, offset: int) -> str:
    return f"{text} + {offset}" if offset else text


def _comparisons(cond: c_ast.Node, negated: bool = False) -> int:
    """The conjuncts of ``cond``: ``a && b`` has two, and so has the guard of an early
    return ``if (x >= W || y >= H) return;``, which the shape reads as ``!(x >= W || ...)``."""
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        return _comparisons(cond.expr, not negated)
    if isinstance(cond, c_ast.BinaryOp) and cond.op == ("||" if negated else "&&"):
        return _comparisons(cond.left, negated) + _comparisons(cond.right, negated)
    return 1


def _transform(proc: GProcedure, m, side: int, rows: int, target, ctx: PassContext
               ) -> GProcedure:
    """The kernel with its write ``m`` staged through a ``side`` x ``side`` tile, filled by
    side x side/rows threads of ``rows`` tile rows each (a new GProcedure; its body is built
    from copies of ``proc``'s shape, so ``proc`` stays as it is for the other variants)."""
    p = copy.deepcopy(proc)
    shape = copy.deepcopy(ctx.am.get(proc, ShapeAnalysis)[0])
    taken = p.names_taken()
    tile = fresh(taken, f"s_{m.array}")
    elem = p.param(m.array).base_type
    pad, order = _layout(side, target)
    step = side // rows                                  # threads in y, rows apart
    bidx, bidy = sympy.Symbol("bidx", integer=True), sympy.Symbol("bidy", integer=True)
    tidx, tidy = sympy.Symbol("tidx", integer=True), sympy.Symbol("tidy", integer=True)
    items: list[c_ast.Node] = [shared_array(tile, elem, [side, side + pad])]
    for j in range(rows):
        # copy j computes the value of thread row tidy + j*step of the tile (idy as the
        # naive side x side block numbers it); one copy is the kernel as it is
        if rows == 1:
            subst, renames = {}, {}
        else:
            subst = {"idy": from_sympy(bidy * side + tidy + j * step)}
            renames = local_names(p, "", f"_{j}", taken)
        body = copy.deepcopy(shape.body)
        value = body[-1].rvalue
        row = _tile_row("tidy", side, order) if rows == 1 else _plus("@tidy", j * step)
        work = body[:-1] + statements(f"{tile}[{row}][@tidx] = VALUE;", VALUE=value)
        part = copy.deepcopy(list(shape.prologue))
        part += [c_ast.If(copy.deepcopy(shape.guard), c_ast.Compound(work), None)] \
            if shape.guard is not None else work
        items += [rewrite_copy(st, subst, renames) for st in part]
    items += statements("__syncthreads();")
    y, x = m.two_d
    for j in range(rows):
        # thread (tx, ty) writes back the value of thread (ty + j*step, tx)
        sx, sy = bidx * side + tidy + j * step, bidy * side + tidx
        target_index = {"Y": from_sympy(y.subs(IDX, sx)), "W": from_sympy(m.width),
                        "X": from_sympy(x.subs(IDY, sy))}
        if shape.guard is not None:
            cond = "SX < BX && SY < BY"
            bounds = {"SX": from_sympy(sx), "SY": from_sympy(sy),
                      "BX": copy.deepcopy(shape.bounds["idx"]),
                      "BY": copy.deepcopy(shape.bounds["idy"])}
        else:
            cond, bounds = "1", {}
        column = _plus("@tidy", j * step)
        items += statements(f"if ({cond}) {m.array}[(Y) * W + X] = "
                            f"{tile}[{_tile_row('tidx', side, order)}][{column}];", **bounds,
                            **target_index)
    p.body.block_items = items
    p.launch_block = (side, step)
    p.coarsen = (1, rows)
    p.launch_multiple = relied_multiple(p, (side, side), shape.guard is not None)
    return p


__all__ = ["CoalesceWrites", "PredefId"]
