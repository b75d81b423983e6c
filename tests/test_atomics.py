"""Atomic updates (ir/atomics.py): accepted in both dialects, kept as written by the passes,
spelled right in each dialect (the OpenCL compare-and-swap helpers checked against NumPy,
not only against the naive kernel, which goes through the same translation), verified where
the result does not depend on thread order, and refused with a reason where it does."""
from __future__ import annotations

import numpy as np
import pytest

import naiveopt
from naiveopt.ir import atomics
from naiveopt.frontend import parse_module

CUDA = """\
#pragma naiveopt sizes(n=1001, rows=13, cols=29) array(in, n) array(bins, 256) array(a, n)
#pragma naiveopt array(b, n) array(result, 1) array(A, rows, cols) array(y, rows)
#pragma naiveopt array(v, n) array(best, 1) array(count, 2)
__global__ void histogram(const unsigned char *in, unsigned int *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[in[i]], 1);
}
__global__ void dot_product(const float *a, const float *b, float *result, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(result, a[i] * b[i]);
}
__global__ void row_sums(const double *A, double *y, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        atomicAdd(&y[r], A[r * cols + c]);
}
__global__ void max_value(const int *v, int *best, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicMax(best, v[i]);
}
__global__ void counters(const int *v, unsigned int *count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && v[i] > 0)
        atomicInc(count, 100u);
    if (i < n && v[i] < 0)
        atomicDec(count + 1, 7u);
}
"""

OPENCL = """\
#pragma naiveopt sizes(n=1001) array(data, n) array(hist, 64) array(total, 1)
__kernel void histogram(__global const uchar *data, __global uint *hist, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&hist[data[i] % 64]);
}
__kernel void total(__global const int *data, __global int *total, int n)
{
    __local int block_sum;
    if (get_local_id(0) == 0)
        block_sum = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int i = get_global_id(0);
    if (i < n)
        atomic_add(&block_sum, data[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atom_add(total, block_sum);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_atomic_kernels_are_verified_and_kept_as_written(target):
    result = naiveopt.optimize(CUDA, filename="at.cu", target=target)
    assert result.verified, result.unverified
    for k in result.kernels:
        assert k.passes == []
    missed = [r.message for r in result.remarks if r.kind == "missed" and
              r.kernel == "histogram" and r.pass_name == "coalesce"]
    assert missed == ["the kernel updates bins atomically (atomicAdd): the optimization "
                      "passes keep kernels with atomics as written"]


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_atomics_are_verified_in_both_dialects(target):
    result = naiveopt.optimize(OPENCL, filename="at.cl", target=target)
    assert result.verified, result.unverified
    if target == "cuda":
        assert "atomicAdd(&hist[data[i] % 64], 1)" in result.code
        assert "atomicAdd(&block_sum, data[i])" in result.code
        assert "atomicAdd(&total[0], block_sum)" in result.code


def test_cuda_spellings_in_opencl():
    code = naiveopt.optimize(CUDA, filename="at.cu", target="opencl", verify=False).code
    assert "atomic_add(&bins[in[i]], 1)" in code
    assert "naiveopt_atomic_add_float_global(&result[0], a[i] * b[i])" in code
    assert "naiveopt_atomic_add_double_global(&y[r], A[r * cols + c])" in code
    assert "atomic_max(&best[0], v[i])" in code
    assert "naiveopt_atomic_inc_uint_global(&count[0], 100u)" in code
    assert "naiveopt_atomic_dec_uint_global(&count[1], 7u)" in code
    assert "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable" in code
    assert code.count("naiveopt_atomic_add_float_global(volatile __global float *p") == 1


def test_opencl_helpers_compute_what_cuda_does():
    """The translation's helpers against NumPy (verification compares the output with the
    naive kernel's translation, which calls the same helpers)."""
    import pyopencl as cl

    code = naiveopt.optimize(CUDA, filename="at.cu", target="opencl", verify=False).code
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, code).build()
    rng = np.random.default_rng(7)
    n, rows, cols = 3001, 13, 29
    mf = cl.mem_flags

    def run(kernel, arrays, scalars, threads):
        bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
        global_size = tuple(-(-t // 16) * 16 for t in threads)
        getattr(program, kernel)(queue, global_size, (16,) * len(threads), *bufs,
                                 *(np.int32(s) for s in scalars))
        for a, b in zip(arrays, bufs):
            cl.enqueue_copy(queue, a, b)
        queue.finish()

    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    result = np.zeros(1, np.float32)
    run("dot_product", [a, b, result], [n], (n,))
    assert np.isclose(result[0], np.dot(a.astype(np.float64), b), rtol=1e-4)

    A, y = rng.random((rows, cols)), np.zeros(rows)
    run("row_sums", [A, y], [rows, cols], (cols, rows))
    assert np.allclose(y, A.sum(axis=1), rtol=1e-12)

    v = rng.integers(-5, 5, n).astype(np.int32)
    count = np.zeros(2, np.uint32)
    run("counters", [v, count], [n], (n,))
    ups, downs = int((v > 0).sum()), int((v < 0).sum())
    up, down = 0, 0
    for _ in range(ups):              # CUDA: ((old >= 100) ? 0 : old + 1)
        up = 0 if up >= 100 else up + 1
    for _ in range(downs):            # CUDA: ((old == 0) | (old > 7)) ? 7 : old - 1
        down = 7 if down == 0 or down > 7 else down - 1
    assert count.tolist() == [up, down]


def test_a_used_old_value_is_not_verified():
    source = """\
__global__ void compact(const float *in, float *out, int *count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0.5f) {
        int slot = atomicAdd(count, 1);
        out[slot] = in[i];
    }
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="c.cu", target=target)
        assert result.unverified["compact"].startswith(
            "the kernel uses the value atomic")
        assert "depends on the order the threads run in" in result.unverified["compact"]


def test_value_used_tells_statements_from_values():
    module = parse_module("k.cu", """\
__global__ void k(int *A, int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&A[i], 1);
    for (int j = 0; j < 2; j++)
        atomicSub(&A[j], 1);
    if (atomicCAS(c, 0, 1) == 0)
        A[0] = atomicExch(&A[1], 3);
}
""", {})
    body = module.procedures[0].body
    assert atomics.value_used(body) == ["atomicCAS", "atomicExch"]
    assert atomics.atomic_arrays(body) == {"A": "atomicAdd", "c": "atomicCAS"}


def test_the_address_forms_are_one_element():
    module = parse_module("k.cu", """\
__global__ void k(float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *row = B + 2 * i;
    if (i < n) {
        atomicAdd(A + i, 1.0f);
        atomicAdd(&(A[i + 1]), 1.0f);
        atomicAdd(row, 2.0f);
        atomicAdd(&row[1], 2.0f);
    }
}
""", {})
    from naiveopt.ir.cgen import to_c

    text = to_c(module.procedures[0].func)
    assert "atomicAdd(&A[i], 1.0f)" in text
    assert "atomicAdd(&A[i + 1], 1.0f)" in text
    assert text.count("atomicAdd(&B[") == 2


def test_memory_expressions_count_the_element_as_read_and_written():
    result = naiveopt.optimize(CUDA, filename="at.cu", opt=False, verify=False)
    remarks = [r.message for r in result.remarks if r.pass_name == "memory-expressions"
               and r.kernel == "row_sums"]
    assert any(m.startswith("y[") and "global read+write" in m for m in remarks), remarks
