"""Kernels naiveopt cannot read, beside kernels it can (frontend/verbatim.py): the readable ones
are optimized and verified, the others carried into an output of the input's dialect as
written, with a located warning; where the output could not hold one unchanged, the file is
refused as before."""
import json
import os
import sys

import pyopencl as cl
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import compile_cuda, nvcc, run_cli  # noqa: E402

from naiveopt.api import optimize  # noqa: E402
from naiveopt.errors import UnsupportedConstruct  # noqa: E402

# an ML-style file: a warp-shuffle reduction among elementwise kernels, a macro and a typedef
# only the reduction uses, and host code launching all three
ML = """#include <cuda_runtime.h>
#define WARP 32
#define BLOCK 256
typedef float acc_t;

__device__ float relu_f(float x) { return x > 0.0f ? x : 0.0f; }

__global__ void relu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = relu_f(x[i]);
}

__global__ void row_sum_warp(const float *x, float *out, int rows, int cols)
{
    int row = blockIdx.x;
    acc_t s = 0;
    for (int c = threadIdx.x; c < cols; c += WARP) s += x[row * cols + c];
    for (int o = WARP / 2; o > 0; o /= 2) s += __shfl_down_sync(0xffffffff, s, o);
    if (threadIdx.x == 0) out[row] = relu_f(s);
}

__global__ void bias_add(float *y, const float *b, int rows, int cols)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) y[r * cols + c] += b[c];
}

void forward(const float *x, float *y, float *out, const float *b, int rows, int cols)
{
    relu<<<(rows * cols + BLOCK - 1) / BLOCK, BLOCK>>>(x, y, rows * cols);
    row_sum_warp<<<rows, WARP>>>(y, out, rows, cols);
    bias_add<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(y, b, rows, cols);
}
"""

def _optimize(name, source, **options):
    return optimize(source, filename=name, **options)


WARP_KERNEL = ML[ML.index("__global__ void row_sum_warp"):ML.index("__global__ void bias_add")]


def test_a_kernel_with_warp_shuffles_is_carried_as_written_and_the_others_verified():
    result = _optimize("ml.cu", ML)
    assert [k.name for k in result.kernels] == ["relu", "bias_add"]
    assert all(k.verification.status == "passed" for k in result.kernels)
    assert not result.verified                     # one kernel was neither
    (why, line, column), = result.left_as_written
    assert (line, column) == (19, 48)
    assert why == ("kernel 'row_sum_warp': warp shuffles are not supported in kernels "
                   "('__shfl_down_sync')")
    (message,) = result.left_as_written_messages()
    assert message.startswith("ml.cu:19:48: warning: kernel 'row_sum_warp'")
    assert message.endswith("written as it is, neither optimized nor verified")
    code = result.code
    assert WARP_KERNEL.strip() in code
    # after the optimized kernels, before the host code; what it needs is defined above it
    assert code.index("__global__ void bias_add") < code.index(WARP_KERNEL.strip()) < \
        code.index("void forward(")
    assert code.index("#define WARP 32") < code.index(WARP_KERNEL.strip())
    assert code.index("typedef float acc_t;") < code.index(WARP_KERNEL.strip())
    assert json.loads(json.dumps(result.to_json()))["left_as_written"] == [
        {"why": why, "line": 19, "column": 48}]


@nvcc
def test_the_output_with_a_kernel_as_written_compiles(tmp_path):
    out = tmp_path / "ml_opt.cu"
    out.write_text(_optimize("ml.cu", ML).code)
    done = compile_cuda(str(out), str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_an_opencl_output_of_a_cuda_input_leaves_it_out_and_says_so():
    result = _optimize("ml.cu", ML, target="opencl")
    assert "row_sum_warp" not in result.code
    assert all(k.verification.status == "passed" for k in result.kernels)
    (message,) = result.left_as_written_messages()
    assert message.endswith("left out of the output, which holds only the kernels naiveopt "
                            "read")


def test_without_launchers_the_device_only_output_leaves_it_out():
    result = _optimize("ml.cu", ML, launcher=False)
    assert "row_sum_warp" not in result.code
    assert result.left_as_written_messages()[0].endswith("which holds only the kernels "
                                                         "naiveopt read")


DEBUG_CL = """#define SHOWN 4
__kernel void scale(__global float *a, float s, int n)
{
    int i = get_global_id(0);
    if (i < n) a[i] = a[i] * s;
}
__kernel void show(__global const float *a)
{
    int i = get_global_id(0);
    if (i < SHOWN) printf("a[%d] = %f\\n", i, a[i]);
}
"""


def test_an_opencl_kernel_with_printf_is_carried_and_the_output_builds():
    result = _optimize("dbg.cl", DEBUG_CL)
    assert [k.name for k in result.kernels] == ["scale"]
    assert result.kernels[0].verification.status == "passed"
    assert 'printf("a[%d] = %f\\n", i, a[i]);' in result.code
    assert "#define SHOWN 4" in result.code
    context = cl.Context(cl.get_platforms()[0].get_devices())
    program = cl.Program(context, result.code).build()
    assert {k.function_name for k in program.all_kernels()} == {"scale", "show"}


def test_extern_c_linkage_is_kept():
    source = ('extern "C" {\n' + ML[ML.index("__global__ void relu("):
                                    ML.index("void forward(")] + "}\n")
    source = "#define WARP 32\ntypedef float acc_t;\n__device__ float relu_f(float x) " \
             "{ return x > 0.0f ? x : 0.0f; }\n" + source
    code = _optimize("c.cu", source).code
    assert 'extern "C" __global__ void row_sum_warp(' in code


def test_a_file_of_only_unreadable_kernels_is_refused():
    with pytest.raises(UnsupportedConstruct, match="warp shuffles"):
        _optimize("w.cu", "#define WARP 32\ntypedef float acc_t;\n" +
                        "__device__ float relu_f(float x) { return x; }\n" + WARP_KERNEL)


ELEMENTWISE = """__global__ void ew(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 2.0f * a[i];
}
"""


@pytest.mark.parametrize("prefix, kernel, blocker", [
    ("__constant__ float w[4];\n",
     "__global__ void k(float *a)\n{\n    a[0] = __shfl_down_sync(0xffffffff, w[1], 1);\n}\n",
     "it names the file-scope variable 'w'"),
    ("struct P { float x, y; };\n",
     "__global__ void k(P *p)\n{\n    p[0].x = __shfl_down_sync(0xffffffff, p[1].y, 1);\n}\n",
     "it uses the type 'P'"),
    ("#define TWICE(x) (2 * (x))\n",
     "__global__ void k(float *a)\n{\n    a[0] = __shfl_down_sync(0xffffffff, TWICE(a[1]), 1);"
     "\n}\n", "it uses the function-like macro 'TWICE'"),
    ("",
     "__global__ void k(float *a, int n)\n{\n    ew<<<1, 32>>>(a, n);\n}\n",
     "it launches kernel 'ew'"),
])
def test_what_the_output_could_not_hold_keeps_the_file_refused(prefix, kernel, blocker):
    """Data another kernel is verified as reading unchanged, types and macros the output does
    not define, a launch of a kernel whose geometry may change."""
    with pytest.raises(UnsupportedConstruct) as info:
        _optimize("k.cu", prefix + ELEMENTWISE + kernel, verify=False)
    assert f"(kernel 'k' cannot be written as it is beside the others: {blocker})" in \
        info.value.message


def test_the_cli_warns_at_the_line_and_require_verified_refuses(tmp_path):
    src = tmp_path / "ml.cu"
    src.write_text(ML)
    out = tmp_path / "out.cu"
    done = run_cli(src, "-o", out)
    assert done.returncode == 0, done.stderr
    assert f"{src}:19:48: warning: kernel 'row_sum_warp': warp shuffles" in done.stderr
    assert WARP_KERNEL.strip() in out.read_text()
    refused = run_cli(src, "-o", tmp_path / "strict.cu", "--require-verified")
    assert refused.returncode == 1, refused.stderr
    assert f"{src}:19:48: error: kernel 'row_sum_warp'" in refused.stderr
    assert not (tmp_path / "strict.cu").exists()


def test_the_namespaced_kernel_of_an_opencl_output_is_reported_left_out(tmp_path):
    src = tmp_path / "ns.cu"
    src.write_text(ELEMENTWISE + "namespace ops {\n" + ELEMENTWISE.replace("ew(", "inner(") +
                   "}\n")
    done = run_cli(src, "--target", "opencl", "-o", tmp_path / "out.cl")
    assert done.returncode == 0, done.stderr
    assert "kernel 'inner' is declared in namespace 'ops'" in done.stderr
    assert "left out of the output" in done.stderr
    assert "inner" not in (tmp_path / "out.cl").read_text()


HELPER = """__device__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

__device__ float twice(float v) { return warp_sum(v) * 2.0f; }

__device__ float half(float v) { return 0.5f * v; }

__global__ void row_sums(const float *x, float *out, int cols)
{
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) s += x[blockIdx.x * cols + c];
    s = twice(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

__global__ void halve(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = half(a[i]);
}
"""


def test_a_kernel_reading_through_an_unreadable_helper_is_carried_with_its_helpers():
    """row_sums itself translates, but calls warp_sum through twice: all three are carried
    as written (helpers first), the warning names the helper and points at its shuffle."""
    result = _optimize("h.cu", HELPER)
    assert [k.name for k in result.kernels] == ["halve"]
    assert result.kernels[0].verification.status == "passed"
    (why, line, column), = result.left_as_written
    assert why == ("kernel 'row_sums': it calls 'twice', which naiveopt cannot read: it calls "
                   "'warp_sum', which naiveopt cannot read: warp shuffles are not supported "
                   "in kernels ('__shfl_down_sync')")
    assert (line, column) == (3, 42)
    code = result.code
    block = code[code.index("naiveopt could not read"):]
    assert block.index("float warp_sum(") < block.index("float twice(") < \
        block.index("void row_sums(")
    assert "half(" not in block                 # translated: the kernel that reads it is
    assert code.count("float half(") == 1


@nvcc
def test_the_output_with_carried_helpers_compiles(tmp_path):
    out = tmp_path / "h_opt.cu"
    out.write_text(_optimize("h.cu", HELPER).code)
    done = compile_cuda(str(out), str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_a_file_whose_kernels_all_call_an_unreadable_helper_is_refused():
    with pytest.raises(UnsupportedConstruct, match="it calls 'twice'"):
        _optimize("h.cu", HELPER[:HELPER.index("__global__ void halve")])
