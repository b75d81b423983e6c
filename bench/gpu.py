"""Time a kernel bundle on a GPU: naive vs naiveopt's output vs cuBLAS, checked on the GPU.

    python3 bench/gpu.py BUNDLE --out DIR [--sets paper,odd] [--only mv,mm] [--ncu]

BUNDLE is what ``naiveopt bench --prepare BUNDLE`` wrote on the CPU (naiveopt/gpu_bundle.py).
This file imports numpy and cupy only (the GPU machines have no naiveopt dependencies), so it
runs where nothing can be installed. For each case of the bundle, in order:

1. both sources are compiled with NVRTC (cupy.RawModule) for the device's own architecture,
   with the bundle's build options;
2. inputs come from one seeded generator per case (every argument its own draw, so A != B);
   outputs are poisoned with NaN (integers with a sentinel); the naive and the optimized
   kernel run once each on the same inputs and every array they write is compared (the
   GPU-side verification: a missing barrier or a race shows here, not on PoCL);
3. each kernel is timed with CUDA events around a CUDA graph of N back-to-back launches
   (N so that one replay lasts >= 20 ms; nothing but the launches between the events, so
   host launch latency is not in the figure), after warm-up; the median of 7 replays;
4. the cuBLAS calls that compute the same result (``CUPY_TF32=0``: true FP32), timed alike,
   and a device-to-device copy of the kernel's bytes (the practical bandwidth limit);
5. one JSON line per case is appended to DIR/results.jsonl as soon as it is done, a failure
   is recorded on its line and the run goes on.

``--ncu`` re-runs the named cases (``--only``, default mv, mm, transpose, conv at the
``profile`` size set) once each under Nsight Compute and writes DIR/ncu.jsonl: global load
and store sectors, shared-memory bank conflicts, achieved occupancy and DRAM bytes per kernel,
for the comparison with ``naiveopt profile`` (bench/merge.py).

``--backend opencl`` runs the same cases through the bundle's OpenCL translations with
pyopencl (PoCL on the CPU): the rehearsal CI runs, which exercises everything but the CUDA
calls. bench/merge.py turns the lines into bench/results/<device>-<date>.json and .md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

os.environ.setdefault("CUPY_TF32", "0")      # cuBLAS references in true FP32 (recorded)

import numpy as np  # noqa: E402

#: Relative tolerance per element type when the optimized output is compared with the naive
#: one (the same figures as naiveopt/verify/check.py: float32 arithmetic reordered by tiling
#: stays far inside 1e-4 of the output's scale; integers must match exactly).
RTOLS = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-10}
REPLAY_MS = 20.0        # one timed replay lasts at least this long
REPLAYS = 7             # timed replays; the median is reported
MAX_LAUNCHES = 2000     # launches per graph at most
INT_POISON = -123456789
NCU_METRICS = {
    "gld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "gst_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "shared_ld_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_st_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "duration_ns": "gpu__time_duration.sum",
}
#: More counters for fitting a cost model (``--ncu-extended``): L2 sectors, shared-memory
#: wavefronts, instructions and FFMAs executed, registers, throughput fractions.
NCU_EXTENDED = {
    "l2_sectors": "lts__t_sectors.sum",
    "shared_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "instructions": "smsp__inst_executed.sum",
    "ffma_thread_inst": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "registers_per_thread": "launch__registers_per_thread",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "waves_per_sm": "launch__waves_per_multiprocessor",
}
NCU_DEFAULT = ("mv", "mm", "transpose", "conv")


# ------------------------------------------------------------------------------ data
def make_host_args(case: dict, seed: int) -> list:
    """Every argument of ``case`` from one generator: arrays as flat numpy arrays drawn
    one after another (so two arrays of one shape differ), scalars as numpy scalars."""
    rng = np.random.default_rng(seed)
    out = []
    for a in case["args"]:
        dtype = np.dtype(a["dtype"])
        if "shape" not in a:
            out.append(dtype.type(a["value"]))
            continue
        count = int(np.prod(a["shape"])) if a["shape"] else 0
        fill = a["fill"]
        if fill["kind"] == "uniform":
            value = rng.uniform(fill["low"], fill["high"], size=count)
        elif fill["kind"] == "integers":
            value = rng.integers(fill["low"], fill["high"] + 1, size=count)
        elif fill["kind"] == "index":
            value = rng.integers(0, fill["high"], size=count)
            value = np.sort(value) if fill["sorted"] else value
        elif fill["kind"] == "lower_triangular":
            n = a["shape"][0]
            m = np.tril(rng.uniform(-1, 1, size=(n, n)), -1) / n
            m += np.diag(rng.uniform(1, 2, size=n))
            value = m.ravel()
        else:
            raise ValueError(f"unknown fill {fill['kind']!r} of {a['name']}")
        out.append(value.astype(dtype))
    return out


def sized(variant: dict) -> list:
    """The scalars a variant's kernel takes after the case's arguments: the sizes a bounds
    guard added to an unguarded kernel (naiveopt's GProcedure.size_params), as int32."""
    return [np.int32(v) for v in variant.get("size_args", [])]


def compare(want: np.ndarray, have: np.ndarray) -> dict:
    """Whether the optimized output matches the naive one: every element within the element
    type's rtol of itself or of the output's scale (NaN equal to NaN, so elements neither
    kernel writes stay equal), plus the relative L2 error over the finite elements."""
    kind = want.dtype.name
    if want.dtype.kind in "iu":
        bad = want != have
        result = {"max_abs_error": float(np.abs(want.astype(np.int64) - have).max())
                  if want.size else 0.0}
    else:
        rtol = RTOLS.get(kind, 1e-4)
        finite = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        bad = ~np.isclose(have, want, rtol=rtol, atol=rtol * scale, equal_nan=True)
        both = np.isfinite(want) & np.isfinite(have)
        w, h = want[both].astype(np.float64), have[both].astype(np.float64)
        norm = float(np.linalg.norm(w))
        result = {"max_abs_error": float(np.abs(w - h).max()) if w.size else 0.0,
                  "rel_l2_error": float(np.linalg.norm(w - h) / norm) if norm else 0.0,
                  "unwritten": int(np.isnan(want).sum())}
    result["mismatches"] = int(bad.sum())
    if bad.any():
        first = int(np.argmax(bad))
        result["first_mismatch"] = {"index": first, "naive": want[first].item(),
                                    "optimized": have[first].item()}
    return result


# ------------------------------------------------------------------------------ backends
class CudaBackend:
    """cupy: NVRTC compiles, CUDA graphs of launches timed with events, cuBLAS references."""

    dialect = "cuda"

    def __init__(self) -> None:
        import cupy as cp

        self.cp = cp
        if os.environ.get("NAIVEOPT_GPU_NO_POOL"):
            cp.cuda.set_allocator(None)     # one cudaMalloc per array: compute-sanitizer
            #                                 sees each array's own bounds
        self.device = cp.cuda.Device(0)
        props = cp.cuda.runtime.getDeviceProperties(0)
        self.name = props["name"].decode() if isinstance(props["name"], bytes) \
            else str(props["name"])
        self.cc = f"{props['major']}{props['minor']}"
        attrs = self.device.attributes
        clock_khz = attrs.get("ClockRate") or props.get("clockRate") or 0
        self.info = {
            "device": self.name, "compute_capability": f"{props['major']}.{props['minor']}",
            "multiprocessors": props["multiProcessorCount"],
            "l2_bytes": props.get("l2CacheSize"), "clock_khz": clock_khz,
            "memory_clock_khz": attrs.get("MemoryClockRate"),
            "memory_bus_bits": attrs.get("GlobalMemoryBusWidth"),
            "driver": cp.cuda.runtime.driverGetVersion(),
            "runtime": cp.cuda.runtime.runtimeGetVersion(),
            "nvrtc": ".".join(map(str, cp.cuda.nvrtc.getVersion())),
            "cupy": cp.__version__, "numpy": np.__version__,
            "cupy_tf32": os.environ.get("CUPY_TF32"), "host": platform.node(),
            "nvidia_smi": _nvidia_smi()}
        if not clock_khz:        # CUDA 13 dropped cudaDeviceProp.clockRate: nvidia-smi's max
            mhz = self.info["nvidia_smi"].get("clocks.max.sm", "").split(" ")[0]
            self.info["clock_khz"] = int(mhz) * 1000 if mhz.isdigit() else 0
        self.stream = cp.cuda.Stream(non_blocking=True)

    def compile(self, source: str, name: str, options: list[str]):
        module = self.cp.RawModule(code=source, options=tuple(options) + ("-std=c++17",),
                                   name_expressions=[name])
        return module.get_function(name)

    def upload(self, host):
        return self.cp.asarray(host) if isinstance(host, np.ndarray) else host

    def download(self, dev) -> np.ndarray:
        return self.cp.asnumpy(dev)

    def launch(self, kernel, grid, block, dev_args) -> None:
        kernel(tuple(grid), tuple(block), tuple(dev_args))

    def sync(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def time_call(self, fn) -> dict:
        """Seconds per call of ``fn`` (which only enqueues work on the current stream):
        events around a graph of N calls, median of REPLAYS replays after a warm-up one."""
        cp = self.cp
        with self.stream:
            fn()
            self.stream.synchronize()
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            first_ms = cp.cuda.get_elapsed_time(start, end)
            n = max(1, min(MAX_LAUNCHES, math.ceil(REPLAY_MS / max(first_ms, 1e-3))))
            method = f"cuda graph of {n} launches"
            try:
                self.stream.begin_capture()
                try:
                    for _ in range(n):
                        fn()
                finally:
                    graph = self.stream.end_capture()
                replay = lambda: graph.launch(self.stream)  # noqa: E731
            except Exception as exc:  # noqa: BLE001 - capture unsupported: plain launches
                method = f"{n} back-to-back launches (graph capture failed: {exc})"
                self.stream.synchronize()

                def replay():
                    for _ in range(n):
                        fn()
            replay()
            self.stream.synchronize()
            samples = []
            for _ in range(REPLAYS):
                start.record(self.stream)
                replay()
                end.record(self.stream)
                end.synchronize()
                samples.append(cp.cuda.get_elapsed_time(start, end) * 1e-3 / n)
        return {"s": statistics.median(samples), "min_s": min(samples),
                "max_s": max(samples), "method": method}

    def time_kernel(self, kernel, grid, block, dev_args) -> dict:
        return self.time_call(lambda: self.launch(kernel, grid, block, dev_args))

    def copy_time(self, nbytes: int) -> dict:
        """A device-to-device copy of ``nbytes // 2`` bytes: it reads and writes ``nbytes``."""
        cp = self.cp
        half = max(4, nbytes // 2)
        src, dst = cp.empty(half, dtype=cp.uint8), cp.empty(half, dtype=cp.uint8)
        src.fill(1)
        return self.time_call(lambda: dst.data.copy_from_device_async(src.data, half,
                                                                      self.stream))

    def cublas_time(self, calls: list[dict], seed: int) -> dict | None:
        """The summed time of the cuBLAS calls that compute the kernel's result, on their own
        random operands (float32, row-major as the kernels store them)."""
        if not calls:
            return None
        cp = self.cp
        from cupy import cublas

        rng = cp.random.default_rng(seed)
        total, parts = 0.0, []
        for c in calls:
            if c["call"] == "sgemm":
                m, n, k = c["m"], c["n"], c["k"]
                a = rng.random((k, m) if c["transa"] == "T" else (m, k), dtype=cp.float32)
                b = rng.random((n, k) if c["transb"] == "T" else (k, n), dtype=cp.float32)
                out = cp.empty((m, n), dtype=cp.float32)
                fn = lambda: cublas.gemm(c["transa"], c["transb"], a, b, out)  # noqa: E731
            elif c["call"] == "sgemv":
                rows, cols = c["rows"], c["cols"]
                a = rng.random((rows, cols), dtype=cp.float32)
                x = rng.random(cols if c["trans"] == "N" else rows, dtype=cp.float32)
                y = cp.zeros(rows if c["trans"] == "N" else cols, dtype=cp.float32)
                fn = lambda: cublas.gemv(c["trans"], 1.0, a, x, 0.0, y)  # noqa: E731
            elif c["call"] == "sger":
                x = rng.random(c["m"], dtype=cp.float32)
                y = rng.random(c["n"], dtype=cp.float32)
                a = cp.zeros((c["m"], c["n"]), dtype=cp.float32)
                fn = lambda: cublas.ger(1.0, x, y, a)  # noqa: E731
            else:
                continue
            t = self.time_call(fn)
            total += t["s"]
            parts.append({**c, **t})
            del fn
        return {"s": total, "calls": parts}

    def release(self) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()


class OpenCLBackend:
    """pyopencl (PoCL on the CPU): the rehearsal of the GPU run, same cases and checks."""

    dialect = "opencl"

    def __init__(self) -> None:
        import pyopencl as cl

        self.cl = cl
        wanted = os.environ.get("NAIVEOPT_OPENCL_PLATFORM", "Portable Computing Language")
        platforms = cl.get_platforms()
        chosen = [p for p in platforms if wanted.lower() in p.name.lower()] or platforms
        self.ctx = cl.Context(chosen[0].get_devices())
        # PoCL 3.0 (LLVM 14) miscompiles kernels whose barrier loop is followed by guarded
        # loops at -O2 (naiveopt's verify/opencl.py CHECK_OPTIONS; a staged convolution with a
        # partial tile corrupts the heap): on PoCL the rehearsal builds as verification does
        self.extra = ["-cl-opt-disable"] if "portable computing" in chosen[0].name.lower() \
            else []
        self.queue = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        dev = self.ctx.devices[0]
        self.name = dev.name.strip()
        self.info = {"device": self.name, "platform": chosen[0].name,
                     "opencl": dev.version, "numpy": np.__version__, "multiprocessors":
                     dev.max_compute_units, "clock_khz": dev.max_clock_frequency * 1000,
                     "host": platform.node()}

    def compile(self, source: str, name: str, options: list[str]):
        return getattr(self.cl.Program(self.ctx, source).build(
            options=list(options) + self.extra), name)

    def upload(self, host):
        if not isinstance(host, np.ndarray):
            return host
        mf = self.cl.mem_flags
        return self.cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR,
                              hostbuf=host if host.size else np.zeros(1, host.dtype))

    def download(self, dev, like: np.ndarray | None = None) -> np.ndarray:
        out = np.empty_like(like)
        self.cl.enqueue_copy(self.queue, out, dev)
        return out

    def launch(self, kernel, grid, block, dev_args):
        global_size = tuple(g * b for g, b in zip(grid, block))
        return kernel(self.queue, global_size, tuple(block), *dev_args)

    def sync(self) -> None:
        self.queue.finish()

    def time_kernel(self, kernel, grid, block, dev_args) -> dict:
        self.launch(kernel, grid, block, dev_args).wait()
        samples = []
        for _ in range(3):
            event = self.launch(kernel, grid, block, dev_args)
            event.wait()
            samples.append((event.profile.end - event.profile.start) * 1e-9)
        return {"s": statistics.median(samples), "min_s": min(samples),
                "max_s": max(samples), "method": "opencl profiling events, 3 launches"}

    def copy_time(self, nbytes: int) -> dict:
        half = max(4, nbytes // 2)
        mf = self.cl.mem_flags
        src = self.cl.Buffer(self.ctx, mf.READ_WRITE, half)
        dst = self.cl.Buffer(self.ctx, mf.READ_WRITE, half)
        samples = []
        for _ in range(3):
            event = self.cl.enqueue_copy(self.queue, dst, src, byte_count=half)
            event.wait()
            samples.append(max(1e-9, (event.profile.end - event.profile.start) * 1e-9))
        return {"s": statistics.median(samples), "min_s": min(samples),
                "max_s": max(samples), "method": "opencl buffer copy, 3 copies"}

    def cublas_time(self, calls: list[dict], seed: int) -> dict | None:
        return None          # no cuBLAS on OpenCL: the rehearsal records the calls only

    def release(self) -> None:
        pass


def _nvidia_smi() -> dict:
    """Clocks and driver as nvidia-smi reads them (reading only: the card's settings are
    never changed)."""
    fields = ("driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem", "power.limit",
              "temperature.gpu")
    try:
        text = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=20).stdout.strip().splitlines()[0]
        return dict(zip(fields, (v.strip() for v in text.split(","))))
    except Exception as exc:  # noqa: BLE001 - informational only
        return {"error": str(exc)}


# ------------------------------------------------------------------------------ one case
def run_case(backend, bundle_dir: str, case: dict, seed: int, peak_flops: float | None,
             copy_cache: dict, timing: bool = True, progress: dict | None = None) -> dict:
    """Compile, check and time one case; the returned dict is its JSON line. ``progress``
    gets the phase under way ('run optimized', ...), which a failure's line names."""
    progress = progress if progress is not None else {}
    row = {k: case[k] for k in ("id", "file", "kernel", "size_set", "sizes", "passes")}
    row.update({"flops": case.get("flops"), "bytes": case.get("bytes")})
    if case.get("skip"):
        row["status"] = "skipped"
        row["reason"] = case["skip"]
        return row
    host = make_host_args(case, seed)
    written = [i for i, a in enumerate(case["args"]) if a["role"] in ("out", "inout")]
    outputs, kernels, devs = {}, {}, {}
    labels = ["naive", "optimized"] + [v for v in case["variants"]
                                       if v not in ("naive", "optimized")]
    for label in labels:
        variant = case["variants"][label]
        code = variant[backend.dialect]
        with open(os.path.join(bundle_dir, code["source"])) as fh:
            source = fh.read()
        progress["phase"] = f"compile {label}"
        t0 = time.perf_counter()
        kernels[label] = backend.compile(source, case["kernel"], code["options"])
        row[f"{label}_compile_s"] = round(time.perf_counter() - t0, 3)
        args = []
        for i, (a, value) in enumerate(zip(case["args"], host)):
            if a["role"] == "out":
                poison = np.full_like(value, np.nan if value.dtype.kind == "f" else INT_POISON)
                args.append(backend.upload(poison))
            else:
                args.append(backend.upload(value.copy() if isinstance(value, np.ndarray)
                                           else value))
        args += sized(variant)
        progress["phase"] = f"run {label}"
        backend.launch(kernels[label], variant["grid"], variant["block"], args)
        backend.sync()
        outputs[label] = [backend.download(args[i], host[i]) if backend.dialect == "opencl"
                          else backend.download(args[i]) for i in written]
        devs[label] = args
    checks = {case["args"][i]["name"]: compare(n, o)
              for i, n, o in zip(written, outputs["naive"], outputs["optimized"])}
    row["verification"] = "passed" if all(c["mismatches"] == 0 for c in checks.values()) \
        else "failed"
    row["checks"] = checks
    for label in labels[2:]:          # ablations (naiveopt bench --prepare --ablate)
        ok = all(compare(n, o)["mismatches"] == 0
                 for n, o in zip(outputs["naive"], outputs[label]))
        row.setdefault("ablation_verification", {})[label] = "passed" if ok else "failed"
    if not timing:
        row["status"] = "checked"
        return row
    for label in labels:
        variant = case["variants"][label]
        progress["phase"] = f"time {label}"
        t = backend.time_kernel(kernels[label], variant["grid"], variant["block"], devs[label])
        row[f"{label}_ms"] = t["s"] * 1e3
        row[f"{label}_spread_ms"] = [t["min_s"] * 1e3, t["max_s"] * 1e3]
        row["timing_method"] = t["method"]
        row[f"{label}_grid"], row[f"{label}_block"] = variant["grid"], variant["block"]
    del devs
    row["speedup"] = row["naive_ms"] / row["optimized_ms"]
    if case.get("bytes"):
        nbytes = case["bytes"]
        if nbytes not in copy_cache:
            copy_cache[nbytes] = backend.copy_time(nbytes)
        copy_s = copy_cache[nbytes]["s"]
        row["copy_ms"] = copy_s * 1e3
        row["copy_gbps"] = nbytes / copy_s / 1e9
        for label in labels:
            gbps = nbytes / (row[f"{label}_ms"] * 1e-3) / 1e9
            row[f"{label}_gbps"] = gbps
            row[f"{label}_of_copy_bw"] = gbps / row["copy_gbps"]
    if case.get("flops"):
        for label in labels:
            gflops = case["flops"] / (row[f"{label}_ms"] * 1e-3) / 1e9
            row[f"{label}_gflops"] = gflops
            if peak_flops:
                row[f"{label}_of_fp32_peak"] = gflops * 1e9 / peak_flops
    progress["phase"] = "time cuBLAS"
    row["cublas_calls"] = [c["call"] + "(" + c["what"] + ")" for c in case.get("cublas", [])]
    ref = backend.cublas_time(case.get("cublas", []), seed + 1)
    if ref:
        row["cublas_ms"] = ref["s"] * 1e3
        row["cublas_detail"] = ref["calls"]
        row["optimized_vs_cublas"] = row["optimized_ms"] / row["cublas_ms"]
    row["status"] = "ok"
    return row


def peak_fp32(backend, bundle: dict) -> float | None:
    """2 x FP32 lanes per SM (from the bundle's target description) x SMs x clock."""
    lanes = bundle.get("target", {}).get("fp32_lanes_per_sm")
    clock = backend.info.get("clock_khz")
    sms = backend.info.get("multiprocessors")
    if not (lanes and clock and sms) or backend.dialect != "cuda":
        return None
    return 2.0 * lanes * sms * clock * 1e3


def select(cases: list[dict], sets: list[str] | None, only: list[str] | None) -> list[dict]:
    """Cases of the named size sets whose file stem or kernel name is in ``only``."""
    out = []
    for c in cases:
        if sets and c["size_set"] not in sets:
            continue
        if only and c["file"].rsplit(".", 1)[0] not in only and c["kernel"] not in only:
            continue
        out.append(c)
    return out


#: CUDA errors after which the context is unusable: every later call fails the same way.
STICKY = ("ILLEGAL_ADDRESS", "IllegalAddress", "illegal memory access", "LAUNCH_FAILED",
          "LaunchFailure", "unspecified launch failure", "MISALIGNED", "Misaligned",
          "ILLEGAL_INSTRUCTION", "IllegalInstruction", "HARDWARE_STACK_ERROR")


def done_ids(path: str) -> set[str]:
    """Ids of the cases OUT/results.jsonl already records (for --resume)."""
    if not os.path.exists(path):
        return set()
    with open(path) as fh:
        return {r["id"] for r in map(json.loads, fh) if r.get("record") == "case"}


def run(bundle_dir: str, out_dir: str, *, backend_name: str = "cuda",
        sets: list[str] | None = None, only: list[str] | None = None, seed: int = 2026,
        budget_s: float | None = None, timing: bool = True, resume: bool = False
        ) -> list[dict]:
    """Run the selected cases, appending each line to OUT/results.jsonl as it is done.

    A kernel that faults (an out-of-bounds access) leaves the CUDA context unusable, so
    that every later case would fail too: its line records the fault and the phase, and the
    run restarts itself in a fresh process (``--resume``: cases already recorded are
    skipped), the time budget carried over in NAIVEOPT_GPU_DEADLINE."""
    with open(os.path.join(bundle_dir, "bundle.json")) as fh:
        bundle = json.load(fh)
    os.makedirs(out_dir, exist_ok=True)
    backend = CudaBackend() if backend_name == "cuda" else OpenCLBackend()
    peak = peak_fp32(backend, bundle)
    header = {"record": "run", "date": datetime.datetime.now(datetime.timezone.utc)
              .isoformat(timespec="seconds"), "command": " ".join(sys.argv),
              "backend": backend_name, "bundle_created": bundle.get("created"),
              "naiveopt": bundle.get("naiveopt"), "arch": bundle.get("arch"),
              "seed": seed, "fp32_peak_gflops": peak / 1e9 if peak else None,
              "timing": {"replay_ms": REPLAY_MS, "replays": REPLAYS}, **backend.info}
    path = os.path.join(out_dir, "results.jsonl")
    skip = done_ids(path) if resume else set()
    header["resumed"] = bool(resume)
    rows = []
    deadline = float(os.environ.get("NAIVEOPT_GPU_DEADLINE") or 0) or (
        time.time() + budget_s if budget_s else 0)
    copy_cache: dict = {}
    sticky = None
    with open(path, "a") as fh:
        fh.write(json.dumps(header) + "\n")
        fh.flush()
        chosen = select(bundle["cases"], sets, only)
        for number, case in enumerate(chosen):
            if case["id"] in skip:
                continue
            if deadline and time.time() > deadline:
                row = {"id": case["id"], "status": "not run",
                       "reason": "time budget (--budget) spent"}
            else:
                t0 = time.perf_counter()
                progress: dict = {}
                try:
                    row = run_case(backend, bundle_dir, case, seed + number, peak, copy_cache,
                                   timing, progress)
                except Exception as exc:  # noqa: BLE001 - recorded; the run goes on
                    row = {"id": case["id"], "file": case["file"], "kernel": case["kernel"],
                           "size_set": case["size_set"], "status": "error",
                           "phase": progress.get("phase"),
                           "error": f"{type(exc).__name__}: {exc}",
                           "traceback": traceback.format_exc(limit=4)}
                    if backend_name == "cuda" and any(k in str(exc) for k in STICKY):
                        sticky = row
                row["wall_s"] = round(time.perf_counter() - t0, 2)
                if sticky is None:
                    backend.release()
            row["record"] = "case"
            rows.append(row)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(summary_line(row), flush=True)
            if sticky:
                break
    if sticky:
        print(f"{sticky['id']}: the CUDA context is lost ({sticky['phase']}); restarting for "
              "the remaining cases", flush=True)
        if deadline:
            os.environ["NAIVEOPT_GPU_DEADLINE"] = str(deadline)
        argv = [a for a in sys.argv if a != "--resume"] + ["--resume"]
        os.execv(sys.executable, [sys.executable] + argv)
    return rows


def summary_line(row: dict) -> str:
    if row.get("status") == "checked":
        return f"{row['id']}: {row['verification']} (not timed)"
    if row.get("status") != "ok":
        where = f" ({row['phase']})" if row.get("phase") else ""
        return (f"{row['id']}: {row.get('status')}{where} "
                f"{row.get('reason') or row.get('error', '')}")
    extra = ""
    if "cublas_ms" in row:
        extra = f" cublas {row['cublas_ms']:.3f} ms (opt/cublas {row['optimized_vs_cublas']:.2f})"
    rate = (f"{row['optimized_gflops']:.0f} GFLOP/s" if row.get("optimized_gflops")
            else f"{row.get('optimized_gbps', 0):.0f} GB/s")
    return (f"{row['id']}: {row['verification']} naive {row['naive_ms']:.3f} ms opt "
            f"{row['optimized_ms']:.3f} ms x{row['speedup']:.2f} {rate}{extra}")


# ------------------------------------------------------------------------------ ncu
def profile_launches(bundle_dir: str, out_dir: str, sets, only, seed: int) -> None:
    """Launch each selected case's naive then optimized kernel once (nothing else of those
    names), recording the order in OUT/ncu_order.json for the CSV of Nsight Compute."""
    with open(os.path.join(bundle_dir, "bundle.json")) as fh:
        bundle = json.load(fh)
    backend = CudaBackend()
    order = []
    for number, case in enumerate(select(bundle["cases"], sets, only)):
        if case.get("skip"):
            continue
        host = make_host_args(case, seed + number)
        for label in ("naive", "optimized"):
            variant = case["variants"][label]
            code = variant["cuda"]
            with open(os.path.join(bundle_dir, code["source"])) as fh:
                kernel = backend.compile(fh.read(), case["kernel"], code["options"])
            args = [backend.upload(v.copy() if isinstance(v, np.ndarray) else v)
                    for v in host] + sized(variant)
            backend.launch(kernel, variant["grid"], variant["block"], args)
            backend.sync()
            order.append({"id": case["id"], "kernel": case["kernel"], "variant": label,
                          "grid": variant["grid"], "block": variant["block"],
                          "sizes": case["sizes"]})
        backend.release()
    with open(os.path.join(out_dir, "ncu_order.json"), "w") as fh:
        json.dump(order, fh)


def run_ncu(bundle_dir: str, out_dir: str, sets, only, seed: int, extended: bool = False
            ) -> int:
    """Profile the selected cases under Nsight Compute; parse its CSV into OUT/ncu.jsonl."""
    import csv
    import io
    import re
    import shutil

    with open(os.path.join(bundle_dir, "bundle.json")) as fh:
        bundle = json.load(fh)
    names = sorted({c["kernel"] for c in select(bundle["cases"], sets, only)})
    metrics = {**NCU_METRICS, **(NCU_EXTENDED if extended else {})}
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    cmd = [ncu, "--csv", "--clock-control", "none", "--kernel-name-base", "function",
           "--kernel-name", "regex:^(" + "|".join(re.escape(n) for n in names) + ")$",
           "--metrics", ",".join(metrics.values()),
           sys.executable, os.path.abspath(__file__), bundle_dir, "--out", out_dir,
           "--profile-launches", "--seed", str(seed)]
    if sets:
        cmd += ["--sets", ",".join(sets)]
    if only:
        cmd += ["--only", ",".join(only)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out_dir, "ncu.log"), "w") as fh:
        fh.write(" ".join(cmd) + "\n" + proc.stderr[-20000:])
    with open(os.path.join(out_dir, "ncu.csv"), "w") as fh:
        fh.write(proc.stdout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('"')]
    by_id: dict[int, dict] = {}
    for rec in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            kid = int(rec["ID"])
        except (KeyError, ValueError):
            continue
        entry = by_id.setdefault(kid, {"ncu_kernel": rec.get("Kernel Name")})
        for key, metric in metrics.items():
            if rec.get("Metric Name") == metric:
                value = rec.get("Metric Value", "").replace(",", "")
                try:
                    entry[key] = float(value)
                except ValueError:
                    entry[key] = value
    order_path = os.path.join(out_dir, "ncu_order.json")
    order = json.load(open(order_path)) if os.path.exists(order_path) else []
    with open(os.path.join(out_dir, "ncu.jsonl"), "w") as fh:
        for launch, kid in zip(order, sorted(by_id)):
            fh.write(json.dumps({**launch, **by_id[kid]}) + "\n")
    print(f"ncu: {len(by_id)} kernels profiled, {len(order)} launched (exit {proc.returncode})")
    return proc.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", choices=("cuda", "opencl"), default="cuda")
    p.add_argument("--sets", help="size sets to run (comma-separated; default: all of the "
                   "bundle's timing sets)")
    p.add_argument("--only", help="file stems or kernel names (comma-separated)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--budget", type=float, help="seconds after which remaining cases are "
                   "recorded as not run (keeps a run inside a lease)")
    p.add_argument("--no-timing", action="store_true", help="check only")
    p.add_argument("--resume", action="store_true", help="skip the cases OUT/results.jsonl "
                   "already records (used when a fault restarts the run)")
    p.add_argument("--ncu", action="store_true", help="profile with Nsight Compute instead "
                   "of timing (default cases: mv, mm, transpose, conv at 'profile' sizes)")
    p.add_argument("--ncu-extended", action="store_true", help="with --ncu: also the "
                   "counters a cost model is fitted on (NCU_EXTENDED)")
    p.add_argument("--profile-launches", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sets = args.sets.split(",") if args.sets else None
    only = args.only.split(",") if args.only else None
    if args.profile_launches:
        profile_launches(args.bundle, args.out, sets, only, args.seed)
        return 0
    if args.ncu:
        os.makedirs(args.out, exist_ok=True)
        return run_ncu(args.bundle, args.out, sets or ["profile"],
                       only or list(NCU_DEFAULT), args.seed, args.ncu_extended)
    if sets is None:
        with open(os.path.join(args.bundle, "bundle.json")) as fh:
            sets = [s for s in json.load(fh)["sets"] if s in ("paper", "large", "odd")] or None
    rows = run(args.bundle, args.out, backend_name=args.backend, sets=sets, only=only,
               seed=args.seed, budget_s=args.budget, timing=not args.no_timing,
               resume=args.resume)
    failed = [r["id"] for r in rows if r.get("status") == "error" or
              r.get("verification") == "failed"]
    print(f"{len(rows)} cases: {sum(r.get('status') == 'ok' for r in rows)} timed, "
          f"{len(failed)} failed or wrong" + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
