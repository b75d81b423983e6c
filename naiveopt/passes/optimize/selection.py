"""Choosing among variants of a transformation by their estimated time.

Each variant (block shape, tile width, merge factor) is built, its registers and shared memory
are measured by the NVCC pass for ``--arch`` (all variants in one compile), and its occupancy is
computed from the target description. Then:

1. drop variants that do not fit (shared memory per block, registers per thread, threads per
   block) or that the resource query rejects;
2. estimate each at the sizes of interest (``PassContext.sizes``: metadata's default set, -D,
   macros; unknown sizes at 4096) with the cost model, from its code (cost/static.py): the
   fastest wins, and a variant of lower occupancy wins where the model says it is faster;
3. among the variants within ``TIE`` of the fastest (counting the launch's fixed cost,
   ``Target.launch_us``: at tiny sizes every variant is), which the static model cannot tell
   apart, the rule of paper 002 (MergePass) and paper 000 (sect. 4) decides: those with enough
   resident warps to hide latency (occupancy >= the target's ``occupancy_target``; else the
   best occupancy reached), and among them the most reuse (larger tiles and merge factors).

Remarks give the chosen variant's estimate and bound, and for each rejected one its estimate
and why.

On targets without a resource query (AMD), registers are unknown and occupancy is computed
from threads and shared memory alone; the remarks say so.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...cost import Estimate
from ...cost.static import static_work
from ...ir import GProcedure
from ...targets import Target, get_target, occupancy
from ..functional.nvcc import measure, measure_many
from ..manager import PassContext
from .tiling import TilingPlan, fits_unguarded, generate, tiles_bytes


#: Estimates within this fraction of the fastest are ties for the static model, which reads
#: neither nvcc's unrolling nor its register reuse exactly: among them the occupancy target and
#: reuse decide, as before the model.
TIE = 0.05


@dataclass
class Variant:
    label: str
    block: tuple[int, int]
    score: tuple
    proc: GProcedure | None = None
    plan: object | None = None            # the tiling plan the variant was built from
    shared_bytes: int = 0                 # static shared memory it declares
    registers: int | None = None
    occupancy: float = 0.0
    limiter: str = ""
    notes: list[str] = field(default_factory=list)
    estimate: Estimate | None = None      # the cost model's, at the sizes of interest
    assumed: list[str] = field(default_factory=list)   # what the estimate had to assume

    def describe(self) -> str:
        regs = f"{self.registers} registers, " if self.registers is not None else ""
        return (f"{self.label}: block {self.block[0]}x{self.block[1]}, {regs}"
                f"{self.shared_bytes} B shared, occupancy {self.occupancy:.0%}"
                f" (limited by {self.limiter})")


def tiling_variants(original: GProcedure, loop_index: int, stagings: list,
                    blocks: list[tuple[int, int]], tiles: tuple[int, ...], guarded: bool,
                    target: Target, score: Callable) -> list[Variant]:
    """One variant per (block, tile) of a tiling plan that keeps an unguarded kernel's launch
    exact; ``score(plan)`` ranks them by reuse."""
    variants = []
    for block in blocks:
        for tile in tiles:
            plan = TilingPlan(original, loop_index, stagings, block, tile)
            if fits_unguarded(original, plan, guarded):
                variants.append(Variant(f"block {block[0]}x{block[1]} tile {tile}", block,
                                        score(plan), plan=plan,
                                        shared_bytes=tiles_bytes(plan, target)))
    return variants


def choose(ctx: PassContext, proc: GProcedure, pass_name: str, variants: list[Variant],
           build: Callable[[Variant], GProcedure | None] | None = None) -> Variant | None:
    """Build, measure and rank ``variants``; remark on every rejection; return the winner.

    Variants carrying a tiling plan are built by the tiling engine unless ``build`` is given.
    """
    target = get_target(ctx.arch)
    if build is None:
        def build(v: Variant) -> GProcedure | None:
            built, why = generate(v.plan, target, ctx.am)
            if built is None:
                ctx.remark("missed", pass_name, proc, f"{v.label} not built: {why}")
            return built

    built_ones: list[Variant] = []
    for v in variants:
        threads = v.block[0] * v.block[1]
        if threads > target.threads_per_block:
            ctx.remark("missed", pass_name, proc, f"{v.label} rejected: {threads} threads per "
                       f"block > {target.threads_per_block}")
            continue
        if v.shared_bytes > target.shared_per_block:
            ctx.remark("missed", pass_name, proc, f"{v.label} rejected: {v.shared_bytes} B "
                       f"shared memory > {target.shared_per_block} B per block")
            continue
        built = build(v)
        if built is None:
            continue
        v.proc = built
        built_ones.append(v)
    # all variants measured in one compile (nvcc.measure_many), not one each
    measured = (measure_many(ctx.module, [v.proc for v in built_ones], ctx.arch)
                if target.vendor == "nvidia" else [(None, "")] * len(built_ones))
    fitting = [v for v, m in zip(built_ones, measured)
               if _measure(ctx, target, v, m, pass_name, proc)]
    if not fitting:
        return None
    for v in fitting:
        work = static_work(v.proc, ctx.module, target, ctx.sizes)
        v.estimate = work.estimate(target)
        v.assumed = work.notes
    # the model ranks, a launch's fixed cost counted; variants it cannot tell apart (within
    # TIE) go by the rule it refines
    launch_s = target.launch_us * 1e-6
    fastest = min(v.estimate.seconds for v in fitting) + launch_s
    near = [v for v in fitting if v.estimate.seconds + launch_s <= fastest * (1 + TIE)]
    good = [v for v in near if v.occupancy >= target.occupancy_target]
    most = max(v.occupancy for v in near)
    pool = good or [v for v in near if v.occupancy == most]
    best = max(pool, key=lambda v: v.score)
    at = _sizes_note(ctx, best)
    ctx.remark("analysis", pass_name, proc, f"{best.label} chosen: estimated "
               f"{best.estimate.describe()}{at}")
    for v in fitting:
        if v is best:
            continue
        if v not in near:
            why = (f"estimated {_us(v)} ({v.estimate.bound}-bound), slower than "
                   f"{_us(best)}")
        elif v.occupancy < target.occupancy_target and v not in pool:
            why = (f"estimated {_us(v)}, as fast as the chosen variant within {TIE:.0%}, and "
                   f"occupancy {v.occupancy:.0%} < {target.occupancy_target:.0%} "
                   f"({v.limiter})")
        else:
            why = (f"estimated {_us(v)}, as fast as the chosen variant within {TIE:.0%}, "
                   "with less reuse")
        ctx.remark("analysis", pass_name, proc, f"{v.describe()} not chosen: {why}")
    return best


def beats_as_written(ctx: PassContext, proc: GProcedure, pass_name: str, best: Variant
                     ) -> bool:
    """Whether the chosen variant is estimated faster than ``proc`` as it is (the kernel
    before the pass) by more than ``TIE``; where not, a missed remark gives both estimates.
    A pass whose gain depends on the target's caches (staging what L1 may already hold)
    asks this before it rewrites: ties keep the kernel as written, which needs no barrier,
    no shared memory and no new launch."""
    target = get_target(ctx.arch)
    base = static_work(proc, ctx.module, target, ctx.sizes).estimate(target)
    launch_s = target.launch_us * 1e-6
    if best.estimate.seconds + launch_s < (base.seconds + launch_s) * (1 - TIE):
        return True
    ctx.remark("missed", pass_name, proc, f"not applied: the best variant ({best.label}) is "
               f"estimated {_us(best)} ({best.estimate.bound}-bound), not faster by "
               f"{TIE:.0%} than the kernel as written, estimated {base.seconds * 1e6:.1f} us "
               f"({base.bound}-bound){_sizes_note(ctx, best)}")
    return False


def _us(v: Variant) -> str:
    return f"{v.estimate.seconds * 1e6:.1f} us"


def _sizes_note(ctx: PassContext, v: Variant) -> str:
    """' at H=4096, W=4096 (metadata default)' and what the estimate assumed."""
    sizes = ", ".join(f"{k}={n}" for k, n in ctx.sizes.items())
    out = f" at {sizes} ({ctx.sizes_from})" if sizes else ""
    if v.assumed:
        out += f"; {'; '.join(v.assumed)}"
    return out


def _measure(ctx: PassContext, target: Target, v: Variant, measured, pass_name: str,
             proc: GProcedure) -> bool:
    """Record the variant's ``measured`` resources and occupancy; False (with a remark) where
    it does not fit."""
    threads = v.block[0] * v.block[1]
    if target.vendor == "nvidia":
        res, why = measured
        if res is None and "not available" not in why and "neither" not in why:
            ctx.remark("missed", pass_name, proc, f"{v.label} rejected: {why}")
            return False
        if res is not None:
            v.registers, v.shared_bytes = res.registers, res.shared_bytes
            v.proc.resources = res
            if res.registers > target.registers_per_thread:
                ctx.remark("missed", pass_name, proc, f"{v.label} rejected: {res.registers} "
                           f"registers > {target.registers_per_thread}")
                return False
        else:
            v.notes.append("registers unknown (no nvcc/NVRTC)")
    else:
        v.notes.append(f"registers unknown on {target.name}")
    v.occupancy, v.limiter = occupancy(target, threads, v.registers, v.shared_bytes)
    return True


@dataclass
class Refinement:
    """A refined tiling plan, built and measured (see :func:`measure_refinement`)."""

    proc: GProcedure
    registers: int
    occupancy: float
    limiter: str
    estimate: str           # '' or why the register count is another architecture's

    @property
    def facts(self) -> str:
        return f"{self.registers} registers{self.estimate}, occupancy {self.occupancy:.0%}"

    def keeps_occupancy(self, target: Target) -> bool:
        return self.registers <= target.registers_per_thread and \
            self.occupancy >= target.occupancy_target


def measure_refinement(ctx: PassContext, plan, target: Target
                       ) -> tuple[Refinement | None, str]:
    """Build ``plan`` (a refinement of the kernel's chosen tiling: prefetching, vector tile
    loads) and measure it for a keep-or-drop decision against the occupancy target; or
    (None, why it cannot be). Without a resource query of its own the target borrows the
    registers of the compile for its ``register_proxy`` (targets.py); with no query at all the
    refinement cannot be checked, and passes then decline."""
    built, why = generate(plan, target, ctx.am)
    if built is None:
        return None, f"not built: {why}"
    arch = target.register_proxy or ctx.arch
    res, why = measure(ctx.module, built, arch)
    if res is None:
        return None, f"its occupancy cannot be checked ({why})"
    shared = res.shared_bytes if target.vendor == "nvidia" else tiles_bytes(plan, target)
    occ, limiter = occupancy(target, plan.block[0] * plan.block[1], res.registers, shared)
    if target.vendor == "nvidia":
        built.resources = res
    return Refinement(built, res.registers, occ, limiter,
                      "" if arch == ctx.arch else f" (registers of the {arch} compile)"), ""
