"""Let PoCL build kernels on a CPU newer than its LLVM: verification depends on it.

The only PoCL on PyPI (pocl-binary-distribution 3.0, PoCL 3.0-rc2 with LLVM 14.0.6) names the
host CPU for its kernel compiler with ``llvm::sys::getHostCPUName()``. LLVM 14 does not know
CPUs released after it (AMD Zen 5, family 26, for one) and answers ``generic``, which LLVM
14's x86 front end rejects: every ``clBuildProgram`` then fails with ``unknown target CPU
'generic'`` and nothing can be verified. PoCL 3.0 has no setting for the CPU name (later
releases read ``POCL_LLVM_CPU_NAME``; its build options are a fixed list).

So, only when a trial build shows that error, this module rewrites PoCL's
``pocl_get_llvm_cpu_name`` (20 bytes of one known build, identified by its SHA-256) to answer
an x86-64 micro-architecture level instead: ``x86-64-v4`` where the CPU has AVX-512
(F/BW/CD/DQ/VL), ``x86-64-v3`` where it has AVX2/FMA/BMI2, ``x86-64`` otherwise. Those names
are in LLVM 14 and describe a subset of what the CPU runs, so the code is correct, only less
tuned. The library is replaced atomically; an unknown build is left alone and the command says
so. ``setup.sh`` runs ``python -m naiveopt.verify.pocl_cpu``.
"""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: The error PoCL's compiler gives when LLVM did not recognize the host CPU.
UNKNOWN_CPU = "unknown target CPU 'generic'"


@dataclass(frozen=True)
class Build:
    """Where, in one PoCL build, ``pocl_get_llvm_cpu_name`` asks LLVM for the host CPU.

    ``site`` is the file offset (equal to its address: the first load segment maps the file
    at 0) of ``call getHostCPUName; test rdx,rdx; je ...; mov rbp,rax; mov rbx,rdx;
    lea rdi,[rdx+1]``: name pointer to rbp, length to rbx, length + 1 to rdi for the
    ``malloc``/``strncpy`` that follow. ``original`` are those bytes, checked before writing."""

    sha256: str
    site: int
    original: bytes


#: pocl-binary-distribution 3.0 (manylinux x86_64), libpocl-21062cec.so.
KNOWN = (
    Build("d214aece60df73c75d8a678d33e4a51f4e5b594772dc74891b5451f909db6025", 0x7DE1B6,
          bytes.fromhex("e8058ab003" "4885d2" "7430" "4889c5" "4889d3" "488d7a01")),
)


def cpu_level(flags: set[str]) -> str:
    """The highest x86-64 micro-architecture level (all in LLVM 14) the CPU's flags cover."""
    if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags:
        return "x86-64-v4"
    if {"avx2", "fma", "bmi1", "bmi2", "movbe"} <= flags:
        return "x86-64-v3"
    return "x86-64"


def host_flags() -> set[str]:
    """The CPU flags Linux reports (empty where /proc/cpuinfo cannot be read)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def patched(data: bytes, build: Build, name: str) -> bytes:
    """``data`` (the library of ``build``) answering ``name`` as the host CPU.

    The call site becomes ``lea rbp,[rip+name]; mov ebx,len; mov edi,len+1; nop3``: the
    ``malloc``/``strncpy`` after it copy the name as before. ``name`` must be in the library
    as a NUL-terminated string (LLVM's own CPU table holds it)."""
    end = build.site + len(build.original)
    if data[build.site:end] != build.original:
        raise ValueError("the call site does not hold the expected instructions")
    at = data.find(b"\0" + name.encode() + b"\0")
    if at < 0:
        raise ValueError(f"{name!r} is not in the library")
    lea_end = build.site + 7
    code = (b"\x48\x8d\x2d" + struct.pack("<i", at + 1 - lea_end)
            + b"\xbb" + struct.pack("<I", len(name))
            + b"\xbf" + struct.pack("<I", len(name) + 1)
            + b"\x0f\x1f\x00")
    assert len(code) == len(build.original)
    return data[:build.site] + code + data[end:]


def library() -> Path | None:
    """PoCL's shared library as installed by pocl-binary-distribution (None: not installed)."""
    try:
        files = metadata.files("pocl-binary-distribution") or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name.startswith("libpocl") and ".so" in f.name:
            return Path(f.locate())
    return None


_TRIAL = """
import pyopencl as cl
platform = [p for p in cl.get_platforms() if "Portable" in p.name][0]
ctx = cl.Context(platform.get_devices())
try:
    cl.Program(ctx, "__kernel void k(__global float *a) { a[0] = 1.0f; }").build()
except cl.RuntimeError as e:
    print(e)
"""


def trial_build_error() -> str:
    """What a trivial PoCL build prints when it fails ('' when it builds), in a fresh process
    (PoCL loads once per process)."""
    done = subprocess.run([sys.executable, "-c", _TRIAL], capture_output=True, text=True,
                          timeout=300)
    return done.stdout + done.stderr


def fix(path: Path, name: str) -> str:
    """Patch the library at ``path`` to answer ``name``; what was done, in words."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    build = next((b for b in KNOWN if b.sha256 == digest), None)
    if build is None:
        raise ValueError(f"{path} is a PoCL build this fix does not know (sha256 {digest})")
    new = patched(data, build, name)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(new)
    os.chmod(tmp, path.stat().st_mode)
    os.replace(tmp, path)
    return f"{path.name}: the host CPU is now named {name} to PoCL's LLVM"


def main() -> int:
    path = library()
    if path is None:
        print("pocl_cpu: pocl-binary-distribution is not installed; nothing to do")
        return 0
    error = trial_build_error()
    if UNKNOWN_CPU not in error:
        if error.strip():
            print(f"pocl_cpu: PoCL cannot build a trivial kernel:\n{error}", file=sys.stderr)
            return 1
        return 0
    try:
        print("pocl_cpu: PoCL's LLVM does not know this CPU; "
              + fix(path, cpu_level(host_flags())), file=sys.stderr)
    except ValueError as e:
        print(f"pocl_cpu: error: {e}", file=sys.stderr)
        return 1
    error = trial_build_error()
    if error.strip():
        print(f"pocl_cpu: error: PoCL still cannot build a kernel:\n{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
