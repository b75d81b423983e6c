"""``naiveopt profile``: memory behaviour of a kernel from its address trace, on the CPU.

The kernel (naive, or as naiveopt optimizes it) is written as OpenCL, instrumented
(instrument.py), run on PoCL at the profile sizes, and its trace turned into per-site and total
metrics (metrics.py) under the target's warp size, sector size and bank layout. Sampling: at
most ``max_blocks`` blocks record (every k-th block id), and totals are scaled to the whole
launch. Reads through textures/images (``--memory texture``) are not array accesses in the
kernel and are not recorded: they do not count as global-memory sectors, as on hardware, where
they take the texture path.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..api import compile_module
from ..cost import Estimate, KernelWork, dram_bytes, estimate
from ..cost.static import static_work
from ..emit import render
from ..errors import NaiveoptError
from ..frontend import parse_unit
from ..ir.elements import element_bytes
from ..ir.textures import param_layout
from ..launch import size_arguments
from ..passes.options import PipelineOptions
from ..targets import get_target, occupancy
from ..verify import opencl
from ..verify.check import launch_sizes, make_arg
from ..verify.expr import evaluate
from ..verify.spec import FileSpec, with_file_data
from .instrument import RECORD_WORDS, RECORDER, instrument
from .metrics import SiteMetrics, Totals, analyse

DEFAULT_MAX_BLOCKS = 8
FIRST_CAPACITY = 1 << 20      # records; the run is repeated with the exact size if it overflows


@dataclass
class KernelProfile:
    kernel: str
    variant: str                # naive | optimized
    passes: list[str]
    sizes: dict[str, int]
    block: tuple[int, ...]         # (x, y), or (x, y, z) where z > 1
    blocks: int              # all of them, across x, y and z (sampled evenly: _run's stride)
    sampled_blocks: int
    sites: list[SiteMetrics]
    totals: Totals

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "variant": self.variant, "passes": self.passes,
                "sizes": self.sizes, "block": list(self.block), "blocks": self.blocks,
                "sampled_blocks": self.sampled_blocks,
                "sites": [s.to_json() for s in self.sites], "totals": self.totals.to_json()}


def profile_sizes(spec: FileSpec, defines: dict[str, str]) -> tuple[str, dict[str, int]]:
    """The sizes to profile at: -D values over the 'profile' (else 'test') metadata set."""
    base_name = next((n for n in ("profile", "test", "pragma") if n in spec.sizes), None)
    base = dict(spec.sizes.get(base_name, {})) if base_name else {}
    names = set(base) or set(defines)
    overrides = {k: int(evaluate(v, {})) for k, v in defines.items()
                 if k in names and v.strip().lstrip("-").isdigit()}
    sizes = {**base, **overrides}
    if not sizes:
        raise NaiveoptError("profiling needs problem sizes: metadata, -D NAME=VALUE or "
                            "'#pragma naiveopt sizes(...)'")
    return ("cli" if overrides else base_name or "cli"), sizes


def profile_file(source: str, filename: str, *, arch: str = "sm_90", opt: bool = False,
                 defines: dict[str, str] | None = None, metadata: str | None = None,
                 options: PipelineOptions | dict | None = None,
                 max_blocks: int = DEFAULT_MAX_BLOCKS
                 ) -> list[KernelProfile]:
    """Profile every kernel of a file, naive (``opt=False``) or optimized."""
    defines = dict(defines or {})
    unit = parse_unit(filename, source, defines)
    c = compile_module(unit, "opencl", arch, opt, metadata, options=options)
    if c.spec is None:
        raise NaiveoptError("profiling needs metadata or '#pragma naiveopt' sizes and shapes",
                            filename)
    _, sizes = profile_sizes(c.spec, defines)
    target = get_target(arch)
    macros = unit.macros
    analysed = {p.name: p for p in c.analysed.procedures}
    out = []
    for proc in c.module.procedures:
        kspec = c.spec.kernels.get(proc.name)
        if kspec is None:
            raise NaiveoptError(f"no metadata for kernel '{proc.name}'", filename)
        kspec = with_file_data(kspec, c.module, c.spec, defines)
        geo = c.geometries[proc.name]
        module, sites = instrument(c.module, proc)
        text = RECORDER + "\n" + render(module, "opencl", arch, {proc.name: geo}, {},
                                        filename, None)
        global_size, local_size = launch_sizes(geo, sizes)
        blocks = int(np.prod([g // b for g, b in zip(global_size, local_size)]))
        stride = max(1, -(-blocks // max_blocks))
        sampled = len(range(0, blocks, stride))
        rng = np.random.default_rng(7)
        args = [make_arg(a, sizes, rng) for a in kspec.args]
        # the sizes a bounds guard added follow the naive kernel's arguments
        args += [np.int32(v) for v in size_arguments(proc.size_params, sizes)]
        options_ = [f"-D{n}={sizes[n]}" for n in kspec.defines if n in sizes]
        options_ += [f"-D{k}={v}" for k, v in macros.items() if k not in kspec.defines]
        trace, count = _run(text, proc.name, options_, args, global_size, local_size, stride,
                            param_layout(proc))
        array_sectors = {}
        for a in kspec.args:
            if a.shape:
                elements = int(np.prod([int(evaluate(d, sizes)) for d in a.shape]))
                array_sectors[a.name] = -(-elements * element_bytes(a.type)
                                          // target.sector_bytes)
        site_metrics, totals = analyse(trace[:count * RECORD_WORDS], sites, target,
                                       blocks / sampled, array_sectors)
        if proc.resources is not None:
            # achieved on the GPU, launch included (Nsight Compute agrees); the calculator's
            # figure, which ignores how many blocks there are, beside it
            totals.occupancy, limiter = occupancy(target, int(np.prod(local_size)),
                                                  proc.resources.registers,
                                                  proc.resources.shared_bytes, blocks)
            totals.extra["occupancy_limited_by"] = limiter
            totals.extra["theoretical_occupancy"] = occupancy(
                target, int(np.prod(local_size)), proc.resources.registers,
                proc.resources.shared_bytes)[0]
            totals.extra["registers"] = proc.resources.registers
        # the loads a warp keeps in flight: a property of the code, not of the trace
        in_flight = static_work(analysed[proc.name], c.analysed, target,
                                {**unit.fixed, **sizes}).work.loads_in_flight
        totals.extra["estimate"] = _estimate(target, site_metrics, totals, blocks,
                                             int(np.prod(local_size)), proc.resources,
                                             in_flight).to_json()
        out.append(KernelProfile(proc.name, "optimized" if opt else "naive",
                                 c.ctx.applied.get(proc.name, []), sizes,
                                 local_size if local_size[2] != 1 else local_size[:2], blocks,
                                 sampled, site_metrics, totals))
    return out


def _estimate(target, sites: list[SiteMetrics], totals: Totals, blocks: int, threads: int,
              resources, in_flight: float) -> Estimate:
    """The cost model's estimate of the profiled launch (cost/model.py) from its trace: DRAM
    bytes from the compulsory and requested sectors and the L2 size, L2 bytes from the
    sectors, shared-memory wavefronts, bytes per warp load; the loads a warp keeps in flight
    (``in_flight``) are the static model's (cost/static.py: its load instructions once nvcc
    unrolled, one iteration's where a loop stores through aliasing pointers), which the trace
    cannot tell. FP32 work is not in the trace: compute-bound kernels are estimated by their
    memory bounds alone."""
    sector = target.sector_bytes
    requested = totals.global_sectors * sector
    loads = totals.global_load_requests
    work = KernelWork(
        blocks=blocks, threads_per_block=threads,
        dram_bytes=dram_bytes(totals.compulsory_sectors * sector, requested, target),
        l2_bytes=requested,
        shared_wavefronts=sum(s.sectors for s in sites if s.site.space == "shared"),
        registers=resources.registers if resources is not None else None,
        shared_bytes=resources.shared_bytes if resources is not None else 0,
        bytes_per_request=totals.global_load_sectors * sector / loads if loads else 128.0,
        loads_in_flight=in_flight)
    return estimate(work, target)


def _run(text, kernel, options, args, global_size, local_size, stride, layout):
    capacity = FIRST_CAPACITY
    recorder = [(len(args) + k, 0) for k in range(4)]     # the trace arguments, appended
    for _ in range(2):
        trace = np.zeros(capacity * RECORD_WORDS, dtype=np.uint32)
        counter = np.zeros(1, dtype=np.uint32)
        try:
            results = opencl.run(text, kernel, options, args + [
                trace, counter, np.uint32(capacity), np.uint32(stride)], global_size,
                local_size, layout + recorder)
        except opencl.KernelCrash as exc:
            # every access of the sampled blocks is recorded: a few large blocks (a
            # register-tiled product's 128x128 outputs each) make a trace of millions
            raise NaiveoptError(f"the traced run of {kernel} failed on the CPU OpenCL device "
                                f"({exc}): profile at smaller sizes (-D) or record fewer "
                                "blocks (--max-blocks)") from exc
        count = int(results[-1][0])
        if count <= capacity:
            return results[-2], count
        capacity = count
    raise NaiveoptError("the access trace kept growing between runs")
