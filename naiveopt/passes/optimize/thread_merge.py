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

from ... import launch
from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis
from ...cost.static import DEFAULT_SIZE
from ...ir import GProcedure
from ...ir.elements import element_bytes
from ...ir.vector import VECTOR_ELEMENTS
from ...launch import takes_naive_launch, unguarded_obstacle, uses_y
from ...targets import get_target
from ..manager import OptimizationPass, PassContext, adopt
from .selection import Variant, choose
from .tiling.bounds_guard import guard_obstacle, guard_remark, with_bounds_guard
from .tiling import (TilingAnalysis, TilingPlan, fits_unguarded, guards_thread_space,
                     tiles_bytes, traffic, uses_raw_thread_ids)



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
        fit = _Fit(plan, ctx)
        variants = []
        for mx, my in factors:
            candidate, why = fit(replace(plan, merge=(mx, my)))
            if candidate is None:
                cx, cy = mx * plan.block[0], my * plan.block[1]
                ctx.remark("missed", self.name, proc, f"merge {mx}x{my} rejected: covers "
                           f"{cx}x{cy} threads: {why}")
                continue
            shared = tiles_bytes(candidate, target)
            variants.append(Variant(f"merge x={mx} y={my}", plan.block,
                                    (-traffic(candidate), -(mx * my)), plan=candidate,
                                    shared_bytes=shared))
        tiles = ctx.options.register_tile
        block = self._register_tile_block(ctx, proc, target)
        if tiles and not uses_y(proc):
            # (its 2-D block and y copies would all compute the one row: an update such as
            # ``A[i] += ...`` applied once per copy; fuzz 1193/1396)
            ctx.remark("missed", self.name, proc, f"--register-tile {tiles[0]}:{tiles[1]}: the "
                       "kernel has no y dimension, so a register tile would repeat each "
                       "thread's work")
            variants = []
        elif tiles:     # --register-tile X:Y: that variant only
            variants = self._register_tiled(plan, target, fit, (tiles,), block)
            if not variants:
                ctx.remark("missed", self.name, proc, f"--register-tile {tiles[0]}:{tiles[1]}: "
                           "a staged element is not a 4-byte word, or the tile does not fit "
                           "the kernel's unguarded launch")
        elif not forced and uses_y(proc):
            tiles = self._worth_trying(ctx, proc, plan, target, block)
            variants += self._register_tiled(plan, target, fit, tiles, block)
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
        if best.plan.original is not plan.original:
            ctx.remark("applied", self.name, proc, guard_remark(
                best.plan.original, f"its blocks now cover {best.plan.coverage[0]}x"
                f"{best.plan.coverage[1]} outputs"))
        if best.plan.register_tiled:
            ctx.remark("applied", self.name, proc, f"each thread computes {mx}x{my} outputs "
                       f"(x={mx}, y={my}), register-tiled in runs of {best.plan.group} "
                       f"adjacent ones; block {best.plan.block[0]}x{best.plan.block[1]} covers "
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
    def _register_tile_block(ctx: PassContext, proc: GProcedure, target) -> tuple[int, int]:
        """The block of the register-tiled variants: the first of the target's, except for an
        OpenCL output whose naive block it is. OpenCL has no trap, so an output is protected
        from a stale launch of the naive kernel only by ``reqd_work_group_size`` refusing the
        naive work-group; with the naive block kept, the naive launch would run (an unguarded
        kernel's extra work-groups writing out of bounds)."""
        blocks = target.candidates.register_tile_blocks
        return next((b for b in blocks if not takes_naive_launch(proc, ctx.target, b)),
                    blocks[0])

    def _worth_trying(self, ctx: PassContext, proc: GProcedure, plan: TilingPlan, target,
                      block: tuple[int, int]) -> tuple[tuple[int, int], ...]:
        """The register tiles that leave blocks for at least a quarter of the SMs at the
        sizes of interest (unknown sizes taken as the cost model takes them). The model ranks
        the others slowest anyway (at 512^3 gemm's 8x8 tiles are 16 blocks: 40 us estimated
        against 11 us for 4x4's 64 blocks); not building them saves their compiles (64 copies
        of the body each), most of a small kernel's compile time."""
        geo = launch.geometry(plan.original)
        extents = []
        for tree in geo.thread_space_trees[:2]:
            if tree is None:
                return target.candidates.register_tiles
            names = {n: DEFAULT_SIZE for n in launch.variables(tree)}
            try:
                extents.append(launch.evaluate(tree, {**names, **ctx.sizes}))
            except (ValueError, ZeroDivisionError):
                return target.candidates.register_tiles
        out = []
        bx, by = block
        for mx, my in target.candidates.register_tiles:
            blocks = -(-extents[0] // (bx * mx)) * -(-extents[1] // (by * my))
            if 4 * blocks >= target.multiprocessors:
                out.append((mx, my))
            else:
                ctx.remark("analysis", self.name, proc, f"register tile x={mx} y={my} not "
                           f"tried: {blocks} blocks at the sizes of interest for "
                           f"{target.multiprocessors} SMs (fewer than a quarter)")
        return tuple(out)

    @staticmethod
    def _register_tiled(plan: TilingPlan, target, fit: _Fit,
                        tiles: tuple[tuple[int, int], ...], block: tuple[int, int]
                        ) -> list[Variant]:
        """The register-tiled variants of ``plan`` (module docstring); none where a staged
        element is not a 4-byte word (one run is one 128-bit vector of them). Their tile
        loads are scalar: with rows padded to keep the runs 16-byte aligned, a float4 unit
        stored as 4 scalars conflicts 4-way, and the scalar loads, unrolled, cost the hot
        loop less than a point of FFMA share (mm at 4096: 84.5% against 85.0%)."""
        if any(s.elem_type not in VECTOR_ELEMENTS or element_bytes(s.elem_type) != 4
               for s in plan.stagings):
            return []
        candidates = target.candidates
        out = []
        for mx, my in tiles:
            candidate = replace(plan, block=block,
                                tile=candidates.register_tile_k, merge=(mx, my), group=4,
                                k_major=True, peel=True, prefetch=False,
                                load_width=1)
            candidate, _ = fit(candidate)
            if candidate is None:
                continue
            out.append(Variant(f"register tile x={mx} y={my}", candidate.block,
                               (-traffic(candidate), -(mx * my)), plan=candidate,
                               shared_bytes=tiles_bytes(candidate, target)))
        return out


class _Fit:
    """Whether a candidate plan can be launched as it covers the thread space: as it is for a
    kernel with a bounds guard or a cover the launch tiles exactly (launch.unguarded_obstacle),
    else on a copy of the kernel given a guard (tiling/bounds_guard.py; made once)."""

    def __init__(self, plan: TilingPlan, ctx: PassContext) -> None:
        self.plan, self.ctx = plan, ctx
        self.guarded = guards_thread_space(plan.original,
                                           ctx.am.get(plan.original, ShapeAnalysis)[0])
        self._alt: tuple[GProcedure | None, str] | None = None

    def __call__(self, candidate: TilingPlan) -> tuple[TilingPlan | None, str]:
        original = self.plan.original
        if fits_unguarded(original, candidate, self.guarded):
            return candidate, ""
        why = unguarded_obstacle(original, candidate.coverage)
        if self._alt is None:
            obstacle = guard_obstacle(original, self.ctx.module)
            self._alt = (None, obstacle) if obstacle else \
                (with_bounds_guard(original, self.ctx), "")
        alt, obstacle = self._alt
        if alt is None:
            return None, f"{why}; and no bounds guard can be added: {obstacle}"
        return replace(candidate, original=alt), ""
