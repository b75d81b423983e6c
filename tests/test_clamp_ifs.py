"""Clamps written as if-statements (passes/functional/canonicalize/clamp_ifs.py): a tutorial's
``if (xx < 0) xx = 0; if (xx >= w) xx = w - 1;`` left every index through xx opaque, so the
kernel was written unverified ("array shape unknown") while the same clamp written with min/max
verified. Read as ternaries, it verifies without annotations and can be staged, in both
dialects; conditional assignments that are not clamps stay as written."""
from __future__ import annotations

import re

import pytest

import naiveopt

ROWS = r"""
__global__ void blur_rows(const float *src, float *dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dx = -2; dx <= 2; dx++) {
        int xx = x + dx;
        CLAMP
        acc += src[y * w + xx] * (float)(dx + 3);
    }
    dst[y * w + x] = acc;
}
"""

OPENCL_ROWS = r"""
__kernel void blur_rows(__global const float *src, __global float *dst, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    int dx, xx;
    for (dx = -2; dx <= 2; dx++) {
        xx = x + dx;
        CLAMP
        acc += src[y * w + xx] * (float)(dx + 3);
    }
    dst[y * w + x] = acc;
}
"""

#: (the clamp as written, the ternaries it is read as)
CLAMPS = [
    ("if (xx < 0) xx = 0; if (xx >= w) xx = w - 1;",
     ["xx_2 = (xx < 0) ? (0) : (xx);", "xx_3 = (xx_2 >= w) ? (w - 1) : (xx_2);"]),
    ("if (xx < 0) xx = 0; else if (xx >= w) xx = w - 1;",
     ["xx_2 = (xx < 0) ? (0) : ((xx >= w) ? (w - 1) : (xx));"]),
    ("if (xx > w - 1) { xx = w - 1; }\n if (0 > xx) { xx = 0; }",
     ["xx_2 = (xx > w - 1) ? (w - 1) : (xx);", "xx_3 = (0 > xx_2) ? (0) : (xx_2);"]),
    ("if (w <= xx) xx = w - 1; else if (xx <= -1) xx = 0;",
     ["xx_2 = (w <= xx) ? (w - 1) : ((xx <= -1) ? (0) : (xx));"]),
]


def rows(clamp: str, opencl: bool = False) -> str:
    return (OPENCL_ROWS if opencl else ROWS).replace("CLAMP", clamp)


def said(result, pass_name: str) -> str:
    return "\n".join(r.message for r in result.remarks if r.pass_name == pass_name)


@pytest.mark.parametrize("clamp,ternaries", CLAMPS)
@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_if_statement_clamps_verify_without_annotations(clamp, ternaries, target):
    result = naiveopt.optimize(rows(clamp), filename="rows.cu", target=target)
    k = result.kernels[0]
    assert k.verification.status == "passed", k.verification.detail
    assert "inferred" in k.verification.detail
    assert "clamp(s) written as if-statements read as ternaries" in said(result, "clamp-ifs")
    code = " ".join(result.code.split())
    for ternary in ternaries:
        assert ternary in code, code


@pytest.mark.parametrize("clamp,ternaries", CLAMPS[:2])
def test_opencl_input_with_c89_locals(clamp, ternaries):
    """Declared at the top (C89), the local is declared where it is set first (sink-
    declarations), then its clamps read."""
    result = naiveopt.optimize(rows(clamp, opencl=True), filename="rows.cl", target="opencl")
    k = result.kernels[0]
    assert k.verification.status == "passed", k.verification.detail
    assert said(result, "clamp-ifs")


def test_without_the_pass_the_kernel_is_written_unverified():
    """What the pass is for (and what this test would show without it)."""
    source = rows(CLAMPS[0][0])
    result = naiveopt.optimize(source, filename="rows.cu",
                               options={"disable": ["clamp-ifs"]})
    k = result.kernels[0]
    assert k.verification.status == "skipped"
    assert "array shape unknown" in k.verification.detail


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_the_clamped_rows_are_staged_by_the_stencil(target):
    result = naiveopt.optimize(rows(CLAMPS[1][0]), filename="rows.cu", target=target,
                               options={"cost_model": "unlimited"})
    k = result.kernels[0]
    assert "stencil" in k.passes, said(result, "stencil")
    assert k.verification.status == "passed", k.verification.detail
    assert "clamp(idx + [-2, 2], 0, w - 1)" in said(result, "stencil")


#: Conditional assignments that are not clamps of an integer local: left as written.
NOT_CLAMPS = {
    "a wrap-around": "if (xx < 0) xx = xx + w;",
    "another value": "if (xx < 0) xx = 1;",
    "a bound read from memory": "if (xx >= w) xx = (int)src[0];",
    "another local in the branch": "int yy = xx; if (xx < 0) yy = 0;",
    "an else that is not a clamp": "if (xx < 0) xx = 0; else xx = xx - 1;",
    "two statements": "if (xx < 0) { xx = 0; dst[0] = 1.0f; }",
    "a float bound": "if (xx < 0) xx = 0.5f;",
}


@pytest.mark.parametrize("clamp", NOT_CLAMPS.values(), ids=NOT_CLAMPS.keys())
def test_other_conditional_assignments_are_left_alone(clamp):
    result = naiveopt.optimize(rows(clamp), filename="rows.cu", verify=False)
    assert not said(result, "clamp-ifs")
    assert re.search(r"if \(", result.code.split("float acc")[1])


def test_a_float_local_is_not_an_integer_clamp():
    source = ROWS.replace("CLAMP", "").replace(
        "acc += src[y * w + xx] * (float)(dx + 3);",
        "float v = src[y * w + min(max(xx, 0), w - 1)]; if (v < 0.0f) v = 0.0f; acc += v;")
    result = naiveopt.optimize(source, filename="rows.cu")
    assert not said(result, "clamp-ifs")
    assert "if (v < 0.0f)" in result.code
    assert result.kernels[0].verification.status == "passed"


MIRROR = r"""
__global__ void mirror_pad(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        float s = 0.f;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                int xx = x + dx, yy = y + dy;
                if (xx < 0) xx = -xx;
                if (yy < 0) yy = -yy;
                if (xx >= w) xx = 2 * w - xx - 2;
                if (yy >= h) yy = 2 * h - yy - 2;
                s += in[yy * w + xx] * (float)(3 * dy + dx);
            }
        }
        out[y * w + x] = s;
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_border_reflected_with_if_statements_verifies(target):
    """OpenCV's BORDER_REFLECT_101 written with ifs: |v| and 2w - 2 - v are a max and a min
    (ir/symbolic.picks), so the extents of ``in`` are inferred and the kernel verifies."""
    result = naiveopt.optimize(MIRROR, filename="mirror.cu", target=target)
    k = result.kernels[0]
    assert k.verification.status == "passed", k.verification.detail
    assert "4 clamp(s)" in said(result, "clamp-ifs")
    assert "(xx_2 >= w) ? (2 * w - xx_2 - 2) : (xx_2)" in " ".join(result.code.split())


def test_picks_reads_exactly_the_ternaries_that_are_a_min_or_max():
    """Every ternary ``l op r ? a : b`` over small affine forms that picks reads as a min or
    max has that value at every point of a grid (and the forms the pass relies on are read)."""
    import random

    import sympy

    from naiveopt.ir.symbolic import IntMax, IntMin, nonnegative, picks
    x, w = sympy.symbols("x w", integer=True)
    rnd = random.Random(7)
    read = 0
    for _ in range(3000):
        def affine():
            return rnd.randint(-2, 2) * x + rnd.randint(-2, 2) * w + rnd.randint(-3, 3)
        op = rnd.choice(["<", "<=", ">", ">="])
        e = nonnegative(op, affine(), affine())
        a, b = affine(), rnd.choice([x, affine()])
        found = picks(e, a, b)
        if found is None:
            continue
        read += 1
        f = sympy.lambdify((x, w), (e, a, b))
        for xv in range(-12, 13):
            for wv in range(-6, 8):
                ev, av, bv = f(xv, wv)
                want = max(av, bv) if isinstance(found, IntMax) else min(av, bv)
                assert (av if ev >= 0 else bv) == want, (op, e, a, b, found, xv, wv)
    assert read >= 20
    assert isinstance(picks(nonnegative("<", x, 0), -x, x), IntMax)               # |x|
    assert isinstance(picks(nonnegative(">=", x, w), 2 * w - x - 2, x), IntMin)   # reflect
    assert isinstance(picks(nonnegative(">=", x, w), w - 1, x), IntMin)
    assert picks(nonnegative(">=", x, w), w - 2, x) is None
    assert picks(nonnegative("<", x, 0), 1, x) is None


UNSIGNED = r"""
__global__ void blurH(const unsigned char *in, unsigned char *out, unsigned int width,
                      unsigned int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    int sum = 0;
    for (int k = -1; k <= 1; ++k) {
        int xx = x + k;
        if (xx < 0) xx = 0;
        if (xx >= COND) xx = width - 1;
        sum += in[y * width + xx];
    }
    out[y * width + x] = (unsigned char)(sum / 3);
}
"""


def test_an_unsigned_bound_compared_signed_verifies_and_compared_unsigned_is_not_read():
    """``if (xx >= (int)width) xx = width - 1;``: the comparison is the integers', and the
    value it picks (unsigned) is the same value in the int local, so the clamp is read. Compared
    unsigned, ``xx >= width`` is not the integers' comparison (a negative xx compares huge):
    the index stays opaque, and the kernel is written unverified rather than guessed."""
    import sympy

    from naiveopt.ir.build import expression
    from naiveopt.ir.symbolic import IntMin, SymbolEnv, to_sympy
    signed = SymbolEnv({"w", "x"}, set(), {}, {"x"})         # x is signed, w is not
    read = to_sympy(expression("x >= (int)w ? w - 1 : x"), signed)
    w, x = sympy.symbols("w x", integer=True)
    assert read == IntMin(w - 1, x)
    assert not to_sympy(expression("x >= w ? w - 1 : x"), signed).has(IntMin)

    result = naiveopt.optimize(UNSIGNED.replace("COND", "(int)width"), filename="b.cu")
    k = result.kernels[0]
    assert k.verification.status == "passed", k.verification.detail
    result = naiveopt.optimize(UNSIGNED.replace("COND", "width"), filename="b.cu")
    k = result.kernels[0]
    assert k.verification.status == "skipped"
    assert "array shape unknown" in k.verification.detail
