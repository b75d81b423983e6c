"""Coalescing through shared memory (paper 002 Fig. 8; paper 000 sect. 3).

A global read whose address moves by a non-unit stride between neighbouring threads in x —
``A(idx, k)`` in a loop over k, i.e. ``A[idx*W + k]`` — makes every thread of a warp touch its
own memory sector. The pass tiles the loop by T, lets the block's threads load the block's rows
of the tile cooperatively (consecutive threads, consecutive addresses: coalesced), waits at a
barrier, and reads the values from shared memory instead:

    for (int k0 = lo; k0 < hi; k0 += T) {
        for (int e = tid; e < BX*T; e += nthreads) {           // coalesced loads
            int r = e / T, c = e % T;
            s_A[r][c] = (row r in range && k0 + c < hi) ? A[(bidx*BX + r)*W + k0 + c] : 0;
        }
        __syncthreads();
        if (active)
            for (int kk = 0; kk < T && k0 + kk < hi; kk++) { int k = k0 + kk; ... s_A[tidx][kk] ... }
        __syncthreads();
    }

Rows of the tile are padded (``s_A[BX][T + pad]``) by the gcd rule (banks.py) so that a warp
reading down a column hits distinct banks. Sizes that are not multiples of T or BX are handled
by the guards on the loads and on the inner loop. Accesses that are already coalesced (unit
stride in x) or the same for all threads of a warp (broadcast) stay as they are.

Preconditions (otherwise the pass declines with a remark): the array is read-only in the kernel
(and, as with ``__restrict__``, assumed not to alias a written array); the loop is a canonical
top-level loop with step 1, bounds that are the same for every thread, no break/return; the
access is ``A(idx + c0, k + c1)`` directly in that loop; the kernel's guard can be hoisted
(shape.py).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import sympy
from pycparser import c_ast

from ...ir import GLoop, GProcedure, MemoryExpression, PredefId
from ...ir.build import from_sympy, statements
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.symbolic import decompose, to_sympy
from ...launch import allowed_blocks, default_block, uses_y
from ...targets import get_target
from ..functional.memory_expressions import symbol_env
from ..manager import Pass, PassContext
from .banks import conflict_degree, row_pad
from .selection import Variant, choose
from .shape import contains_barrier, guarded, kernel_shape
from .staging import adopt, coalescing, fresh, shared_array

IDX = sympy.Symbol("idx", integer=True)


@dataclass
class Staging:
    """One tile: the accesses ``array(y, x)`` it serves, with y = idx + c0 and x = k + c1."""

    array: str
    y: sympy.Expr
    x: sympy.Expr
    width: sympy.Expr
    elem_type: str
    accesses: list[int]          # indices into proc.memory_expressions


class Coalesce(Pass):
    name = "coalesce"
    requires = ("memory-expressions", "nvcc")
    functional = False

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        if ctx.options.get("memory") == "texture":
            ctx.remark("missed", self.name, proc, "not applied with texture memory")
            return
        loop, stagings = self._candidates(proc, ctx)
        if loop is None or not stagings:
            return
        shape, why = kernel_shape(proc)
        if shape is None or loop.node not in shape.body:
            ctx.remark("missed", self.name, proc, "cannot stage: " + (
                why or "the loop is not at the top level of the kernel or its guard"))
            return
        if contains_barrier(proc.body):
            ctx.remark("missed", self.name, proc, "kernel already has barriers")
            return
        target = get_target(ctx.arch)
        variants = self._variants(proc, target, stagings, shape.guard is not None)
        if not variants:
            ctx.remark("missed", self.name, proc, "no block shape tiles the kernel's unguarded "
                       f"launch (naive block {default_block(proc)})")
            return

        def build(v: Variant) -> GProcedure | None:
            return _transform(proc, loop, stagings, v, ctx)

        best = choose(ctx, proc, self.name, variants, build)
        if best is None or best.proc is None:
            ctx.remark("missed", self.name, proc, "no staging variant fits the target")
            return
        adopt(proc, best.proc, ctx)
        tiles = ", ".join(f"{s.array}({s.y}, {s.x}) -> s_{s.array}[{best.block[0]}]"
                          f"[{best.score[0] + row_pad(best.score[0], target)}]"
                          for s in stagings)
        ctx.remark("applied", self.name, proc,
                   f"staged in shared memory: {tiles}; {best.describe()}"
                   + (f"; {'; '.join(best.notes)}" if best.notes else ""))

    # ---------------------------------------------------------------- analysis
    def _candidates(self, proc: GProcedure, ctx: PassContext
                    ) -> tuple[GLoop | None, list[Staging]]:
        written = {m.array for m in proc.memory_expressions if m.is_write}
        env = symbol_env(proc, ctx)
        chosen_loop: GLoop | None = None
        stagings: dict[tuple, Staging] = {}
        for i, m in enumerate(proc.memory_expressions):
            if m.space != "global" or not m.is_read:
                continue
            verdict = coalescing(m)
            if verdict != "uncoalesced":
                ctx.remark("analysis", self.name, proc, f"{m.describe()}: {verdict}, "
                           "left in global memory")
                continue
            stride = m.decomposition.coefficient("idx") or m.decomposition.coefficient("tidx")
            why = _staging_obstacle(m, proc, written, env)
            if why:
                ctx.remark("missed", self.name, proc, f"{m.describe()}: uncoalesced (stride "
                           f"{stride} in x), not staged: {why}")
                continue
            loop = next(lp for lp in proc.loops if lp.iterator == m.loops[-1])
            if chosen_loop is not None and loop is not chosen_loop:
                ctx.remark("missed", self.name, proc, f"{m.describe()}: in another loop than "
                           "the one already staged")
                continue
            chosen_loop = loop
            y, x = m.two_d
            key = (m.array, y, x)
            if key not in stagings:
                param = proc.param(m.array)
                stagings[key] = Staging(m.array, y, x, m.width, param.base_type, [])
            stagings[key].accesses.append(i)
            ctx.remark("analysis", self.name, proc, f"{m.describe()}: uncoalesced, stride "
                       f"{stride} in x: to be staged through shared memory")
        return chosen_loop, list(stagings.values())

    @staticmethod
    def _variants(proc: GProcedure, target, stagings: list[Staging], guarded: bool
                  ) -> list[Variant]:
        blocks = [(16, 16), (32, 8)] if uses_y(proc) else [(256, 1), (128, 1), (64, 1)]
        naive = default_block(proc)
        if naive not in blocks:
            blocks.append(naive)
        out = []
        for bx, by in allowed_blocks(proc, blocks, guarded):
            if bx * by < target.warp_size:
                continue
            for tile in (32, 16):
                pad = row_pad(tile, target)
                shared = sum(bx * (tile + pad) * 4 for _ in stagings)
                out.append(Variant(f"tile {tile} block {bx}x{by}", (bx, by), (tile, bx * by),
                                   shared_bytes=shared))
        return out


def _staging_obstacle(m: MemoryExpression, proc: GProcedure, written: set[str], env) -> str:
    if m.array in written:
        return "the kernel also writes this array"
    if m.two_d is None or not m.loops:
        return "no 2-D form A(y, k) inside a loop"
    loop = next((lp for lp in proc.loops if lp.iterator == m.loops[-1]), None)
    if loop is None or not loop.canonical or loop.step != 1 or loop.depth != 0:
        return "not directly in a canonical top-level loop with step 1"
    if not isinstance(loop.node.init, c_ast.DeclList):
        return f"the loop does not declare its iterator {loop.iterator}"
    if any(isinstance(n, (c_ast.Break, c_ast.Return, c_ast.Goto))
           for n, _ in walk(loop.node.stmt)):
        return "the loop body has break/return"
    for bound in (loop.lower, loop.upper):
        value = to_sympy(bound, env)
        if any(s.name in env.loops or s.name in ("idx", "idy", "tidx", "tidy", "bidx", "bidy")
               for s in value.free_symbols) or not decompose(value, env).resolved:
            return "loop bounds differ between threads"
    y, x = m.two_d
    k = sympy.Symbol(loop.iterator, integer=True)
    dy, dx = decompose(y, env), decompose(x, env)
    if not (dy.resolved and dx.resolved) or set(dy.loop) or set(dy.predefined) != {"idx"} or \
            dy.predefined["idx"] != 1:
        return f"row {y} is not idx + constant"
    if set(dx.predefined) or set(dx.loop) != {loop.iterator} or dx.loop[loop.iterator] != 1:
        return f"column {x} is not {k} + constant"
    return ""


def _transform(proc: GProcedure, loop: GLoop, stagings: list[Staging], v: Variant,
               ctx: PassContext) -> GProcedure | None:
    """A copy of ``proc`` with ``stagings`` staged in ``loop`` for variant ``v``."""
    target = get_target(ctx.arch)
    tile = v.score[0]
    pad = row_pad(tile, target)
    bx, by = v.block
    p = copy.deepcopy(proc)
    loop_index = proc.loops.index(loop)
    lp = p.loops[loop_index]
    shape, _ = kernel_shape(p)
    taken = identifiers(p.func)
    k = lp.iterator
    k0, kk, e, r, c = (fresh(taken, n) for n in (f"{k}0", f"{k}{k}", "e", "r", "c"))
    active = fresh(taken, "active") if shape.guard is not None else None

    shared_decls, loads, replace = [], [], {}
    for s in stagings:
        sname = fresh(taken, f"s_{s.array}")
        shared_decls.append(shared_array(sname, s.elem_type, [bx, tile + pad]))
        row_ok = "1"
        if "idx" in shape.bounds:
            row_ok = "@bidx * %d + %s < BOUND" % (bx, r)
        rowsym, colsym, k0sym = (sympy.Symbol(n, integer=True) for n in (r, c, k0))
        bidx = sympy.Symbol("bidx", integer=True)
        ksym = sympy.Symbol(k, integer=True)
        loads += statements(
            f"{sname}[{r}][{c}] = ({row_ok} && {k0} + {c} < HI) ? {s.array}[(Y) * W + X] : 0;",
            BOUND=copy.deepcopy(shape.bounds.get("idx", c_ast.Constant("int", "0"))),
            HI=copy.deepcopy(lp.upper), W=from_sympy(s.width),
            Y=from_sympy(s.y.subs(IDX, bidx * bx + rowsym)),
            X=from_sympy(s.x.subs(ksym, k0sym + colsym)))
        for i in s.accesses:
            replace[id(p.memory_expressions[i].node)] = c_ast.ArrayRef(
                c_ast.ArrayRef(c_ast.ID(sname), PredefId("tidx")), c_ast.ID(kk))

    def swap(n: c_ast.Node) -> c_ast.Node:
        return copy.deepcopy(replace[id(n)]) if id(n) in replace else n

    body = map_nodes(lp.node.stmt, swap)
    decl = lp.node.init.decls[0]
    iter_type = decl.type.type.names[0] if isinstance(decl.type, c_ast.TypeDecl) else "int"
    iterator = f"{iter_type} {k} = {k0} + {kk};" if k in identifiers(body) else ""
    inner = statements(
        f"for (int {kk} = 0; {kk} < {tile} && {k0} + {kk} < HI; {kk}++) "
        f"{{ {iterator} BODY; }}",
        HI=copy.deepcopy(lp.upper), BODY=body)
    if active:
        inner = [c_ast.If(c_ast.ID(active), c_ast.Compound(inner), None)]
    staged = statements(
        f"for (int {k0} = LO; {k0} < HI; {k0} += {tile}) {{"
        f"  for (int {e} = {'@tidy * %d + @tidx' % bx if by > 1 else '@tidx'}; "
        f"{e} < {bx * tile}; {e} += {bx * by}) {{"
        f"    int {r} = {e} / {tile}; int {c} = {e} % {tile}; LOADS; }}"
        f"  __syncthreads(); INNER; __syncthreads(); }}",
        LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper),
        LOADS=c_ast.Compound(loads), INNER=c_ast.Compound(inner))

    position = shape.body.index(lp.node)
    pre, post = shape.body[:position], shape.body[position + 1:]
    items: list[c_ast.Node] = list(shared_decls) + list(shape.prologue)
    if active:
        items += statements(f"const int {active} = COND;", COND=shape.guard)
        safe_pre, why = guarded(pre, active)
        if why:
            ctx.remark("missed", "coalesce", proc, f"cannot hoist the guard: {why}")
            return None
        items += safe_pre + staged
        if post:
            items.append(c_ast.If(c_ast.ID(active), c_ast.Compound(post), None))
    else:
        items += pre + staged + post
    p.body.block_items = items
    p.launch_block = (bx, by)
    return p


__all__ = ["Coalesce", "conflict_degree"]
