"""Launch contracts: an output whose block a transformation fixed cannot be launched with
another one (issue "Drop-in outputs", item 1).

CUDA outputs carry ``__launch_bounds__(threads)``, OpenCL outputs
``reqd_work_group_size(X, Y, Z)``; a kernel whose block is free keeps the user's launch and
carries neither. An optimized OpenCL matmul launched with its naive 16x16 work-group used to
run and return wrong numbers; now the runtime refuses the launch.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import naiveopt
from conftest import KERNELS_DIR, compile_cuda, nvcc


def optimize(name: str, target: str, **kw) -> naiveopt.OptimizeResult:
    path = os.path.join(KERNELS_DIR, name)
    with open(path, encoding="utf-8") as fh:
        return naiveopt.optimize(fh.read(), filename=path, target=target, **kw)


@pytest.mark.parametrize("name, kernel", [("mm.cu", "mm"), ("transpose.cu", "transpose"),
                                          ("conv.cu", "conv")])
def test_fixed_blocks_are_enforced_in_both_dialects(name, kernel):
    cuda = optimize(name, "cuda", verify=False)
    block = cuda.launch_json()["kernels"][kernel]["block"]
    threads = int(np.prod(block))
    assert re.search(rf"__global__ void __launch_bounds__\({threads}(, \d+)?\)\s*{kernel}\(", cuda.code)
    # fewer threads, or the naive grid, pass the bounds: the kernel's first statement traps
    body = cuda.code[cuda.code.index(f"{kernel}("):]
    grid = cuda.launch_json()["kernels"][kernel]["grid"]
    head = " ".join(body[:body.index("__trap();")].split())
    assert f"blockDim.x != {block[0]} || blockDim.y != {block[1]}" in head
    assert f"gridDim.x != (unsigned)({grid[0]})" in head
    opencl = optimize(name, "opencl", verify=False)
    # its own block: an OpenCL output keeps off the naive one (thread_merge.py), a CUDA
    # output traps on a stale launch instead
    x, y, z = (list(opencl.launch_json()["kernels"][kernel]["block"]) + [1, 1])[:3]
    assert re.search(rf"__kernel __attribute__\(\(reqd_work_group_size\({x}, {y}, {z}\)\)\)"
                     rf"\s*void\s+{kernel}\(", opencl.code)


def test_a_free_block_is_left_to_the_user():
    result = optimize("vv.cu", "cuda", verify=False)
    assert result.kernels[0].passes            # optimized, but its block is the user's choice
    assert "__launch_bounds__" not in result.code and "__trap" not in result.code
    unoptimized = optimize("mm.cu", "opencl", opt=False, verify=False)
    assert "reqd_work_group_size" not in unoptimized.code


def test_verification_runs_the_contracted_output():
    assert optimize("mm.cu", "opencl").verified


def test_opencl_runtime_refuses_the_stale_naive_launch():
    """The optimized mm (32x16 work-items covering 64x64 outputs) launched as the naive kernel
    was (16x16 work-groups over the whole matrix): refused by PoCL, not wrong numbers."""
    import pyopencl as cl

    result = optimize("mm.cu", "opencl", verify=False)
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, result.code).build()
    H = W = K = 64
    buffers = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * H * W) for _ in range(3)]
    kernel = program.mm
    kernel.set_args(*buffers, *(np.int32(v) for v in (H, W, K)))
    geometry = result.launch_json()["kernels"]["mm"]
    local = tuple(geometry["block"][:2])
    with pytest.raises(cl.LogicError, match="INVALID_WORK_GROUP_SIZE"):
        cl.enqueue_nd_range_kernel(queue, kernel, (H, W), (16, 16))
    assert local != (16, 16)
    queue.finish()


@pytest.mark.parametrize("local", [(256,), None])
def test_a_split_column_walker_refuses_the_stale_naive_launch(local):
    """tmv split over the rows: 8 outputs per work-group of 256 (the naive block) ran on the
    naive NDRange (W work-items in groups of 256) and computed W / 32 of the outputs, with
    nothing said. An OpenCL output whose grid a pass changes keeps off the naive work-group
    (launch.takes_naive_launch): the stale launch is refused, a NULL local size too."""
    import pyopencl as cl

    result = optimize("tmv.cu", "opencl", verify=False)
    assert "split-reduction" in result.kernels[0].passes
    geometry = result.launch_json()["kernels"]["tmv"]
    assert geometry["block"][0] != 256
    assert "work-groups of the naive 256 left out" in " ".join(
        r.message for r in result.remarks if r.pass_name == "split-reduction")
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, result.code).build()
    H = W = 512
    buffers = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * H * W) for _ in range(3)]
    program.tmv.set_args(*buffers, np.int32(H), np.int32(W))
    with pytest.raises(cl.LogicError, match="INVALID_WORK_GROUP_SIZE"):
        cl.enqueue_nd_range_kernel(queue, program.tmv, (W,), local)
    queue.finish()


@nvcc
def test_contracted_cuda_compiles(tmp_path):
    for name in ("mm.cu", "conv.cu", "transpose.cu"):
        path = tmp_path / name
        path.write_text(optimize(name, "cuda", verify=False).code, encoding="utf-8")
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr


AMD_CLANG = shutil.which("clang")


@pytest.mark.skipif(AMD_CLANG is None, reason="no clang on PATH: gfx90a outputs not compiled "
                    "with the amdgcn target")
def test_gfx90a_outputs_get_a_flat_work_group_limit_of_their_block(tmp_path):
    for name in ("mm.cl", "transpose.cl", "conv.cl"):
        result = optimize(name, "opencl", arch="gfx90a", verify=False)
        src = tmp_path / name
        src.write_text(result.code, encoding="utf-8")
        done = subprocess.run([AMD_CLANG, "-x", "cl", "-cl-std=CL1.2", "-target",
                               "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-S", "-o",
                               "-", str(src)], capture_output=True, text=True, timeout=300)
        if done.returncode and "unknown target" in done.stderr:
            pytest.skip(f"{AMD_CLANG} has no amdgcn target")
        assert done.returncode == 0, done.stderr
        limits = [int(v) for v in re.findall(r"\.max_flat_workgroup_size:\s*(\d+)", done.stdout)]
        for kernel, limit in zip(result.kernels, limits):
            assert limit >= int(np.prod(kernel.geometry.block)), (name, kernel.name, limit)


USER_BOUNDS = """\
#define BS 256
__global__ void __launch_bounds__( BS , 2 ) count(const int *v, int *total, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(total, v[i]);
}
__global__ void __launch_bounds__(1024) mm(const float *A, const float *B, float *C, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; k++)
            s += A[row * n + k] * B[k * n + col];
        C[row * n + col] = s;
    }
}
"""


def test_a_kernel_whose_launch_did_not_change_keeps_its_launch_bounds():
    """The user's __launch_bounds__ (the register budget their launch was written for) stays
    on a CUDA output launched as the input was; an output whose launch a pass fixed carries
    its own contract instead; OpenCL has no such bound."""
    result = naiveopt.optimize(USER_BOUNDS, filename="b.cu", verify=False)
    assert "__global__ void __launch_bounds__(BS, 2) count(" in result.code
    mm = next(k for k in result.kernels if k.name == "mm")
    assert mm.passes and "__launch_bounds__(1024)" not in result.code
    assert re.search(r"__launch_bounds__\(\d+(, \d+)?\) mm\(", result.code)
    plain = naiveopt.optimize(USER_BOUNDS, filename="b.cu", opt=False, verify=False)
    assert "__launch_bounds__(1024) mm(" in plain.code
    opencl = naiveopt.optimize(USER_BOUNDS, filename="b.cu", target="opencl", opt=False,
                               verify=False)
    assert "launch_bounds" not in opencl.code
