"""The NVCC pass's resource cache: entries are written atomically and an unreadable entry is
a miss (a batch worker once read a half-written entry of another worker compiling the same
kernel and failed the whole file with 'internal error: JSONDecodeError')."""
from __future__ import annotations

import hashlib
import copy
import os
from pathlib import Path

import pytest
from pycparser import c_ast

from naiveopt.passes.functional import nvcc

SOURCE = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n"


def _entry(tmp_path) -> str:
    key = hashlib.sha256(f"sm_90\0{SOURCE}".encode()).hexdigest()
    return os.path.join(str(tmp_path), "naiveopt", "resources", key + ".json")


def test_truncated_entry_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(nvcc.shutil, "which", lambda name: "/usr/bin/nvcc")
    monkeypatch.setattr(nvcc, "_compile", lambda source, arch: (
        0, "ptxas info    : Used 12 registers, used 0 barriers", "nvcc"))
    os.makedirs(os.path.dirname(_entry(tmp_path)))
    with open(_entry(tmp_path), "w", encoding="utf-8") as fh:
        fh.write("")                                   # another worker's write in progress
    res, why = nvcc.query_resources(SOURCE, "sm_90")
    assert why == "" and res.registers == 12
    again, _ = nvcc.query_resources(SOURCE, "sm_90")   # now a complete entry
    assert again.registers == 12
    assert not [f for f in os.listdir(os.path.dirname(_entry(tmp_path))) if f.endswith(".tmp")]


LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 2.307 ms
ptxas info    : Compiling entry function '_Z10mm__nvq12_Pf' for 'sm_90'
ptxas info    : Function properties for _Z10mm__nvq12_Pf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 38 registers, used 1 barriers, 1024 bytes smem
"""


def test_a_log_of_several_kernels_is_split_per_entry():
    assert nvcc.parse_ptxas_entries(LOG) == {"k2": (10, 0), "mm__nvq12_": (38, 1024)}


def _variants():
    from naiveopt.api import compile_module
    from naiveopt.frontend import parse_unit
    path = Path(__file__).parent.parent / "kernels" / "naive" / "mm.cu"
    c = compile_module(parse_unit(str(path), path.read_text(), {}), "cuda", "sm_90", False,
                       None)
    proc = c.module.procedures[0]
    other = copy.deepcopy(proc)                 # a second variant: another body
    other.func.body.block_items.append(c_ast.FuncCall(c_ast.ID("__syncthreads"), None))
    return c.module, [proc, other]


@pytest.mark.skipif(not nvcc.shutil.which("nvcc"), reason="nvcc not on PATH")
def test_variants_are_measured_in_one_compile_with_the_results_of_single_ones(
        tmp_path, monkeypatch):
    """measure_many compiles the uncached variants once and caches each under its own
    one-kernel key: a single measure afterwards is a cache hit with the same numbers."""
    module, procs = _variants()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))     # a cold cache
    compiles = []
    real = nvcc._compile
    monkeypatch.setattr(nvcc, "_compile",
                        lambda source, arch: compiles.append(source) or real(source, arch))
    batched = nvcc.measure_many(module, procs, "sm_90")
    assert len(compiles) == 1 and compiles[0].count("__nvq") == 2
    single = [nvcc.measure(module, p, "sm_90") for p in procs]
    assert len(compiles) == 1                       # both cache hits
    assert [r.registers for r, _ in batched] == [r.registers for r, _ in single]
    assert all(r.registers > 0 for r, _ in batched)


def test_a_batch_that_fails_is_measured_kernel_by_kernel(tmp_path, monkeypatch):
    """One variant that does not compile must not hide the others' resources, and its own
    reason is reported."""
    module, procs = _variants()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))     # a cold cache
    def fake(source, arch):
        if "__nvq" in source:
            return 1, "kernel.cu(3): error: something", "nvcc"
        return 0, "ptxas info    : Used 21 registers, used 0 barriers", "nvcc"
    monkeypatch.setattr(nvcc, "_compile", fake)
    results = nvcc.measure_many(module, procs, "sm_90")
    assert [r.registers for r, _ in results] == [21, 21]
