"""The instruction mix of a kernel's hot loop, read from the machine code nvcc would run.

Issue 18 judges register-tiled matrix products by their SASS: in the hot loop FFMA must be at
least 80% of the instructions and the shared loads 128-bit. This compiles CUDA source to a
cubin with NVRTC (the ``nvidia-cuda-nvrtc`` wheel: no GPU, no nvcc needed), disassembles it
with nvdisasm (the ``nvidia-cuda-nvdisasm`` wheel, or one on PATH) and counts opcodes.

The hot loop is the loop (a backward branch and the code between its target and it) holding
the most FFMA instructions; among loops holding as many, the outer one, since an unrolled
inner loop's FFMAs are also its enclosing loop's and the outer one is what runs per k-tile
(its loads, barriers and address arithmetic included). Where the tile loop is not unrolled
the outer loop holds the body once, so the figures are per iteration of the code as laid
out, not weighted by trip counts.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field

#: an instruction predicated on ``!PT`` never runs (ptxas pads cp.async with ``@!PT LDS RZ,
#: [RZ]``): not counted
_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]+)\*/\s+(?!@!PT\s)(?:@!?U?P\w+\s+)?"
                          r"([A-Z][A-Z0-9_.]*)(.*)")
_LABEL = re.compile(r"\s*(\.L_x_\d+):")
_TARGET = re.compile(r"(\.L_x_\d+)")


@dataclass
class LoopMix:
    """Opcode counts of one loop of the code."""

    start: int
    end: int
    opcodes: Counter = field(default_factory=Counter)

    @property
    def instructions(self) -> int:
        return sum(self.opcodes.values())

    @property
    def ffma(self) -> int:
        return self.opcodes.get("FFMA", 0)

    @property
    def ffma_share(self) -> float:
        return self.ffma / self.instructions if self.instructions else 0.0

    def shared_loads(self) -> dict[str, int]:
        """Shared-memory loads by opcode (LDS: 32-bit, LDS.64, LDS.128)."""
        return {op: n for op, n in self.opcodes.items() if op.split(".")[0] == "LDS"}

    @property
    def vector_shared_loads(self) -> bool:
        """Whether every shared load of the loop is 128-bit (and there is one)."""
        loads = self.shared_loads()
        return bool(loads) and set(loads) == {"LDS.128"}

    def describe(self) -> str:
        loads = ", ".join(f"{n} {op}" for op, n in sorted(self.shared_loads().items()))
        return (f"{self.instructions} instructions, {self.ffma} FFMA ({self.ffma_share:.1%}), "
                f"{self.opcodes.get('FMUL', 0)} FMUL, shared loads: {loads or 'none'}")


def nvdisasm_path() -> str | None:
    """nvdisasm from the ``nvidia-cuda-nvdisasm`` wheel, else on PATH."""
    for base in sys.path:
        found = glob.glob(os.path.join(base, "nvidia", "cu*", "bin", "nvdisasm"))
        if found:
            return found[0]
    return shutil.which("nvdisasm")


def cubin(source: str, arch: str) -> tuple[bytes | None, str]:
    """``source`` compiled for ``arch`` (sm_XX): (cubin, '') or (None, why not). NVRTC
    first; nvcc, where it is on PATH, for a source NVRTC rejects (host code: an output's
    launcher)."""
    code, why = _nvrtc_cubin(source, arch)
    if code is None and shutil.which("nvcc"):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "kernel.cu")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(source)
            proc = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-o",
                                   os.path.join(tmp, "kernel.cubin"), path],
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return None, f"nvcc failed: {proc.stderr.strip()[:500]}"
            with open(os.path.join(tmp, "kernel.cubin"), "rb") as fh:
                return fh.read(), ""
    return code, why


def _nvrtc_cubin(source: str, arch: str) -> tuple[bytes | None, str]:
    try:
        from cuda.bindings import nvrtc  # type: ignore[import-not-found]
        err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], [])
    except (ImportError, RuntimeError, OSError) as e:
        return None, f"NVRTC is not available ({e})"
    try:
        opts = [f"--gpu-architecture={arch}".encode()]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err) != 0:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            return None, f"NVRTC failed: {log.decode(errors='replace').strip()[:500]}"
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        code = b" " * size
        nvrtc.nvrtcGetCUBIN(prog, code)
        return code, ""
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def disassemble(code: bytes) -> tuple[str | None, str]:
    """The SASS of a cubin, or (None, why not)."""
    tool = nvdisasm_path()
    if tool is None:
        return None, "nvdisasm is not installed (pip install nvidia-cuda-nvdisasm)"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as fh:
            fh.write(code)
        proc = subprocess.run([tool, "-c", path], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return None, f"nvdisasm failed: {proc.stderr.strip()[:300]}"
    return proc.stdout, ""


def loops(sass: str) -> list[LoopMix]:
    """Every loop of the disassembly: a branch back to a label above it, with the opcodes
    of the code from the label to the branch."""
    code: list[tuple[int, str]] = []
    labels: dict[str, int] = {}
    pending: list[str] = []
    branches: list[tuple[int, str]] = []
    for line in sass.splitlines():
        label = _LABEL.match(line)
        if label:
            pending.append(label.group(1))
            continue
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        address, opcode, rest = int(m.group(1), 16), m.group(2), m.group(3)
        code.append((address, opcode))
        for name in pending:
            labels[name] = address
        pending = []
        if opcode.startswith("BRA"):
            target = _TARGET.search(rest)
            if target:
                branches.append((address, target.group(1)))
    out = []
    for address, name in branches:
        start = labels.get(name)
        if start is not None and start < address:
            out.append(LoopMix(start, address, Counter(
                op for a, op in code if start <= a <= address)))
    return out


def hot_loop(sass: str) -> LoopMix | None:
    """The loop with the most FFMA (the outermost among equals; module docstring)."""
    found = [lp for lp in loops(sass) if lp.ffma]
    if not found:
        return None
    return max(found, key=lambda lp: (lp.ffma, lp.instructions))


def traces(sass: str) -> list[LoopMix]:
    """Every straight-line run of the code, from the instruction after a branch (or the
    first) up to the next branch: the body a fully unrolled nest leaves. (Labels do not end
    one: nvdisasm marks where other paths jump into shared code, mid-body.)"""
    out: list[LoopMix] = []
    current: LoopMix | None = None
    for line in sass.splitlines():
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        address, opcode = int(m.group(1), 16), m.group(2)
        if current is None:
            current = LoopMix(address, address)
            out.append(current)
        current.end = address
        current.opcodes[opcode] += 1
        if opcode.startswith(("BRA", "EXIT", "RET")):
            current = None
    return out


def unrolled_code(sass: str) -> LoopMix | None:
    """The straight-line code outside every loop that holds FFMA, counted together (a
    stencil's bodies specialised for 3, 5 and 7 taps), or None."""
    spans = [(lp.start, lp.end) for lp in loops(sass)]
    found = [t for t in traces(sass) if t.ffma and
             not any(a <= t.start <= b for a, b in spans)]
    if not found:
        return None
    total = LoopMix(found[0].start, found[-1].end)
    for t in found:
        total.opcodes.update(t.opcodes)
    return total


def hot_code(sass: str) -> LoopMix | None:
    """The hot loop, or a straight-line run with more FFMA than any loop (an unrolled
    stencil's body, run once per thread)."""
    loop = hot_loop(sass)
    runs = [b for b in traces(sass) if b.ffma]
    run = max(runs, key=lambda b: (b.ffma, b.instructions)) if runs else None
    if run is not None and (loop is None or run.ffma > loop.ffma):
        return run
    return loop


def _sass_of(source: str, arch: str) -> tuple[str | None, str]:
    """The SASS of CUDA ``source`` compiled for ``arch``, or (None, why not)."""
    code, why = cubin(source, arch)
    if code is None:
        return None, why
    return disassemble(code)


def hot_code_mix(source: str, arch: str = "sm_90") -> tuple[LoopMix | None, str]:
    """:func:`hot_code` of CUDA ``source`` compiled for ``arch``, or (None, why not)."""
    sass, why = _sass_of(source, arch)
    if sass is None:
        return None, why
    found = hot_code(sass)
    return (found, "") if found is not None else (None, "no code with FFMA instructions")


def hot_loop_mix(source: str, arch: str = "sm_90") -> tuple[LoopMix | None, str]:
    """The hot loop of CUDA ``source`` compiled for ``arch``, or (None, why not)."""
    sass, why = _sass_of(source, arch)
    if sass is None:
        return None, why
    loop = hot_loop(sass)
    return (loop, "") if loop is not None else (None, "no loop with FFMA instructions")
