"""Cooperative tile loads: how the block fills its shared tiles, one k-tile at a time.

Each k-tile is loaded by all threads of the block with consecutive threads on consecutive
addresses (coalesced), behind a barrier; the loop body then reads the tile. Elements outside
the arrays are zero-filled and read nothing. Two refinements of the plan change only how the
tiles are loaded:

- ``prefetch`` (the prefetch pass): each thread loads its share of tile 0 into registers
  before the k-tile loop; every iteration stores the registers into the shared tile, waits,
  issues the loads of the next tile into the registers (range-checked like the zero-filling
  loads, so past the last tile nothing is read) and computes while they are in flight. The
  share is N/NT units per thread (N tile units, NT threads), unrolled into a private array
  indexed by constants only, so that it lives in registers; the unrolled slots derive their
  tile row from the thread's first one by a constant offset, since ptxas hoists every
  slot's address arithmetic out of the loop and per-slot divisions cost registers. Registers
  rather than a second shared buffer: the staged kernels here are mostly limited by shared
  memory or registers already, and a second buffer doubles the shared footprint (MV's 33 KiB
  tile would halve the resident blocks) where registers cost only the N/NT values.
- ``load_width`` (the vectorize pass, via plan.with_load_width): a unit is ``load_width``
  consecutive elements along a tile row (the contiguous global dimension of every kind), read
  with one vector load (``VectorLoad``: LDG.128 / vload4) when the whole unit is in range and
  as zero-filled scalar loads otherwise, and stored as scalars into the padded tile. A row
  longer than one span of the banks is loaded in segment order (plan.segment_units) so
  that those stores do not conflict, and the pad is chosen for the store patterns too.
"""
from __future__ import annotations

import copy

import sympy
from pycparser import c_ast

from ....analysis.shape import KernelShape
from ....ir import GLoop
from ....ir.build import expression, fresh, from_sympy, private_array, statements
from ....ir.async_copy import AsyncCopy, AsyncFence
from ....ir.vector import VectorLoad, declare_vector
from ....ir.vector import lane as vector_lane
from .plan import (SYM, VEC, Staging, TilingPlan, tile_extent, transposed, unit_cell,
                   unit_width)


class TileLoad:
    """The cooperative, coalesced load of one staging's k-tile into its shared tile.

    The tile (``rows`` x ``cols``, a vec tile is one row) is cut into units of ``width``
    consecutive elements along a row. A tile row is contiguous in global memory for every kind
    (``c`` moves the address by one: the loop iterator for row kinds, the thread id for col
    kinds), so unit u, which goes to thread u mod NT, puts consecutive threads on consecutive
    addresses. Element (r, c) of the tile is in range when every ``(lhs, bound)`` condition
    holds, ``lhs < bound``; each ``lhs`` grows with c, so the last element of a unit being in
    range means the whole unit is."""

    def __init__(self, s: Staging, name: str, plan: TilingPlan, shape: KernelShape,
                 lp: GLoop, names: tuple[str, str, str, str, str], first: str,
                 segment: int, interleave: tuple[int, int] | None = None,
                 full: bool = False) -> None:
        self.s, self.name, self.first, self.names = s, name, first, names
        self.plan = plan
        self.segment = segment          # units per row segment (segment_units), 0: row-major
        self.interleave = interleave    # (rows per warp, spacing) of interleaved rows, or None
        self.rows, self.cols = tile_extent(s, plan)
        self.width = unit_width(s, plan)
        self.threads = plan.block[0] * plan.block[1]
        self.k0, self.r, self.c, self.e = (sympy.Symbol(n, integer=True) for n in names[:4])
        ksym = sympy.Symbol(lp.iterator, integer=True)
        hi = lp.upper
        if s.kind == VEC:                      # one row: column c is e * width
            self.conds = [] if full else [(self.k0 + self.c, hi)]
            self.y, self.x = sympy.Integer(0), s.x.subs(ksym, self.k0 + self.c)
            return
        thread = "idx" if s.thread_axis == "x" else "idy"
        cover = plan.coverage[0 if s.thread_axis == "x" else 1]
        along_t, along_k = (self.r, self.c) if s.kind.startswith("row") else (self.c, self.r)
        tid = SYM["bidx" if s.thread_axis == "x" else "bidy"] * cover + along_t
        self.conds = [(self.k0 + along_k, hi)]
        if thread in shape.bounds:
            self.conds.append((tid, shape.bounds[thread]))
        if full:        # a whole k-tile (plan.peel): only the thread-space bound is checked
            self.conds = self.conds[1:]
        subs = {SYM[thread]: tid, ksym: self.k0 + along_k}
        self.y, self.x = s.y.subs(subs), s.x.subs(subs)

    @property
    def units(self) -> int:
        return self.rows * self.cols // self.width

    @property
    def slots(self) -> int:
        """Units each thread loads per tile (the last slot may be empty for some threads)."""
        return -(-self.units // self.threads)

    def coordinates(self, slot: int | None = None) -> list[c_ast.Node]:
        """Declarations of the unit's tile row and column: from its number e, or for the
        thread's unit number ``slot`` from the thread's first unit when the threads cover
        whole rows (the slots then differ by a constant row offset, which keeps the unrolled
        address arithmetic of prefetching cheap)."""
        _, r, c, e, _ = self.names
        if self.s.kind == VEC:      # column e * width
            return [] if slot is None else statements(
                f"int {e} = {self.first}{f' + {slot * self.threads}' if slot else ''};")
        if self.interleave:
            return self._interleaved_coordinates(slot)
        w = self.width
        per_row = self.cols // w
        scale = f" * {w}" if w > 1 else ""
        unit = e
        offset = ""
        if slot is not None:            # rows of whole segment groups: a constant offset
            unit = self.first
            if slot and self.threads % (per_row * (w if self.segment else 1)):
                unit = f"{self.first} + {slot * self.threads}"
            elif slot:
                offset = f" + {slot * self.threads // per_row}"
        unit = f"({unit})" if " " in unit else unit
        if not self.segment:            # unit_cell, in C
            return statements(f"int {r} = {unit} / {per_row}{offset}; "
                              f"int {c} = {unit} % {per_row}{scale};")
        g, spans = self.segment, per_row // self.segment
        return statements(
            f"int {r} = {unit} / {g * w * spans} * {w} + {unit} / {g} % {w}{offset}; "
            f"int {c} = ({unit} / {g * w} % {spans} * {g} + {unit} % {g}){scale};")

    def _interleaved_coordinates(self, slot: int | None) -> list[c_ast.Node]:
        """:meth:`coordinates` of interleaved rows (banks.interleaved, in C). The thread's
        later slots are a constant number of rows below its first one where that holds for
        every thread (checked), else they are computed from the unit number."""
        _, r, c, e, _ = self.names
        w = self.width
        per_row = self.cols // w
        per_warp, spacing = self.interleave
        group = per_warp * spacing
        unit, offset = e, ""
        if slot is not None:
            unit = self.first
            rows = self._slot_rows(slot) if slot else 0
            if rows is None:
                unit = f"{self.first} + {slot * self.threads}"
            elif rows:
                offset = f" + {rows}"
        # a thread's first unit is below per_row * group when the threads cover one group
        first_group = unit == self.first and self.threads <= per_row * group
        unit = f"({unit})" if " " in unit else unit
        scale = f" * {w}" if w > 1 else ""
        base = f"{unit} / {per_row * group} * {group} + " if self.rows > group and \
            not first_group else ""
        within = "" if first_group else f" % {group}"
        return statements(
            f"int {r} = {base}{unit} / {per_row} % {per_warp} * {spacing} + "
            f"{unit} / {per_row}{within} / {per_warp}{offset}; "
            f"int {c} = {unit} % {per_row}{scale};")

    def _slot_rows(self, slot: int) -> int | None:
        """Rows between every thread's unit of ``slot`` and its first unit, when the same for
        all threads (and the columns equal), else None."""
        rows = None
        for t in range(self.threads):
            u = t + slot * self.threads
            if u >= self.units:
                break
            (r0, c0), (r1, c1) = (unit_cell(v, self.s, self.plan, 0, self.interleave)
                                  for v in (t, u))
            if c1 != c0 or rows not in (None, r1 - r0):
                return None
            rows = r1 - r0
        return rows

    def _lane(self, expr: sympy.Expr, lane: int, start: sympy.Expr) -> sympy.Expr:
        column = self.e * self.width if self.s.kind == VEC else self.c
        return expr.subs({self.c: column + lane, self.k0: start}, simultaneous=True)

    def in_range(self, lane: int, start: sympy.Expr) -> c_ast.Node:
        """Whether element ``lane`` of the unit is inside the arrays, for the k-tile at
        ``start``."""
        cond = None
        if not self.conds:
            return c_ast.Constant("int", "1")
        for lhs, bound in self.conds:
            atom = c_ast.BinaryOp("<", from_sympy(self._lane(lhs, lane, start)),
                                  copy.deepcopy(bound))
            cond = atom if cond is None else c_ast.BinaryOp("&&", cond, atom)
        return cond

    def global_ref(self, lane: int, start: sympy.Expr) -> c_ast.ArrayRef:
        x = from_sympy(self._lane(self.x, lane, start))
        if self.s.kind == VEC:
            return c_ast.ArrayRef(c_ast.ID(self.s.array), x)
        y = from_sympy(self._lane(self.y, lane, start))
        index = c_ast.BinaryOp("+", c_ast.BinaryOp("*", y, from_sympy(self.s.width)), x)
        return c_ast.ArrayRef(c_ast.ID(self.s.array), index)

    def cell(self, lane: int, stage: c_ast.Node | None = None) -> c_ast.ArrayRef:
        """Element ``lane`` of the unit in the shared tile (a transposed tile: at [col][row]);
        of an asynchronous pipeline's tiles, in the buffer of ``stage``."""
        col = from_sympy(self._lane(self.c, lane, self.k0))
        tile = staged(self.name, stage)
        if self.s.kind == VEC:
            return c_ast.ArrayRef(tile, col)
        row = c_ast.ID(self.names[1])
        if transposed(self.s, self.plan):
            row, col = col, row
        return c_ast.ArrayRef(c_ast.ArrayRef(tile, row), col)

    def fetch(self, start: sympy.Expr, dests: list[c_ast.Node]) -> list[c_ast.Node]:
        """Statements reading the unit of the k-tile at ``start`` into ``dests`` (one per
        element); elements outside the arrays read as zero and touch no memory. A unit of
        several elements is one vector load when all of it is in range, else scalar loads."""
        if self.conds:
            scalar = [c_ast.Assignment("=", dest, c_ast.TernaryOp(
                self.in_range(i, start), self.global_ref(i, start),
                c_ast.Constant("int", "0"))) for i, dest in enumerate(dests)]
        else:
            scalar = [c_ast.Assignment("=", dest, self.global_ref(i, start))
                      for i, dest in enumerate(dests)]
        if self.width == 1:
            return scalar
        vector = self.names[4]
        load = VectorLoad(self.global_ref(0, start), self.width, self.s.elem_type)
        whole = [declare_vector(vector, self.s.elem_type, self.width, load)] + [
            c_ast.Assignment("=", dest, vector_lane(c_ast.ID(vector), i))
            for i, dest in enumerate(dests)]
        if not self.conds:
            return whole
        return [c_ast.If(self.in_range(self.width - 1, start), c_ast.Compound(whole),
                         c_ast.Compound(scalar))]

    def copy_async(self, start: sympy.Expr, stage: c_ast.Node) -> list[c_ast.Node]:
        """The unit of the k-tile at ``start`` copied asynchronously into the buffer of
        ``stage``, one element at a time (ir/async_copy.py): zero-filled outside the
        arrays, as :meth:`fetch` does."""
        return [AsyncCopy(self.cell(i, stage), self.global_ref(i, start),
                          self.in_range(i, start) if self.conds else None, self.s.elem_type)
                for i in range(self.width)]

    def loop(self, start: sympy.Expr | None = None, stage: c_ast.Node | None = None
             ) -> list[c_ast.Node]:
        """The whole tile at k0, straight into shared memory: a loop over the block's units,
        or for a register-tiled plan whose tile is a whole number of units per thread the
        thread's units unrolled (rows a constant apart: cheap addresses, no loop). Given a
        ``stage``, the tile at ``start`` is copied asynchronously into that stage's
        buffer."""
        _, _, _, e, _ = self.names

        def unit() -> list[c_ast.Node]:
            if stage is not None:
                return self.copy_async(start, stage)
            return self.fetch(self.k0, [self.cell(i) for i in range(self.width)])

        if self.plan.register_tiled and self.units % self.threads == 0:
            return [self._slot(j, unit()) for j in range(self.slots)]
        body = self.coordinates() + unit()
        return statements(f"for (int {e} = {self.first}; {e} < {self.units}; "
                          f"{e} += {self.threads}) {{ BODY; }}", BODY=c_ast.Compound(body))

    def _slot(self, j: int, body: list[c_ast.Node]) -> c_ast.Node:
        """``body`` for the thread's j-th unit (skipped where the tile has no such unit)."""
        inner = c_ast.Compound(self.coordinates(j) + body)
        if (j + 1) * self.threads <= self.units:
            return inner
        offset = f" + {j * self.threads}" if j else ""
        return c_ast.If(expression(f"{self.first}{offset} < {self.units}"), inner, None)

    def _register(self, register: str, j: int, element: int) -> c_ast.ArrayRef:
        return c_ast.ArrayRef(c_ast.ID(register),
                              c_ast.Constant("int", str(j * self.width + element)))

    def prefetch(self, register: str, start: sympy.Expr) -> list[c_ast.Node]:
        """The thread's share of the k-tile at ``start`` into its registers, unrolled."""
        return [self._slot(j, self.fetch(start, [self._register(register, j, i)
                                                 for i in range(self.width)]))
                for j in range(self.slots)]

    def store(self, register: str) -> list[c_ast.Node]:
        """The prefetched registers into the shared tile."""
        return [self._slot(j, [c_ast.Assignment("=", self.cell(i),
                                                self._register(register, j, i))
                               for i in range(self.width)])
                for j in range(self.slots)]


def staged(name: str, stage: c_ast.Node | None) -> c_ast.Node:
    """The shared array ``name``, or its buffer of ``stage`` (``name[stage]``)."""
    tile = c_ast.ID(name)
    return tile if stage is None else c_ast.ArrayRef(tile, copy.deepcopy(stage))


def tile_loads(loaders: list[TileLoad], plan: TilingPlan, taken: set[str], k0: str,
               lp: GLoop) -> tuple[list[c_ast.Node], list[c_ast.Node]]:
    """The statements that open each k-tile iteration (up to and including the barrier
    before the compute), and those that go before the k-tile loop.

    Without prefetching the tile is loaded and waited for. With it, the thread's share of
    tile 0 is loaded into registers before the loop; each iteration stores the registers
    into the shared tile, waits, and issues the loads of the next tile into the registers,
    which are in flight while the block computes on the shared tile. Past the last tile the
    range checks are false and nothing is read."""
    barrier = statements("__syncthreads();")
    if not plan.prefetch:
        return [st for ld in loaders for st in ld.loop()] + barrier, []
    registers = [fresh(taken, f"p_{ld.s.array}") for ld in loaders]
    decls = [private_array(reg, ld.s.elem_type, [ld.slots * ld.width])
             for ld, reg in zip(loaders, registers)]
    k0sym = sympy.Symbol(k0, integer=True)
    tile0 = statements(f"const int {k0} = LO;", LO=copy.deepcopy(lp.lower))
    for ld, reg in zip(loaders, registers):
        tile0 += ld.prefetch(reg, k0sym)
    head = [st for ld, reg in zip(loaders, registers) for st in ld.store(reg)] + barrier
    for ld, reg in zip(loaders, registers):
        head += ld.prefetch(reg, k0sym + plan.tile)
    return head, decls + [c_ast.Compound(tile0)]


def pipeline_loads(loaders: list[TileLoad], plan: TilingPlan, taken: set[str], k0: str,
                   lp: GLoop) -> tuple[list[c_ast.Node], list[c_ast.Node], list[c_ast.Node],
                                       list[c_ast.Node], str]:
    """An asynchronous pipeline of ``plan.stages`` (S) buffers per tile: (statements before
    the k-tile loop, those opening each iteration, those closing it, those after the loop,
    the name of the stage the iteration computes on).

    Before the loop the tiles 0 .. S-2 are issued, one group each. Each iteration waits until
    its own tile's group has landed (at most S-2 newer groups in flight), then the barrier
    makes the tile visible to the block and ensures every thread is done with the buffer of
    the previous iteration, into which the tile S-1 ahead is then issued; the compute runs
    while those copies are in flight. Past the last tile the range checks are false: the
    copies zero-fill and read nothing. The groups still in flight after the loop are waited
    for before the kernel goes on."""
    stages = plan.stages
    read, write = fresh(taken, "st"), fresh(taken, "ws")
    k0sym = sympy.Symbol(k0, integer=True)
    commit = AsyncFence("commit")
    before = statements(f"int {read} = 0; int {write} = {stages - 1};")
    for j in range(stages - 1):
        lo = copy.deepcopy(lp.lower) if not j else c_ast.BinaryOp(
            "+", copy.deepcopy(lp.lower), c_ast.Constant("int", str(j * plan.tile)))
        issue = statements(f"const int {k0} = LO;", LO=lo)
        for ld in loaders:
            issue += ld.loop(k0sym, c_ast.Constant("int", str(j)))
        before += [c_ast.Compound(issue), copy.deepcopy(commit)]
    head = [AsyncFence("wait", stages - 2)] + statements("__syncthreads();")
    ahead = k0sym + (stages - 1) * plan.tile
    head += [c_ast.Compound([st for ld in loaders for st in ld.loop(ahead, c_ast.ID(write))]),
             copy.deepcopy(commit)]
    nxt = f"1 - {read}" if stages == 2 else f"{read} + 1 == {stages} ? 0 : {read} + 1"
    tail = statements(f"{write} = {read}; {read} = {nxt};")
    return before, head, tail, [AsyncFence("wait", 0)], read
