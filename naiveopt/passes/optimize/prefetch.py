"""Register prefetching of staged tiles (paper 002, sect. 3.6 "data prefetching").

A staged loop loads a k-tile, waits at a barrier, computes on it and waits again: while a block
loads, its threads have nothing else to do, and only other resident blocks hide the latency.
Prefetching issues the global loads of tile k+1 into registers before the block computes on
tile k, so the loads are in flight during the compute; the next iteration stores the registers
into the shared tile (tiling/loads.py generates the code from the plan's ``prefetch`` flag).

The registers are paid for with occupancy: each thread holds its share of every tile (MV's
256x32 tile on 256 threads is 32 floats per thread). The pass builds the prefetching variant,
measures its registers with the NVCC pass and keeps it only when occupancy stays at or above the
target's ``occupancy_target``; fewer resident warps would cost more latency hiding than the
prefetch gains. On a target without a resource query of its own (AMD) the registers of the
CUDA form compiled for sm_90 stand in for the vector registers (the same scalar code), and the
remark says so; with no resource query at all the pass declines, since it cannot check the
rule.
"""
from __future__ import annotations

from dataclasses import replace

from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .selection import measure_refinement
from .tiling import TilingAnalysis, TilingPlan, prefetch_registers


class Prefetch(OptimizationPass):
    name = "prefetch"
    requires = ("memory-expressions", "nvcc")
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)    # it records the plan

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        plan: TilingPlan | None = ctx.am.get(proc, TilingAnalysis)
        if plan is None:
            ctx.remark("missed", self.name, proc, "no staged loop")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        candidate = replace(plan, prefetch=True)
        registers = prefetch_registers(candidate)
        measured, why = measure_refinement(ctx, candidate, target)
        if measured is None:
            ctx.remark("missed", self.name, proc, f"prefetching {registers} registers per "
                       f"thread not applied: {why}")
            return PreservedAnalyses.all()
        if not measured.keeps_occupancy(target):
            ctx.remark("missed", self.name, proc, f"prefetching would need {registers} "
                       f"registers per thread: {measured.facts} < "
                       f"{target.occupancy_target:.0%} (limited by {measured.limiter})")
            return PreservedAnalyses.all()
        adopt(proc, measured.proc, ctx)
        ctx.am.record(proc, TilingAnalysis, candidate)
        ctx.remark("applied", self.name, proc, f"prefetching {registers} registers per "
                   "thread: the next tile's loads are issued before the compute; "
                   f"{measured.facts} >= {target.occupancy_target:.0%}")
