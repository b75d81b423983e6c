"""Clamped stencil taps (``min(max(x + dx, 0), W - 1)``) staged by the stencil pass.

Why it is correct: a clamp f(v) = min(max(v, lo), hi) with bounds the same for all threads is
monotone. The window holds at position (r, c) the element at (f_y(y0 + r + amin), f_x(x0 + c +
bmin)), so a tap at offset (i, j) of thread (y, x), read at window position (y - y0 + i - amin,
x - x0 + j - bmin), finds A[f_y(y + i)][f_x(x + j)], the element it reads in the naive kernel;
and by monotonicity every element the load touches lies between those the naive kernel reads at
the window's corners, so inside the array, whatever the bounds are. The tests below hold the
analysis to the forms people write, the staged kernels to their naive ones on PoCL (sizes that
are no multiple of the blocks, both dialects, with and without thread merge, cross-shaped
windows loaded within a flat range, sizes smaller than a block, bounds other than [0, W - 1]),
and the pass to declining, with its reason, where a tap's value is not the window's clamp.
"""
from __future__ import annotations

import re

import pytest
import sympy

import naiveopt
from naiveopt.analysis.clamps import Clamp, clamped_index
from naiveopt.ir.build import expression
from naiveopt.ir.symbolic import IntMax, IntMin, SymbolEnv, Unresolved, to_sympy

TARGETS = [("sm_90", "cuda"), ("gfx90a", "opencl")]
S = {n: sympy.Symbol(n, integer=True) for n in ("W", "H", "dx", "dy", "idx", "idy")}


def env(signed: bool = True) -> SymbolEnv:
    return SymbolEnv({"W", "H"}, {"dx", "dy"}, {},
                     {"W", "H", "dx", "dy"} if signed else None)


@pytest.mark.parametrize("text,forms,clamps", [
    ("min(max(@idy + dy, 0), H - 1) * W + min(max(@idx + dx, 0), W - 1)",
     ("idy + dy", "idx + dx"), ((0, "H - 1"), (0, "W - 1"))),
    ("@idy * W + min(max(@idx + dx, 0), W - 1)", ("idy", "idx + dx"), (None, (0, "W - 1"))),
    ("min(max(@idy + dy, 0), H - 1) * W + @idx", ("idy + dy", "idx"), ((0, "H - 1"), None)),
    ("min(max(@idy - 1, 0), H - 1) * W + min(max(@idx + 2, 0), W - 1)",
     ("idy - 1", "idx + 2"), ((0, "H - 1"), (0, "W - 1"))),
    ("(@idy > 0 ? @idy - 1 : 0) * W + (@idx < W - 1 ? @idx + 1 : W - 1)",
     ("idy - 1", "idx + 1"), ((0, None), (None, "W - 1"))),
    ("(@idy - 1 < 0 ? 0 : @idy - 1) * W + (@idx + 1 >= W ? W - 1 : @idx + 1)",
     ("idy - 1", "idx + 1"), ((0, None), (None, "W - 1"))),
    ("min(max(@idx + dx, 0), W - 1)", ("0", "idx + dx"), (None, (0, "W - 1"))),
])
def test_clamped_coordinates_are_taken_apart(text, forms, clamps):
    found, why = clamped_index(to_sympy(expression(text), env()), env())
    assert found is not None, why
    assert found.forms == tuple(sympy.sympify(f, locals=S) for f in forms)
    for got, want in zip(found.clamps, clamps):
        if want is None:
            assert got is None
        else:
            lo, hi = (None if b is None else sympy.sympify(b, locals=S) for b in want)
            assert (got.lo, got.hi, got.max_outside) == (lo, hi, False)


@pytest.mark.parametrize("text", [
    "@idx + dx < 0 ? 0 : (@idx + dx > W - 1 ? W - 1 : @idx + dx)",
    "@idx + dx > W - 1 ? W - 1 : (@idx + dx < 0 ? 0 : @idx + dx)",
    "@idx + dx >= 0 ? (@idx + dx < W ? @idx + dx : W - 1) : 0",
    "@idx + dx <= W - 1 ? (@idx + dx < 0 ? 0 : @idx + dx) : W - 1",
])
def test_a_clamp_helpers_if_chain_is_a_clamp_where_lo_is_at_most_hi(text):
    """``if (v < 0) return 0; if (v >= n) return n - 1; return v;`` written out (inline-
    helpers) is a ternary in a ternary: max(min(v, hi), lo) where lo <= hi, and only there,
    so it is the max-outside clamp, which the stencil stages only where it proves lo <= hi."""
    found, why = clamped_index(to_sympy(expression(text), env()), env())
    assert found is not None, why
    assert found.clamps[1] == Clamp(sympy.Integer(0), S["W"] - 1, max_outside=True)


def test_a_max_outside_a_min_is_the_same_clamp_where_lo_is_at_most_hi():
    found, _ = clamped_index(to_sympy(expression("max(0, min(@idx + 1, W - 1))"), env()),
                             env())
    assert found.clamps[1] == Clamp(sympy.Integer(0), S["W"] - 1, max_outside=True)


@pytest.mark.parametrize("text,why", [
    ("min(@idx, @idy)", "both vary"),
    ("min(max(@idx, 0), W - 1) + 5", "an offset is added"),
    ("min(max(min(@idx, 9), 0), W - 1)", "more than one min and one max"),
    ("min(max(@idx + dx, 0), W - 1) * min(max(@idy, 0), H - 1)", "multiplied"),
    ("min(max(@idx + dx, 0), W - 1) + min(max(@idx, 0), W - 1)", "two clamped coordinates"),
])
def test_other_uses_of_min_and_max_are_not_clamps(text, why):
    found, said = clamped_index(to_sympy(expression(text), env()), env())
    assert found is None and why in said, said


def test_min_and_max_stay_opaque_unless_asked_and_signed():
    """Every analysis but the stencil's keeps reading min/max as opaque values; unsigned
    operands (x - 1 wraps at 0) and a literal with a u suffix are never clamps."""
    node = expression("min(max(@idx - 1, 0), W - 1)")
    plain = to_sympy(node, env(signed=False))
    assert plain.has(Unresolved) and not plain.has(IntMin) and not plain.has(IntMax)
    assert isinstance(to_sympy(node, env()), IntMin)
    unsigned = SymbolEnv({"W"}, set(), {}, set())          # W is not signed
    assert not to_sympy(node, unsigned).has(IntMin)
    assert not to_sympy(expression("max(@idx - 1, 0u)"), env()).has(IntMax)
    assert not to_sympy(expression("max(@tidx - 1, 0)"), env()).has(IntMax)


def run(source: str, filename: str = "k.cu", **kw):
    return naiveopt.optimize(source, filename=filename, **unlimited(kw))


def unlimited(kw: dict) -> dict:
    """Staging wherever it is legal (``--cost-model unlimited``): these tests check what is
    staged and that it verifies, not whether it pays (test_stencil.py's last tests do)."""
    return {**kw, "options": {"cost_model": "unlimited", **(kw.get("options") or {})}}


def stencil_said(result) -> str:
    return " ".join(r.message for r in result.remarks if r.pass_name == "stencil")


def assert_staged_and_verified(result) -> None:
    k = result.kernels[0]
    assert "stencil" in k.passes, stencil_said(result)
    assert k.verification.status == "passed", k.verification.detail


def test_a_clamp_helper_of_the_file_is_not_taken_for_the_built_in():
    """The file's own ``clamp`` clamps one side only: it is written out (inline-helpers) and
    staged for what it computes, a lower bound, never as the built-in's two sides."""
    source = "__device__ int clamp(int v, int lo, int hi) { return v < lo ? lo : v; }\n" + \
        blur("clamp(x + dx, 0, W - 1)", "clamp(y + dy, 0, H - 1)")
    result = run(source, verify=False)
    assert "stencil" in result.kernels[0].passes
    said = stencil_said(result)
    assert "in(clamp(idy + [-2, 1], 0, inf), clamp(idx + [-1, 3], 0, inf))" in said, said
    assert "W - 1" not in said


#: (``in`` has two rows more than the image: the forms that clamp the low side only, or to
#: another extent, read up to a row and 3 elements past the last row's end, and
#: verification declines sizes at which the naive kernel reads outside an array:
#: check._outside_arrays)
BLUR = r"""
#pragma naiveopt sizes(W=SIZE_W, H=SIZE_H) block(16, 16) array(in, H + 2, W) array(out, H, W)
__global__ void blur(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float s = 0.0f;
        for (int dy = -2; dy <= 1; dy++)
            for (int dx = -1; dx <= 3; dx++) {
                int xx = XX;
                int yy = YY;
                s += in[yy * W + xx] * (float)(3 * dy + dx);
            }
        out[y * W + x] = s;
    }
}
"""


def blur(xx: str = "min(max(x + dx, 0), W - 1)", yy: str = "min(max(y + dy, 0), H - 1)",
         w: int = 75, h: int = 37) -> str:
    return (BLUR.replace("XX", xx).replace("YY", yy)
            .replace("SIZE_W", str(w)).replace("SIZE_H", str(h)))


@pytest.mark.parametrize("arch,target", TARGETS)
@pytest.mark.parametrize("merge", [None, (1, 1), (2, 4)])
def test_clamped_blur_verifies_in_both_dialects(arch, target, merge):
    options = {"merge": merge} if merge else None
    result = run(blur(), arch=arch, target=target, options=options)
    assert_staged_and_verified(result)
    assert "in(clamp(idy + [-2, 1], 0, H - 1), clamp(idx + [-1, 3], 0, W - 1))" in \
        stencil_said(result)
    code = " ".join(result.code.split())
    assert "? (in[min(max(" in code and ", 0), H - 1) * W + min(max(" in code


@pytest.mark.parametrize("w,h", [(1, 1), (3, 2), (17, 5), (33, 19)])
def test_sizes_smaller_than_a_block_or_the_window_verify(w, h):
    assert_staged_and_verified(run(blur(w=w, h=h)))


@pytest.mark.parametrize("xx,yy", [
    ("max(min(x + dx, W - 1), 0)", "max(0, min(y + dy, H - 1))"),       # max outside
    ("min(x + dx >= 0 ? x + dx : 0, W - 1)", "max(y + dy < H - 1 ? y + dy : H - 1, 0)"),
    ("min(max(x + dx, 1), W - 2)", "min(max(y + dy, 2), H - 3)"),       # other bounds
    ("min(max(x + dx, 0), H - 1)", "min(max(y + dy, 0), H - 1)"),       # another extent
    ("max(x + dx, 0)", "max(y + dy, 0)"),                              # one side only
    ("x + dx < 0 ? 0 : (x + dx >= W ? W - 1 : x + dx)",                 # a helper's chain
     "y + dy > H - 1 ? H - 1 : (y + dy < 0 ? 0 : y + dy)"),
])
@pytest.mark.parametrize("arch,target", TARGETS)
def test_clamp_forms_and_bounds_verify(xx, yy, arch, target):
    """Any bounds the same for all threads give a monotone clamp, so a window loaded
    through them holds what each tap reads (the module docstring): [1, W - 2], or the
    column clamped with the row's extent, verify like [0, W - 1]."""
    result = run(blur(xx, yy, w=45, h=70), arch=arch, target=target)
    assert_staged_and_verified(result)


# Sobel's neighbours clamped on one side each, beside the unclamped centre row and column:
# every tap equals clamp(v, 0, extent - 1) for the threads the guard keeps
SOBEL = r"""
#pragma naiveopt sizes(W=75, H=50) block(16, 16) array(in, H, W) array(out, H, W)
__global__ void sobel(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (GUARD) {
        int xm = max(x - 1, 0), xp = min(x + 1, W - 1);
        int ym = y > 0 ? y - 1 : 0, yp = y < H - 1 ? y + 1 : H - 1;
        float gx = in[ym * W + xp] - in[ym * W + xm] + 2.0f * (in[y * W + xp] - in[y * W + xm])
                   + in[yp * W + xp] - in[yp * W + xm];
        float gy = in[yp * W + xm] - in[ym * W + xm] + 2.0f * (in[yp * W + x] - in[ym * W + x])
                   + in[yp * W + xp] - in[ym * W + xp];
        out[y * W + x] = gx * gx + gy * gy;
    }
}
"""


@pytest.mark.parametrize("arch,target", TARGETS)
def test_one_sided_clamps_beside_the_unclamped_centre_share_one_window(arch, target):
    result = run(SOBEL.replace("GUARD", "x < W && y < H"), arch=arch, target=target)
    assert_staged_and_verified(result)
    assert "in(clamp(idy + [-1, 1], 0, H - 1), clamp(idx + [-1, 1], 0, W - 1))" in \
        stencil_said(result)


# a 5-point cross clamped at the border: no read reaches both least offsets at once, so the
# window is also loaded within the flat index range the clamped reads span
CROSS = r"""
#pragma naiveopt sizes(nx=70, ny=45) block(16, 16) array(u, ny, nx) array(v, ny, nx)
__kernel void lap(__global const float *u, __global float *v, int nx, int ny)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < nx && y < ny) {
        int xm = max(x - 1, 0), xp = min(x + 1, nx - 1);
        int ym = max(y - 1, 0), yp = min(y + 1, ny - 1);
        v[y * nx + x] = u[ym * nx + x] + u[yp * nx + x] + u[y * nx + xm] + u[y * nx + xp]
                      - 4.0f * u[y * nx + x];
    }
}
"""


@pytest.mark.parametrize("arch,target", TARGETS)
def test_clamped_cross_is_loaded_within_its_clamped_flat_range(arch, target):
    result = run(CROSS, filename="lap.cl", arch=arch, target=target)
    assert_staged_and_verified(result)
    code = " ".join(result.code.split())
    clamped = (r"min\(max\(\d+ \* bidy \+ r - 1, 0\), ny - 1\) \* nx \+ "
               r"min\(max\(\d+ \* bidx \+ c - 1, 0\), nx - 1\)")
    assert re.search(clamped + r" >= min\(", code) and re.search(clamped + r" <= max\(", code)


ROW_1D = r"""
#pragma naiveopt sizes(N=1001) array(a, N) array(b, N)
__global__ void smooth(const float *a, float *b, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float s = 0.0f;
        for (int k = -3; k <= 3; k++)
            s += a[min(max(i + k, 0), N - 1)];
        b[i] = s;
    }
}
"""


@pytest.mark.parametrize("arch,target", TARGETS)
def test_one_dimensional_clamped_taps(arch, target):
    result = run(ROW_1D, arch=arch, target=target)
    assert_staged_and_verified(result)
    assert "a[clamp(idx + [-3, 3], 0, N - 1)]" in stencil_said(result)


DECLINES = {
    "bounds differ between taps": (
        blur().replace("s += in[yy * W + xx]",
                       "s += in[yy * W + xx] + in[y * W + min(max(x + dx, 1), W - 1)]"),
        "clamp the column to different bounds"),
    "an unclamped tap may leave the clamp": (
        blur().replace("s += in[yy * W + xx]", "s += in[yy * W + xx] + in[y * W + x + 1]"),
        "cannot be shown to hold"),
    "a clamped tap under a bounds test": (
        blur().replace("s += in[yy * W + xx]", "if (x > 0) s += in[yy * W + xx]"),
        "clamped under a bounds test"),
    # in unsigned arithmetic x + dx wraps at the left border: min(max(...)) then reads the
    # right border's element, which a signed clamp would not
    "an unsigned coordinate": (
        blur("min(max(ux + dx, 0u), uW - 1u)").replace(
            "float s = 0.0f;", "float s = 0.0f; unsigned int ux = x, uW = W;"),
        "no read-only global array"),
    "a nested ternary to bounds that may cross": (
        blur("x + dx < 1 ? 1 : (x + dx > W - 2 ? W - 2 : x + dx)"),
        "its bounds 1 <= W - 2 cannot be shown to hold"),
    "the centre without a bound on the thread": (
        SOBEL.replace("GUARD", "y < H").replace("W=75", "W=80")
        .replace("block(16, 16)", "block(16, 16) threads(W, H)"),
        "cannot be shown to hold"),
}


@pytest.mark.parametrize("case", sorted(DECLINES))
def test_taps_whose_value_is_not_the_windows_clamp_decline(case):
    source, why = DECLINES[case]
    result = run(source)
    k = result.kernels[0]
    assert "stencil" not in k.passes
    assert why in stencil_said(result), stencil_said(result)
    assert k.verification.status == "passed", k.verification.detail


def test_a_clamp_helper_of_the_file_is_not_taken_for_the_built_in():
    """The file's own ``clamp`` clamps one side only: it is written out (inline-helpers) and
    staged for what it computes, a lower bound, never as the built-in's two sides."""
    source = "__device__ int clamp(int v, int lo, int hi) { return v < lo ? lo : v; }\n" + \
        blur("clamp(x + dx, 0, W - 1)", "clamp(y + dy, 0, H - 1)")
    result = run(source, verify=False)
    assert "stencil" in result.kernels[0].passes
    said = stencil_said(result)
    assert "in(clamp(idy + [-2, 1], 0, inf), clamp(idx + [-1, 3], 0, inf))" in said, said
    assert "W - 1" not in said
