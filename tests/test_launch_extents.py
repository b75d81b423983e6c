"""Kernels that read their launch's size as a value (passes/functional/launch_extents.py):
``blockDim.x * gridDim.x`` / ``get_global_size(0)`` as a row width, read as the thread
space's extent where the unguarded launch covers it exactly; other reads keep the launch."""
import random
import re

import naiveopt
from naiveopt.fuzz.generate import launch_extent_file

# an OpenCL tutorial transpose: a typedef, C89 locals, no guard, no annotations, the row
# width from the launch
TUTORIAL_TRANSPOSE = """typedef float elem_t;
__kernel void transpose(__global elem_t *out, __global const elem_t *in, const unsigned int rows)
{
    unsigned int x, y;
    x = get_global_id(0);
    y = get_global_id(1);
    out[x * rows + y] = in[y * get_global_size(0) + x];
}
"""

# CUDA by Example's heat transfer: the offset from the launch, nothing for a pass to change
BY_EXAMPLE = """__global__ void copy_const_kernel(float *iptr, const float *cptr) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int offset = x + y * blockDim.x * gridDim.x;
    if (cptr[offset] != 0) iptr[offset] = cptr[offset];
}
"""

# one thread per row, the launch's total read as a value
MV_TOTAL = """__global__ void mv(float *y, const float *A, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int total = blockDim.x * gridDim.x;
    float s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s + total;
}
"""


def remarks(result, pass_name=None):
    return "\n".join(f"[{r.pass_name}] {r.kind}: {r.message}" for r in result.remarks
                     if pass_name is None or r.pass_name == pass_name)


def test_tutorial_transpose_reads_its_width_as_the_thread_space_and_is_transposed():
    """The global size becomes the kernel's (free) x extent, a parameter the launcher passes,
    so the guarded 32x32 tile launch (a grid padded past the sizes) computes the same: the
    pass applies, verification passes at odd sizes, nothing fails internally."""
    for target in ("opencl", "cuda"):
        result = naiveopt.optimize(TUTORIAL_TRANSPOSE, filename="tr.cl", target=target)
        (k,) = result.kernels
        assert result.verified and not result.internal_errors, result.internal_error_messages()
        assert k.passes == ["coalesce-writes"], remarks(result)
        assert "inferred-odd" in k.verification.detail
        text = remarks(result, "launch-extents")
        assert "read as globalDimX, the thread space's x extent, in 1 place(s)" in text
        assert "new parameter int naiveopt_globalDimX" in text
        assert "int naiveopt_globalDimX" in result.code
        reads = [line for line in result.code.splitlines() if "in[" in line]
        assert reads and all("naiveopt_globalDimX" in line and "gridDim" not in line and
                             "get_global_size" not in line for line in reads), reads
    assert "the naive kernel's get_global_size(0)" in naiveopt.optimize(
        TUTORIAL_TRANSPOSE, filename="tr.cl").code


def test_a_kernel_no_pass_relaunches_keeps_its_launch_size_and_parameters():
    """Nothing changes CUDA by Example's launch: the parameter added for the width is dropped
    again and the product read from the launch, so the user's launch still fits."""
    result = naiveopt.optimize(BY_EXAMPLE, filename="heat.cu")
    (k,) = result.kernels
    assert result.verified and k.passes == [], remarks(result)
    assert "read as globalDimX" in remarks(result, "launch-extents")
    assert "copy_const_kernel(float *iptr, const float *cptr)" in result.code
    assert "naiveopt_globalDimX" not in result.code.split("_launch(")[0]
    assert re.search(r"y \* \(?blockDimX \* gridDimX", result.code)


def test_a_relaunched_kernel_reads_the_naive_launch_total():
    """mv's coalesced variant launches blocks of 64 where the naive one had 256: the total it
    adds is the naive launch's, passed as a parameter (verified at sizes that are not
    multiples of the new block's tiles)."""
    result = naiveopt.optimize(MV_TOTAL, filename="mv.cu")
    (k,) = result.kernels
    assert result.verified and "coalesce" in k.passes, remarks(result)
    assert "int total = naiveopt_globalDimX;" in result.code
    assert "the naive kernel's blockDim.x * gridDim.x" in result.code
    assert k.geometry.block[0] != 256


def test_other_reads_of_the_launch_size_keep_the_launch():
    """A guarded kernel reading blockDim.x (its value depends on the user's block) and a width
    written ``gridDim.x * 16``: every optimization pass says the launch is kept; verified."""
    guarded = """__global__ void sc(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * blockDim.x + gridDim.x;
}
"""
    result = naiveopt.optimize(guarded, filename="sc.cu")
    assert result.verified and result.kernels[0].passes == []
    missed = [r for r in result.remarks if r.kind == "missed" and "keep its launch" in
              r.message]
    assert {r.pass_name for r in missed} >= {"coalesce", "thread-merge", "vectorize"}
    assert "reads its launch's size (blockDim.x, gridDim.x)" in missed[0].message
    literal = """#pragma naiveopt sizes(W=48, H=32) threads(W, H) block(16, 16) array(in, H, W) array(out, W, H)
__global__ void t(const float *in, float *out, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int width = gridDim.x * 16;
    out[x * H + y] = in[y * width + x];
}
"""
    result = naiveopt.optimize(literal, filename="t.cu")
    assert result.verified and result.kernels[0].passes == [], remarks(result)
    assert "reads its launch's size (gridDim.x)" in remarks(result, "coalesce-writes")
    # guarded, with the product: the user's block rounds the launch past the thread space
    rounded = guarded.replace("* blockDim.x + gridDim.x", "+ blockDim.x * gridDim.x")
    result = naiveopt.optimize(rounded, filename="sc.cu")
    assert result.verified and result.kernels[0].passes == []
    assert "kept as the launch gives it: the kernel has a bounds guard" in \
        remarks(result, "launch-extents")


def test_a_pragma_thread_space_unguarded_reads_the_pragma_sizes():
    """The paper's macro style (globalDimX as the width, no size named): the widths become
    W and H, parameters the launcher passes, and the transposed write is staged; sizes the
    pragma does not give are inferred as multiples of the naive block along the unguarded
    axes, whatever role the indices give them."""
    source = """#pragma naiveopt threads(W, H) block(16, 4) array(in, H, W) array(out, W, H)
__global__ void k0(const float *in, float *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    out[x * (gridDim.y * blockDim.y) + y] = 2.0f * in[y * (int)(gridDim.x * blockDim.x) + x];
}
"""
    result = naiveopt.optimize(source, filename="k.cu")
    (k,) = result.kernels
    assert result.verified and k.passes == ["coalesce-writes"], remarks(result)
    sizes = re.findall(r"H=(\d+), W=(\d+)", k.verification.detail)
    assert len(sizes) == 2 and all(int(h) % 4 == 0 and int(w) % 16 == 0 for h, w in sizes)
    assert "int naiveopt_W, int naiveopt_H" in result.code


def test_generator_reads_widths_from_the_launch():
    """The fuzzer writes these forms (CUDA by Example's offset, OpenCL's global size, inline
    or in a local, transposed or as four channels, now and then ``gridDim.x * BX``); a
    sample verifies, some with their writes transposed through shared memory."""
    sources = [launch_extent_file(random.Random(seed), dialect)
               for seed in range(40) for dialect in ("cuda", "opencl")]
    assert any("blockDim.x * gridDim.x" in s for s in sources)
    assert any("get_global_size(0)" in s for s in sources)
    assert any("gridDim.x * 16" in s or "gridDim.x * 32" in s or "gridDim.x * 8" in s
               for s in sources)
    assert any("offset * 4 + 3" in s for s in sources)
    assert any("threads(W, H)" not in s for s in sources)
    staged = 0
    for source in [s for s in sources if "x * height + y" in s][:4]:
        name = "k.cu" if "__global__" in source else "k.cl"
        result = naiveopt.optimize(source, filename=name)
        assert result.verified, (source, [k.verification.detail for k in result.kernels])
        staged += "coalesce-writes" in result.kernels[0].passes
    assert staged >= 2
