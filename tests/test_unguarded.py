"""Kernels without a bounds guard: a launch coverage (block x outputs per thread) is allowed
when it divides the naive block, or the thread space as the compile fixes it (-D sizes,
unconditional #defines, literal thread spaces); otherwise the passes decline and say why."""
import os
import re

import pytest

import naiveopt
from naiveopt.frontend import fixed_macros

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels", "naive")


def run(name, **kw):
    path = os.path.join(KERNELS, name)
    with open(path) as fh:
        return naiveopt.optimize(fh.read(), filename=path, **kw)


def remarks(result, pass_name):
    return "\n".join(r.message for r in result.remarks if r.pass_name == pass_name)


def coverage(k):
    return (k.geometry.block[0] * k.geometry.coarsen[0],
            k.geometry.block[1] * k.geometry.coarsen[1])


def test_fixed_macros_are_command_line_values_and_unconditional_defines():
    source = ("#define W 64\n#define H (W * 2)\n#ifndef K\n#define K 32\n#endif\n"
              "#define F 1.5f\n#define G 8\n#undef G\n")
    assert fixed_macros(source, {}) == ({"W": 64, "H": 128}, {"K"})
    fixed, overridable = fixed_macros(source, {"K": "16", "N": "100", "S": "abc"})
    assert fixed == {"W": 64, "H": 128, "K": 16, "N": 100} and overridable == set()
    # a -D that an unconditional #define contradicts: which value counts is unclear
    assert "W" not in fixed_macros(source, {"W": "48"})[0]
    assert fixed_macros(source, {"W": "64"})[0]["W"] == 64


def test_mm_macro_declines_thread_merge_without_a_fixed_thread_space():
    result = run("mm_macro.cu", verify=False)
    (k,) = result.kernels
    assert "thread-merge" not in k.passes and k.geometry.multiple is None
    assert 16 % coverage(k)[0] == 0 and 16 % coverage(k)[1] == 0
    text = remarks(result, "thread-merge")
    assert "merge 2x2 rejected: covers 32x32 threads: no bounds guard, and 32x32 divides " \
        "neither the naive block 16x16 nor the thread space (WIDTH_B, HEIGHT_A) as the " \
        "compile fixes it: WIDTH_B is a #ifndef default that a build may override; " \
        "HEIGHT_A is not a compile-time constant" in text
    assert "thread space a multiple" not in result.code and "#error" not in result.code


def test_mm_macro_merges_threads_at_sizes_fixed_by_the_command_line():
    # big enough that merging pays: at 64 x 64 outputs 16 blocks of one output per thread
    # beat fewer merged blocks on 132 SMs (the cost model counts each merged copy's bytes)
    sizes = {"HEIGHT_A": "576", "WIDTH_A": "32", "WIDTH_B": "512"}
    result = run("mm_macro.cu", defines=sizes)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert [c.split()[0] for c in k.verification.checks] == ["cli"]
    assert "thread-merge" in k.passes and k.geometry.coarsen[:2] != (1, 1)
    cx, cy = coverage(k)
    assert (cx, cy) != (16, 16) and 512 % cx == 0 and 576 % cy == 0
    assert k.geometry.multiple == (cx, cy)
    assert k.launch_json()["thread_space_multiple_of"] == [cx, cy]
    assert f"//   requires: thread space a multiple of ({cx}, {cy}): no bounds guard" in \
        result.code
    # the macro the output keeps by name cannot be overridden with a value the launch overruns
    assert re.search(rf"#if \(WIDTH_B\) % {cx} != 0\n#error \"mm_macro [^\"]*WIDTH_B[^\"]*\"",
                     result.code)
    # a coverage the fixed sizes are not a multiple of still declines, saying so
    assert re.search(r"merge 1x8 rejected: covers \d+x128 threads: .*HEIGHT_A = 576 "
                     r"\(HEIGHT_A=576 fixed at compile time\), not a multiple of 128",
                     remarks(result, "thread-merge"))


def test_mm_macro_with_only_its_width_fixed_merges_along_x_only():
    result = run("mm_macro.cu", defines={"WIDTH_B": "64"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    cx, cy = coverage(k)
    assert 64 % cx == 0 and 16 % cy == 0
    assert "HEIGHT_A is not a compile-time constant" in remarks(result, "thread-merge")


def test_sizes_fixed_but_not_a_multiple_decline():
    result = run("mm_macro.cu", defines={"HEIGHT_A": "48", "WIDTH_A": "32", "WIDTH_B": "48"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert coverage(k) == (16, 16)
    assert "WIDTH_B = 48 (WIDTH_B=48 fixed at compile time), not a multiple of 32" in \
        remarks(result, "thread-merge")


def test_transpose_macro_takes_a_32x32_tile_when_its_sizes_are_fixed():
    result = run("transpose_macro.cu", defines={"H": "64", "W": "96"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert coverage(k) == (32, 32) and k.geometry.multiple == (32, 32)
    # W and H are the kernel's runtime arguments: no macro to check, the header says it
    assert "requires: thread space a multiple of (32, 32)" in result.code
    assert "#error" not in result.code
    odd = run("transpose_macro.cu", defines={"H": "48", "W": "96"})
    assert coverage(odd.kernels[0]) == (16, 16) and odd.verified


UNGUARDED = """#pragma naiveopt sizes(N=64) array(A, N, N) array(B, N, N) array(C, N, N)
#pragma naiveopt threads(N, N) block(16, 16)
DEFINE
#define A(y,x) A[(y)*N+(x)]
#define B(y,x) B[(y)*N+(x)]
#define C(y,x) C[(y)*N+(x)]
__global__ void mm(float *A, float *B, float *C) {
    float sum = 0;
    for (int i = 0; i < N; i++)
        sum += A(idy, i) * B(i, idx);
    C(idy, idx) = sum;
}
"""


@pytest.mark.parametrize("define,fixed", [("#define N 64", True),
                                          ("#ifndef N\n#define N 64\n#endif", False)])
def test_an_unconditional_define_fixes_the_thread_space_and_a_default_does_not(define, fixed):
    # at N = 64 the cost model merges no threads (fewer blocks, no gain): with merged threads
    # forced, the coverage exceeds the naive block, which only a fixed N allows
    result = naiveopt.optimize(UNGUARDED.replace("DEFINE", define), filename="mm.cu",
                               options={"merge": (2, 2)} if fixed else None)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    if fixed:
        assert coverage(k) != (16, 16) and k.geometry.multiple == coverage(k)
        assert f"#if (N) % {coverage(k)[0]} != 0" in result.code
    else:
        assert 16 % coverage(k)[0] == 0 and 16 % coverage(k)[1] == 0
        assert "N is a #ifndef default that a build may override" in \
            remarks(result, "thread-merge")


@pytest.mark.parametrize("table", [True, False])
def test_a_local_table_before_the_guard_keeps_the_guard_a_guard(table):
    """A kernel declaring its weights first (``const float w[4] = {...};``) and returning
    early after: the table is part of the prologue, so the early return is the bounds guard
    coalescing hoists around its barriers. It was taken for an unguarded kernel's statement,
    and the staged loop ran after threads of the last block had returned (fuzz 95 case 74:
    PoCL wrote out of bounds). A return before the staged loop outside a recognized guard
    makes the pass decline."""
    head = "const float w[4] = {0.5f, 0.25f, -1.0f, 2.0f};" if table else ""
    source = f"""
__global__ void rows(const float *A, float *B, int N, int K)
{{
    {head}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[i * K + k] * {"w[k % 4]" if table else "0.5f"};
    B[i] = acc;
}}
"""
    result = naiveopt.optimize(source, filename="t.cu", passes=["coalesce"])
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.passes == ["coalesce"], remarks(result, "coalesce")
    assert "return;" not in result.code.split("__syncthreads")[0].split("{", 2)[-1]


def test_a_return_before_a_staged_loop_outside_a_guard_declines():
    from naiveopt.analysis.shape import kernel_shape
    from naiveopt.frontend import parse_module

    source = """
__global__ void rows(const float *A, float *B, int N, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    B[i] = 0.0f;
    if (i >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[i * K + k];
    B[i] = acc;
}
"""
    shape, _ = kernel_shape(parse_module("t.cu", source, {}).procedures[0])
    assert shape.guard is None
    result = naiveopt.optimize(source, filename="t.cu", passes=["coalesce"], verify=False)
    assert result.kernels[0].passes == []
    assert "a return before the staged loop" in remarks(result, "coalesce")
