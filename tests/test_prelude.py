"""What kernels may name without declaring it (frontend/prelude.py), the built-ins' translations
both ways (passes/functional/builtins.py, frontend/typed_builtins.py), typedef'd types
(ir/typenames.py) and host code around the kernels (frontend/host.py).

The lit tests (tests/lit/prelude_names.cu, typedefs.*, vectors.*, builtins.*, host_code.cu,
loop_hints.cu) pin the output's shape; these check the tables, the errors and what the lit
tests cannot: that the outputs compile where nvcc is installed, and that nothing is lost.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from pycparser import c_ast

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.frontend import parse_module, prelude, typed_builtins
from naiveopt.ir.cgen import to_c
from naiveopt.passes.functional import builtins


def test_every_cuda_function_of_the_prelude_has_an_opencl_form_or_says_it_has_none():
    translated = (set(builtins.CUDA_TO_OPENCL_MATH) | set(builtins.CUDA_TO_OPENCL_EXPRESSIONS)
                  | builtins.SHARED_FUNCTIONS | builtins.CUDA_WITHOUT_OPENCL)
    missing = sorted(prelude.cuda_device_function_names() - translated)
    assert not missing, f"declared by the prelude, unknown to the translation: {missing}"


def test_the_translations_write_only_names_the_other_dialect_has():
    cuda = prelude.cuda_device_function_names()
    assert set(builtins.OPENCL_TO_CUDA_MATH.values()) <= cuda
    assert not set(builtins.CUDA_TO_OPENCL_MATH) & builtins.CUDA_WITHOUT_OPENCL


def test_ignored_headers_and_the_names_they_declare():
    source = ("#include <cuda_runtime.h>\n#include <math.h>\n#include <float.h>\n"
              "#include <stdint.h>\n#include <cstdio>\n"
              "__global__ void k(float *a, int64_t n) {\n"
              "    ptrdiff_t i = threadIdx.x;\n    uint8_t b = 3;\n"
              "    if (i < n) a[i] = fmaxf(-INFINITY, FLT_MIN) + M_PI + NAN + FLT_MAX + b;\n}\n")
    module = parse_module("k.cu", source, {})
    text = to_c(module.procedures[0].func)
    for name in ("INFINITY", "FLT_MIN", "M_PI", "NAN", "FLT_MAX", "ptrdiff_t", "uint8_t"):
        assert re.search(rf"\b{name}\b", text), name
    assert module.procedures[0].params[1].base_type == "long"
    assert module.procedures[0].params[1].spelling == "int64_t"
    assert module.preamble.startswith("#include <cuda_runtime.h>\n") and not module.host_code


def test_a_name_from_an_unread_header_says_which_header():
    source = "#include <thrust/device_vector.h>\n__global__ void k(float *a) {\n" \
             "    a[0] = thrust::reduce(a);\n}\n"
    with pytest.raises(NaiveoptError) as info:
        parse_module("k.cu", source, {})
    assert (info.value.line, info.value.col) == (3, 12)
    assert "naiveopt does not read <thrust/device_vector.h>" in info.value.message


@pytest.mark.parametrize("filename, source, line, message", [
    ("k.cu", "__global__ void k(unsigned int *a) {\n    a[0] = __brev(a[1]);\n}\n", 2,
     "'__brev' has no OpenCL translation"),
    ("k.cl", "__kernel void k(__global float *a) {\n    a[0] = sign(a[1]);\n}\n", 2,
     "OpenCL built-in 'sign' has no CUDA translation"),
    ("k.cl", "__kernel void k(__global float4 *a, __global uchar4 *b) {\n"
     "    b[0] = convert_uchar4_sat(a[0]);\n}\n", 2,
     "OpenCL built-in 'convert_uchar4_sat' on float4 is not supported"),
    ("k.cl", "__kernel void k(__global float *a, __global int *b) {\n"
     "    b[0] = convert_int_sat(a[0]);\n}\n", 2,
     "'convert_int_sat' from a floating value is not supported"),
    ("k.cl", "__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;\n"
     "__kernel void k(__global float *a) {\n    a[0] = 1.0f;\n}\n", 1,
     "OpenCL images and samplers are not supported: naiveopt optimizes kernels over buffers "
     "(__global pointers) ('CLK_NORMALIZED_COORDS_FALSE')"),
])
def test_a_built_in_without_a_translation_is_a_located_error(filename, source, line, message):
    target = "opencl" if filename.endswith(".cu") else "cuda"
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename=filename, target=target, verify=False)
    assert info.value.line == line and message in info.value.message, str(info.value)


def _convert(name: str, source_type: str) -> str:
    """The CUDA-terms expression, without the printer's spaces."""
    return "".join(to_c(typed_builtins.translate(name, [c_ast.ID("x")], [source_type])).split())


@pytest.mark.parametrize("name, source_type, expected", [
    ("convert_float", "int", "(float)x"),
    ("convert_int", "float", "(int)x"),
    ("convert_int_rte", "float", "(int)rintf(x)"),
    ("convert_int_rtn", "double", "(int)floor(x)"),
    ("convert_uchar_sat", "float", "(unsigned char)fminf(fmaxf(x, 0.0f), 255.0f)"),
    ("convert_char_sat", "int", "(char)max(min(x, (int)127), (int)-128)"),
    ("convert_uchar_sat", "unsigned short", "(unsigned char)min(x, (unsigned short)255)"),
    ("convert_ushort_sat", "unsigned char", "(unsigned short)x"),
    ("as_int", "float", "__float_as_int(x)"),
    ("as_float", "unsigned int", "__uint_as_float(x)"),
    ("as_uint", "int", "(unsigned int)x"),
    ("popcount", "unsigned long", "__popcll(x)"),
    ("clz", "int", "__clz(x)"),
])
def test_type_dependent_opencl_built_ins(name, source_type, expected):
    assert _convert(name, source_type) == "".join(expected.split())


def test_scalar_vector_argument_is_passed_by_value():
    """A float2 scalar argument: verification passes 8 bytes (it passed 4 once and the
    runtime refused the kernel)."""
    source = """#pragma naiveopt sizes(n=100) array(a, n) array(b, n)
__global__ void k(const float2 *a, float *b, float2 c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i].x * c.x + a[i].y * c.y;
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="k.cu", target=target)
        assert result.verified, result.kernels[0].verification


HOST = """#include <iostream>
#include <vector>
#include "helper_cuda.h"
#define N 1000
using namespace std;
struct Timer { double start; };
template <typename T> T sq(T x) { return x * x; }
__global__ void first(float *y, const float *x, int n);
int main() {
    float *x, *y;
    cudaMallocManaged(&x, N * sizeof(float));
    cudaMallocManaged(&y, N * sizeof(float));
    std::vector<float> v(N);
    first<<<(N + 255) / 256, 256>>>(y, x, N);
    checkCudaErrors(cudaDeviceSynchronize());
    cout << y[0] << endl;
    return 0;
}
#pragma naiveopt sizes(n=1000) array(x, n) array(y, n)
__global__ void first(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + N;
}
"""


def test_host_code_with_unknown_headers_and_errors_is_passed_through(tmp_path):
    """C++ host code that names what no prelude declares (std::vector, cout, a helper
    header's macro) is not naiveopt's to judge: the kernel after it is optimized and
    verified, and every host line is written out as it was."""
    path = tmp_path / "whole.cu"
    result = naiveopt.optimize(HOST, filename=str(path))
    assert result.verified, result.kernels[0].verification
    host = result.code[result.code.index("// Host code of whole.cu"):]
    for line in HOST.split("\n")[3:18]:
        if not line.startswith("__global__"):
            assert line in host, line
    assert "#pragma naiveopt" not in result.code and result.code.count("__global__") == 1
    head = result.code[:result.code.index("__global__")]
    assert all(f"#include {h}" in head for h in ('<iostream>', '<vector>', '"helper_cuda.h"'))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_cuda_outputs_with_prelude_names_and_host_code_compile(tmp_path):
    """nvcc accepts what naiveopt writes: kept names (size_t, int64_t, INFINITY, FLT_MAX),
    the headers included for them, typedefs, vector values and host code."""
    source = """#include <stdio.h>
typedef float DATA_TYPE;
#pragma naiveopt sizes(n=300) array(x, n) array(y, n) array(z, n)
__global__ void k(const DATA_TYPE *x, float2 *y, const int64_t *z, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        DATA_TYPE m = fmaxf(-INFINITY, x[i]) + (DATA_TYPE)z[i] * FLT_MIN;
        y[i] = make_float2(m, __saturatef(x[i]) + (float)M_PI);
    }
}
int main(void) {
    printf("%d\\n", (int)sizeof(DATA_TYPE));
    return 0;
}
"""
    result = naiveopt.optimize(source, filename=str(tmp_path / "k.cu"))
    assert result.verified, result.kernels[0].verification
    (tmp_path / "out.cu").write_text(result.code)
    done = subprocess.run(["nvcc", "-arch=sm_80", "-c", "out.cu", "-o", "out.o"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + result.code


def test_loop_hint_left_without_its_loop_is_dropped_with_a_remark():
    source = """#pragma naiveopt sizes(M=47, N=38, K=52) block(16, 16)
#pragma naiveopt array(A, M, K) array(B, K, N) array(C, M, N)
__global__ void mm(const float *A, const float *B, float *C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
#pragma unroll 4
        for (int k = 0; k < K; ++k)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
"""
    result = naiveopt.optimize(source, filename="mm.cu", passes=["thread-block-merge"])
    assert "thread-block-merge" in result.kernels[0].passes and result.verified
    kept = [line for line in result.code.splitlines() if "#pragma unroll" in line]
    code = result.code.splitlines()
    for n, line in enumerate(code):
        if "#pragma unroll" in line:
            assert code[n + 1].lstrip().startswith("for ("), code[n + 1]
    dropped = [r for r in result.remarks if "'#pragma unroll 4' dropped" in r.message]
    assert kept or dropped


def test_a_kernel_file_may_define_its_own_math_helper():
    """A __device__ max of the file's own (the prelude declares the library __device__, as
    nvcc does, so the definition matches); OpenCL writes it max_, not a redeclaration of the
    built-in."""
    source = """__device__ float max(float a, float b) { return a > b ? a : b; }
#pragma naiveopt sizes(n=100) array(a, n)
__global__ void k(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = max(a[i], 0.0f) + expf(a[i]);
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="k.cu", target=target)
        assert result.verified, result.kernels[0].verification
    assert "max_(a[i], 0.0f)" in result.code
