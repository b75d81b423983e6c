"""Every library kernel, both dialects in, both dialects out, functional passes only: the
output must verify (test and odd sizes) and have the target dialect's shape; CUDA output must
compile with nvcc."""
from __future__ import annotations

import functools
import os
import re
import tomllib

import pytest

import naiveopt
from conftest import KERNEL_FILES, KERNELS_DIR, compile_cuda, kernel_id, nvcc

TARGETS = ("cuda", "opencl")


def test_library_is_complete():
    names = {os.path.splitext(os.path.basename(f))[0] for f in KERNEL_FILES}
    assert len(names) == 21
    for name in names:
        for ext in (".cu", ".cl", ".toml"):
            assert os.path.exists(os.path.join(KERNELS_DIR, name + ext)), name + ext


@functools.lru_cache(maxsize=None)
def _optimize(path: str, target: str) -> naiveopt.OptimizeResult:
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    return naiveopt.optimize(source, filename=path, target=target, opt=False)


def _metadata_kernels(path: str) -> list[str]:
    with open(os.path.splitext(path)[0] + ".toml", "rb") as fh:
        return [k["name"] for k in tomllib.load(fh)["kernel"]]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", KERNEL_FILES, ids=kernel_id)
def test_roundtrip_verifies(path, target):
    result = _optimize(path, target)
    assert result.target == target
    assert [k.name for k in result.kernels] == _metadata_kernels(path)
    assert result.verified
    for k in result.kernels:
        v = k.verification
        assert v.status == "passed", f"{k.name}: {v.detail}"
        assert k.passes == []          # --no-opt: no optimization pass may fire
        assert len(v.checks) == 2, v.checks
        assert v.checks[0].startswith("test ("), v.checks
        assert v.checks[1].startswith("odd ("), v.checks
        assert all("match naive kernel" in c for c in v.checks)
        assert "test (" in v.detail and "odd (" in v.detail


def _code_without_comments(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("//"))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", KERNEL_FILES, ids=kernel_id)
def test_roundtrip_dialect_shape(path, target):
    code = _code_without_comments(_optimize(path, target).code)
    kernels = _metadata_kernels(path)
    if target == "opencl":
        assert "__kernel" in code and "__global " in code
        for cuda_only in ("threadIdx", "blockIdx", "blockDim", "__global__", "__syncthreads",
                          "__shared__", "__device__"):
            assert cuda_only not in code, cuda_only
        for name in kernels:
            assert re.search(rf"__kernel\s+void\s+{name}\s*\(", code), name
    else:
        assert "__global__" in code
        for opencl_only in ("get_global_id", "get_local_id", "get_group_id", "__kernel",
                            "barrier(", "__local", "__global "):
            assert opencl_only not in code, opencl_only
        for name in kernels:
            assert re.search(rf"__global__\s+void\s+{name}\s*\(", code), name


@pytest.mark.parametrize("path", KERNEL_FILES, ids=kernel_id)
def test_opencl_output_matches_geometry_header(path):
    """The header comments of the output state the launch geometry of every kernel."""
    result = _optimize(path, "opencl")
    for k in result.kernels:
        g = k.geometry
        assert f"//   local size:  ({g.block[0]}, {g.block[1]})" in result.code
        assert f"//   global size: ({g.global_size[0]}, {g.global_size[1]})" in result.code


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("path", KERNEL_FILES, ids=kernel_id)
def test_cuda_output_compiles(path, tmp_path):
    result = _optimize(path, "cuda")
    out = tmp_path / (os.path.splitext(os.path.basename(path))[0] + ".cu")
    out.write_text(result.code, encoding="utf-8")
    done = compile_cuda(str(out), str(tmp_path))
    assert done.returncode == 0, done.stderr + "\n" + result.code
    assert (tmp_path / (out.name + ".cubin")).stat().st_size > 0
