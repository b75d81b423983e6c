"""Thread-block merge (paper 002, MergePass; Yang et al. PLDI'10).

In a 2-D kernel, data read in the main loop is often the same for every thread of a block row
or column: MM reads ``A(idy, k)`` (the same for all threads along x) and ``B(k, idx)`` (the
same for all threads along y). Merging neighbouring blocks into one larger block and staging
those tiles in shared memory makes each loaded value serve the whole block: a BX x BY block
loads (BX + BY) values per k instead of 2*BX*BY. The pass stages every such access (on top of
what the coalescing pass staged), chooses the block shape by the occupancy model
(selection.py) and the least global traffic per output, and regenerates the kernel through the
tiling engine.

It needs a 2-D kernel (threads in x and y), a tileable main loop (tiling.loop_obstacle) and at
least one read-only array read as A(idy + c, k + c') or A(k + c, idx + c').
"""
from __future__ import annotations

import copy

from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis
from ...analysis.symbols import SymbolAnalysis
from ...ir import GProcedure
from ...launch import uses_y
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .dependence import written_array_obstacle
from .selection import choose, tiling_variants
from .shape import contains_barrier, enclosing_loop
from .tiling import (Staging, TilingAnalysis, TilingPlan, classify, guards_thread_space,
                     loop_obstacle, staging_of, traffic)

REUSE_KINDS = {"row_y": "x", "col_x": "y", "row_x": "y", "col_y": "x", "vec": "x and y"}


class ThreadBlockMerge(OptimizationPass):
    name = "thread-block-merge"
    requires = ("memory-expressions", "nvcc")
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)    # it records the plan

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if ctx.options.memory == "texture":
            ctx.remark("missed", self.name, proc, "not applied with texture memory (the "
                       "texture cache serves the reuse)")
            return PreservedAnalyses.all()
        if not uses_y(proc):
            ctx.remark("missed", self.name, proc, "1-D kernel: no data is shared between "
                       "threads of neighbouring blocks along y")
            return PreservedAnalyses.all()
        # what coalescing already staged, if anything
        base: TilingPlan | None = ctx.am.get(proc, TilingAnalysis)
        original = base.original if base else copy.deepcopy(proc)
        if base is None and contains_barrier(proc.body):
            ctx.remark("missed", self.name, proc, "kernel already has barriers")
            return PreservedAnalyses.all()
        loop_index, stagings = self._stagings(original, ctx, base)
        if loop_index is None:
            return PreservedAnalyses.all()
        shape, why = ctx.am.get(original, ShapeAnalysis)
        if shape is None:
            ctx.remark("missed", self.name, proc, f"cannot merge: {why}")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        variants = tiling_variants(original, loop_index, stagings,
                                   target.candidates.merge_blocks, target.candidates.merge_tiles,
                                   guards_thread_space(original, shape), target,
                                   lambda plan: (-traffic(plan), plan.tile,
                                                 plan.block[0] * plan.block[1]))
        if not variants:
            ctx.remark("missed", self.name, proc, "no merged block tiles the kernel's "
                       "unguarded launch")
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants)
        if best is None:
            ctx.remark("missed", self.name, proc, "no merged block fits the target")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        ctx.am.record(proc, TilingAnalysis, best.plan)
        reuse = ", ".join(f"{s.describe()} shared along {REUSE_KINDS[s.kind]} "
                          f"(reused by {_reuse(s.kind, best.block)} threads)"
                          for s in best.plan.stagings)
        ctx.remark("applied", self.name, proc, f"merged blocks to {best.block[0]}x"
                   f"{best.block[1]} threads, tile {best.plan.tile} along the loop: {reuse}; "
                   f"{traffic(best.plan):.3f} global loads per output per iteration; "
                   f"{best.describe()}")

    def _stagings(self, proc: GProcedure, ctx: PassContext, base: TilingPlan | None
                  ) -> tuple[int | None, list[Staging]]:
        env = ctx.am.get(proc, SymbolAnalysis).env()
        written = {m.array for m in proc.memory_expressions if m.is_write}
        stagings = list(base.stagings) if base else []
        staged = {i for s in stagings for i in s.accesses}
        loop_index = base.loop_index if base else None
        found = False
        for i, m in enumerate(proc.memory_expressions):
            if m.space != "global" or not m.is_read or i in staged or not m.loops:
                continue
            loop = enclosing_loop(proc, m, m.loops[-1])
            why = loop_obstacle(loop, env)
            kind = None
            if not why:
                kind, why = classify(m, loop, env)
            if not why and m.array in written:
                why = written_array_obstacle(proc, ctx.am.get(proc, ShapeAnalysis)[0], m, loop,
                                             env)
            if not why and loop_index is not None and proc.loops.index(loop) != loop_index:
                why = "in another loop than the one already staged"
            if why:
                ctx.remark("missed", self.name, proc, f"{m.describe()}: not staged for reuse: "
                           f"{why}")
                continue
            loop_index = proc.loops.index(loop)
            new = staging_of(proc, m, kind)
            match = next((s for s in stagings if (s.array, s.kind, s.y, s.x) ==
                          (new.array, new.kind, new.y, new.x)), None)
            if match is None:
                match = new
                stagings.append(match)
            match.accesses.append(i)
            found = True
            ctx.remark("analysis", self.name, proc, f"{m.describe()}: the same for all threads "
                       f"along {REUSE_KINDS[kind]}: staged for reuse")
        if not found:
            ctx.remark("missed", self.name, proc, "no read in a tileable loop is shared "
                       "between threads")
            return None, []
        return loop_index, stagings

def _reuse(kind: str, block: tuple[int, int]) -> int:
    along = REUSE_KINDS[kind]
    return block[0] if along == "x" else block[1] if along == "y" else block[0] * block[1]
