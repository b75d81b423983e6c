"""An OpenCL kernel's own ``__attribute__((reqd_work_group_size(X, Y, Z)))``: the runtime
refuses any other local size, so it is the naive launch's block. Before, verification launched
the naive kernel with naiveopt's default block and PoCL refused it (INVALID_WORK_GROUP_SIZE:
written unverified), and the output dropped the attribute."""
from __future__ import annotations

import re

import pytest

import naiveopt

VADD = r"""
#define WG 64
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vadd(__global const float* restrict a, __global const float* restrict b,
          __global float* restrict c, const int n)
{
    size_t i = get_global_id(0);
    if (i >= n) return;
    c[i] = a[i] + b[i];
}
"""

MM = r"""
__kernel void __attribute__((reqd_work_group_size(8, 8, 1)))
mm(__global const float *A, __global const float *B, __global float *C, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; k++)
            s += A[row * n + k] * B[k * n + col];
        C[row * n + col] = s;
    }
}
"""


def attributes(code: str) -> list[str]:
    return re.findall(r"reqd_work_group_size\(([^)]*)\)", code)


@pytest.mark.parametrize("passes", [None, []], ids=["optimized", "no-opt"])
def test_the_attribute_is_the_naive_block_and_is_kept_where_the_block_is(passes):
    result = naiveopt.optimize(VADD, filename="vadd.cl", passes=passes)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert attributes(result.code) == ["64, 1, 1"]
    assert result.kernels[0].geometry.block[:2] == (64, 1)


def test_a_block_a_pass_fixes_replaces_the_attribute():
    result = naiveopt.optimize(MM, filename="mm.cl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.passes
    (block,) = attributes(result.code)
    assert block != "8, 8, 1"
    assert tuple(int(v) for v in block.split(", "))[:2] == tuple(k.geometry.block[:2])


def test_cuda_output_of_such_a_kernel_verifies_without_the_attribute():
    result = naiveopt.optimize(VADD, filename="vadd.cl", target="cuda")
    assert result.kernels[0].verification.status == "passed"
    assert "reqd_work_group_size" not in result.code
