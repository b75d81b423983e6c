"""NVCC resource query (paper 002, functional pass (5)).

Compiles the kernel (as CUDA, for ``--arch``) and reads the registers and shared-memory bytes
ptxas reports, which the optimization passes use to compute occupancy. nvcc (``-cubin -Xptxas
-v``) is used when on PATH, NVRTC from cuda-python otherwise; with neither, or for a non-NVIDIA
architecture, the pass is skipped with a remark. Results are cached by the hash of the code.
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


def parse_ptxas(log: str) -> tuple[int, int] | None:
    """(registers, shared bytes) from a ptxas -v log, or None."""
    regs = _REGS.search(log)
    if not regs:
        return None
    smem = _SMEM.search(log)
    return int(regs.group(1)), int(smem.group(1)) if smem else 0


def query_resources(cuda_source: str, arch: str) -> tuple[Resources | None, str]:
    """Resources of the single kernel in ``cuda_source`` for ``arch``, or (None, why not)."""
    key = hashlib.sha256(f"{arch}\0{cuda_source}".encode()).hexdigest()
    cached = os.path.join(cache_dir(), key + ".json")
    try:
        with open(cached, encoding="utf-8") as fh:
            return Resources(**json.load(fh)), ""
    except (OSError, ValueError, TypeError):
        pass                        # not cached, or an unreadable entry: compile again
    if shutil.which("nvcc"):
        res, why = _with_nvcc(cuda_source, arch)
    else:
        res, why = _with_nvrtc(cuda_source, arch)
    if res is not None:
        _store(cached, res)
    return res, why


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


def _with_nvcc(source: str, arch: str) -> tuple[Resources | None, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cu")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        proc = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o",
                               os.path.join(tmp, "kernel.cubin"), path],
                              capture_output=True, text=True, timeout=120)
    parsed = parse_ptxas(proc.stdout + proc.stderr)
    if proc.returncode != 0 or parsed is None:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr[:200])
        return None, f"nvcc failed: {first.strip()}"
    return Resources(arch, parsed[0], parsed[1], "nvcc"), ""


def _with_nvrtc(source: str, arch: str) -> tuple[Resources | None, str]:
    try:
        from cuda.bindings import nvrtc  # type: ignore[import-not-found]
    except ImportError:
        return None, "neither nvcc nor NVRTC (cuda-python) is available"
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], [])
    opts = [f"--gpu-architecture={arch}".encode(), b"-Xptxas=-v"]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    parsed = parse_ptxas(log.decode(errors="replace"))
    if parsed is None:
        return None, "NVRTC reported no resource usage"
    return Resources(arch, parsed[0], parsed[1], "nvrtc"), ""


def measure(module, proc: GProcedure, arch: str) -> tuple[Resources | None, str]:
    """Registers and shared memory of one kernel of ``module`` (IR form) for ``arch``."""
    if not arch.startswith("sm_"):
        return None, f"{arch} is not an NVIDIA architecture"
    from ...emit import render_cuda_kernel
    from .postprocessor import lower_predefined

    lowered = copy.deepcopy(proc)
    lower_predefined(lowered)
    return query_resources(render_cuda_kernel(module, lowered), arch)


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
