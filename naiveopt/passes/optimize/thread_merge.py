"""Thread merge (paper 002, MergePass): each thread computes several outputs.

After staging, a thread of MM reads one value of A's tile and one of B's per k and output.
Merging MY threads along y into one (each thread computes MY outputs, a block-cyclic set of
rows) lets the value read from B's tile be loaded into a register once and used MY times, and
enlarges the region each block covers (so the tiles serve more outputs). The copies are
unrolled: each has its own accumulators and guard; the compiler keeps shared values in
registers. The factors are chosen by the occupancy model: more outputs per thread need more
registers, and a variant whose occupancy falls below the target is rejected with a remark.
``--merge X:Y`` forces the factors.

Register tiling (issue 18) adds, for 2-D kernels whose staged elements are 4-byte words, the
layout of cuBLAS-class SGEMM as further variants: 16x16 threads with 8x8 (8x4, 4x8, 4x4)
micro-tiles whose outputs come in runs of four adjacent ones (copies.py), a k-tile of 8, and
the row kinds' tiles stored k-major (plan.py), so that each run's values are one 128-bit
shared load and an 8x8 tile issues 4 of them per 64 FMAs where the block-cyclic 2x4 issues
6 loads per 8. They go through the same selection (estimated time, registers, occupancy)
and win only where the model prefers them.

It needs a tiled kernel (coalescing or thread-block merge fired) whose code uses thread ids only
through idx/idy (tidx, bidx... would change meaning under merging).
"""
from __future__ import annotations

from dataclasses import replace

from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis
from ...ir import GProcedure
from ...ir.elements import element_bytes
from ...ir.vector import VECTOR_ELEMENTS
from ...launch import unguarded_obstacle, uses_y
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .selection import Variant, choose
from .tiling import (TilingAnalysis, TilingPlan, fits_unguarded, tiles_bytes, traffic,
                     uses_raw_thread_ids)



class ThreadMerge(OptimizationPass):
    name = "thread-merge"
    requires = ("memory-expressions", "nvcc")
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)    # it records the plan

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        plan: TilingPlan | None = ctx.am.get(proc, TilingAnalysis)
        if plan is None:
            ctx.remark("missed", self.name, proc, "no staged loop to merge threads over")
            return PreservedAnalyses.all()
        if uses_raw_thread_ids(plan.original):
            ctx.remark("missed", self.name, proc, "the kernel uses tidx/tidy/bidx/bidy "
                       "directly, whose meaning merging would change")
            return PreservedAnalyses.all()
        forced = ctx.options.merge
        if forced and forced[1] != 1 and not uses_y(proc):
            ctx.remark("missed", self.name, proc, f"--merge {forced[0]}:{forced[1]}: the kernel "
                       f"has no y dimension, so merging along y would repeat each thread's "
                       f"work; merging {forced[0]}:1")
            forced = (forced[0], 1)
        target = get_target(ctx.arch)
        candidates = target.candidates
        factors = [tuple(forced)] if forced else (
            candidates.thread_merge_2d if uses_y(proc) else candidates.thread_merge_1d)
        guarded_kernel = ctx.am.get(plan.original, ShapeAnalysis)[0].guard is not None
        variants = []
        for mx, my in factors:
            candidate = replace(plan, merge=(mx, my))
            if not fits_unguarded(plan.original, candidate, guarded_kernel):
                cx, cy = candidate.coverage
                ctx.remark("missed", self.name, proc, f"merge {mx}x{my} rejected: covers "
                           f"{cx}x{cy} threads: "
                           f"{unguarded_obstacle(plan.original, candidate.coverage)}")
                continue
            shared = tiles_bytes(candidate, target)
            variants.append(Variant(f"merge x={mx} y={my}", plan.block,
                                    (-traffic(candidate), -(mx * my)), plan=candidate,
                                    shared_bytes=shared))
        tiles = ctx.options.register_tile
        if tiles:       # --register-tile X:Y: that variant only
            variants = self._register_tiled(plan, target, guarded_kernel, (tiles,))
            if not variants:
                ctx.remark("missed", self.name, proc, f"--register-tile {tiles[0]}:{tiles[1]}: "
                           "a staged element is not a 4-byte word, or the tile does not fit "
                           "the kernel's unguarded launch")
        elif not forced and uses_y(proc):
            variants += self._register_tiled(plan, target, guarded_kernel,
                                             target.candidates.register_tiles)
        if not variants:
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants)
        if best is None or best.plan.merge == (1, 1):
            if best is not None:
                ctx.remark("missed", self.name, proc, "no merge factor beats one output per "
                           "thread within the occupancy target")
            return PreservedAnalyses.all()
        adopt(proc, best.proc, ctx)
        ctx.am.record(proc, TilingAnalysis, best.plan)
        mx, my = best.plan.merge
        if best.plan.register_tiled:
            ctx.remark("applied", self.name, proc, f"register-tiled: each thread computes "
                       f"{mx}x{my} outputs in runs of {best.plan.group} adjacent ones; block "
                       f"{best.plan.block[0]}x{best.plan.block[1]} covers "
                       f"{best.plan.coverage[0]}x{best.plan.coverage[1]} outputs; k-tile "
                       f"{best.plan.tile}, row tiles stored k-major; "
                       f"{traffic(best.plan):.3f} global loads per output per iteration; "
                       f"{best.describe()}")
            return None
        ctx.remark("applied", self.name, proc, f"each thread computes {mx}x{my} outputs "
                   f"(x={mx}, y={my}); block covers {best.plan.coverage[0]}x"
                   f"{best.plan.coverage[1]} outputs; {traffic(best.plan):.3f} global loads "
                   f"per output per iteration; {best.describe()}")

    @staticmethod
    def _register_tiled(plan: TilingPlan, target, guarded_kernel: bool,
                        tiles: tuple[tuple[int, int], ...]) -> list[Variant]:
        """The register-tiled variants of ``plan`` (module docstring); none where a staged
        element is not a 4-byte word (one run is one 128-bit vector of them)."""
        if any(s.elem_type not in VECTOR_ELEMENTS or element_bytes(s.elem_type) != 4
               for s in plan.stagings):
            return []
        candidates = target.candidates
        out = []
        for mx, my in tiles:
            candidate = replace(plan, block=candidates.register_tile_block,
                                tile=candidates.register_tile_k, merge=(mx, my), group=4,
                                k_major=True, peel=True, prefetch=False,
                                load_width=4)
            if not fits_unguarded(plan.original, candidate, guarded_kernel):
                continue
            out.append(Variant(f"register tile x={mx} y={my}", candidate.block,
                               (-traffic(candidate), -(mx * my)), plan=candidate,
                               shared_bytes=tiles_bytes(candidate, target)))
        return out
