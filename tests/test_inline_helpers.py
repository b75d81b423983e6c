"""inline-helpers: calls of helpers that read memory or compute an integer are written out,
so that the analyses see the reads and indices behind them (demosaic's ``pixel`` and
``clamp_coord``). Each inlined kernel is verified against its naive form, which still calls
the helpers; what is not inlined says why."""
from __future__ import annotations

import os

import pytest

import naiveopt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = [("sm_90", "cuda"), ("gfx90a", "opencl")]

CASTS = """
__device__ int wrap(int v, int n)
{
    int r = v % n;
    if (r < 0)
        return r + n;
    return r;
}

__device__ float tap(const float *img, unsigned int i)
{
    return img[i];
}

__device__ long offset(long row, int w)
{
    return row * w;
}

#pragma naiveopt sizes(n=77) array(A, n) array(B, n)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = BODY;
}
"""


def said(result, kind: str | None = None) -> str:
    return " ".join(r.message for r in result.remarks if r.pass_name == "inline-helpers" and
                    (kind is None or r.kind == kind))


@pytest.mark.parametrize("arch,target", TARGETS)
def test_demosaic_reads_through_its_helpers_are_staged_and_verified(arch, target):
    path = os.path.join(ROOT, "kernels", "naive", "demosaic.cu")
    with open(path) as fh:
        # staged wherever legal: whether staging pays is test_stencil.py's question
        result = naiveopt.optimize(fh.read(), filename=path, arch=arch, target=target,
                                   options={"cost_model": "unlimited"})
    (k,) = result.kernels
    assert "pixel (13 calls)" in said(result, "applied")
    assert "stencil" in k.passes
    assert k.verification.status == "passed", k.verification.detail
    assert "odd" in k.verification.detail


def test_arguments_and_results_are_converted_as_the_call_converts_them():
    result = naiveopt.optimize(CASTS.replace(
        "BODY", "tap(A, wrap(i + 3, n)) + A[offset(0, n) + wrap(i - 1, n)]"), filename="f.cu")
    (k,) = result.kernels
    assert "wrap (2 calls), tap (1 call), offset (1 call)" in said(result, "applied")
    assert k.verification.status == "passed", k.verification.detail
    kernel = result.code[result.code.index("__global__ void f"):]
    code = " ".join(kernel.split())
    assert "wrap(" not in code and "tap(" not in code and "offset(" not in code
    # an int argument of an unsigned parameter and a long product are converted; an int
    # argument of an int parameter is written as it is
    assert "A[(unsigned int)(" in code and "(long)0" in code
    assert "(i + 3) % n < 0" in code


@pytest.mark.parametrize("helper,body,why", [
    ("__device__ float sum3(const float *p, int i) { float s = 0.0f; "
     "for (int k = 0; k < 3; k++) s += p[i + k]; return s; }",
     "sum3(A, i)", "'sum3' stays a call: its body is more than locals and returns"),
    ("__device__ float twice(const float *p, int i) { float v = p[i]; v *= 2.0f; return v; }",
     "twice(A, i)", "'twice' stays a call: its body is more than locals and returns"),
    ("__device__ int pick(const float *p, int i) { if (p[i] > 0.0f) { int j = i; return j; } "
     "return 0; }",
     "A[pick(A, i)]", "'pick' stays a call: an if does more than return a value"),
])
def test_helpers_that_are_not_an_expression_stay_calls_and_say_why(helper, body, why):
    src = helper + """
#pragma naiveopt sizes(n=77) array(A, n) array(B, n)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = BODY;
}
""".replace("BODY", body)
    result = naiveopt.optimize(src, filename="f.cu", verify=False)
    assert why in said(result, "missed"), said(result)
    assert "applied" not in [r.kind for r in result.remarks if r.pass_name == "inline-helpers"]


def test_an_argument_with_side_effects_keeps_the_call():
    src = """
__device__ float get(const float *p, int i) { return p[i] + p[i + 1]; }
#pragma naiveopt sizes(n=77) array(A, n) array(B, n)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    if (i < n - 1)
        B[i] = get(A, j++);
}
"""
    result = naiveopt.optimize(src, filename="f.cu")
    assert "'get' stays a call: an argument has side effects" in said(result, "missed")
    assert result.kernels[0].verification.status == "passed"


def test_float_math_helpers_hide_nothing_and_stay_calls():
    path = os.path.join(ROOT, "tests", "corpus", "tb_sigmoid_device_fn.cu")
    with open(path) as fh:
        result = naiveopt.optimize(fh.read(), filename=path)
    assert said(result) == ""
    assert "sigmoid(x[" in result.code


def test_the_pass_can_be_disabled():
    path = os.path.join(ROOT, "kernels", "naive", "demosaic.cu")
    with open(path) as fh:
        result = naiveopt.optimize(fh.read(), filename=path, verify=False,
                                   options={"disable": ["inline-helpers"]})
    (k,) = result.kernels
    assert "stencil" not in k.passes and said(result, "applied") == ""


GLOBAL_IDS = """
__device__ int global_x() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ int global_y() { return threadIdx.y + blockDim.y * blockIdx.y; }

#pragma naiveopt sizes(W=75, H=45) block(16, 16) array(in, H, W) array(out, W, H)
__global__ void transpose(const float *in, float *out, int W, int H)
{
    int x = global_x();
    int y = global_y();
    if (x < W && y < H)
        out[x * H + y] = in[y * W + x];
}
"""


@pytest.mark.parametrize("arch,target", TARGETS)
@pytest.mark.parametrize("annotated", [True, False])
def test_global_id_helpers_are_the_ids_and_the_transpose_is_staged(arch, target, annotated):
    """``int x = global_x();`` is the global id once written out (a helper's x and y are
    member names, not the kernel's x and y): the write is a transpose coalesce-writes
    stages, verified with the pragmas and at the sizes naiveopt infers without them."""
    src = GLOBAL_IDS if annotated else "\n".join(
        line for line in GLOBAL_IDS.splitlines() if "pragma" not in line)
    result = naiveopt.optimize(src, filename="t.cu", arch=arch, target=target)
    (k,) = result.kernels
    assert "global_x (1 call), global_y (1 call)" in said(result, "applied")
    assert "coalesce-writes" in k.passes
    assert k.verification.status == "passed", k.verification.detail


def test_ids_from_a_helper_are_not_inlined_where_blockidx_stands_for_the_global_id():
    """A kernel indexed by blockIdx.y alone runs one thread per block along y, and the
    predefined pass reads blockIdx.y as idy; a helper's threadIdx.y would then be written
    next to an id the passes may reshape. It stays a call."""
    src = """
__device__ int sub_row() { return threadIdx.y; }
#pragma naiveopt sizes(n=77, m=5) array(A, m, n) array(B, m, n)
__global__ void f(const float *A, float *B, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y + sub_row();
    if (i < n && row < m)
        B[row * n + i] = A[row * n + i];
}
"""
    result = naiveopt.optimize(src, filename="f.cu")
    assert "'sub_row' stays a call: it reads thread ids" in said(result, "missed"), said(result)
    assert result.kernels[0].passes == []


CLAMP_HELPER = """
__device__ int clampi(int v, int lo, int hi)
{
    if (v < lo) v = lo;
    if (v > hi) { v = hi; }
    return v;
}

__device__ int reflect(int v, int n)
{
    if (v < 0)
        v = -v;
    else if (v >= n)
        v = 2 * n - v - 2;
    return v;
}

__global__ void blur(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.f;
    for (int d = -1; d <= 1; d++)
        s += in[y * w + clampi(x + d, 0, w - 1)] * (float)(d + 2)
             + in[reflect(y + d, h) * w + x];
    out[y * w + x] = s;
}
"""


@pytest.mark.parametrize("arch,target", TARGETS)
def test_helpers_that_clamp_their_parameter_with_ifs_are_written_out(arch, target):
    """The clamp helper most tutorials write, ``if (v < lo) v = lo; if (v > hi) v = hi;
    return v;``, and a reflection with an else-if: the parameter's assignments are read in
    order as ternaries, so the reads' extents are inferred (verified without annotations)
    and the clamped row is staged."""
    result = naiveopt.optimize(CLAMP_HELPER, filename="blur.cu", arch=arch, target=target,
                               options={"cost_model": "unlimited"})
    (k,) = result.kernels
    assert "clampi (1 call), reflect (1 call)" in said(result, "applied"), said(result)
    assert k.verification.status == "passed", k.verification.detail
    assert "inferred" in k.verification.detail
    assert "stencil" in k.passes


def test_a_parameter_assigned_a_value_of_another_type_is_converted_in_each_branch():
    """``if (v > hi) v = hi;`` with a float hi assigns (int)hi: the ternary converts that
    branch, not v (an int converted to float and back could change above 2^24)."""
    src = """
__device__ int lim(int v, float hi) { if (v > hi) v = hi; else if (v < 0) v = 0; return v; }
#pragma naiveopt sizes(n=77) array(A, n) array(B, n)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = A[lim(i - 3, n * 0.6f)];
}
"""
    result = naiveopt.optimize(src, filename="f.cu")
    (k,) = result.kernels
    assert "lim (1 call)" in said(result, "applied")
    assert k.verification.status == "passed", k.verification.detail
    code = " ".join(result.code.split())
    assert "? ((int)((float)(n * 0.6f))) : ((i - 3 < 0) ? (0) : (i - 3))" in code, code


@pytest.mark.parametrize("helper,why", [
    ("__device__ int wrap(int v, int n) { v = v % n; if (v < 0) v += n; return v; }",
     "an if does more than return a value"),
    ("__device__ int pick(int v, int n) { if (v < 0) { v = 0; n = 1; } return v * n; }",
     "an if does more than return a value"),
])
def test_helpers_that_assign_otherwise_stay_calls(helper, why):
    src = helper + """
#pragma naiveopt sizes(n=77) array(A, n) array(B, n)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = A[HELPER(i, n)];
}
""".replace("HELPER", helper.split("(")[0].split()[-1])
    result = naiveopt.optimize(src, filename="f.cu", verify=False)
    assert why in said(result, "missed"), said(result)
