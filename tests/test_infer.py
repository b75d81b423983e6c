"""Verification without annotations (verify/infer.py, verify/extents.py): the sizes, thread
space and array extents naiveopt works out from a kernel alone, the reasons it gives where it
cannot, and the pragmas that still override it."""
from __future__ import annotations

import math
import re

import pytest
import sympy

import naiveopt
from naiveopt.api import compile_module
from naiveopt.frontend import parse_unit
from naiveopt.verify.expr import evaluate


def spec_of(source: str, filename: str = "k.cu"):
    unit = parse_unit(filename, source, {})
    return compile_module(unit, None, "sm_90", True), unit


def kernel(source: str, name: str | None = None, filename: str = "k.cu"):
    c, unit = spec_of(source, filename)
    spec = c.spec
    return spec.kernels[name or next(iter(spec.kernels))], spec, c


def extent(source: str, array: str, sizes: dict[str, int]) -> int:
    k, _, _ = kernel(source)
    (arg,) = [a for a in k.args if a.name == array]
    return math.prod(int(evaluate(d, sizes)) for d in arg.shape)


def why(source: str, array: str) -> str:
    k, _, _ = kernel(source)
    (arg,) = [a for a in k.args if a.name == array]
    return " ".join(getattr(d, "why", "") for d in arg.shape)


GUARDED_1D = """
__global__ void f(const float *A, float *B, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        float acc = 0.0f;
        {body}
        B[i] = acc;
    }}
}}
"""


@pytest.mark.parametrize("n", [10, 11, 37])
def test_triangular_loop_extent_is_exact(n):
    """j < i couples the loop to the thread: A[j * n + (n - 1 - i)] reaches (n - 2) * n + 0
    at most (j = n - 2 needs i = n - 1); bounding j and i separately would give (n - 1) * n."""
    src = GUARDED_1D.format(body="for (int j = 0; j < i; j++) acc += A[j * n + (n - 1 - i)];")
    assert extent(src, "A", {"n": n}) == (n - 2) * n + 1
    assert extent(src, "B", {"n": n}) == n


@pytest.mark.parametrize("n, want", [(10, 10), (11, 10), (12, 10), (13, 13)])
def test_strided_loop_extent_is_exact(n, want):
    src = GUARDED_1D.format(body="for (int k = 0; k < n; k += 3) acc += A[k];")
    assert extent(src, "A", {"n": n}) == want


def test_reversed_loop_extent():
    src = """
__global__ void rev(const float *A, float *B, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = m - 1; k >= 0; k--)
            acc += A[i * m + k];
        B[i] = acc;
    }
}
"""
    assert extent(src, "A", {"n": 7, "m": 5}) == 35


def test_two_d_recovered_and_early_return():
    src = """
__global__ void mm(const float *A, const float *B, float *C, int H, int W, int K)
{
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row >= H || col >= W) return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[row * K + k] * B[k * W + col];
    C[row * W + col] = sum;
}
"""
    k, spec, _ = kernel(src)
    sizes = {"H": 5, "W": 7, "K": 3}
    assert [int(evaluate(t, sizes)) for t in k.threads] == [7, 5, 1]
    assert {a.name: math.prod(int(evaluate(d, sizes)) for d in a.shape)
            for a in k.args if a.shape} == {"A": 15, "B": 21, "C": 35}
    assert {a.name: a.role for a in k.args if not a.shape} == {"H": "size", "W": "size",
                                                                "K": "size"}


def test_macro_indexed_with_fixed_define():
    """A #define'd size keeps its value (it is no size to choose): the extent follows it."""
    src = """
#define W 37
#define IDX(r, c) ((r) * W + (c))
__global__ void rows(const float *A, float *B, int h)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < h) {
        float s = 0.0f;
        for (int c = 0; c < W; c++) s += A[IDX(r, c)];
        B[r] = s;
    }
}
"""
    k, spec, _ = kernel(src)
    assert extent(src, "A", {"h": 4, "W": 37}) == 4 * 37
    assert all("W" not in s for s in spec.sizes.values())
    assert all(set(s) == {"h"} for s in spec.sizes.values())


def test_clamps_divisions_and_remainders():
    src = """
__global__ void f(const float *A, float *B, float *C, int n, int T)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n * T) {
        int b = i / T;
        int t = i % T;
        B[b * T + t] = A[min(max(i + 1, 0), n * T - 1)];
        C[t] = 1.0f;
    }
}
"""
    assert extent(src, "A", {"n": 3, "T": 5}) == 15
    assert extent(src, "B", {"n": 3, "T": 5}) == 15
    assert extent(src, "C", {"n": 3, "T": 5}) == 5


def test_an_unguarded_axis_is_a_free_size_the_launch_gives():
    """An unguarded 2-D kernel (the paper's style) writes C[idy * w + idx]: how many columns
    its launch covers is the launch's (the row width w bounds nothing: a padded layout is
    launched over fewer), so both axes are free sizes; verification runs them inside the
    arrays, whole naive blocks, a launch over fewer columns than w among them."""
    src = """
__global__ void mm(float *A, float *B, float *C, int w)
{
    float sum = 0.0f;
    for (int i = 0; i < w; i = i + 1)
        sum += A[idy * w + i] * B[i * w + idx];
    C[idy * w + idx] = sum;
}
"""
    k, spec, _ = kernel(src)
    assert k.threads[:2] == ("globalDimX", "globalDimY")
    for sizes in spec.sizes.values():
        assert sizes["globalDimX"] % k.block[0] == 0 and sizes["globalDimY"] % k.block[1] == 0
        assert sizes["globalDimX"] <= sizes["w"]
    assert any(sizes["globalDimX"] < sizes["w"] for sizes in spec.sizes.values())


LU_STEP = """
__global__ void lu_kernel2(float *A, int n, int k)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i > k) && (j > k) && (i < n) && (j < n))
        A[i * n + j] -= A[i * n + k] * A[k * n + j];
}
"""

RED_BLACK = """
__global__ void rb_gs_sweep(float *u, const float *f, int nx, int ny, float h2, int color)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1) {
        if ((i + j) % 2 == color)
            u[j * nx + i] = 0.25f * (u[j * nx + (i - 1)] + u[j * nx + (i + 1)]
                                   + u[(j - 1) * nx + i] + u[(j + 1) * nx + i] + h2 * f[j * nx + i]);
    }
}
"""


def test_a_step_that_bounds_the_ids_from_below_is_small():
    """LU's step k (``i > k && j > k``, the rows and columns past the pivot) took a problem
    size's value (768 > n = 512): no thread worked, and the kernel was written unverified
    ('changes no element of its output arrays'). It bounds the ids from below: small."""
    k, spec, _ = kernel(LU_STEP)
    for sizes in spec.sizes.values():
        assert sizes["k"] < sizes["n"] // 4
    result = naiveopt.optimize(LU_STEP, filename="lu.cu")
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail


def test_a_size_compared_with_a_remainder_takes_each_residue():
    """Red-black Gauss-Seidel's colour (``(i + j) % 2 == color``) took a problem size's value
    and no point was updated: the two size sets take colours 0 and 1, both sweeps."""
    k, spec, _ = kernel(RED_BLACK)
    assert sorted(sizes["color"] for sizes in spec.sizes.values()) == [0, 1]
    result = naiveopt.optimize(RED_BLACK, filename="rb.cu")
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail


CONV2D_NCHW = """
__global__ void conv2d_forward_naive(const float *input, const float *weight, const float *bias,
                                     float *output, int N, int C, int H, int W, int K, int KH,
                                     int KW, int OH, int OW, int pad, int stride)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int total = N * K * OH * OW;
    if (idx >= total) return;
    int ow = idx % OW;
    int oh = (idx / OW) % OH;
    int k  = (idx / (OW * OH)) % K;
    int n  = idx / (OW * OH * K);
    float sum = bias[k];
    for (int c = 0; c < C; c++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                int ih = oh * stride - pad + kh;
                int iw = ow * stride - pad + kw;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                    sum += input[((n * C + c) * H + ih) * W + iw] *
                           weight[((k * C + c) * KH + kh) * KW + kw];
            }
    output[idx] = sum;
}
"""

IM2COL = """
__global__ void im2col_kernel(const float *data_im, float *data_col, int channels, int height,
                              int width, int kernel_h, int kernel_w, int pad_h, int pad_w,
                              int stride_h, int stride_w, int dilation_h, int dilation_w,
                              int height_col, int width_col)
{
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= channels * height_col * width_col) return;
    int w_col = index % width_col;
    int h_col = (index / width_col) % height_col;
    int c_im = index / (width_col * height_col);
    int h_offset = h_col * stride_h - pad_h;
    int w_offset = w_col * stride_w - pad_w;
    for (int i = 0; i < kernel_h; ++i)
        for (int j = 0; j < kernel_w; ++j) {
            int h_im = h_offset + i * dilation_h;
            int w_im = w_offset + j * dilation_w;
            int row = (c_im * kernel_h + i) * kernel_w + j;
            data_col[(row * height_col + h_col) * width_col + w_col] =
                (h_im >= 0 && w_im >= 0 && h_im < height && w_im < width)
                    ? data_im[(c_im * height + h_im) * width + w_im] : 0.0f;
        }
}
"""


@pytest.mark.parametrize("source, small, outer, inner, large", [
    (CONV2D_NCHW, ["KH", "KW", "pad", "stride"], ["N", "K", "OH"], "OW", ["C", "H", "W"]),
    (IM2COL, ["kernel_h", "kernel_w", "pad_h", "pad_w", "stride_h", "stride_w", "dilation_h",
              "dilation_w"], ["channels", "height_col"], "width_col", ["height", "width"]),
])
def test_a_convolutions_window_sizes_and_flattened_outputs_stay_small(source, small, outer,
                                                                      inner, large):
    """A direct convolution and im2col, one thread per element of a flattened NCHW output:
    the window's extent, padding, stride and dilation (a dimension's index adding a loop
    iterator to a thread's coordinate) are small sizes, and the outer factors of the
    flattened thread space too; the channels summed over and the image keep problem
    sizes. At problem sizes for all (KH = 112, stride = 192, four factors of 32 or more) the
    naive kernel ran past the time limit, or its arrays past what verification allocates:
    written unverified. Now both verify."""
    from naiveopt.verify.infer import FACTORS, SMALL

    k, spec, _ = kernel(source)
    for sizes in spec.sizes.values():
        assert all(sizes[n] in SMALL for n in small), sizes
        assert all(sizes[n] in FACTORS[0] + FACTORS[1] for n in outer), sizes
        assert sizes[inner] >= 64 and all(sizes[n] >= 64 for n in large), sizes
    result = naiveopt.optimize(source, filename="conv.cu")
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail


@pytest.mark.parametrize("index, loops, taps", [
    ("(idy*stride - pad + kh)*W + idx*stride - pad + kw", {"kh": "KH", "kw": "KW"},
     {"kh", "kw"}),
    ("i*ny + j + 0*idx", {"i": "nx"}, set()),           # BiCG's A[i * ny + j]: rows, no taps
    ("k + (K + 2)*(N - idx - 1)", {"k": "K"}, set()),   # a row walked along an outer row
    ("BLOCK_SIZE*bidx + k*wB + tidx", {"k": "wA"}, set()),  # the samples' B[k * wB + ...]
])
def test_window_taps_are_loops_beside_a_coordinate_of_their_own_dimension(index, loops, taps):
    """A loop is a window's taps where its dimension adds it to a thread's coordinate; a
    loop along a row the thread picks by an outer dimension (``A[(N - 1 - i) * (K + 2) +
    k]``, fuzz 20261 case 37, where K was read as a window size of 3 or 5) is a reduction
    over the row, its bound a problem size."""
    from naiveopt.verify.infer import _windows

    symbols = {n: sympy.Symbol(n, integer=True) for n in
               "idy kh kw stride pad W KH KW i j nx ny k K N idx bidx tidx BLOCK_SIZE wA wB".split()}
    expr = sympy.sympify(index, locals=symbols)
    found, _ = _windows(expr, {it: symbols[b] for it, b in loops.items()})
    assert found == taps


@pytest.mark.parametrize("body, reason", [
    ("B[i] = A[(int)B[i + 1]];", "depends on a value read from an array"),
    ("B[i] = walk(A, i);", "A is passed to walk(), not only indexed"),
    ("int k = 0; while (A[k] > 0.0f) k++; B[i] = A[k];", "depends on"),
])
def test_what_cannot_be_inferred_gives_a_reason(body, reason):
    src = """
__device__ float walk(const float *p, int i)
{
    float s = 0.0f;
    for (int k = 0; k < 3; k++)
        s += p[i + k];
    return s;
}
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { %s }
}
""" % body
    assert reason in why(src, "A")
    result = naiveopt.optimize(src, filename="f.cu")
    (k,) = result.kernels
    assert k.verification.status == "skipped"
    assert k.unverified.startswith("array shape unknown") and reason in k.unverified


def test_a_read_through_a_helper_is_inferred_and_verified():
    """A helper that returns one read (``at(p, i)``) is written out before inference reads
    the kernel (inline-helpers): A's extent is the guard's n, and the kernel verifies."""
    src = """
__device__ float at(const float *p, int i) { return p[i]; }
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { B[i] = 2.0f * at(A, i); }
}
"""
    assert extent(src, "A", {"n": 1001}) == 1001
    (k,) = naiveopt.optimize(src, filename="f.cu").kernels
    assert k.verification.status == "passed", k.verification.detail


def test_inferred_sizes_are_tile_multiples_then_primes():
    src = """
__global__ void mm(const float *A, const float *B, float *C, int H, int W, int K)
{
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row < H && col < W) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * W + col];
        C[row * W + col] = sum;
    }
}
"""
    _, spec, c = kernel(src)
    (proc,) = c.module.procedures
    test, odd = spec.sizes["inferred"], spec.sizes["inferred-odd"]
    cover = [b * m for b, m in zip(proc.launch_block, proc.coarsen)]
    assert test["W"] % cover[0] == 0 and test["H"] % cover[1] == 0
    assert len(set(test.values())) > 1                  # not square: a swap would show
    for name, value in odd.items():
        assert sympy.isprime(value), (name, value)
    # two tiles and a remainder: of the thread tile on the thread axes, of the k step (at
    # most a block side) on the loop extent
    assert odd["W"] > 2 * cover[0] and odd["H"] > 2 * cover[1]
    assert odd["K"] > 2 * max(proc.launch_block)
    result = naiveopt.optimize(src, filename="mm.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert [c.split(" ")[0] for c in k.verification.checks] == ["inferred", "inferred-odd"]


def test_taps_and_radii_stay_small():
    src = """
__global__ void box(const float *in, float *out, int w, int h, int r)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float sum = 0.0f;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            int yy = y + dy, xx = x + dx;
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) sum += in[yy * w + xx];
        }
    out[y * w + x] = sum;
}
"""
    _, spec, c = kernel(src)
    assert all(s["r"] <= 5 for s in spec.sizes.values())
    assert all(s["w"] >= 32 for s in spec.sizes.values())
    # the cost model estimates at a small radius too (not the default 4096, a 8193^2 filter),
    # and a pragma's value where one is given
    assert c.ctx.sizes == {"r": 3} and "tap sizes small" in c.ctx.sizes_from
    c2, _ = spec_of("#pragma naiveopt sizes(w=61, h=43, r=2)\n" + src)
    assert c2.ctx.sizes == {"r": 2}


def test_pragmas_override_inferred_facts():
    """Sizes from the pragma, the shape it gives for B; A's shape still inferred."""
    src = """
#pragma naiveopt sizes(n=45) array(B, n + 3)
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = 2.0f * A[i + 1];
}
"""
    k, spec, _ = kernel(src)
    assert spec.sizes == {"pragma": {"n": 45}} and spec.provenance["sizes"] == "pragma"
    shapes = {a.name: a.shape for a in k.args if a.shape}
    assert shapes["B"] == ["n + 3"] and k.provenance["shape B"] == "pragma"
    assert extent(src, "A", {"n": 45}) == 46 and k.provenance["shape A"] == "inferred"
    result = naiveopt.optimize(src, filename="f.cu")
    assert result.kernels[0].verification.status == "passed"


def test_a_fixed_table_bounds_the_sizes():
    """CT[i] with 16 entries allows at most 16 threads: inference cuts n to fit (it chose
    512 and 641, where the naive kernel would read past CT); sizes a pragma gives past it
    are not run, and verification says so instead of comparing garbage."""
    src = """
__constant__ float CT[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__global__ void f(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = CT[i] * A[i];
}
"""
    (k,) = naiveopt.optimize(src, filename="f.cu").kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.verification.detail.startswith("inferred (n=16): B match naive kernel")
    (big,) = naiveopt.optimize("#pragma naiveopt sizes(n=64)\n" + src, filename="f.cu").kernels
    assert big.verification.status == "skipped"
    assert "would access CT up to element 63" in big.unverified and "past its 16 elements" \
        in big.unverified
    ok = naiveopt.optimize("#pragma naiveopt sizes(n=13)\n" + src, filename="f.cu")
    assert ok.kernels[0].verification.status == "passed"


def test_inference_cuts_only_the_sizes_a_table_depends_on():
    """CT[k] over a loop to K bounds K, not the thread space: n keeps its inferred size."""
    src = """
__constant__ float CT[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
__global__ void g(const float *A, float *B, int n, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++)
            acc += CT[k] * A[k * n + i];
        B[i] = acc;
    }
}
"""
    (k,) = naiveopt.optimize(src, filename="g.cu").kernels
    assert k.verification.status == "passed", k.verification.detail
    sizes = re.findall(r"\(n=(\d+), K=(\d+)\)", k.verification.detail)
    assert sizes and all(int(n) > 16 and int(kk) <= 16 for n, kk in sizes), sizes


@pytest.mark.parametrize("dialect", ["cuda", "opencl"])
def test_a_table_the_kernel_declares_bounds_the_sizes_too(dialect):
    """The same table declared in the kernel (``const float w[4] = {...}``) was not looked
    at: the naive kernel read past it at the inferred sizes (garbage that differs between
    runs: fuzz 20261 case 37 failed so once), and verification compared it."""
    body = """
{
    const float w[4] = {0.5f, 1.0f, 1.5f, 2.0f};
    int i = ID;
    if (i < n)
        y[i] = w[i] * x[i];
}
"""
    head = {"cuda": "__global__ void lt(const float *x, float *y, int n)",
            "opencl": "__kernel void lt(__global const float *x, __global float *y, int n)"}
    ids = {"cuda": "blockIdx.x * blockDim.x + threadIdx.x", "opencl": "get_global_id(0)"}
    src = head[dialect] + body.replace("ID", ids[dialect])
    name = "lt.cu" if dialect == "cuda" else "lt.cl"
    (k,) = naiveopt.optimize(src, filename=name).kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.verification.detail.startswith("inferred (n=4): y match naive kernel")
    (big,) = naiveopt.optimize("#pragma naiveopt sizes(n=9)\n" + src, filename=name).kernels
    assert "would access w up to element 8, past its 4 elements" in big.unverified
    (ok,) = naiveopt.optimize("#pragma naiveopt sizes(n=3)\n" + src, filename=name).kernels
    assert ok.verification.status == "passed", ok.verification.detail


# ----------------------------------------------------------------- the library, metadata aside
import glob  # noqa: E402
import os  # noqa: E402

from naiveopt.verify.spec import load_metadata  # noqa: E402

LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "kernels", "naive")
#: Where the library's metadata states more than the kernel implies, and why inference is
#: still right: (file stem, kernel) -> {fact: why}.
KNOWN = {
    ("conv2d", "Convolution2D_kernel"): {
        "threads": "the guard bounds the interior (i < ni - 1): the metadata launches the "
                   "whole image, whose border threads do nothing",
        "B": "the kernel writes the interior only: its last element written is before the "
             "metadata's end of B"},
}


def _library_cases():
    return [pytest.param(path, id=os.path.basename(path))
            for path in sorted(glob.glob(os.path.join(LIBRARY, "*.c*")))]


@pytest.mark.parametrize("path", _library_cases())
def test_library_facts_inferred_equal_the_metadata(path):
    """With its metadata moved aside, each library kernel's inferred thread space and array
    extents equal the metadata's at the metadata's test and odd sizes (names the kernel does
    not know, like a free globalDimY, take the metadata's values)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    meta = load_metadata(os.path.join(LIBRARY, stem + ".toml"))
    with open(path, encoding="utf-8") as fh:
        unit = parse_unit(path, fh.read(), {})
    c = compile_module(unit, None, "sm_90", True, metadata=os.path.join(LIBRARY, "absent"))
    assert c.spec.origin == "inferred" and c.spec.provenance["sizes"] == "inferred"
    for set_name in ("test", "odd"):
        for kname, mk in meta.kernels.items():
            known = KNOWN.get((stem, kname), {})
            ik = c.spec.kernels[kname]
            sizes = {**unit.fixed, **meta.sizes[set_name]}
            for a in mk.args:
                if a.role == "size" and a.value:
                    sizes[a.name] = evaluate(a.value, sizes)
            for axis, t in zip(("globalDimX", "globalDimY", "globalDimZ"), mk.threads):
                sizes.setdefault(axis, evaluate(t, sizes))
            want = [evaluate(t, sizes) for t in mk.threads]
            have = [evaluate(t, sizes) for t in ik.threads[:len(want)]]
            assert have == want or "threads" in known, (stem, kname, ik.threads, mk.threads)
            metadata_args = {a.name: a for a in mk.args}
            for a in ik.args:
                m = metadata_args[a.name]
                if a.role not in ("in", "out", "inout"):
                    assert m.role in ("size", "scalar") and a.role in ("size", "scalar")
                    continue
                if a.name in known and any(getattr(d, "why", "") for d in a.shape):
                    continue
                have = math.prod(int(evaluate(d, sizes)) for d in a.shape)
                want = math.prod(int(evaluate(d, sizes)) for d in m.shape)
                assert have == want or (a.name in known and have < want), \
                    (stem, kname, a.name, set_name, have, want)


def test_facts_say_where_they_came_from_and_where_they_disagree():
    src = """
#pragma naiveopt sizes(n=45) array(B, n + 3)
__global__ void f(const float *A, float *B, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = alpha * A[i + 1];
}
"""
    (k,) = naiveopt.optimize(src, filename="f.cu").kernels
    facts = k.verification.facts
    assert facts["sizes"] == {"source": "pragma", "sets": {"pragma": {"n": 45}}}
    assert facts["threads"] == {"source": "guard", "value": ["n", "1", "1"]}
    assert facts["arrays"]["A"]["source"] == "inferred"
    assert facts["arrays"]["A"]["elements"] == {"pragma": 46}
    assert facts["arrays"]["B"]["source"] == "pragma"
    assert facts["arrays"]["B"]["inferred_elements"] == {"pragma": 45}      # they disagree
    alpha = facts["scalars"]["alpha"]
    assert alpha["source"] == "inferred" and float(alpha["value"]) not in (0.0, 1.0)
    bare = naiveopt.optimize(src.split("\n", 2)[2], filename="f.cu").kernels[0]
    assert bare.verification.facts["sizes"]["source"] == "inferred"
    assert set(bare.verification.facts["sizes"]["sets"]) == {"inferred", "inferred-odd"}


@pytest.mark.parametrize("name", ["mm_macro.cu", "conv_macro.cl", "strsm.cu", "reduction.cl"])
def test_library_kernels_verify_with_their_metadata_moved_aside(name):
    """Macro sizes the file leaves to the build (#ifndef WIDTH_A) are chosen and compiled in
    with -D; unguarded kernels run whole naive blocks; both size sets pass."""
    path = os.path.join(LIBRARY, name)
    with open(path, encoding="utf-8") as fh:
        result = naiveopt.optimize(fh.read(), filename=path,
                                   metadata=os.path.join(LIBRARY, "absent"))
    for k in result.kernels:
        assert k.verification.status == "passed", (k.name, k.verification.detail)
        assert [c.split(" ")[0] for c in k.verification.checks] == ["inferred",
                                                                     "inferred-odd"]


def test_a_size_the_dialect_renames_keeps_the_users_name():
    """``warpSize`` is a CUDA built-in: the IR renames the parameter, the sizes keep the
    user's name, and the extent still reads it."""
    src = """
__global__ void f(const float *A, float *B, int warpSize, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = A[i * (warpSize + 1)];
}
"""
    assert extent(src, "A", {"n": 5, "warpSize": 3}) == 4 * 4 + 1
    (k,) = naiveopt.optimize(src, filename="f.cu").kernels
    assert k.verification.status == "passed", k.verification.detail


def test_an_opencl_constant_pointer_parameter_has_the_extent_it_is_read_over():
    """An OpenCL ``__constant float *`` parameter is read in the constant address space: its
    reads count for its extent like a global pointer's (it was sized 1 element, so the naive
    kernel read past it and the output went out unverified)."""
    src = """
__kernel void f(__global const float *in, __global float *out, __constant float *mask,
                const int m, const int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float s = 0.0f;
        for (int j = 0; j < m; j++)
            s += in[i + j] * mask[j];
        out[i] = s;
    }
}
"""
    k, _, _ = kernel(src, filename="f.cl")
    (arg,) = [a for a in k.args if a.name == "mask"]
    assert math.prod(int(evaluate(d, {"m": 5, "n": 100})) for d in arg.shape) == 5
    assert k.provenance["shape mask"] == "inferred"
    (res,) = naiveopt.optimize(src, filename="f.cl").kernels
    assert res.verification.status == "passed", res.verification.detail


BINS = """
__global__ void classify(const float *x, int *counts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int bin;
    float v = x[i];
    BODY
    atomicAdd(&counts[bin], 1);
}
"""


@pytest.mark.parametrize("body", [
    "if (v < -0.5f) bin = 0; else if (v < 0.0f) bin = 1; else if (v < 0.5f) bin = 2; "
    "else bin = 3;",
    "switch ((int)(v * 2.0f + 2.0f)) { case 0: bin = 0; break; case 1: bin = 1; break; "
    "case 2: bin = 2; break; default: bin = 3; }",
])
def test_a_bin_set_to_constants_on_branches_bounds_the_extent(body):
    """A local every assignment of which is a constant (an if chain, a switch) ranges over
    those constants: counts[bin] reaches 4 elements, and the histogram verifies unannotated."""
    source = BINS.replace("BODY", body)
    assert extent(source, "counts", {"n": 100}) == 4
    result = naiveopt.optimize(source, filename="k.cu")
    assert result.verified, [k.verification.detail for k in result.kernels]


def test_a_bin_computed_on_one_branch_stays_unknown():
    source = BINS.replace("BODY", "if (v < 0.0f) bin = 0; else bin = (int)(v * 4.0f);")
    assert "depends on bin" in why(source, "counts")


def test_a_size_a_thread_id_counts_down_from_bounds_the_thread_space():
    # fuzz 1156/9: ``B[N - 1 - i]`` in an unguarded kernel took N for a radius (5, 3): the
    # naive kernel read B[-507] at the inferred sizes, and the garbage differed between the
    # naive and the optimized run (a false miscompile). N bounds i like the thread space.
    source = """
__global__ void rev(const float *B, float *A, int N)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    A[i] = B[N - 1 - i] + B[i];
}
"""
    result = naiveopt.optimize(source, filename="rev.cu", target="opencl")
    assert result.verified, result.unverified
    detail = result.kernels[0].verification.detail
    sizes = [dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", part))
             for part in re.findall(r"\(([^)]*)\)", detail)]
    assert sizes and all(s["N"] >= s["globalDimX"] for s in sizes), detail


def test_z_extents_leave_interior_planes_in_both_sets():
    """A 3-D stencil guarded by ``k > 0 && k < nz - 1`` writes planes 1..nz-2: both inferred
    sets must leave it some (at nz = 2 the odd set wrote nothing and proved nothing)."""
    src = """
__global__ void laplace3d(const float *u, float *v, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
        int id = i + j * nx + k * nx * ny;
        v[id] = (u[id - nx * ny] + u[id + nx * ny]) * 0.5f - u[id];
    }
}
"""
    result = naiveopt.optimize(src, filename="k.cu")
    v = result.kernels[0].verification
    assert v.status == "passed" and len(v.checks) == 2, v.checks
    assert all("proves nothing" not in c for c in v.checks)
    assert all(re.search(r"nz=([4-9]|\d\d)", c) for c in v.checks), v.checks


def test_a_guard_whose_bound_moves_with_the_thread_is_no_thread_space():
    """Bitonic sort's step guards its work by ``ixj > i`` with ``ixj = i ^ j``: a test of the
    thread's partner, not a bound on the thread space (it was read as one, and inference
    crashed on the xor); the kernel is written, unverified, saying why."""
    src = """
__global__ void bitonic_step(float *a, int j, int k)
{
    unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
    unsigned int ixj = i ^ j;
    if (ixj > i) {
        if ((i & k) == 0) {
            if (a[i] > a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        } else {
            if (a[i] < a[ixj]) { float t = a[i]; a[i] = a[ixj]; a[ixj] = t; }
        }
    }
}
"""
    result = naiveopt.optimize(src, filename="bitonic.cu")
    (k,) = result.kernels
    assert not result.internal_errors
    assert "thread space from bounds guard" not in "\n".join(r.message for r in result.remarks)
    assert "depends on an operator naiveopt does not model" in k.unverified


def test_size_expressions_read_integer_casts():
    """A guard's bound through a local, ``size_t n = (size_t)rows * cols``, is the thread
    space ``((size_t) rows) * cols``: the casts change no size's value."""
    assert evaluate("(((size_t) rows) * cols)", {"rows": 3, "cols": 4}) == 12
    assert evaluate("(unsigned int)N * (long long)M + (int)(K / 2)", {"N": 2, "M": 5, "K": 9}) == 14
    assert evaluate("(uint32_t)W", {"W": 7}) == 7


def test_generator_writes_partner_swaps():
    """The fuzzer writes bitonic steps (the partner in a local, either comparison, int or
    unsigned ids, both dialects); with their pragma they verify."""
    import random

    from naiveopt.fuzz.generate import partner_file

    sources = [partner_file(random.Random(seed), d) for seed in range(20)
               for d in ("cuda", "opencl")]
    assert any("ixj > i" in s for s in sources) and any("i < ixj" in s for s in sources)
    for index, source in enumerate(sources[:3]):
        result = naiveopt.optimize(source, filename="k.cl" if "__kernel" in source else "k.cu")
        assert result.verified and not result.internal_errors, source
