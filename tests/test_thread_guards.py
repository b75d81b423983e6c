"""Which top-level ``if`` statements bound a kernel's thread space (analysis/guards.py,
thread_guards): an early return, or an ``if`` without an ``else`` that ends the kernel, with
no store before it. Any other ``if`` is the thread's work.

Found by a probe of finite-difference code (``if (i >= n) return; if (i < n - 2) b[i] = ...;
else b[i] = 0;``): the inner test was read as the guard, the thread space as n - 2, and every
launch naiveopt gave (header, sidecar, launcher) left the last elements of b unwritten at
n = 257 (ceil(255 / 256) blocks); verification ran the naive kernel on the same launch and
saw nothing.
"""
from __future__ import annotations

import numpy as np
import pytest

import naiveopt
from conftest import run_opencl
from naiveopt.analysis.guards import thread_guards
from naiveopt.api import compile_module
from naiveopt.frontend import parse_unit
from naiveopt.ir.cgen import to_c

ELSE_AFTER_RETURN = """\
__global__ void diff_fwd(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (i < n - 2)
        b[i] = a[i + 2] - a[i];
    else
        b[i] = 0.0f;
}
"""


def thread_space_remark(result) -> str:
    return "\n".join(r.message for r in result.remarks if r.pass_name == "thread-space")


def guards_of(source: str) -> list[tuple[str, bool]]:
    unit = parse_unit("k.cu", source, {})
    (proc,) = compile_module(unit, None, "sm_90", False).module.procedures
    return [(to_c(stmt.cond), negated) for stmt, negated in thread_guards(proc)]


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_an_if_with_an_else_after_the_guard_is_no_guard(target):
    result = naiveopt.optimize(ELSE_AFTER_RETURN, filename="fd.cu", target=target)
    assert "thread space from bounds guard: (n, 1)" in thread_space_remark(result)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.geometry.thread_space[0] == "n"


@pytest.mark.parametrize("n", [257, 258, 1026, 37])
def test_the_output_on_its_own_launch_writes_every_element(n):
    """The output run on the launch its sidecar gives, at sizes where n - 2 takes one block
    fewer than n: every element of b is written (NumPy's forward difference, 0 at the end)."""
    result = naiveopt.optimize(ELSE_AFTER_RETURN, filename="fd.cu", target="opencl")
    cfg = naiveopt.launch_config(result, n=n)
    a = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    b = np.full(n, np.nan, np.float32)
    (_, got) = run_opencl(result.code, "diff_fwd", [g * b for g, b in zip(cfg.grid, cfg.block)],
                          list(cfg.block), [a, b, np.int32(n)])
    want = np.zeros(n, np.float32)
    want[:n - 2] = a[2:] - a[:-2]
    np.testing.assert_array_equal(got, want)


def test_which_ifs_are_guards():
    head = "__global__ void k(const float *a, float *b, float *c, int n, int m)\n{\n" \
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    # an early return, then an if ending the kernel: both bound the working threads
    assert guards_of(head + "    if (i >= n) return;\n    if (i < m) b[i] = a[i];\n}\n") == \
        [("i >= n", True), ("i < m", False)]
    # the if with an else is the thread's work
    assert guards_of(head + "    if (i >= n) return;\n    if (i < m) b[i] = a[i];\n"
                     "    else b[i] = 0.0f;\n}\n") == [("i >= n", True)]
    # an if that more work follows
    assert guards_of(head + "    if (i < m) b[i] = a[i];\n    c[i] = 1.0f;\n}\n") == []
    # two guarded sections: the threads of the first work past m
    assert guards_of(head + "    if (i < n) b[i] = a[i];\n    if (i < m) c[i] = a[i];\n}\n") \
        == []
    # a store every thread makes before the guard: the guard bounds only what follows it
    assert guards_of(head + "    c[i] = 0.0f;\n    if (i >= n) return;\n    b[i] = a[i];\n}\n") \
        == []
    assert guards_of(head + "    atomicAdd(&c[0], 1.0f);\n    if (i < n) b[i] = a[i];\n}\n") \
        == []
    # shared memory a block fills before its guard (and its barrier): no work past the
    # guard anyone sees, as a thread's own arrays
    assert guards_of(head + "    __shared__ float s[256];\n    float w[2];\n"
                     "    s[threadIdx.x] = a[i];\n    w[1] = 0.0f;\n    __syncthreads();\n"
                     "    atomicAdd(&s[0], 1.0f);\n    if (i < n) b[i] = s[255 - threadIdx.x] "
                     "+ w[1];\n}\n") == [("i < n", False)]
    # locals set before the guard are the thread's own: the guard stands
    assert guards_of(head + "    float x = a[0] * 2.0f;\n    x += 1.0f;\n"
                     "    if (i < n) b[i] = x;\n}\n") == [("i < n", False)]


def test_a_store_before_the_guard_leaves_the_thread_space_to_inference():
    source = """\
__global__ void clear_then_copy(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = 0.0f;
    if (i < n - 1)
        b[i] = a[i + 1];
}
"""
    result = naiveopt.optimize(source, filename="c.cu", target="opencl", verify=False)
    assert "from bounds guard" not in thread_space_remark(result)
    assert result.kernels[0].geometry.thread_space[0] != "n - 1"
