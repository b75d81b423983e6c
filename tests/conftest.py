"""Shared fixtures and helpers of the naiveopt test suite.

Test modules import the helpers directly (``from conftest import run_cli, KERNEL_FILES``):
pytest puts this directory on sys.path (rootdir-relative "prepend" import mode).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS_DIR = os.path.join(REPO, "tests")
KERNELS_DIR = os.path.join(REPO, "kernels", "naive")
KERNEL_FILES = sorted(os.path.join(KERNELS_DIR, f) for f in os.listdir(KERNELS_DIR)
                      if f.endswith((".cu", ".cl")))
BIN_DIR = os.path.dirname(sys.executable)

#: Skip (saying so) where nvcc is absent: emitted CUDA is then not compiled.
nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                          reason="nvcc not on PATH: emitted CUDA not compiled")


def unsplit(options=None):
    """``options`` with split-reduction switched off: tests of the passes that tile the
    library's row-per-thread kernels (coalesce, prefetch, partition camping, vectorize) run
    them where, at the metadata's default sizes, split-reduction would take the kernel first
    (tests/test_split_reduction.py tests that choice)."""
    from dataclasses import replace

    from naiveopt.passes.options import PipelineOptions

    if isinstance(options, PipelineOptions):
        return replace(options, disable=tuple(options.disable) + ("split-reduction",))
    options = dict(options or {})
    options["disable"] = list(options.get("disable", [])) + ["split-reduction"]
    return options


def run_cli(*args: str, cwd: str | None = None, timeout: int = 300
            ) -> subprocess.CompletedProcess:
    """Run ``naiveopt ARGS...`` as a subprocess (text mode, output captured)."""
    return subprocess.run([sys.executable, "-m", "naiveopt.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or REPO, timeout=timeout)


def compile_cuda(path: str, tmp_dir: str, arch: str = "sm_90") -> subprocess.CompletedProcess:
    """``nvcc -arch=ARCH -cubin`` a CUDA file; returns the CompletedProcess."""
    cubin = os.path.join(str(tmp_dir), os.path.basename(path) + ".cubin")
    return subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-o", cubin, str(path)],
                          capture_output=True, text=True, timeout=300)



def run_opencl(code: str, kernel: str, global_size, local_size, args: list) -> list:
    """Run ``kernel`` of OpenCL ``code`` on PoCL: ``args`` are NumPy arrays (buffers, read
    back after the run) and NumPy scalars; returns the arrays as the kernel left them."""
    import numpy as np
    import pyopencl as cl

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    buffers = [cl.Buffer(ctx, flags, hostbuf=a) if isinstance(a, np.ndarray) else a
               for a in args]
    getattr(cl.Program(ctx, code).build(), kernel)(queue, global_size, local_size, *buffers)
    out = []
    for a, b in zip(args, buffers):
        if isinstance(a, np.ndarray):
            host = np.empty_like(a)
            cl.enqueue_copy(queue, host, b)
            out.append(host)
    return out


def sizes_metadata(tmp_path, name: str, test: dict, odd: dict) -> str:
    """The library kernel ``name``'s metadata with its test and odd size sets replaced (a
    file in ``tmp_path``): verification of an output at sizes a test picks."""
    import re

    stem = os.path.splitext(name)[0]
    with open(os.path.join(KERNELS_DIR, stem + ".toml"), encoding="utf-8") as fh:
        text = fh.read()
    for key, sizes in (("test", test), ("odd", odd)):
        table = "{ " + ", ".join(f"{k} = {v}" for k, v in sizes.items()) + " }"
        text, n = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {table}", text)
        assert n == 1
    path = tmp_path / (stem + ".toml")
    path.write_text(text, encoding="utf-8")
    return str(path)

def kernel_id(path: str) -> str:
    return os.path.basename(path)


@pytest.fixture(scope="session")
def repo() -> str:
    return REPO


@pytest.fixture(scope="session")
def kernels_dir() -> str:
    return KERNELS_DIR


@pytest.fixture(scope="session")
def kernel_files() -> list[str]:
    return list(KERNEL_FILES)


@pytest.fixture(name="run_cli")
def run_cli_fixture():
    return run_cli


# A pass that raises is a bug the pass manager would hide behind a warning (passes/manager.py:
# the kernel kept as it was); no test may rely on that, so in tests it raises. Subprocesses
# (the CLI tests) inherit it. tests/test_internal_errors.py turns the net back on to test it.
os.environ.setdefault("NAIVEOPT_INTERNAL_ERRORS", "raise")
