"""NVCC resource query (paper 002, functional pass (5)).

Compiles the kernel (as CUDA, for ``--arch``) and reads the registers and shared-memory bytes
ptxas reports, which the optimization passes use to compute occupancy. NVRTC (cuda-bindings
and the nvidia-cuda-nvrtc wheel, installed with naiveopt) compiles in-process; nvcc (``-cubin
-Xptxas -v``) takes what NVRTC cannot; with neither, or for a non-NVIDIA architecture, the pass
is skipped with a remark. Results are cached by the hash of the code.

Choosing among variants needs the resources of many kernels (mm: 18 tiling variants); one nvcc
run costs about 0.5-0.9 s, most of it start-up (NVRTC: 40-70 ms), so :func:`measure_many`
compiles all variants not yet cached as one file per processor (each kernel renamed), side by
side, and splits ptxas's log per entry function: about the time of one compile. Each result is cached under the key of its own one-kernel file,
so batched and single queries share entries.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure, Resources
from ..manager import Pass, PassContext

_REGS = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "naiveopt", "resources")
    os.makedirs(path, exist_ok=True)
    return path


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")


def _entry_name(symbol: str) -> str:
    """The kernel name of an entry symbol: itself (extern "C"), or the first name of an
    Itanium-mangled one (``_Z9mm__nvq0_Pf`` -> ``mm__nvq0_``)."""
    m = re.match(r"_Z(\d+)", symbol)
    return symbol[m.end():m.end() + int(m.group(1))] if m else symbol


def parse_ptxas_entries(log: str) -> dict[str, tuple[int, int]]:
    """(registers, shared bytes) per kernel name from a ptxas -v log of several kernels."""
    out = {}
    starts = list(_ENTRY.finditer(log))
    for k, m in enumerate(starts):
        section = log[m.end():starts[k + 1].start() if k + 1 < len(starts) else len(log)]
        parsed = parse_ptxas(section)
        if parsed is not None:
            out[_entry_name(m.group(1))] = parsed
    return out


def parse_ptxas(log: str) -> tuple[int, int] | None:
    """(registers, shared bytes) from a ptxas -v log, or None."""
    regs = _REGS.search(log)
    if not regs:
        return None
    smem = _SMEM.search(log)
    return int(regs.group(1)), int(smem.group(1)) if smem else 0


def _cache_path(cuda_source: str, arch: str) -> str:
    key = hashlib.sha256(f"{arch}\0{cuda_source}".encode()).hexdigest()
    return os.path.join(cache_dir(), key + ".json")


def _cached(path: str) -> Resources | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return Resources(**json.load(fh))
    except (OSError, ValueError, TypeError):
        return None                 # not cached, or an unreadable entry: compile again


def query_resources(cuda_source: str, arch: str) -> tuple[Resources | None, str]:
    """Resources of the single kernel in ``cuda_source`` for ``arch``, or (None, why not)."""
    cached = _cache_path(cuda_source, arch)
    res = _cached(cached)
    if res is not None:
        return res, ""
    rc, log, tool = _compile(cuda_source, arch)
    if tool is None:
        return None, log
    parsed = parse_ptxas(log)
    if rc != 0 or parsed is None:
        first = next((ln for ln in log.splitlines() if "error" in ln), log[:200])
        return None, f"{tool} failed: {first.strip()}"
    res = Resources(arch, parsed[0], parsed[1], tool)
    _store(cached, res)
    return res, ""


def _store(path: str, res: Resources) -> None:
    """Write a cache entry atomically: batch workers compiling the same kernel (mvt.cu and
    mvt.cl) read each other's entries, and a half-written file read as JSON failed a whole
    file with an internal error."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(res.__dict__, fh)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _compile(source: str, arch: str) -> tuple[int, str, str | None]:
    """Compile ``source`` for ``arch`` with ptxas -v: (return code, log, tool), tool None
    (and the log saying why) when neither NVRTC nor nvcc is available.

    NVRTC first: it runs in-process in 40-70 ms where an nvcc run costs 0.5-0.9 s. It has no
    host C headers (<stdint.h>, <math.h>: a kernel using ``int32_t`` or ``INFINITY``), so a
    source it rejects goes to nvcc where nvcc is on PATH."""
    rc, log, tool = _with_nvrtc(source, arch)
    if rc != 0 and shutil.which("nvcc"):
        rc, log, tool = _with_nvcc(source, arch)
    return rc, log, tool


def _with_nvcc(source: str, arch: str) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cu")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        proc = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o",
                               os.path.join(tmp, "kernel.cubin"), path],
                              capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, "nvcc"


def _with_nvrtc(source: str, arch: str) -> tuple[int, str, str | None]:
    try:
        from cuda.bindings import nvrtc  # type: ignore[import-not-found]
        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], [])
    except (ImportError, RuntimeError, OSError) as e:     # no bindings, or no libnvrtc
        return 1, f"neither nvcc nor NVRTC (cuda-python) is available ({e})", None
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"-Xptxas=-v"]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return int(err), log.decode(errors="replace"), "nvrtc"


def measure(module, proc: GProcedure, arch: str) -> tuple[Resources | None, str]:
    """Registers and shared memory of one kernel of ``module`` (IR form) for ``arch``."""
    if not arch.startswith("sm_"):
        return None, f"{arch} is not an NVIDIA architecture"
    from ...emit import render_cuda_kernel
    from .postprocessor import lower_predefined

    lowered = copy.deepcopy(proc)
    lower_predefined(lowered)
    return query_resources(render_cuda_kernel(module, lowered), arch)


def measure_many(module, procs: list[GProcedure], arch: str
                 ) -> list[tuple[Resources | None, str]]:
    """:func:`measure` of each of ``procs`` (variants of one kernel of ``module``), the ones
    not cached compiled together in one run (module docstring). A batch that fails to
    compile is measured kernel by kernel, so that each failure gets its own reason."""
    if not arch.startswith("sm_"):
        return [(None, f"{arch} is not an NVIDIA architecture")] * len(procs)
    from ...emit import render_cuda_kernels
    from .postprocessor import lower_predefined

    lowered = []
    for proc in procs:
        low = copy.deepcopy(proc)
        lower_predefined(low)
        lowered.append(low)
    paths = [_cache_path(render_cuda_kernels(module, [low]), arch) for low in lowered]
    results: list[tuple[Resources | None, str] | None] = [
        (res, "") if (res := _cached(path)) is not None else None for path in paths]
    todo = [k for k, r in enumerate(results) if r is None]
    if len(todo) > 1:
        for k in todo:
            _rename(lowered[k].func, f"{lowered[k].name}__nvq{k}_")
        # one file per processor, compiled side by side (NVRTC releases the GIL; nvcc is a
        # process of its own): the stencil's 24 unrolled variants take seconds of ptxas
        chunks = [todo[i::_workers(len(todo))] for i in range(_workers(len(todo)))]
        with ThreadPoolExecutor(len(chunks)) as pool:
            logs = list(pool.map(lambda chunk: _compile(render_cuda_kernels(
                module, [lowered[k] for k in chunk]), arch), chunks))
        for chunk, (rc, log, tool) in zip(chunks, logs):
            entries = parse_ptxas_entries(log) if rc == 0 and tool is not None else {}
            for k in chunk:
                name = f"{lowered[k].name}__nvq{k}_"
                if name in entries:
                    res = Resources(arch, *entries[name], tool)
                    _store(paths[k], res)
                    results[k] = (res, "")
    return [r if r is not None else measure(module, proc, arch)
            for r, proc in zip(results, procs)]


def _workers(jobs: int) -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(jobs // 4, cpus))      # at least 4 kernels a file: start-up is paid once


def _rename(func, name: str) -> None:
    """Rename a kernel definition (a pycparser FuncDef) in place."""
    func.decl.name = name
    t = func.decl.type.type
    while not hasattr(t, "declname"):
        t = t.type
    t.declname = name


class NVCCResources(Pass):
    name = "nvcc"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()        # it only measures

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        res, why = measure(ctx.module, proc, ctx.arch)
        if res is None:
            ctx.remark("missed", self.name, proc, f"resource query skipped: {why}")
            return
        proc.resources = res
        ctx.remark("analysis", self.name, proc, f"{res.registers} registers, "
                   f"{res.shared_bytes} bytes shared memory on {res.arch} ({res.tool})")
