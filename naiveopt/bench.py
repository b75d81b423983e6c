"""``naiveopt bench KERNEL``: time the naive kernel against naiveopt's output.

On the best device present: a CUDA GPU through cuda-python when there is one, else the OpenCL
device (PoCL on the CPU). Each kernel is launched a few times to warm up, then timed ``runs``
times (at least 20) with device events (on CUDA each sample is n launches back to back, about
1 ms of GPU time, divided by n); the median is reported, with the speedup, the achieved GB/s
(the bytes a launch must move: inputs and outputs once, in-out arrays twice) and, where the
metadata gives the flop count, GFLOP/s. Arguments come from one seeded generator per kernel.
Sizes: ``-D`` values, else the metadata's ``default`` set (the paper's sizes) on a GPU and its
``profile`` set on the CPU.
"""
from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass

import numpy as np

from . import cuda_runner
from .api import compile_module, naive_program
from .emit import render
from .errors import NaiveoptError
from .files import parse_defines, read_source, report_error
from .frontend import parse_unit
from .ir.textures import param_layout
from .launch import size_arguments
from .passes.options import MEMORIES, PipelineOptions
from .verify import opencl
from .verify.check import launch_sizes, make_args
from .verify.expr import evaluate
from .verify.spec import TRAFFIC, with_file_data

MIN_RUNS = 20


def moved_bytes(kspec, args: list) -> int:
    """Bytes a launch of ``kspec`` with ``args`` (make_args) must move at least: each array
    counted by verify.spec.TRAFFIC for its role (an in-out array, gemm's
    c = ... + beta * c, twice: counting it once understated GB/s)."""
    return sum(TRAFFIC.get(spec.role, 1) * value.nbytes
               for spec, value in zip(kspec.args, args) if isinstance(value, np.ndarray))


@dataclass
class BenchResult:
    kernel: str
    device: str
    sizes: dict[str, int]
    passes: list[str]
    naive_s: float
    optimized_s: float
    bytes: int            # bytes a launch must move (moved_bytes), for the GB/s rates
    flops: int | None

    @property
    def speedup(self) -> float:
        return self.naive_s / self.optimized_s

    def to_json(self) -> dict:
        out = {"kernel": self.kernel, "device": self.device, "sizes": self.sizes,
               "passes": self.passes, "naive_ms": self.naive_s * 1e3,
               "optimized_ms": self.optimized_s * 1e3, "speedup": self.speedup,
               "naive_gbps": self.bytes / self.naive_s / 1e9,
               "optimized_gbps": self.bytes / self.optimized_s / 1e9}
        if self.flops:
            out["naive_gflops"] = self.flops / self.naive_s / 1e9
            out["optimized_gflops"] = self.flops / self.optimized_s / 1e9
        return out


def bench_file(source: str, filename: str, *, arch: str = "sm_90",
               defines: dict[str, str] | None = None, runs: int = MIN_RUNS, warmup: int = 3,
               device: str | None = None, size_set: str | None = None,
               options: PipelineOptions | dict | None = None) -> list[BenchResult]:
    """Time every kernel of a file, naive and optimized, on ``device`` (cuda | opencl).
    ``options`` are the optimizer's (e.g. ``{"memory": "texture"}``)."""
    defines = dict(defines or {})
    runs = max(runs, MIN_RUNS)
    device = device or ("cuda" if cuda_runner.available() else "opencl")
    target = "cuda" if device == "cuda" else "opencl"
    unit = parse_unit(filename, source, defines)
    opt = compile_module(unit, target, arch, True, options=options)
    naive = compile_module(unit, target, arch, False)
    spec = opt.spec
    if spec is None:
        raise NaiveoptError("benchmarking needs metadata or '#pragma naiveopt' sizes", filename)
    wanted = size_set or ("default" if device == "cuda" else "profile")
    sizes = dict(spec.sizes.get(wanted) or spec.sizes.get("test") or
                 next(iter(spec.sizes.values()), {}))
    sizes.update({k: int(v) for k, v in defines.items() if v.strip().isdigit()})
    name = cuda_runner.device_name() if device == "cuda" else opencl.device_name()
    macros = unit.macros
    results = []
    for proc in opt.module.procedures:
        kspec = with_file_data(spec.kernels[proc.name], opt.module, spec, defines)
        if device == "cuda" and proc.global_args:
            raise NaiveoptError(f"{proc.name} reads host-filled __constant__ data "
                                f"({', '.join(proc.global_args)}): the CUDA benchmark runner "
                                "does not fill symbols yet; benchmark on OpenCL", filename)
        # One generator for all of a kernel's arguments: a fresh one per argument gave
        # same-shape arrays the same data (mm timed with A == B). make_args also puts index
        # arrays in range.
        args = make_args(kspec, sizes, np.random.default_rng(3))
        build = [f"-D{n}={sizes[n]}" for n in kspec.defines if n in sizes]
        build += [f"-D{k}={v}" for k, v in macros.items() if k not in kspec.defines]
        times = {}
        for label, compiled in (("naive", naive), ("optimized", opt)):
            geo = compiled.geometries[proc.name]
            kernel_proc = next(p for p in compiled.module.procedures if p.name == proc.name)
            layout = param_layout(kernel_proc)
            # (the sizes a bounds guard added follow the naive kernel's arguments)
            run_args = args + [np.int32(v) for v in size_arguments(kernel_proc.size_params,
                                                                   sizes)]
            global_size, local_size = launch_sizes(geo, sizes)
            if device == "cuda":
                text = "\n".join(f"#define {o[2:].replace('=', ' ', 1)}" for o in build) + \
                    "\n" + render(compiled.module, "cuda", arch, compiled.geometries, {},
                                  filename, None)
                grid = tuple(g // b for g, b in zip(global_size, local_size))
                with cuda_runner.CudaKernel(text, proc.name) as kernel:
                    t = kernel.time(run_args, grid, local_size, warmup, runs, layout=layout)
            else:
                text = render(compiled.module, "opencl", arch, compiled.geometries, {},
                              filename, None) if label == "optimized" else None
                if text is None:
                    program = naive_program(unit, spec)
                    text, extra = program.source, program.options
                else:
                    extra = []
                t = opencl.time_kernel(text, proc.name, build + extra, run_args, global_size,
                                       local_size, warmup, runs, layout=layout)
            times[label] = statistics.median(t)
        footprint = moved_bytes(kspec, args)
        flops = int(evaluate(kspec.flops, sizes)) if kspec.flops else None
        results.append(BenchResult(proc.name, name, sizes, opt.ctx.applied.get(proc.name, []),
                                   times["naive"], times["optimized"], footprint, flops))
    return results


PREPARE_SETS = ("paper", "large", "odd", "profile")


def prepare_main(kernel: str | None, out_dir: str, sets: tuple[str, ...], arch: str,
                 ablate: bool = False) -> int:
    """``naiveopt bench --prepare DIR [KERNEL...]``: the GPU kit's CPU side
    (naiveopt/gpu_bundle.py), with progress on stderr and a located error per failed file."""
    import os
    import sys

    from .gpu_bundle import prepare

    source = kernel or "kernels/naive"
    if os.path.isdir(source):
        paths = sorted(os.path.join(source, f) for f in os.listdir(source) if f.endswith(".cu"))
    elif source.endswith(".cu") and os.path.isfile(source):
        paths = [source]
    else:
        print(f"{source}: error: the GPU kit times CUDA kernels: give a .cu file or a "
              "directory of them", file=sys.stderr)
        return 1
    if not paths:
        print(f"{source}: error: no .cu files", file=sys.stderr)
        return 1
    count = len(paths)
    progress = iter(range(1, count + 1))
    doc = prepare(paths, out_dir, sets=sets, arch=arch, ablate=ablate,
                  progress=lambda path: print(f"[{next(progress)}/{count}] {path}",
                                              file=sys.stderr, flush=True))
    for failure in doc["failures"]:
        print(failure["error"], file=sys.stderr)
    timed = [c for c in doc["cases"] if not c.get("skip")]
    print(f"{out_dir}: {len(timed)} cases of {count - len(doc['failures'])} files "
          f"(sets {', '.join(sets)}), {len(doc['cases']) - len(timed)} skipped; run "
          f"'python3 bench/gpu.py {out_dir} --out DIR' on the GPU machine")
    return 1 if doc["failures"] else 0


def bench_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="naiveopt bench", description="Time a naive kernel "
                                "against naiveopt's output on the best device present.")
    p.add_argument("kernel", metavar="KERNEL", nargs="?",
                   help="a kernel file; with --prepare, CUDA files or directories of them "
                   "(default: kernels/naive)")
    p.add_argument("--prepare", metavar="DIR", help="write the GPU benchmark bundle of the "
                   "kernels into DIR (for bench/gpu.py on a GPU machine) instead of timing")
    p.add_argument("--sets", default=",".join(PREPARE_SETS), help="with --prepare: size sets "
                   "(paper, large, odd, or a metadata set name; default %(default)s)")
    p.add_argument("--ablate", action="store_true", help="with --prepare: also each kernel "
                   "with each applied pass disabled (what each pass buys)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--runs", type=int, default=MIN_RUNS, help=f"timed runs (>= {MIN_RUNS})")
    p.add_argument("--device", choices=("cuda", "opencl"), help="default: CUDA if present")
    p.add_argument("--sizes", help="metadata size set (default: 'default' on a GPU, "
                   "'profile' on the CPU)")
    p.add_argument("--memory", choices=MEMORIES, default="global",
                   help="memory of read-only arrays in the optimized kernel")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.prepare:
        return prepare_main(args.kernel, args.prepare, tuple(args.sets.split(",")), args.arch,
                            args.ablate)
    if not args.kernel:
        p.error("KERNEL is required (or --prepare DIR)")
    try:
        results = bench_file(read_source(args.kernel), args.kernel, arch=args.arch,
                             defines=parse_defines(args.defines), runs=args.runs,
                             device=args.device, size_set=args.sizes,
                             options={"memory": args.memory})
    except NaiveoptError as exc:
        return report_error(exc, args.kernel)
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0
    for r in results:
        j = r.to_json()
        rate = (f"{j['naive_gflops']:.2f} -> {j['optimized_gflops']:.2f} GFLOP/s"
                if r.flops else f"{j['naive_gbps']:.2f} -> {j['optimized_gbps']:.2f} GB/s")
        print(f"{r.kernel} on {r.device} at " + ", ".join(f"{k}={v}" for k, v in r.sizes.items())
              + f": naive {j['naive_ms']:.3f} ms, optimized {j['optimized_ms']:.3f} ms "
              f"({', '.join(r.passes) or 'no pass fired'}), speedup {r.speedup:.2f}x, {rate}")
    return 0
