"""Coalescing through shared memory (paper 002 Fig. 8; paper 000 sect. 3).

A global read whose address moves by a non-unit stride between neighbouring threads in x —
``A(idx, k)`` in a loop over k, i.e. ``A[idx*W + k]`` — makes every thread of a warp touch its
own memory sector. The pass tiles the loop by T, lets the block's threads load the block's rows
of the tile cooperatively (consecutive threads, consecutive addresses: coalesced), waits at a
barrier, and reads the values from shared memory instead (the tiling engine generates the code):

    for (int k0 = lo; k0 < hi; k0 += T) {
        for (int e = tid; e < BX*T; e += nthreads)               // coalesced loads
            s_A[e / T][e % T] = (in range) ? A[(bidx*BX + e / T)*W + k0 + e % T] : 0;
        __syncthreads();
        if (active)
            for (int kk = 0; kk < T && k0 + kk < hi; kk++) { ... s_A[tidx][kk] ... }
        __syncthreads();
    }

Tile rows are padded (``s_A[BX][T + pad]``) by the gcd rule (banks.py) so that a warp reading
down a column hits distinct banks. Sizes that are not multiples of T or BX are handled by the
guards on the loads and on the inner loop. Accesses that are already coalesced (unit stride in
x) or the same for all threads of a warp (broadcast) stay as they are.

Preconditions (otherwise the pass declines with a remark): the array is read-only in the kernel
(and, as with ``__restrict__``, assumed not to alias a written array); the loop is a canonical
top-level loop with step 1 and the same bounds for every thread, without break/return; the
access is ``A(idx + c0, k + c1)`` directly in that loop; the kernel's guard can be hoisted.
"""
from __future__ import annotations

import copy

from ...analysis.coalescing import coalescing
from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis
from ...analysis.symbols import SymbolAnalysis
from ...ir import GProcedure
from ...launch import default_block, uses_y
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .dependence import written_array_obstacle
from .selection import choose, tiling_variants
from .shape import contains_barrier, enclosing_loop
from .tiling import (Staging, TilingAnalysis, classify, guards_thread_space, loop_obstacle,
                     staging_of, tile_dims)


class Coalesce(OptimizationPass):
    name = "coalesce"
    requires = ("memory-expressions", "nvcc")
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)    # it records the plan

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if ctx.options.memory == "texture":
            ctx.remark("missed", self.name, proc, "not applied with texture memory")
            return PreservedAnalyses.all()
        loop_index, stagings = self._candidates(proc, ctx)
        if loop_index is None:
            ctx.remark("missed", self.name, proc, "no uncoalesced global read in a loop that "
                       "can be tiled")
            return PreservedAnalyses.all()
        if contains_barrier(proc.body):
            ctx.remark("missed", self.name, proc, "kernel already has barriers")
            return PreservedAnalyses.all()
        shape, why = ctx.am.get(proc, ShapeAnalysis)
        if shape is None:
            ctx.remark("missed", self.name, proc, f"cannot stage: {why}")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        original = copy.deepcopy(proc)       # plans regenerate from the kernel as it is now
        candidates = target.candidates
        blocks = list(candidates.coalesce_blocks_2d if uses_y(proc)
                      else candidates.coalesce_blocks_1d)
        if default_block(proc) not in blocks:
            blocks.append(default_block(proc))
        variants = tiling_variants(original, loop_index, stagings, blocks, candidates.coalesce_tiles,
                                   guards_thread_space(original, shape), target,
                                   lambda plan: (plan.tile, plan.block[0] * plan.block[1]))
        if not variants:
            ctx.remark("missed", self.name, proc, "no block shape tiles the kernel's unguarded "
                       f"launch (naive block {default_block(proc)})")
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants)
        if best is None or best.proc is None:
            ctx.remark("missed", self.name, proc, "no staging variant fits the target")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        ctx.am.record(proc, TilingAnalysis, best.plan)
        tiles = ", ".join(f"{s.describe()} -> s_{s.array}"
                          + "".join(f"[{d}]" for d in tile_dims(s, best.plan, target))
                          for s in best.plan.stagings)
        ctx.remark("applied", self.name, proc,
                   f"staged in shared memory: {tiles}; {best.describe()}"
                   + (f"; {'; '.join(best.notes)}" if best.notes else ""))

    def _candidates(self, proc: GProcedure, ctx: PassContext
                    ) -> tuple[int | None, list[Staging]]:
        written = {m.array for m in proc.memory_expressions if m.is_write}
        env = ctx.am.get(proc, SymbolAnalysis).env()
        loop_index: int | None = None
        stagings: dict[tuple, Staging] = {}
        broadcasts = []
        for i, m in enumerate(proc.memory_expressions):
            if m.space != "global" or not m.is_read:
                continue
            verdict = coalescing(m)
            if verdict.startswith("broadcast") and m.array not in written and m.loops:
                broadcasts.append(i)
                continue
            if verdict != "uncoalesced":
                ctx.remark("analysis", self.name, proc, f"{m.describe()}: {verdict}, "
                           "left in global memory")
                continue
            stride = m.decomposition.coefficient("idx") or m.decomposition.coefficient("tidx")
            loop = enclosing_loop(proc, m, m.loops[-1]) if m.loops else None
            why = "not in a loop" if loop is None else loop_obstacle(loop, env)
            kind = None
            if not why:
                kind, why = classify(m, loop, env)
                if kind is not None and kind != "row_x":
                    kind, why = None, "not of the form A(idx + c, k + c)"
            if not why and m.array in written:
                why = written_array_obstacle(proc, ctx.am.get(proc, ShapeAnalysis)[0], m, loop,
                                             env)
                if not why:
                    ctx.remark("analysis", self.name, proc, f"{m.describe()}: the kernel also "
                               "writes this array; islpy proves no element read through the "
                               "tile is written before the loop ends")
            if not why and loop_index is not None and proc.loops.index(loop) != loop_index:
                why = "in another loop than the one already staged"
            if why:
                ctx.remark("missed", self.name, proc, f"{m.describe()}: uncoalesced (stride "
                           f"{stride} in x), not staged: {why}")
                continue
            loop_index = proc.loops.index(loop)
            key = (m.array, m.two_d[0], m.two_d[1])
            if key not in stagings:
                stagings[key] = staging_of(proc, m, "row_x")
            stagings[key].accesses.append(i)
            ctx.remark("analysis", self.name, proc, f"{m.describe()}: uncoalesced, stride "
                       f"{stride} in x: to be staged through shared memory")
        self._stage_broadcasts(proc, ctx, env, loop_index, broadcasts, stagings)
        return (loop_index if stagings else None), list(stagings.values())

    def _stage_broadcasts(self, proc, ctx, env, loop_index, broadcasts, stagings) -> None:
        """Reads the same for every thread (MV's B[j]) ride along in a loop that is tiled
        anyway: one load per block instead of one request per warp (paper 002 Fig. 8)."""
        for i in broadcasts:
            m = proc.memory_expressions[i]
            kind = None
            if loop_index is not None:
                kind, _ = classify(m, proc.loops[loop_index], env)
            if kind != "vec":
                ctx.remark("analysis", self.name, proc, f"{m.describe()}: broadcast (same "
                           "address across a warp), left in global memory")
                continue
            key = (m.array, "vec", m.index)
            if key not in stagings:
                stagings[key] = staging_of(proc, m, "vec")
            stagings[key].accesses.append(i)
            ctx.remark("analysis", self.name, proc, f"{m.describe()}: broadcast in the tiled "
                       "loop: staged with the tile (one load per block)")
