"""1-D kernels over a flattened matrix (passes/functional/delinearize.py): ``row = i / N; col
= i % N`` under ``if (i < M * N)`` read as the 2-D kernel, so that the tiling passes see a
matrix product; written back as the 1-D kernel where no pass changes the launch."""
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import naiveopt
from naiveopt import api
from naiveopt.fuzz.generate import flattened_file
from naiveopt.verify.check import launch_sizes

sys.path.insert(0, str(Path(__file__).parent))
from conftest import nvcc, run_opencl  # noqa: E402

MM = """__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < M * N) {
        int row = idx / N;
        int col = idx % N;
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * N + col];
        C[idx] = sum;
    }
}
"""

SCALE = """__global__ void scale2d(float *x, float s, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H * W) {
        int col = i % W;
        x[i] = x[i] * s + col;
    }
}
"""

PROGRAM = """#include <cuda_runtime.h>
""" + MM + """
int main() {
    int M = 1000, N = 700, K = 300;
    float *A, *B, *C;
    cudaMalloc(&A, M * K * 4); cudaMalloc(&B, K * N * 4); cudaMalloc(&C, M * N * 4);
    matmul<<<(M * N + 255) / 256, 256>>>(A, B, C, M, N, K);
    cudaDeviceSynchronize();
    return 0;
}
"""


def remarks(result, pass_name=None):
    return "\n".join(f"[{r.pass_name}] {r.kind}: {r.message}" for r in result.remarks
                     if pass_name is None or r.pass_name == pass_name)


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_flattened_matrix_product_is_tiled_as_one(target):
    """The 1-D matrix product gets the matrix-product pipeline (blocks merged, threads
    register-tiled) over the 2-D thread space (N, M), verified at sizes that are not tile
    multiples; the output no longer divides a thread id."""
    result = naiveopt.optimize(MM, filename="mm.cu", target=target)
    (k,) = result.kernels
    assert result.verified and not result.internal_errors, remarks(result)
    assert {"thread-block-merge", "thread-merge"} <= set(k.passes), remarks(result)
    assert "inferred-odd" in k.verification.detail
    assert "read as M rows of N threads" in remarks(result, "delinearize")
    assert k.geometry.thread_space[:2] == ("N", "M")
    assert "thread space: (N, M)" in result.code
    assert not re.search(r"\bidx / N|% N\b", result.code.split("_launch(")[0])


def test_the_output_computes_the_product_on_its_own_launch():
    """Independently of verification: the OpenCL output on the geometry it declares, at
    sizes no tile divides, computes A @ B (NumPy)."""
    result = naiveopt.optimize(MM, filename="mm.cu", target="opencl")
    (k,) = result.kernels
    sizes = {"M": 77, "N": 131, "K": 45}
    global_size, local_size = launch_sizes(k.geometry, sizes)
    rng = np.random.default_rng(3)
    a = rng.random((77, 45), dtype=np.float32)
    b = rng.random((45, 131), dtype=np.float32)
    _, _, c = run_opencl(result.code, "matmul", global_size, local_size,
                         [a, b, np.zeros((77, 131), dtype=np.float32), np.int32(77),
                          np.int32(131), np.int32(45)])
    assert len(global_size) >= 2 and global_size[1] > 1       # launched in 2-D
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_verification_catches_an_output_launched_over_the_naive_thread_space(monkeypatch):
    """Were the 2-D output launched over the naive 1-D thread space (M * N, 1), it would
    compute one row: verification fails it (the pass is then dropped, loudly), it does not
    pass silently."""
    real = api._geometry

    def naive_space(proc, spec):
        saved, proc.delinearized = proc.delinearized, None
        try:
            return real(proc, spec)
        finally:
            proc.delinearized = saved

    monkeypatch.setattr(api, "_geometry", naive_space)
    result = naiveopt.optimize(MM, filename="mm.cu")
    assert result.internal_errors or not result.verified, remarks(result)


def test_a_kernel_no_pass_relaunches_is_written_back_as_written():
    """An elementwise map: nothing changes its launch, so the output is the 1-D kernel as
    written (the user's launch stays); with a pass that changes the body only
    (invariant-factors), each id is written in 1-D terms again."""
    result = naiveopt.optimize(SCALE, filename="s.cu")
    (k,) = result.kernels
    assert result.verified and k.passes == [], remarks(result)
    assert "written back as the 1-D kernel (as it was)" in remarks(result,
                                                                   "restore-delinearized")
    assert "int col = i % W;" in result.code and "if (i < H * W)" in result.code
    assert k.geometry.thread_space[:2] == ("H * W", "1")
    scaled = MM.replace("sum += A", "sum += alpha * A").replace("int K)", "int K, float alpha)")
    result = naiveopt.optimize(scaled, filename="mm.cu", passes=["invariant-factors"])
    (k,) = result.kernels
    assert result.verified and k.passes == ["invariant-factors"], remarks(result)
    assert "with each id in 1-D terms" in remarks(result, "restore-delinearized")
    kernel = result.code.split("_launch(")[0].split("__global__")[1]
    assert "idy" not in kernel and re.search(r"if \(idx\w* < M \* N\)", kernel), kernel
    assert k.geometry.thread_space[:2] == ("M * N", "1")


@pytest.mark.parametrize("form", ["return", "total", "subtract", "size_t", "grid-stride",
                                  "opencl", "row-guard", "row-return"])
def test_forms_people_write(form):
    """An early return, the extent in a local, ``col = i - row * N``, a size_t id (the
    product widened in the output), a grid-stride loop, OpenCL's get_global_id: each read as
    2-D and tiled, verified."""
    source, name = MM, "mm.cu"
    if form == "return":
        source = source.replace("if (idx < M * N) {", "if (idx >= M * N) return;").replace(
            "C[idx] = sum;\n    }", "C[idx] = sum;")
    elif form == "total":
        source = source.replace("if (idx < M * N)", "int total = M * N;\n    if (idx < total)")
    elif form == "subtract":
        source = source.replace("idx % N", "idx - row * N")
    elif form == "size_t":
        source = source.replace("int idx = blockIdx.x", "size_t idx = (size_t)blockIdx.x")
    elif form in ("row-guard", "row-return"):
        # the guard on the row and column the kernel split the id into (no column bound in
        # the early return: the 2-D kernel's padded columns get one)
        guard = "if (row < M && col < N) {" if form == "row-guard" else \
            "if (row >= M) return;"
        source = source.replace("if (idx < M * N) {\n        int row = idx / N;\n"
                                "        int col = idx % N;",
                                "int row = idx / N;\n    int col = idx % N;\n    " + guard)
        if form == "row-return":
            source = source.replace("C[idx] = sum;\n    }", "C[idx] = sum;")
    elif form == "grid-stride":
        source = source.replace(
            "int idx = blockIdx.x * blockDim.x + threadIdx.x;\n    if (idx < M * N) {",
            "for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < M * N;\n"
            "         idx += blockDim.x * gridDim.x) {")
    else:
        source = source.replace("__global__ void", "__kernel void").replace(
            "const float *", "__global const float *").replace(
            "float *C", "__global float *C").replace(
            "blockIdx.x * blockDim.x + threadIdx.x", "get_global_id(0)")
        name = "mm.cl"
    assert source != MM
    result = naiveopt.optimize(source, filename=name)
    (k,) = result.kernels
    assert result.verified and not result.internal_errors, (source, remarks(result))
    assert "thread-block-merge" in k.passes, (source, remarks(result))
    assert "read as M rows of N threads" in remarks(result, "delinearize")
    if form == "size_t":
        assert "((size_t)(" in result.code.split("_launch(")[0]


def test_kernels_that_are_not_read_as_2d_say_why():
    """A bound that is not a product with the width, a width narrower than a warp, a kernel
    that reads threadIdx: the 1-D kernel stays, each verified, and the pass says why."""
    cases = {
        "its thread space (total) is not a product of N": MM.replace(
            "int K)", "int K, int total)").replace("idx < M * N", "idx < total"),
        "its rows are 3 threads wide (C), narrower than a warp of 32": "#define C 3\n" +
        SCALE.replace("H * W", "H * C").replace("i % W", "i % C"),
        "the kernel reads tidx": MM.replace("C[idx] = sum;", "C[idx] = sum + threadIdx.x;"),
    }
    for why, source in cases.items():
        result = naiveopt.optimize(source, filename="k.cu")
        assert result.verified, (source, remarks(result))
        assert why in remarks(result, "delinearize"), remarks(result, "delinearize")
        assert "idy" not in result.code.split("_launch(")[0]
    result = naiveopt.optimize(MM, filename="mm.cu", options={"disable": ("delinearize",)})
    assert result.kernels[0].passes == [] or "thread-block-merge" not in \
        result.kernels[0].passes
    assert "disabled (--disable-pass)" in remarks(result, "delinearize")


@nvcc
def test_the_host_codes_1d_launch_calls_the_2d_launcher(tmp_path):
    """The file's own ``matmul<<<(M * N + 255) / 256, 256>>>`` is rewritten to call the
    output's launcher (the 2-D grid), and the file compiles with nvcc."""
    result = naiveopt.optimize(PROGRAM, filename="prog.cu")
    assert result.verified and "thread-block-merge" in result.kernels[0].passes
    assert "now call matmul_launch_from" in remarks(result, "host-launches")
    assert re.search(r"matmul_launch_from\(\(M \* N \+ 255\) / 256, 256, A, B, C, M, N, K\)",
                     result.code)
    out = tmp_path / "prog.cu"
    out.write_text(result.code)
    done = subprocess.run(["nvcc", "-arch=sm_90", "-o", str(tmp_path / "prog"), str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_generator_writes_flattened_kernels():
    """The fuzzer writes these forms (a matrix product, a transpose, a map with a column
    bias, a batched map; the guard as an if, an early return, a local total, a grid-stride
    loop; ``i % N`` or ``i - row * N``; size_t ids); a sample verifies, some tiled in 2-D."""
    sources = [flattened_file(random.Random(seed), dialect)
               for seed in range(40) for dialect in ("cuda", "opencl")]
    for text in ("sum += A[row * K + k]", "out[col * M + row]", "bias[col]", "(M * N)",
                 "return;", "total = ", "+= blockDim.x * gridDim.x", "- row * N",
                 "size_t row", "get_global_id(0)"):
        assert any(text in s for s in sources), text
    kept = 0
    for source in [s for s in sources if "sum += A" in s or "out[col" in s][:5]:
        name = "k.cu" if "__global__" in source else "k.cl"
        result = naiveopt.optimize(source, filename=name)
        assert result.verified and not result.internal_errors, (source, remarks(result))
        kept += "restore-delinearized" not in remarks(result) or \
            "launched in 2-D" in remarks(result)
    assert kept >= 2


TRANSPOSE = """__kernel void tr(__global const float *in, __global float *out, int M, int N)
{
    int tid = get_global_id(0);
    int row = tid / N;
    int col = tid - row * N;
    if (col < N && row < M) {
        out[col * M + row] = in[tid];
    }
}
"""


def test_a_flattened_transpose_guarded_on_its_row_and_column_is_staged():
    """``col = tid - row * N`` is the x id (not ``idy * N + idx - idy * N``), so the guard on
    the row and column reads as the 2-D bounds guard and coalesce-writes stages the write."""
    result = naiveopt.optimize(TRANSPOSE, filename="tr.cl")
    (k,) = result.kernels
    assert result.verified and k.passes[:1] == ["coalesce-writes"], remarks(result)
    assert "thread space from bounds guard: (M * N, 1)" in remarks(result, "thread-space")


def test_a_pass_that_reads_the_2d_blocks_keeps_the_2d_launch():
    """partition-camping alone (gfx90a) changes no launch but reorders the 2-D grid's blocks:
    the kernel cannot be the 1-D one again, so it keeps the 2-D launch, its block fixed (a
    1-D launch traps); verified."""
    result = naiveopt.optimize(TRANSPOSE, filename="tr.cl", arch="gfx90a",
                               passes=["partition-camping"],
                               options={"partition_camping": "force"})
    (k,) = result.kernels
    assert result.verified and k.passes == ["partition-camping"], remarks(result)
    text = remarks(result, "restore-delinearized")
    assert "launched in 2-D over (N, M) with its block fixed" in text
    assert "(the kernel reads bidx" in text
    assert k.geometry.thread_space[:2] == ("N", "M")
