"""Kernels declared ``extern "C"`` (code that loads kernels by name writes them so: cupy's
RawKernel, cuModuleGetFunction, ctypes): the front end found no kernel in such a file ("no
kernel found"). Now the declarations of ``extern "C"`` blocks and declarations are read in
place, and the CUDA output keeps C linkage on each kernel, so the name the user loads still
exists."""
from __future__ import annotations

import shutil

import pytest

import naiveopt
from conftest import compile_cuda

SAXPY = r"""
#define SCALE 2
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y,
                                 const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE * a * x[i] + y[i];
}
"""

BLOCK = r"""
#include <cstdio>
extern "C" {
__device__ float twice(float v) { return 2.0f * v; }

__global__ void mm(const float *A, const float *B, float *C, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; k++)
            s += A[row * n + k] * B[k * n + col];
        C[row * n + col] = twice(s);
    }
}
}

extern "C" void run(const float *A, const float *B, float *C, int n)
{
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    mm<<<grid, block>>>(A, B, C, n);
}

int main() { printf("%d\n", 1); return 0; }
"""


def test_an_extern_c_kernel_is_read_and_keeps_its_linkage():
    result = naiveopt.optimize(SAXPY, filename="saxpy.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert 'extern "C" __global__ void saxpy(' in result.code
    assert "SCALE * a" in result.code          # the macro is kept inside extern "C" too
    opencl = naiveopt.optimize(SAXPY, filename="saxpy.cu", target="opencl")
    assert opencl.kernels[0].verification.status == "passed"
    assert "extern" not in opencl.code and "__kernel void saxpy(" in opencl.code


def test_an_extern_c_block_with_a_helper_and_host_code():
    result = naiveopt.optimize(BLOCK, filename="mm.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.passes, "the product is optimized as without extern \"C\""
    code = result.code
    # the launch contract goes after the linkage; the helper is written as before
    assert 'extern "C" __global__ void __launch_bounds__(' in code
    assert "__device__ float twice(float v)" in code
    host = code[code.index("// Host code of"):]
    assert 'extern "C" void run(' in host and "mm_launch_from(grid, block, A, B, C, n);" in host
    assert 'extern "C" {' not in host           # the block, emptied, is left out


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_the_outputs_compile_with_nvcc(tmp_path):
    for name, source in (("saxpy.cu", SAXPY), ("mm.cu", BLOCK)):
        path = tmp_path / ("out_" + name)
        path.write_text(naiveopt.optimize(source, filename=name).code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, (name, done.stderr[-2000:])


NAMED = r"""
extern "C" {
static const int TILE_Y = 16;
const int ROWS = 8;
__global__ void copyRows(const float *in, float *out, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * TILE_Y + threadIdx.y;
    for (int j = 0; j < TILE_Y; j += ROWS)
        if (x < W && (y + j) < H)
            out[(y + j) * W + x] = in[(y + j) * W + x];
}
}
"""


def test_named_constants_inside_an_extern_c_block_are_read_as_file_scope_ones():
    """``static const int TILE_Y = 16;`` inside ``extern "C" { }`` is at file scope (a linkage
    block opens no scope): device code reads it as nvcc allows (was 'host variable is read in
    device code')."""
    result = naiveopt.optimize(NAMED, filename="rows.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "#define TILE_Y" in result.code and "#define ROWS" in result.code
