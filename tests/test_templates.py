"""Kernel templates (frontend/templates.py): each instance the file uses (a launch with
explicit or deduced arguments, an explicit instantiation) becomes a kernel of its own named
for its arguments, verified in both dialects; the host code launches the instances; errors
inside an instance point at the template's lines; a template the file never instantiates is
a located error."""
from __future__ import annotations

import shutil

import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.frontend import parse_module

from conftest import compile_cuda

#: The CUDA samples' matrixMul shape: a tile size as a template parameter, both instances
#: launched by the block size the host picks at run time.
MATMUL = """\
#pragma naiveopt sizes(wA=37, wB=64, hA=96) threads(wB, hA)
template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = by * BLOCK_SIZE + ty;
    int col = bx * BLOCK_SIZE + tx;
    float Csub = 0;
    for (int k = 0; k < wA; ++k)
        Csub += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = Csub;
}

void matrixMultiply(float *C, float *A, float *B, int wA, int wB, int hA, int block_size)
{
    dim3 threads(block_size, block_size);
    dim3 grid(wB / threads.x, hA / threads.y);
    if (block_size == 16)
        MatrixMulCUDA<16><<<grid, threads>>>(C, A, B, wA, wB);
    else
        MatrixMulCUDA<32><<<grid, threads>>>(C, A, B, wA, wB);
}
"""

#: An element type as the parameter: a launch with explicit arguments, one deduced from its
#: arguments, and an explicit instantiation for a library's users.
TYPED = """\
template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
template __global__ void axpy<double>(double, const double *, double *, int);

void run(const float *x, float *y, int n)
{
    axpy<float><<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
    axpy<<<(n + 255) / 256, 256>>>(0.5f, x, y, n);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_each_launched_instance_is_a_kernel_verified_in_both_dialects(target):
    result = naiveopt.optimize(MATMUL, filename="mm.cu", target=target)
    assert result.verified, result.unverified
    assert [k.name for k in result.kernels] == ["MatrixMulCUDA_16", "MatrixMulCUDA_32"]
    code = result.code
    assert "instance of MatrixMulCUDA<16> (a kernel template)" in code
    assert "instance of MatrixMulCUDA<32> (a kernel template)" in code
    # the template parameter is a macro of each instance: the analyses read it as the
    # block constant it is, the output keeps a name for it
    assert "#define MatrixMulCUDA_32_BLOCK_SIZE 32" in code
    assert "BLOCK_SIZE>" not in code and "MatrixMulCUDA<" not in code.replace(
        "instance of MatrixMulCUDA<", "")
    if target == "cuda":
        # the host code launches the instances through their launchers (both are staged,
        # which changes their launch), and nothing else of it moved
        assert "MatrixMulCUDA_16_launch_from(grid, threads, C, A, B, wA, wB);" in code
        assert "MatrixMulCUDA_32_launch_from(grid, threads, C, A, B, wA, wB);" in code
        assert "naiveopt: kernel template instances" not in code


def test_an_instance_argument_is_its_block_where_the_hosts_block_is_a_variable():
    """The host picks MatrixMulCUDA<32> for 32 x 32 blocks (``dim3 threads(block_size,
    block_size)``, unreadable to naiveopt): the instance's own argument is its naive block, so
    its index reads as the global id and the product is staged; the launch is the <32>
    instance's, not the default 16 x 16."""
    result = naiveopt.optimize(MATMUL, filename="mm.cu")
    remarks = "\n".join(r.message for r in result.remarks)
    assert "MatrixMulCUDA_32_BLOCK_SIZE = 32 taken as the block size along x" in remarks
    assert "the argument of the template instance MatrixMulCUDA<32>" in remarks
    staged = {k.name for k in result.kernels if "thread-block-merge" in k.passes}
    assert staged == {"MatrixMulCUDA_16", "MatrixMulCUDA_32"}
    # checked against the naive instance launched on its own 32 x 32 block (the outputs'
    # blocks overhang the thread space behind an added guard: their launch is their own)
    assert all(k.verified for k in result.kernels), [k.verification.detail
                                                     for k in result.kernels]
    # a readable host block that disagrees with the argument still wins over it
    other = MATMUL.replace("dim3 threads(block_size, block_size);", "dim3 threads(8, 8);")
    result = naiveopt.optimize(other, filename="mm.cu")
    assert "MatrixMulCUDA_32_BLOCK_SIZE not taken as the block size along x: line 22: the " \
        "host code launches it with 8 threads along x, not 32" in "\n".join(r.message for r in result.remarks)


#: __device__ function templates: one called from a kernel template (concrete only in its
#: instances), one calling another, one called explicitly and from a plain kernel, one unused.
DEVICE = """\
template <typename T>
__device__ T square(T v)
{
    return v * v;
}

template <typename T>
__device__ __forceinline__ T twice(T v) { return square(v) + square(v); }

template <typename T>
__global__ void k(const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = twice(x[i]) + square<T>(x[i]);
}

__global__ void plain(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = square(x[i]);
}

template <typename T> __device__ T unused(T v) { return v; }

void run(const float *x, float *y, const double *xd, double *yd, int n)
{
    k<<<(n + 255) / 256, 256>>>(x, y, n);
    k<double><<<(n + 255) / 256, 256>>>(xd, yd, n);
    plain<<<(n + 255) / 256, 256>>>(x, y, n);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_device_function_templates_are_one_helper_per_instance_called(target):
    result = naiveopt.optimize(DEVICE, filename="dev.cu", target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    assert [k.name for k in result.kernels] == ["plain", "k_float", "k_double"]
    code = " ".join(result.code.split())
    for helper in ("float square_float(float v)", "double square_double(double v)",
                   "float twice_float(float v)", "double twice_double(double v)"):
        assert helper in code, helper
    # callees before their callers; the unused template is gone
    assert code.index("square_float(float v) {") < code.index("twice_float(float v) {")
    assert "unused(" not in code and "T unused" not in code
    assert "return square_double(v) + square_double(v);" in code
    assert "y[i] = twice_float(x[i]) + square_float(x[i]);" in code


def test_an_error_inside_a_device_template_points_at_its_line():
    source = DEVICE.replace("    return v * v;\n", "    return v * v;\n    goto done;\ndone:;\n")
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="dev.cu", verify=False)
    assert info.value.line == 5, info.value
    assert "goto" in info.value.message


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_type_arguments_explicit_deduced_and_instantiated(target):
    result = naiveopt.optimize(TYPED, filename="axpy.cu", target=target)
    assert result.verified, result.unverified
    # the deduced launch is the explicit one's instance; the explicit instantiation is one
    assert [k.name for k in result.kernels] == ["axpy_double", "axpy_float"]
    code = " ".join(result.code.split())
    if target == "cuda":
        assert "__global__ void axpy_float(float a, const float *x, float *y, int n)" in code
        assert "axpy_float<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);" in code
        assert "axpy_float<<<(n + 255) / 256, 256>>>(0.5f, x, y, n);" in code
    else:
        assert "__kernel void axpy_double(double a, __global const double *x, __global " \
            "double *y, int n)" in code


def test_an_error_inside_an_instance_points_at_the_template():
    source = TYPED.replace("        y[i] = a * x[i] + y[i];",
                           "        y[i] = a * x[i] + y[i];\n        goto done;\n    done:;")
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="axpy.cu", verify=False)
    assert info.value.line == 7, info.value
    assert "goto" in info.value.message


def test_kernel_lines_are_the_templates():
    module = parse_module("mm.cu", MATMUL)
    assert [(p.name, p.line, p.instance_of) for p in module.procedures] == [
        ("MatrixMulCUDA_16", 3, "MatrixMulCUDA<16>"), ("MatrixMulCUDA_32", 3,
                                                       "MatrixMulCUDA<32>")]


def test_a_template_never_instantiated_is_a_located_error():
    source = MATMUL[:MATMUL.index("void matrixMultiply")]
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="mm.cu", verify=False)
    assert (info.value.line, info.value.col) == (3, 17)
    assert "kernel template 'MatrixMulCUDA' is never instantiated in this file" in \
        info.value.message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH: CUDA output "
                    "not compiled")
def test_cuda_outputs_with_their_host_code_compile(tmp_path):
    for source, name in ((MATMUL, "mm.cu"), (TYPED, "axpy.cu"), (DEVICE, "dev.cu")):
        result = naiveopt.optimize(source, filename=name, verify=False)
        path = tmp_path / name.replace(".cu", "_out.cu")
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr


def test_a_named_constant_read_inside_a_kernel_template():
    """``static const int W = 5;`` read by a kernel template is read by device code only in
    its instances: templates are instantiated before named constants become macros."""
    source = """\
static const int W = 5;

template <typename T>
__global__ void taps(const T *x, T *y, int n)
{
    const T w[W] = {1, 2, 3, 2, 1};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - W) {
        T s = 0;
        for (int k = 0; k < W; k++)
            s += w[k] * x[i + k];
        y[i] = s;
    }
}
template __global__ void taps<float>(const float *, float *, int);
"""
    result = naiveopt.optimize(source, filename="taps.cu")
    assert result.verified, [k.verification.detail for k in result.kernels]
    assert "#define W 5" in result.code or "#define W ((int)5)" in result.code
