"""Asynchronous multi-stage tile pipelines (``cp.async``, sm_80 and later).

A staged loop loads a k-tile, waits at a barrier and computes; register prefetch (prefetch.py)
overlaps the next tile's loads with the compute by holding them in registers, which costs
occupancy (MV: 40 -> 64 registers) and is declined where the registers do not fit. Since
sm_80 a thread can copy from global into shared memory without a register (``cp.async``):
the tiles get S buffers (stages), S-1 tiles are in flight while the block computes on one,
and the only cost is shared memory, S times the tiles' (tiling/loads.py, ``pipeline_loads``,
generates the loop; ir/async_copy.py the copies).

The pass builds the 2- and 3-stage pipelines of the kernel's staged loop (without register
prefetch) next to the loop as it is (``--pipeline-stages N`` builds only N's), measures each
with the NVCC pass and lets the cost model choose (selection.choose): a variant whose shared
memory does not fit a block, or whose estimate is slower (fewer resident blocks for the deeper
buffers), loses. Among variants the model cannot tell apart, those at the occupancy target
win, and among them the pipeline with the fewest stages: the static model sees the registers
and the shared memory a pipeline saves or costs, but not the latency it hides within a block,
which is why a pipeline is built at all (paper 002 sect. 3.6 prefetches for the same reason).

OpenCL outputs keep register prefetch: OpenCL C has no asynchronous copy a thread can wait
for per tile (``async_work_group_copy`` is a whole-group copy with its own event, and PoCL
runs it synchronously). On architectures before sm_80 there is nothing to gain: the copies
would be synchronous.
"""
from __future__ import annotations

from dataclasses import replace

from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure
from ...ir.async_copy import COPY_BYTES, can_copy
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .selection import Variant, choose
from .tiling import TilingAnalysis, TilingPlan, tiles_bytes

class AsyncPipeline(OptimizationPass):
    name = "async-pipeline"
    requires = ("memory-expressions", "nvcc")
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)    # it records the plan

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        plan: TilingPlan | None = ctx.am.get(proc, TilingAnalysis)
        if plan is None:
            ctx.remark("missed", self.name, proc, "no staged loop")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        if ctx.target != "cuda" or not target.async_copy:
            where = "OpenCL output" if ctx.target != "cuda" else ctx.arch
            ctx.remark("missed", self.name, proc, f"{where} has no asynchronous copy "
                       "(cp.async, sm_80 and later): the tiles stay "
                       f"{'prefetched through registers' if plan.prefetch else 'synchronous'}")
            return PreservedAnalyses.all()
        if plan.stages > 1:
            ctx.remark("missed", self.name, proc, f"already a {plan.stages}-stage pipeline")
            return PreservedAnalyses.all()
        wrong = [s for s in plan.stagings if not can_copy(s.elem_type)]
        if wrong:
            ctx.remark("missed", self.name, proc, f"tile of {wrong[0].array} has elements of "
                       f"type '{wrong[0].elem_type}': cp.async copies elements of "
                       f"{' or '.join(map(str, COPY_BYTES))} bytes")
            return PreservedAnalyses.all()
        how = "register prefetch" if plan.prefetch else "synchronous loads"
        current = Variant(f"the tiles as they are ({how})", plan.block, (0, 0), plan=plan,
                          shared_bytes=tiles_bytes(plan, target))
        forced = ctx.options.pipeline_stages
        if forced == 1:
            ctx.remark("missed", self.name, proc, f"--pipeline-stages 1: the tiles keep {how}")
            return PreservedAnalyses.all()
        variants = [] if forced else [current]
        for stages in (forced,) if forced else target.candidates.pipeline_stages:
            staged = replace(plan, prefetch=False, stages=stages, load_width=1)
            variants.append(Variant(f"{stages}-stage cp.async pipeline", plan.block,
                                    (1, -stages), plan=staged,
                                    shared_bytes=tiles_bytes(staged, target)))
        best = choose(ctx, proc, self.name, variants)
        if best is None or best is current:
            ctx.remark("missed", self.name, proc, "no pipeline chosen: the cost model "
                       f"prefers the tiles as they are ({how})" if best else
                       f"no pipeline fits{f' (--pipeline-stages {forced})' if forced else ''}")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        ctx.am.record(proc, TilingAnalysis, best.plan)
        ctx.remark("applied", self.name, proc, f"{best.label} replaces {how}: "
                   f"{best.plan.stages - 1} tile(s) in flight while the block computes, "
                   f"{best.shared_bytes} B shared memory, {best.registers} registers, "
                   f"occupancy {best.occupancy:.0%}; estimated {best.estimate.describe()}")
        return PreservedAnalyses.none().preserve(TilingAnalysis)
