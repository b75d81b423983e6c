"""Global ids a kernel computes in 64 bits stay 64-bit in the output (passes/functional/
id_width.py).

Found by a probe of ML code: ``const int64_t i = static_cast<int64_t>(blockIdx.x) *
blockDim.x + threadIdx.x;`` came out as ``const int idx = blockIdx.x * blockDim.x +
threadIdx.x; const int64_t i = idx;`` in every output, functional-only ones too: past 2^31
threads (a tensor of more than 8 GiB of floats) idx turns negative, i < n still holds, and
the kernel writes before its array, where the naive kernel is right. PoCL caps a buffer at
2 GiB, so the tests read the declarations and compile them; the arithmetic is C's.
"""
from __future__ import annotations

import re

import pytest

import naiveopt
from conftest import compile_cuda, nvcc

SOURCE = """\
#include <cstdint>
__global__ void axpby(const float *__restrict__ x, float *__restrict__ y, float a, float b,
                      const int64_t n)
{
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}
__global__ void scale(const float *x, float *y, size_t n)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
__global__ void narrow(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""

OPENCL = """\
__kernel void add(__global const float *a, __global const float *b, __global float *c, int n)
{
    if (get_global_id(0) < n)
        c[get_global_id(0)] = a[get_global_id(0)] + b[get_global_id(0)];
}
__kernel void copy(__global const float *a, __global float *c, int n)
{
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i];
}
__kernel void narrow(__global const float *a, __global float *c, int n)
{
    int i = get_global_id(0);
    if (i < n) c[i] = a[i];
}
"""


def declarations(code: str, kernel: str) -> str:
    body = code[code.index(f"void {kernel}("):]
    return re.search(r"const (?:long long|long|int) idx = [^;]*;", body).group(0)


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_an_id_computed_or_held_in_64_bits_is_declared_so(target):
    result = naiveopt.optimize(SOURCE, filename="ids.cu", target=target)
    assert all(k.verification.status == "passed" for k in result.kernels), \
        [k.verification.detail for k in result.kernels]
    wide = "const long long idx = ((long long)blockIdx.x) * blockDim.x + threadIdx.x;" \
        if target == "cuda" else "const long idx = get_global_id(0);"
    assert declarations(result.code, "axpby") == wide
    assert declarations(result.code, "scale") == wide
    assert declarations(result.code, "narrow").startswith("const int idx")
    why = "\n".join(r.message for r in result.remarks if r.pass_name == "id-width")
    assert "idx computed in 64 bits (an operand cast to a 64-bit integer)" in why
    assert "idx computed in 64 bits (held in a 64-bit integer)" in why


def test_an_opencl_global_id_read_as_the_size_t_it_is_stays_64_bit():
    result = naiveopt.optimize(OPENCL, filename="ids.cl")
    assert all(k.verification.status == "passed" for k in result.kernels)
    assert declarations(result.code, "add") == "const long idx = get_global_id(0);"
    assert declarations(result.code, "copy") == "const long idx = get_global_id(0);"
    assert declarations(result.code, "narrow") == "const int idx = get_global_id(0);"
    cuda = naiveopt.optimize(OPENCL, filename="ids.cl", target="cuda", verify=False).code
    assert declarations(cuda, "add").startswith("const long long idx = ((long long)blockIdx.x)")


def test_merged_copies_of_a_64_bit_id_are_64_bit():
    """Vectorized across threads, each thread's copies are 4 * idx + c: 64-bit arithmetic
    in the user's own 64-bit locals."""
    result = naiveopt.optimize(SOURCE, filename="ids.cu", options={"vectorize": "always"})
    k = next(k for k in result.kernels if k.name == "scale")
    assert "vectorize" in k.passes and k.verification.status == "passed"
    body = result.code[result.code.index("void scale("):]
    assert "size_t i_1 = 4 * idx + 1;" in body
    assert declarations(result.code, "scale").startswith("const long long idx")


@nvcc
def test_the_64_bit_ids_compile(tmp_path):
    path = tmp_path / "ids.cu"
    path.write_text(naiveopt.optimize(SOURCE, filename="ids.cu", verify=False).code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr


WIDE_MV = """\
__global__ void mv(const float *A, const float *x, float *y, int H, int W)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < H) {
        float s = 0.0f;
        for (int k = 0; k < W; k++)
            s += A[i * W + k] * x[k];
        y[i] = s;
    }
}
"""

WIDE_TRANSPOSE = """\
__global__ void tr(const float *in, float *out, int H, int W)
{
    size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t y = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (x < W && y < H)
        out[x * H + y] = in[y * W + x];
}
"""

#: The names of block-derived locals the passes declare (postprocessor, partition camping,
#: split reduction): what the staged and remapped indices are computed from.
_BLOCK_LOCALS = r"\b(?:bidx|bidy|bid_linear|bidx_diag|bidy_diag|out)\b"


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("source, kw, fired", [
    (WIDE_MV, {}, "coalesce"),                                      # a staged row tile
    (WIDE_MV, {"defines": {"H": "4096", "W": "4096"}}, "split-reduction"),
    (WIDE_TRANSPOSE, {"arch": "gfx90a"}, "partition-camping"),      # remapped block ids
])
def test_the_passes_index_by_64_bit_block_ids_where_the_ids_are(target, source, kw, fired):
    """A staged tile's rows are ``A[(64 * bidx + r) * W + c]``, a split output's row
    ``bidx * 4 + tidx / 32``, a transpose's remapped tile ``(32 * bidx_diag + tidy) * H``:
    where the kernel's ids are 64-bit, an int block id made those products wrap past 2^31
    elements (the naive ``A[i * W + k]`` on a size_t i does not). Every block id and every
    local the passes derive from one is 64-bit there."""
    result = naiveopt.optimize(source, filename="wide.cu", target=target, **kw)
    (k,) = result.kernels
    assert fired in k.passes and k.verification.status == "passed", \
        (k.passes, k.verification.detail)
    wide = "long long" if target == "cuda" else "long"
    decls = re.findall(r"const (long long|long|int) (\w+) = ([^;]*);", result.code)
    derived = [(t, n) for t, n, init in decls if re.fullmatch(_BLOCK_LOCALS, n) or
               re.search(_BLOCK_LOCALS, init)]
    assert any(n == "bidx" for _, n in derived), decls
    assert all(t == wide for t, _ in derived), derived
