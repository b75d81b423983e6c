"""Front end: several kernels and helpers per file, macros, pragmas, dialect built-ins, vector
types, and located errors for what naiveopt does not support."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import naiveopt
from conftest import KERNELS_DIR
from naiveopt.errors import NaiveoptError, UnsupportedConstruct
from naiveopt.frontend import dialect_of, parse_module
from naiveopt.ir.cgen import to_c
from naiveopt.passes.manager import PassContext, run_passes
from naiveopt.passes.pipeline import front_passes

MULTI = """\
#define SCALE 4
#define SQR(v) ((v) * (v))
#pragma unroll_hint before_helper
__device__ float twice(float v)
{
    return 2.0f * v;
}

#pragma naiveopt sizes(N=64) threads(N) block(64) array(A, N) array(B, N)
__global__ void first(float *A, float *B, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        B[i] = twice(A[i]) + SQR(A[i]) * SCALE;
}

#pragma my_tool hint(3)
__global__ void second(float *A, float *B, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        B[i] = A[i] - SCALE;
}
"""


def code_only(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def optimize(source: str, filename: str, **kwargs) -> naiveopt.OptimizeResult:
    kwargs.setdefault("opt", False)
    return naiveopt.optimize(source, filename=filename, **kwargs)


# ------------------------------------------------------------------ several kernels, helpers
def test_several_kernels_and_a_helper_are_parsed():
    module = parse_module("multi.cu", MULTI, {})
    assert [p.name for p in module.procedures] == ["first", "second"]
    assert len(module.helpers) == 1
    assert module.helpers[0].decl.name == "twice"
    first = module.procedures[0]
    assert [(p.name, p.is_pointer, p.base_type) for p in first.params] == [
        ("A", True, "float"), ("B", True, "float"), ("N", False, "int")]
    assert first.line == 10


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_several_kernels_and_a_helper_are_emitted_and_verified(target):
    result = optimize(MULTI, "multi.cu", target=target)
    assert [k.name for k in result.kernels] == ["first", "second"]
    assert result.verified, [k.verification.detail for k in result.kernels]
    for k in result.kernels:
        assert k.verification.checks == ["pragma (N=64): B match naive kernel"]
        assert k.geometry.block == (64, 1, 1)
        assert k.geometry.thread_space == ("N", "1", "1")
    code = code_only(result.code)
    helper = "__device__ float twice(float v)" if target == "cuda" else "float twice(float v)"
    assert helper in code
    if target == "opencl":
        assert "__device__" not in code
    # the helper comes before the kernels that call it
    assert code.index("twice(float v)") < code.index("first(")


# ---------------------------------------------------------------------------- macros
def test_object_macros_are_preserved_by_name():
    result = optimize(MULTI, "multi.cu", target="opencl")
    code = code_only(result.code)
    assert "#ifndef SCALE\n#define SCALE 4\n#endif" in code
    assert "* SCALE" in code and "- SCALE" in code
    assert not re.search(r"\*\s*4\b", code)


def test_function_like_macros_are_expanded():
    module = parse_module("multi.cu", MULTI, {})
    assert "SQR" not in module.macros and module.macros == {"SCALE": "4"}
    code = code_only(optimize(MULTI, "multi.cu", target="cuda").code)
    assert "SQR" not in code
    assert "A[i] * A[i]" in code


def test_macro_accessors_from_the_library_are_expanded():
    path = os.path.join(KERNELS_DIR, "mm_macro.cu")
    with open(path, encoding="utf-8") as fh:
        result = optimize(fh.read(), path, target="opencl")
    code = code_only(result.code)
    assert "A[idy * WIDTH_A + i]" in code and "C[idy * WIDTH_B + idx] = sum" in code
    assert "for (int i = 0; i < WIDTH_A; i = i + 1)" in code
    assert "#define A(" not in code
    assert "const int idx = get_global_id(0);" in code


def test_define_overridden_by_dash_d_at_verification():
    path = os.path.join(KERNELS_DIR, "mm_macro.cu")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    result = optimize(source, path, target="opencl", defines={"WIDTH_A": "16"})
    v = result.kernels[0].verification
    assert v.status == "passed", v.detail
    assert v.checks == ["cli (HEIGHT_A=64, WIDTH_A=16, WIDTH_B=48): C match naive kernel and "
                        "NumPy reference"]
    assert "#define WIDTH_A 16" in result.code
    # without -D the metadata's test and odd sets are used
    plain = optimize(source, path, target="opencl")
    assert [c.split(" (")[0] for c in plain.kernels[0].verification.checks] == ["test", "odd"]
    assert "WIDTH_A=32" in plain.kernels[0].verification.detail


GUARDED_N = """\
#ifndef N
#define N 1024
#endif
#pragma naiveopt sizes(N=64) threads(N) block(32) array(A, N) array(B, N)
__global__ void twice(const float *A, float *B)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        B[i] = 2.0f * A[i];
}
"""


def test_guarded_define_with_pragma_sizes_and_dash_d():
    result = optimize(GUARDED_N, "g.cu", target="opencl")
    assert result.kernels[0].verification.checks == ["pragma (N=64): B match naive kernel"]
    assert "#ifndef N\n#define N 1024\n#endif" in result.code
    assert "i < N" in result.code
    overridden = optimize(GUARDED_N, "g.cu", target="opencl", defines={"N": "96"})
    v = overridden.kernels[0].verification
    assert v.status == "passed" and v.checks == ["cli (N=96): B match naive kernel"]
    assert "#define N 96" in overridden.code


def test_macro_array_dimension_is_preserved_by_name():
    source = ("#ifndef BLOCK\n#define BLOCK 16\n#endif\n"
              "__global__ void k(float *A)\n{\n"
              "    __shared__ float tile[BLOCK];\n"
              "    tile[threadIdx.x % BLOCK] = A[threadIdx.x];\n"
              "    __syncthreads();\n"
              "    A[threadIdx.x] = tile[(threadIdx.x + 1) % BLOCK];\n}\n")
    code = code_only(optimize(source, "k.cu", target="opencl", verify=False).code)
    assert "% BLOCK" in code
    assert "tile[BLOCK]" in code, code


# ---------------------------------------------------------------------------- pragmas
def test_pragmas_are_recorded():
    module = parse_module("multi.cu", MULTI, {})
    first, second = module.procedures
    assert first.pragma.user == [
        "naiveopt sizes(N=64) threads(N) block(64) array(A, N) array(B, N)"]
    assert second.pragma.user == ["my_tool hint(3)"]
    assert module.pragmas == [
        "naiveopt sizes(N=64) threads(N) block(64) array(A, N) array(B, N)"]


# ------------------------------------------------------------------ dialect built-ins
OPENCL_BUILTINS = """\
#pragma naiveopt sizes(N=64) threads(N) block(64) array(A, N) array(B, N)
__kernel void k(__global const float *A, __global float *B, int N)
{
    __local float tile[64];
    int l = get_local_id(0);
    int g = get_global_id(0);
    tile[l] = A[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < N)
        B[g] = tile[63 - l] + sqrt(fabs(A[g])) + mad(A[g], 2.0f, 1.0f)
               + (float)get_group_id(0) + (float)get_local_size(0);
}
"""

CUDA_BUILTINS = """\
#pragma naiveopt sizes(N=64) threads(N) block(64) array(A, N) array(B, N)
__global__ void k(const float *A, float *B, int N)
{
    __shared__ float tile[64];
    int l = threadIdx.x;
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    tile[l] = A[g];
    __syncthreads();
    if (g < N)
        B[g] = tile[63 - l] + sqrtf(fabsf(A[g])) + fmaf(A[g], 2.0f, 1.0f)
               + (float)blockIdx.x + (float)blockDim.x;
}
"""


def test_opencl_builtins_to_cuda():
    result = optimize(OPENCL_BUILTINS, "k.cl", target="cuda")
    assert result.verified, result.kernels[0].verification.detail
    code = code_only(result.code)
    assert "__global__ void k(const float *A, float *B, int N)" in code
    assert "const int idx = blockIdx.x * blockDim.x + threadIdx.x;" in code
    assert "const int tidx = threadIdx.x;" in code
    assert "const int bidx = blockIdx.x;" in code
    assert "const int blockDimX = blockDim.x;" in code
    assert "__shared__ float tile[64];" in code
    assert "__syncthreads();" in code
    assert "fma(" in code and "fmaf(" not in code      # mad: the overloaded fma, not fmaf
    for opencl_only in ("get_local_id", "get_global_id", "get_group_id", "get_local_size",
                        "barrier", "__local", "__global ", "__kernel", "mad("):
        assert opencl_only not in code, opencl_only


def test_cuda_builtins_to_opencl():
    result = optimize(CUDA_BUILTINS, "k.cu", target="opencl")
    assert result.verified, result.kernels[0].verification.detail
    code = code_only(result.code)
    assert "__kernel void k(__global const float *A, __global float *B, int N)" in code
    assert "const int idx = get_global_id(0);" in code
    assert "const int tidx = get_local_id(0);" in code
    assert "const int bidx = get_group_id(0);" in code
    assert "const int blockDimX = get_local_size(0);" in code
    assert "__local float tile[64];" in code
    assert "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);" in code
    assert "sqrt(fabs(" in code and "fma(" in code
    for cuda_only in ("threadIdx", "blockIdx", "blockDim.", "__syncthreads", "__shared__",
                      "__global__", "sqrtf", "fabsf", "fmaf"):
        assert cuda_only not in code, cuda_only




@pytest.mark.parametrize("source, filename", [
    pytest.param(OPENCL_BUILTINS, "k.cl", id="opencl-cuda-opencl"),
    pytest.param(CUDA_BUILTINS, "k.cu", id="cuda-opencl-cuda")])
def test_builtins_roundtrip_back_to_input_dialect(source, filename, tmp_path):
    """CUDA -> OpenCL -> CUDA and OpenCL -> CUDA -> OpenCL keep verifying."""
    other = "opencl" if filename.endswith(".cu") else "cuda"
    first = optimize(source, filename, target=other)
    assert first.verified
    back_name = "back" + (".cl" if other == "opencl" else ".cu")
    # the pragma is not in the output (comments and pragmas are dropped): pass sizes again
    again = optimize(source.splitlines()[0] + "\n" + first.code, back_name,
                     target="cuda" if other == "opencl" else "opencl")
    assert again.verified, again.kernels[0].verification.detail


def test_cuda_double_precision_math_names_parse():
    module = parse_module("m.cu", "__global__ void k(float *A)\n{\n"
                          "    A[0] = sqrt(fabs(A[1])) + exp(A[2]);\n}\n", {})
    assert [p.name for p in module.procedures] == ["k"]


def test_dialect_of():
    assert dialect_of("a/b.cu") == "cuda" and dialect_of("x.cuh") == "cuda"
    assert dialect_of("k.CL") == "opencl"
    with pytest.raises(NaiveoptError, match="cannot tell the dialect"):
        dialect_of("k.c")


# ------------------------------------------------------------------------ vector types
def test_vector_types_parse_cuda():
    module = parse_module("v.cu", "__global__ void k(float2 *A, float4 *B, int2 *C, float *D)"
                          " {\n D[0] = A[0].x + B[0].w + C[0].y; }\n", {})
    assert [p.base_type for p in module.procedures[0].params] == ["float2", "float4", "int2",
                                                                 "float"]


def test_vector_types_parse_opencl():
    module = parse_module("v.cl", "__kernel void k(__global float4 *A, __global float *B,"
                          " int4 n) {\n float4 v = A[0];\n B[0] = v.x; }\n", {})
    assert [p.base_type for p in module.procedures[0].params] == ["float4", "float", "int4"]


VEC_CL = """\
#pragma naiveopt sizes(N=64) threads(N) block(64) array(A, N, 4) array(B, N)
__kernel void k(__global float4 *A, __global float *B, int N)
{
    int i = get_global_id(0);
    if (i < N) {
        float4 v = A[i];
        B[i] = v.x - v.y * v.w;
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_vector_components_are_kept(target):
    code = code_only(optimize(VEC_CL, "v.cl", target=target, verify=False).code)
    assert "v.x - v.y * v.w" in code, code


VEC_CU = """\
#pragma naiveopt sizes(N=64) threads(N) block(64) array(A, N, 2) array(B, N)
__global__ void k(float2 *A, float *B, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float2 v = A[i];
        B[i] = v.x + v.y;
    }
}
"""


def test_cuda_vector_kernel_without_verification():
    code = code_only(optimize(VEC_CU, "v.cu", target="cuda", verify=False).code)
    assert "__global__ void k(float2 *A, float *B, int N)" in code
    assert "v.x + v.y" in code


def test_cuda_vector_copy_to_opencl():
    result = optimize(VEC_CU, "v.cu", target="opencl")
    assert "float2(" not in code_only(result.code)
    assert result.verified


# ------------------------------------------------------------------ unsupported input
UNSUPPORTED = [
    ("goto", "k.cu", "__global__ void k(float *A)\n{\n    goto end;\nend:\n    A[0] = 1.0f;\n}\n",
     3, 5, "goto"),
    ("asm", "k.cu", "__global__ void k(float *A)\n{\n    asm(\"nop;\");\n    A[0] = 1.0f;\n}\n",
     3, 5, "inline asm"),
    ("recursion", "k.cu", "__device__ int f(int n)\n{\n    return n <= 0 ? 0 : f(n - 1);\n}\n"
     "__global__ void k(float *A)\n{\n    A[0] = f(3);\n}\n", 3, 25, "recursive call to 'f'"),
    ("pointer-arith", "k.cu", "__global__ void k(float *A, int i)\n{\n    (A + i)[0] = 1.0f;\n}\n",
     3, 6, "pointer arithmetic"),
    ("address-of", "k.cu", "__global__ void k(float *A)\n{\n    float x = 1.0f;\n"
     "    float *p = &x;\n    A[0] = *p;\n}\n", 4, 12, "local pointer 'p': only an offset of "
     "an array parameter"),
    ("atomic-cuda", "k.cu", "__global__ void k(int *A)\n{\n    atomicAdd_block(A, 1);\n}\n",
     3, 5, "atomic operation 'atomicAdd_block' is not supported"),
    ("atomic-opencl", "k.cl", "__kernel void k(__global long *A)\n{\n    atom_add(A, 1);\n}\n",
     3, 5, "'atom_add' on long elements is not supported (32-bit integers)"),
    ("atomic-file-scope", "k.cu", "__device__ int count;\n__global__ void k(int *A)\n{\n"
     "    atomicAdd(&count, A[0]);\n}\n", 4, 5, "'atomicAdd' on file-scope data 'count'"),
    ("dynamic-parallelism", "k.cu", "__global__ void c(float *A) { A[0] = 1.0f; }\n"
     "__global__ void k(float *A)\n{\n    c<<<1, 1>>>(A);\n}\n", 4, 5,
     "dynamic parallelism (launching kernel 'c' from device code)"),
    ("cooperative-groups", "k.cu", "// k\n#include <cooperative_groups.h>\n"
     "__global__ void k(float *A) { A[0] = 1.0f; }\n", 2, 1, "cooperative groups"),
    ("function-pointer", "k.cu", "__device__ float f(float x) { return x; }\n"
     "__global__ void k(float *A)\n{\n    float (*g)(float) = f;\n    A[0] = g(A[0]);\n}\n",
     4, 13, "function pointers"),
    ("warp-shuffle", "k.cu", "__global__ void k(float *A)\n{\n"
     "    A[0] = __shfl_down_sync(0xffffffff, A[1], 1);\n}\n", 3, 12, "warp shuffles"),
    ("host-variable", "k.cu", "float table[4];\n__global__ void k(float *A)\n{\n"
     "    A[0] = table[1];\n}\n", 4, 12, "host variable 'table' is read in device code"),
    ("switch-fallthrough", "k.cu", "__global__ void k(float *A, int n)\n{\n"
     "    switch (n) {\n    case 1: A[0] = 1.0f;\n    case 2: A[1] = 2.0f;\n    }\n}\n", 4, 13,
     "a switch case that falls through into the next is not supported: end it with break"),
    ("switch-break-in-branch", "k.cu", "__global__ void k(float *A, int n)\n{\n"
     "    switch (n) {\n    case 1:\n        if (A[0] > 0.0f) break;\n        A[0] = 1.0f;\n"
     "        break;\n    }\n}\n", 5, 26,
     "a break that leaves a switch from inside a branch is not supported"),
    ("static", "k.cu", "__global__ void k(float *A)\n{\n    static int c = 0;\n    A[0] = c;\n}\n",
     3, 16, "static variables"),
    ("sizeof-float3", "k.cu", "__global__ void k(float3 *A, int *B)\n{\n"
     "    B[0] = sizeof(A[0]);\n}\n", 3, 12,
     "sizeof of 'float3', whose size differs between CUDA and OpenCL, is not supported"),
    ("ptr-to-ptr", "k.cu", "__global__ void k(float **A)\n{\n    A[0][0] = 1.0f;\n}\n",
     1, 27, "pointer-to-pointer"),
    # dynamic shared memory (ir/dynamic_shared.py): one extern __shared__ array per kernel,
    # declared in the kernel, one-dimensional
    ("extern-shared-twice", "k.cu", "__global__ void k(float *A)\n{\n"
     "    extern __shared__ float s[];\n    extern __shared__ int t[];\n    s[0] = A[0];\n"
     "    t[0] = 1;\n    A[1] = s[0] + t[0];\n}\n", 4, 27,
     "a second extern __shared__ array 't': CUDA places every one at the same address"),
    ("extern-shared-in-helper", "k.cu", "__device__ float f()\n{\n"
     "    extern __shared__ float s[];\n    return s[0];\n}\n"
     "__global__ void k(float *A)\n{\n    A[0] = f();\n}\n", 3, 29,
     "extern __shared__ 's' in a __device__ function: declare it in the kernel"),
    ("extern-shared-2d", "k.cu", "__global__ void k(float *A)\n{\n"
     "    extern __shared__ float s[][16];\n    s[0][0] = A[0];\n    A[1] = s[0][0];\n}\n",
     3, 29, "extern __shared__ 's' must be a one-dimensional array"),
    ("extern-not-shared", "k.cu", "__global__ void k(float *A)\n{\n    extern float s[];\n"
     "    A[1] = s[0];\n}\n", 3, 18, "only extern __shared__ arrays"),
    ("work-dim", "k.cl", "__kernel void k(__global int *A)\n{\n    A[0] = get_work_dim();\n}\n",
     3, 12, "get_work_dim"),
    ("vload-half", "k.cl", "__kernel void k(__global float *A, __global const half *H)\n{\n"
     "    float4 v = vload_half4(0, H);\n    A[0] = v.x;\n}\n", 3, 16, "vload_half4"),
    ("syntax", "k.cu", "__global__ void k(float *A)\n{\n    A[0] = ;\n}\n", 3, 12,
     "expected expression"),
]


#: Local pointers naiveopt cannot read as offsets of a parameter (frontend/pointer_offsets.py).
POINTER_ERRORS = [
    ("set-again", "    float *p = A + 1;\n    p = A + 2;\n    A[0] = p[0];\n", 4, 5,
     "local pointer 'p' is set again: only moves"),
    ("moved-then-passed-on", "    float *p = A + 1;\n    p++;\n    A[0] = f(p);\n", 5, 14,
     "local pointer 'p', which moves, is used other than by indexing it"),
    ("set-from-a-moving-one", "    float *p = A + 1;\n    p++;\n    float *q = p + 1;\n"
     "    A[0] = q[0];\n", 5, 16, "local pointer 'p', which moves, is used other than"),
    ("offset-changes", "    int j = 0;\n    float *p = A + j;\n    j = 2;\n    A[1] = p[0];\n",
     4, 12, "local pointer 'p' offsets by 'j', which changes after the pointer is set"),
    ("offset-changes-in-loop", "    int j = 0;\n    for (int t = 0; t < n; t++) {\n"
     "        const float *p = A + j;\n        A[t] = p[1];\n        j += 1;\n    }\n",
     5, 22, "offsets by 'j', which changes"),
    ("not-an-offset", "    float x = 1.0f;\n    float *p = &x;\n    A[0] = *p;\n", 4, 12,
     "only an offset of an array parameter"),
    ("reinterpreted", "    int *p = (int *)(A + n);\n    A[0] = p[0];\n", 3, 10,
     "only an offset of an array parameter"),
    ("passed-on", "    const float *p = A + n;\n    A[0] = f(p);\n", 4, 14,
     "local pointer 'p' is used other than by indexing it"),
    ("uninitialized", "    float *p;\n    A[0] = 1.0f;\n", 3, 12, "has no initializer"),
    ("assigned-twice", "    float *p;\n    p = A + 1;\n    p = A + 2;\n    A[0] = p[0];\n", 3,
     12, "has no initializer and is not assigned exactly once"),
    ("assigned-in-an-expression", "    float *p;\n    float *q = (p = A + 1);\n    A[0] = q[0];\n",
     3, 12, "not assigned exactly once, as a statement of its own"),
    ("used-before-its-assignment", "    float *p;\n    if (n > 2) {\n        A[0] = p[0];\n"
     "        p = A + 1;\n    }\n", 5, 16, "local pointer 'p' is used where its assignment "
     "(line 6) may not have run"),
    ("assigned-in-a-branch", "    float *p;\n    if (n > 2) {\n        p = A + 1;\n    }\n"
     "    A[0] = p[0];\n", 7, 12, "may not have run"),
    ("offset-changes-after-assignment", "    int j = 0;\n    float *p;\n    p = A + j;\n"
     "    j = 2;\n    A[1] = p[0];\n", 4, 12, "offsets by 'j', which changes after"),
]


@pytest.mark.parametrize("what, body, line, col, message", POINTER_ERRORS,
                         ids=[e[0] for e in POINTER_ERRORS])
def test_local_pointers_that_are_not_fixed_offsets_are_located_errors(what, body, line, col,
                                                                    message):
    helper = what in ("passed-on", "moved-then-passed-on")
    source = ("__device__ float f(const float *x) { return x[0]; }\n" if helper
              else "") + "__global__ void k(float *A, int n)\n{\n" + body + "}\n"
    if helper:
        line += 1
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="k.cu", verify=False, arch="none")
    assert (info.value.line, info.value.col) == (line, col)
    assert message in info.value.message


@pytest.mark.parametrize("what, filename, source, line, col, message", UNSUPPORTED,
                         ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_constructs_are_located_errors(what, filename, source, line, col, message):
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename=filename, verify=False, arch="none")
    err = info.value
    assert (err.file, err.line, err.col) == (filename, line, col)
    assert message in err.message
    assert str(err).startswith(f"{filename}:{line}:{col}: error: ")


@pytest.mark.parametrize("what", ["goto", "asm", "recursion", "pointer-arith", "atomic-opencl",
                                  "dynamic-parallelism", "cooperative-groups", "warp-shuffle"])
def test_unsupported_constructs_are_unsupported_construct(what):
    _, filename, source, *_ = next(u for u in UNSUPPORTED if u[0] == what)
    with pytest.raises(UnsupportedConstruct):
        parse_module(filename, source, {})


def test_cuda_atomic_on_64_bit_integers_is_reported_as_unsupported():
    with pytest.raises(NaiveoptError) as info:
        parse_module("k.cu", "__global__ void k(unsigned long long *A)\n{\n"
                     "    atomicAdd(&A[0], 1ull);\n}\n", {})
    assert (info.value.line, info.value.col) == (3, 5)
    assert info.value.message == ("'atomicAdd' on unsigned long long elements is not supported "
                                  "(32-bit integers, float and double)")


def test_file_without_kernels_is_an_error():
    with pytest.raises(NaiveoptError, match="no kernel"):
        parse_module("k.cu", "__device__ float f(float x)\n{\n    return x;\n}\n", {})


def test_binary_input_is_an_error():
    with pytest.raises(NaiveoptError, match="binary") as info:
        parse_module("k.cu", "__global__\0void", {})
    assert (info.value.line, info.value.col) == (1, 1)


def test_kernel_must_return_void():
    with pytest.raises(NaiveoptError) as info:
        parse_module("k.cu", "__global__ int k(float *A)\n{\n    return 0;\n}\n", {})
    assert (info.value.file, info.value.line) == ("k.cu", 1)


def test_front_passes_leave_tree_in_cuda_terms_for_opencl_input():
    module = parse_module("k.cl", OPENCL_BUILTINS, {})
    ctx = PassContext(module, "cuda", "none")
    run_passes(front_passes(), ctx)
    proc = module.procedures[0]
    assert proc.dialect == "cuda"
    assert set(proc.predefined_names) == {"idx", "tidx", "bidx", "blockDimX"}
    assert proc.pragma.global_dim == ("N", "1")
    tile = [m for m in proc.memory_expressions if m.array == "tile"]
    assert [m.space for m in tile] == ["shared", "shared"]
    assert [m.kind for m in tile] == ["write", "read"]


def test_templates_naiveopt_cannot_instantiate_are_rejected_with_their_location():
    """A kernel template the file never instantiates (naiveopt cannot choose its arguments);
    a __device__ function template is one helper per instance called."""
    with pytest.raises(NaiveoptError) as info:
        parse_module("k.cu", "template <typename T>\n__global__ void k(T *A) { A[0] = 1; }\n",
                     {})
    assert info.value.line == 2
    assert "kernel template 'k' is never instantiated in this file" in info.value.message
    module = parse_module("k.cu", "template <typename T>\n__device__ T sq(T x) { return x * x; "
                          "}\n__global__ void k(float *A) { A[0] = sq(A[1]); }\n", {})
    assert [h.decl.name for h in module.helpers] == ["sq_float"]


def test_errors_in_a_local_header_are_reported_at_the_include_line(tmp_path):
    """A header beside the kernel is read; an error inside it is reported where the kernel
    includes it (the user's file is the one to fix)."""
    (tmp_path / "bad.h").write_text("#define SCALE (2.0f *\n")
    source = "// kernel\n#include \"bad.h\"\n__global__ void k(float *A) { A[0] = SCALE 1.0f); }\n"
    (tmp_path / "k.cu").write_text(source)
    module = parse_module(str(tmp_path / "k.cu"), source, {})
    assert "2.0f" in to_c(module.procedures[0].func)
    (tmp_path / "bad.h").write_text("typedef float;;; int x = ;\n")
    with pytest.raises(NaiveoptError) as info:
        parse_module(str(tmp_path / "k.cu"), source, {})
    assert (info.value.line, info.value.col) == (2, 1)
    assert "without system or SDK headers" in info.value.message


def test_scalar_typedef_keeps_its_name_in_the_output(tmp_path):
    """``typedef float real;`` used for parameters and locals: the output keeps the user's
    ``real`` and declares it (it once wrote ``real`` without the typedef, and nvcc failed)."""
    import naiveopt

    source = """typedef float real;
__global__ void mvc89(const real *a, const real *x, real *y, int n)
{
    int i, k;
    real s;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s = 0.0f;
    for (k = 0; k < n; k++) s += a[i * n + k] * x[k];
    y[i] = s;
}
#pragma naiveopt sizes(n=67) threads(n) array(a, n, n) array(x, n) array(y, n)
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename=str(tmp_path / "c89.cu"), target=target)
        assert "typedef float real;" in result.code, result.code
        assert re.search(r"\breal s\b", result.code) and "const real *" in result.code
        assert result.kernels[0].verification.status == "passed", result.kernels[0].verification


def test_a_cuda_typedef_named_like_an_opencl_type_is_the_type_it_names():
    """``typedef float uchar;`` in a CUDA file (OpenCL's uchar is no CUDA type): its arrays
    are float. They were read as OpenCL's ``unsigned char`` in both outputs and in the naive
    kernel verification ran, so the wrong element type was verified."""
    import naiveopt

    source = """typedef float uchar;
__global__ void scale(const uchar *in, uchar *out, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * s;
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="u.cu", target=target)
        assert "unsigned char" not in result.code
        assert re.search(r"const float \*in, (__global )?float \*out", result.code), result.code
        assert result.kernels[0].verification.status == "passed"


SIZEOF_PITCHED_CU = """\
typedef float real;
__global__ void MatAddPitch(const real *A, const real *B, real *C, size_t pitch, int width,
                            int height)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    size_t ld = pitch / sizeof(real);
    if (r < height && c < width)
        C[r * ld + c] = A[r * ld + c] + B[r * ld + c] + sizeof *A + sizeof(double2);
}
"""


def test_sizeof_is_the_size_the_compile_gives():
    """``pitch / sizeof(float)``, the CUDA guide's pitched rows (a probe's kernel was
    rejected: 'sizeof/alignof are not supported in kernels'): the size as an unsigned long
    literal both dialects read alike, so the index analysis sees the constant."""
    import naiveopt

    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(SIZEOF_PITCHED_CU, filename="pitch.cu", target=target)
        assert "size_t ld = pitch / 4ul;" in result.code, result.code
        assert "+ 4ul + 16ul;" in result.code
        assert result.kernels[0].verification.status == "passed", \
            result.kernels[0].verification.detail


DEFAULT_ARGUMENTS_CU = """\
__device__ float leaky(float z, float slope = 0.01f)
{
    return z > 0.0f ? z : slope * z;
}
template <typename scalar_t>
__device__ scalar_t clipped(scalar_t z, scalar_t hi = 6)
{
    return z < hi ? z : hi;
}
__global__ void act(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = leaky(x[i]) + clipped(x[i]) + clipped(x[i], 2.0f);
}
"""


def test_default_arguments_of_device_functions_are_passed():
    """PyTorch's LLTM tutorial and activation helpers declare defaults (``float slope =
    0.01f``): the call that leaves one out passes the default (it was 'unsupported
    expression', without a location; a template's 'redefinition of default argument')."""
    import naiveopt

    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(DEFAULT_ARGUMENTS_CU, filename="act.cu", target=target)
        assert result.kernels[0].verification.status == "passed", \
            result.kernels[0].verification.detail
        assert "leaky(x[i], 0.01f)" in result.code and "clipped_float(x[i], 6)" in result.code
        assert "slope = " not in result.code        # OpenCL has no default arguments


def test_a_double_precision_function_of_mixed_arguments_is_promoted():
    """``fmax(0.0, z)`` of a float z: nvcc (C++'s <cmath>) promotes z to double, libclang
    with naiveopt's declarations found the call ambiguous; the promotion is written out, as
    OpenCL's overloads need, and the OpenCL output enables fp64 for it."""
    import naiveopt

    source = """\
__global__ void relu_like(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float z = x[i];
        y[i] = fmax(0.0, z) + fmin(0.0, 0.5 * z) + fmaxf(z, 0.25f) + fmax(z, z);
    }
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="relu.cu", target=target)
        assert result.kernels[0].verification.status == "passed"
        assert "fmax(0.0, (double)z) + fmin(0.0, 0.5 * z)" in result.code
        assert "fmax(z, z)" in result.code                      # float's own overload
        if target == "opencl":
            assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in result.code


def test_a_size_mentioned_in_a_macro_body_stays_a_parameter():
    """`-D N=64` on strsm.cu (an `int N` parameter that `#define L_AT(i, k) L[(i) * N + (k)]`
    mentions) was passed to the preprocessor and rewrote the parameter to `int 64`: the
    kernel no longer compiled (found by the GPU kit's PoCL rehearsal)."""
    from naiveopt.frontend import macro_defines

    strsm = open(os.path.join(KERNELS_DIR, "strsm.cu")).read()
    assert macro_defines(strsm, {"N": "64", "M": "3"}) == {}
    body_only = "#define AT(i, j) A[(i) * W + (j)]\n__global__ void f(float *A) { A[0] = AT(1, 2); }"
    assert macro_defines(body_only, {"W": "4"}) == {"W": "4"}
    guarded = "#ifndef N\n#define N 4\n#endif\n__global__ void f(float *A, int n) { A[N] = 1; }"
    assert macro_defines(guarded, {"N": "8", "n": "3"}) == {"N": "8"}
    tested = "#if BLOCK > 16\n#endif\n__global__ void f(float *A, const int BLOCK) {}"
    assert macro_defines(tested, {"BLOCK": "32"}) == {"BLOCK": "32"}
    result = naiveopt.optimize(strsm, filename=os.path.join(KERNELS_DIR,
                                                            "strsm.cu"), defines={"N": "64"})
    assert "int N" in result.code and result.verified


def test_library_calls_get_their_implicit_float_conversions_written_out():
    """``fmaxf(acc, 1.5L * x)`` passes a float in CUDA; OpenCL's ``fmax(float, double)`` is
    an ambiguous overload no compiler builds (fuzz seed 20271125, cases 261 and 299): the
    conversion C++ makes is written as a cast, and the kernel verifies."""
    import naiveopt

    source = """
#pragma naiveopt sizes(n=300) array(x, n) array(y, n)
__global__ void k(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = fmaxf(x[i], 15E-1L * x[i] + 0.5);
        y[i] = acc + sqrtf(i) + fminf(acc, i % 7);
    }
}
"""
    result = naiveopt.optimize(source, filename="k.cu", target="opencl")
    assert result.verified, result.kernels[0].verification.detail
    assert "fmax(x[i], (float)(" in " ".join(result.code.split())
    assert "sqrt((float)" in result.code


NAMED_CONSTANTS_CU = """const int TILE = 16;
static const unsigned ROWS = 4;   // rows a thread covers
constexpr float SCALE = 2;
const int n_host = 1024;
__global__ void k(float *A, const float *B, int N)
{
    __shared__ float t[TILE * ROWS];
    int i = blockIdx.x * TILE + threadIdx.x;
    t[threadIdx.x] = B[i % N];
    __syncthreads();
    if (i < N)
        A[i] = SCALE / 4 * t[threadIdx.x];
}
void host(void) { int blocks = n_host / TILE; (void)blocks; }
"""


def test_named_constants_read_by_device_code_become_macros():
    """nvcc lets device code read a const scalar host variable initialized by a constant
    expression (the NVIDIA blog's ``const int TILE_DIM = 32;``): naiveopt reads each such
    line as the macro it stands for, in place, its type kept by a cast (SCALE / 4 is a float
    division, 0.5); a constant only host code reads stays as written."""
    from naiveopt.frontend import parse_unit

    unit = parse_unit("k.cu", NAMED_CONSTANTS_CU)
    lines = unit.source.split("\n")
    assert lines[0] == "#define TILE 16"
    assert lines[1] == "#define ROWS ((unsigned)(4))   // rows a thread covers"
    assert lines[2] == "#define SCALE ((float)(2))"
    assert lines[3] == "const int n_host = 1024;"
    assert unit.fixed["TILE"] == 16 and unit.fixed["ROWS"] == 4
    result = naiveopt.optimize(NAMED_CONSTANTS_CU, filename="k.cu")
    (kernel,) = result.kernels
    assert kernel.verification.status == "passed", kernel.verification.detail
    assert "#define TILE 16" in result.code and "const int n_host = 1024;" in result.code


@pytest.mark.parametrize("source, message", [
    # not const: mutable host state the device cannot read
    ("int scale = 2;\n__global__ void k(float *A) { A[0] = scale; }\n",
     "host variable 'scale' is read in device code"),
    # the name is also a parameter: a macro would replace it there, so the line stays
    ("const int N = 8;\n__global__ void k(float *A, int n) { A[0] = N; }\n"
     "void h(int N) { (void)N; }\n", "host variable 'N' is read in device code"),
    # a member of that name
    ("const int x = 8;\nstruct P { int x; };\n__global__ void k(float *A) { A[0] = x; }\n",
     "host variable 'x' is read in device code"),
    # not a constant expression
    ("int f(void);\nconst int N = f();\n__global__ void k(float *A) { A[0] = N; }\n",
     "host variable 'N' is read in device code"),
])
def test_named_constants_a_macro_would_not_stand_for_stay_errors(source, message):
    with pytest.raises(NaiveoptError, match=re.escape(message)):
        parse_module("k.cu", source)


CXX_CASTS_CU = """#pragma naiveopt array(x, n4 * 4)
__global__ void scale4(float *x, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<float4*>(x)[i];
        v.x *= s; v.y *= s; v.z *= s; v.w *= s;
        reinterpret_cast<float4*>(x)[i] = v;
    }
}
__global__ void toint(const float *x, int *y, int n)
{
    int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = static_cast<int>(x[i] * 3.5f) + static_cast<int>(i / 2);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_cxx_named_casts_and_vector_pointer_casts_verify(target):
    """C++'s static_cast / reinterpret_cast convert as the C cast of the same type; a cast of
    a __global pointer keeps its address space in OpenCL (``(__global float4 *)x``: an
    unqualified pointer is __private there, and PoCL refused the cast), and a store through
    the cast counts as a write of x, which verification compares."""
    result = naiveopt.optimize(CXX_CASTS_CU, filename="k.cu", target=target)
    for kernel in result.kernels:
        assert kernel.verification.status == "passed", (kernel.name,
                                                        kernel.verification.detail)
    # the cast's vector access is read as its elements and written as one again
    # (frontend/vector_casts.py, vectorize)
    if target == "opencl":
        assert "vload4(0, &x[4 * i])" in result.code and "vstore4(v, 0, &x[4 * i]);" in \
            result.code
    else:
        assert "naiveopt_store_float4(&x[4 * i], v);" in result.code
    # a cast naiveopt leaves as written (an int array read as float4) keeps the address
    # space of the pointer it converts in OpenCL
    kept = naiveopt.optimize(CAST_KEPT_CU, filename="k.cu", target=target)
    (kernel,) = kept.kernels
    assert kernel.verification.status == "passed", kernel.verification.detail
    assert ("((__global const float4 *)m)[i]" if target == "opencl"
            else "((const float4 *)m)[i]") in kept.code


CAST_KEPT_CU = """#pragma naiveopt array(m, n * 4) array(y, n)
__global__ void bits(const int *m, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = reinterpret_cast<const float4 *>(m)[i].x;
}
"""


def test_cxx_initializers_auto_and_launch_bounds_are_read():
    """``float acc{0.0f};`` is ``float acc = 0.0f;`` (``int n{};`` is 0), ``auto`` takes
    the initializer's type, ``__launch_bounds__`` is accepted (kept in a CUDA output whose
    launch did not change, left out of OpenCL: test_launch_contracts)."""
    source = """__forceinline__ __device__ float sq(float v) { return v * v; }
__global__ void __launch_bounds__(256) k(float *y, const float *x, int n)
{
    const auto i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc{0.0f};
    int zero{};
    if (i < n) { acc += sq(x[i]) + zero; y[i] = acc; }
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="k.cu", target=target)
        (kernel,) = result.kernels
        assert kernel.verification.status == "passed", kernel.verification.detail
        assert "float acc = 0.0f;" in result.code and "int zero = 0;" in result.code
        kept = "__global__ void __launch_bounds__(256) k(" in result.code
        assert kept == (target == "cuda" and not kernel.passes), (target, kernel.passes)


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_local_table_with_an_initializer_is_kept(target):
    """Filter weights as a local table (``const float w[3] = {0.25f, 0.5f, 0.25f};``) were
    "unsupported expression (init_list_expr)": the brace list is kept as written, and the
    kernel verifies, also where a pass vectorizes its loop."""
    source = """__global__ void blur3(float *out, const float *in, int n)
{
    const float w[3] = {0.25f, 0.5f, 0.25f};
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        float s = 0.0f;
        for (int k = -1; k <= 1; ++k)
            s += w[k + 1] * in[i + k];
        out[i] = s;
    }
}
"""
    for options in ({}, {"vectorize": "always"}):
        result = naiveopt.optimize(source, filename="k.cu", target=target, options=options)
        (kernel,) = result.kernels
        assert kernel.verification.status == "passed", kernel.verification.detail
        assert "const float w[3] = {0.25f, 0.5f, 0.25f};" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_named_constant_sizing_constant_data_becomes_a_macro(target):
    """``const int CW = 8;`` read only by a __constant__ table's extent (no kernel names
    it): the OpenCL output once said "use of undeclared identifier 'CW'" (a fuzz case)."""
    source = """const int CW = 4;
__constant__ float CT[CW] = {0.5f, 1.0f, 2.0f, 4.0f};
__global__ void k(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = CT[i % 4] * x[i];
}
"""
    result = naiveopt.optimize(source, filename="k.cu", target=target)
    (kernel,) = result.kernels
    assert kernel.verification.status == "passed", kernel.verification.detail
    assert "#define CW 4" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_row_pointer_declared_in_a_grid_stride_loop_body_is_an_offset(target):
    """The OpenCL SDK's MatVecMulUncoalesced0: ``const float *row = M + y * width;`` inside
    ``for (y = id; y < height; y += size)``. y changes in the loop's increment, outside the
    block that declares the pointer, so each iteration's pointer sees its own y: an offset
    (was refused as 'offsets by y, which changes after the pointer is set')."""
    source = """\
__kernel void mv(const __global float *M, const __global float *V, uint width, uint height,
                 __global float *W)
{
    for (uint y = get_global_id(0); y < height; y += get_global_size(0)) {
        const __global float *row = M + y * width;
        float dot = 0;
        for (uint x = 0; x < width; ++x)
            dot += row[x] * V[x];
        W[y] = dot;
    }
}
"""
    result = naiveopt.optimize(source, filename="mv.cl", target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    assert "M[y * width + x]" in result.code or "coalesce" in result.kernels[0].passes


# the corpus's C89 kernel (tests/corpus/tb_c89_point_weights.cu), and its OpenCL form
with open(os.path.join(os.path.dirname(__file__), "corpus", "tb_c89_point_weights.cu"),
          encoding="utf-8") as _fh:
    _C89_CUDA = _fh.read()
C89_POINTERS = {"cuda": _C89_CUDA, "opencl": """\
__kernel void dist(__global const float2 *pts, __global const float *w, __global float *out,
                   uint n, int k, float qx, float qy)
{
    uint i;
    int t;
    __global const float2 *p;
    __global const float *row;
    float dx, dy, s;
    i = get_global_id(0);
    if (i < n) {
        p = pts + i;
        dx = (*p).x - qx;
        dy = p[0].y - qy;
        s = 0.0f;
        for (t = 0; t < k; t++) {
            row = w + t * n;
            s += row[i];
        }
        out[i] = s * sqrt(dx * dx + dy * dy);
    }
}
"""}


@pytest.mark.parametrize("dialect, target", [("cuda", "cuda"), ("cuda", "opencl"),
                                             ("opencl", "opencl")])
def test_a_c89_pointer_declared_first_and_set_once_is_an_offset(dialect, target):
    """C89 declares every local at the top and sets it later (``const point_t *p; ... p =
    pts + i;``), also in a loop body (``row = w + t * n;``, set anew each iteration before
    its use): the assignment stands for the initializer, and the file verifies without
    annotations (was 'local pointer 'p' has no initializer')."""
    source = C89_POINTERS[dialect]
    name = "dist.cu" if dialect == "cuda" else "dist.cl"
    result = naiveopt.optimize(source, filename=name, target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    assert " p =" not in result.code and " row =" not in result.code


def test_opencl_double_math_keeps_double_precision_in_cuda():
    """``mad``/``fma``/``rsqrt`` of doubles were written fmaf/rsqrtf in CUDA, which round
    their arguments to float (verification, which runs the OpenCL form, could not see it):
    the generic, overloaded names keep a double double."""
    source = """\
__kernel void k(__global const double *x, __global double *y, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = mad(x[i], 3.0, y[i]) + fma(x[i], x[i], 1.0) + rsqrt(x[i] + 2.0);
}
"""
    result = optimize(source, "k.cl", target="cuda")
    code = code_only(result.code)
    assert "fma(x[i], 3.0, y[i]) + fma(x[i], x[i], 1.0) + rsqrt(x[i] + 2.0)" in code
    assert "fmaf" not in code and "rsqrtf" not in code


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_opencl_vector_math_compiles_as_cuda(tmp_path):
    """OpenCL applies math built-ins and operators to vectors per component; the CUDA output
    brings the overloads its kernels call (ir/vector.cuda_operators) and compiles."""
    from conftest import compile_cuda

    source = """\
__kernel void vm(__global const float4 *x, __global float4 *y, __global const double2 *d,
                 __global double2 *e, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float4 v = sqrt(fabs(x[i])) + fmax(x[i], y[i]);
        y[i] = mad(v, x[i], y[i]) - native_exp(-v) * 0.5f;
        y[i] *= 2.0f;
        e[i] = fma(d[i], d[i], e[i]) + sqrt(d[i]);
    }
}
"""
    result = optimize(source, "vm.cl", target="cuda")
    assert result.verified, result.kernels[0].verification.detail
    assert "__device__ __forceinline__ float4 sqrt(float4 a)" in result.code
    assert "__device__ __forceinline__ double2 fma(double2 a, double2 b, double2 c)" in \
        result.code
    path = tmp_path / "vm.cu"
    path.write_text(result.code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]


VLOAD_CL = """\
__kernel void vs(__global const float *a, __global const float *b, __global float *c,
                 __global const int *m, __global int *o, int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        __global const float *row = b + 4 * i;
        float4 s = vload4(i, a) + vload4(0, row) + vload4(0, &a[4 * i]);
        vstore4(s, i, c);
        vstore2(vload2(i, m) * 3, i, o);
        float3 t = vload3(i, a);
        c[4 * n4 + i] = t.x + t.y + t.z;
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_vload_vstore_are_read_as_their_elements(target, tmp_path):
    """OpenCL's vloadN/vstoreN were rejected; the front end reads them as the N scalar
    accesses they make (so extents, coalescing and verification see them), and vectorize
    writes each whole group as one vector access again (vload3 stays three loads: no
    vector form). Verified without pragmas; the CUDA output compiles."""
    from conftest import compile_cuda

    result = naiveopt.optimize(VLOAD_CL, filename="vs.cl", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    restored = [r.message for r in result.remarks
                if r.pass_name == "vectorize" and r.kind == "applied"]
    assert restored and "6 vector access(es) as the input wrote them" in restored[0], restored
    if target == "opencl":
        assert result.code.count("vload4(") == 3 and "vload2(" in result.code
        assert "vstore4(s, 0, &c[4 * i])" in result.code and "vstore2(" in result.code
        assert "(float3)(a[3 * i], a[3 * i + 1], a[3 * i + 2])" in result.code
    else:
        assert result.code.count("naiveopt_load_float4(") >= 3
        assert "naiveopt_store_int2(" in result.code
        path = tmp_path / "vs.cu"
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("body,message", [
    ("c[i] = (vstore4(v, i, c), 1.0f);", "'vstore4' inside an expression is not supported"),
    ("float4 w = vload4(i++, a); c[0] = w.x;", "the offset of 'vload4' has side effects"),
    ("float4 w = vload4(0, (i > 0 ? a : c)); c[0] = w.x;", "'vload4' through this pointer"),
    ("float4 w = vload4(0, a + i++); c[0] = w.x;", "the pointer of 'vload4' has side effects"),
])
def test_opencl_vload_forms_naiveopt_cannot_read_are_located_errors(body, message):
    source = ("__kernel void k(__global float *a, __global float *c) {\n"
              f"    int i = get_global_id(0); float4 v = (float4)(1.0f);\n    {body}\n}}\n")
    with pytest.raises(NaiveoptError) as err:
        optimize(source, "k.cl")
    assert message in str(err.value) and ":3:" in str(err.value), str(err.value)


VECTOR_CASTS_CU = """\
__global__ void vc(float *x, const float *y, const int *m, int *o, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4 *>(y)[i];
        float a = ((const float2 *)(y + 4 * n4))[i].y + reinterpret_cast<const float2 *>(
            &y[6 * n4 + 2 * i])->x;
        reinterpret_cast<float4 *>(x)[i] = make_float4(v.x * s, v.y, v.z, v.w + a);
        ((float4 *)x)[n4 + i].y = a;
        ((int2 *)o)[i] = ((const int2 *)m)[i];
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_vector_pointer_casts_are_read_as_their_elements(target, tmp_path):
    """A vector read or store through a pointer cast (``reinterpret_cast<float4 *>(x)[i]``,
    ``((float2 *)(y + e))[i].y``, ``->x``) left the array's extent unknown ("used in a cast,
    not only indexed"): no verification without a pragma. The front end reads each as its
    elements (frontend/vector_casts.py); the kernel verifies unannotated, whole vectors are
    one access again, and the CUDA output compiles."""
    from conftest import compile_cuda

    result = naiveopt.optimize(VECTOR_CASTS_CU, filename="vc.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "cast" not in k.verification.detail
    restored = [r.message for r in result.remarks
                if r.pass_name == "vectorize" and r.kind == "applied"]
    assert restored and "4 vector access(es) as the input wrote them" in restored[0], restored
    assert "y[4 * n4 + 2 * i + 1]" in result.code and "y[6 * n4 + 2 * i]" in result.code
    assert "x[4 * (n4 + i) + 1] = a;" in result.code
    if target == "cuda":
        path = tmp_path / "vc.cu"
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]


MOVING_POINTERS_CU = """\
#pragma naiveopt array(A, n, n) array(x, n) array(y, n) array(z, n, n)
__global__ void rowsum(const float *A, const float *x, float *y, float *z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float *p = A + i * n;
        float *q = z;
        q += i * n;
        float s = 0.0f;
        for (int k = 0; k < n; k++) {
            s += *p * x[k];
            p++;
            *q++ = s;
            --q;
            q[0] = s;
            q += 1;
        }
        y[i] = s;
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_pointer_that_moves_is_an_element_offset(target):
    """Caffe's and PyTorch's im2col move a pointer through the output (``data_col_ptr +=
    height_col * width_col``) and were rejected ('assigned after its declaration'): such a
    pointer is a ptrdiff_t offset of its array, moved as it was (``*q++ = s`` is
    ``z[q++] = s``), and the kernel verifies (with its arrays' shapes, which a moving offset
    leaves to the pragma)."""
    result = naiveopt.optimize(MOVING_POINTERS_CU, filename="mp.cu", target=target)
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail
    for line in ("ptrdiff_t p = i * n;", "ptrdiff_t q = 0;", "q += i * n;", "A[p] * x[k]",
                 "p++;", "z[q++] = s;", "--q;", "z[q + 0] = s;", "q += 1;"):
        assert line in result.code, (line, result.code)


def test_a_pointer_moved_once_right_after_its_declaration_is_a_fixed_offset():
    """Caffe's ``const float* data_im_ptr = data_im; data_im_ptr += (c_im * height +
    h_offset) * width + w_offset;``: the two statements set one offset, so the reads through
    it are the array's at a known index (data_col_ptr, moved per tap, stays a moving one)."""
    source = open(os.path.join(os.path.dirname(__file__), "corpus",
                               "m_im2col_caffe.cu")).read()
    result = naiveopt.optimize(source, filename="im2col.cu", verify=False)
    assert "data_im_ptr" not in result.code
    assert "data_im[(c_im * height + h_offset) * width + w_offset +" in result.code


def test_caffes_im2col_is_accepted():
    source = open(os.path.join(os.path.dirname(__file__), "corpus",
                               "m_im2col_caffe.cu")).read()
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="im2col.cu", target=target)
        assert "ptrdiff_t data_col_ptr" in result.code
        assert result.kernels[0].verification.status == "passed", \
            result.kernels[0].verification.detail


def test_a_moved_pointer_used_other_than_by_a_vector_cast_is_still_an_error():
    """(A cast of ``x + 4`` to a vector of another element type reads no elements of x.)"""
    source = ("__global__ void k(const float *x, float *o)\n{\n"
              "    o[0] = reinterpret_cast<const int4 *>(x + 4)[0].x;\n}\n")
    with pytest.raises(NaiveoptError, match="pointer arithmetic and address-of are not "
                                            "supported") as err:
        naiveopt.optimize(source, filename="k.cu")
    assert ":3:" in str(err.value)


def test_vector_casts_in_a_helper_and_a_store_under_a_bare_if():
    """The helper's cast is read as its element too (inlined afterwards), and a store that is
    an if's single statement is split like one in a block."""
    source = """\
__device__ float second(const float *p, int i) { return reinterpret_cast<const float2 *>(p)[i].y; }
__global__ void k(const float *x, float *o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (i > 2)
            reinterpret_cast<float2 *>(o)[i] = make_float2(second(x, i), 1.0f +
                reinterpret_cast<const float2 *>(x + max(0, i - 3))->x);
    }
}
"""
    result = naiveopt.optimize(source, filename="k.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "x[2 * i + 1]" in result.code and "x[max(0, i - 3)]" in result.code
    assert "naiveopt_store_float2(&o[2 * i], vector_value);" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_default_constructed_vector_local_is_an_uninitialized_declaration(target):
    """``float4 r;`` in C++ calls float4's implicit default constructor, which was "constructor
    call 'float4' is not supported"; it leaves the vector uninitialized, as C's declaration
    does (llm.c-style GELU over a float4 view of the arrays, size_t ids, a typedef)."""
    source = """\
typedef float floatX;
__global__ void gelu4(floatX *out, const floatX *inp, size_t n4)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float4 v = reinterpret_cast<const float4 *>(inp)[i];
    float4 r;
    r.x = 0.5f * v.x * (1.0f + tanhf(0.79788456f * v.x));
    r.y = v.y; r.z = v.z * 2.0f; r.w = -v.w;
    reinterpret_cast<float4 *>(out)[i] = r;
}
"""
    result = naiveopt.optimize(source, filename="g.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "float4 r;" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_vector_initialized_by_braces(target):
    """GPU Gems' n-body: ``float3 acc = {0.0f, 0.0f, 0.0f};`` was "unsupported expression
    (init_list_expr)"; a brace list is the vector's make_ call, the components it leaves
    out zero (``{0}``, ``{}``), and a float #define keeps its text (``0.01f``, not
    ``0.009999999776482582f``)."""
    source = """\
#define EPS2 0.01f
__device__ float3 pull(float4 bi, float4 bj, float3 ai)
{
    float3 r = {bj.x - bi.x, bj.y - bi.y, bj.z - bi.z};
    float s = bj.w / sqrtf(r.x * r.x + r.y * r.y + r.z * r.z + EPS2);
    ai.x += r.x * s; ai.y += r.y * s; ai.z += r.z * s;
    return ai;
}
__global__ void forces(const float4 *x, float4 *a, int2 *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 acc = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n; j++)
        acc = pull(x[i], x[j], acc);
    float4 out = {acc.x, acc.y};
    int2 k{};
    k.y = i;
    out.w = 1.0f;
    a[i] = out;
    c[i] = k;
}
"""
    result = naiveopt.optimize(source, filename="nb.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    code = " ".join(result.code.split())
    if target == "cuda":
        assert "float3 acc = make_float3(0.0f, 0.0f, 0.0f);" in code
        assert "float4 out = make_float4(acc.x, acc.y, 0.0f, 0.0f);" in code
        assert "int2 k = make_int2(0, 0);" in code
    else:
        assert "float4 out = (float4)(acc.x, acc.y, 0.0f, 0.0f);" in code
    assert "+ 0.01f" in code


def test_launch_bounds_before_the_kernel_head_bound_its_block():
    """The CUDA samples write ``__launch_bounds__(128)`` on the line before ``__global__``:
    it was outside the kernel's extent, so the output dropped it, and the naive block of 256
    threads was more than it allows (the launcher's launch would fail)."""
    source = """\
#define THREADS 64
__launch_bounds__(128)
__global__ void scale(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= 2.0f;
}
// was __launch_bounds__(32)
__global__ void __launch_bounds__(THREADS) grid2(float *a, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) a[y * w + x] += 1.0f;
}
"""
    module = parse_module("lb.cu", source, {})
    assert [(p.launch_bounds, p.max_threads) for p in module.procedures] == \
        [("128", 128), ("THREADS", 64)]
    result = naiveopt.optimize(source, filename="lb.cu", opt=False)
    assert "__global__ void __launch_bounds__(128) scale" in " ".join(result.code.split())
    blocks = {k.name: k.geometry.block[:2] for k in result.kernels}
    assert blocks["scale"] == (128, 1)
    x, y = blocks["grid2"]
    assert x * y <= 64 and x >= 16, blocks
    assert result.verified


def test_mad24_indices_are_products():
    """SDK OpenCL kernels index rows with ``mad24(r, cols, c)`` (CUDA ``__mul24``): read as
    ``r * cols + c`` (exact wherever mul24 is defined, both operands in 24 bits), the access
    has an extent and a stride, so the kernel verifies unannotated and is staged; it was
    "the index of A[__mul24(r, cols) + c] depends on a function call"."""
    source = """\
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     const int rows, const int cols)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c)
        sum += A[mad24(r, cols, c)] * x[mul24(c, 1)];
    y[r] = sum;
}
"""
    result = naiveopt.optimize(source, filename="mv.cl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "coalesce" in k.passes, k.passes


def test_arrows_and_chained_offsets_read_as_element_accesses():
    """``p->x`` of a local pointer into an array of structs, ``(a + e)->x``, and a
    dereference of a chain of offsets (``*(m + S * (i + 1) + t)``, ``*(m + i - 1)``) are
    accesses of the parameter at the summed offset."""
    src = """struct LL { float lat; float lng; };
__global__ void k(const struct LL *loc, float *m, float *d, int S, int t, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const struct LL *p = loc + i;
    if (i < n) {
        d[i] = p->lat + (loc + i + 1)->lng;
        *(m + S * (i + 1) + t) = *(m + i - 1) + 1.0f;
    }
}
"""
    module = parse_module("k.cu", src)
    body = code_only(to_c(module.procedures[0].body))
    # (an array of two-float structs is read as its floats: ir/structs.py)
    assert "d[i] = loc[i * 2] + loc[(i + 1) * 2 + 1];" in body, body
    assert "m[S * (i + 1) + t] = m[i - 1] + 1.0f;" in body, body


SINCOS = """__global__ void rotate(const float2 *in, float2 *out, const float *theta, double *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s, c;
        sincosf(theta[i] * 0.5f, &s, &c);
        out[i] = make_float2(c * in[i].x - s * in[i].y, s * in[i].x + c * in[i].y);
        sincos((double)theta[i], &d[2 * i], &d[2 * i + 1]);
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_sincos_is_read_as_the_sine_and_the_cosine_it_stores(target):
    """``sincosf(x, &s, &c)`` (physics and FFT code) was refused ('use of undeclared
    identifier'); it stores sinf(x) and cosf(x) through its pointers, locals or elements."""
    result = naiveopt.optimize(SINCOS, filename="rot.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    if target == "cuda":
        assert "sincos" not in result.code and "sinf(" in result.code
        assert re.search(r"d\[2 \* i\w* \+ 1\] = cos\(\(double\)theta\[i\w*\]\);", result.code)


OPENCL_SINCOS = """float turn(float a)
{
    float k;
    float s = sincos(a, &k);
    return s * k;
}

__kernel void rotate(__global const float2 *in, __global float2 *out,
                     __global const float *theta, __global float *cs, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float c, s;
        s = sincos(theta[i] * 0.5f, &c);
        float t = turn(theta[i]);
        out[i] = (float2)(c * in[i].x - s * in[i].y, s * in[i].x + c * in[i].y + t);
        sincos(theta[i], &c);
        cs[n + i] = c;
        c = sincos(c + theta[i], &c);
        cs[2 * n + i] = c;
        cs[3 * n + i] = sincos(cs[3 * n + i] * 0.25f, &cs[3 * n + i]);
    }
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_sincos_is_read_as_the_sine_it_returns_and_the_cosine_it_stores(target):
    """OpenCL's ``s = sincos(x, &c)`` (as a declaration's initializer, an assignment's right
    side, a statement of its own, in a helper) was refused ('pointer arithmetic and
    address-of'): it stores cos(x) before the statement, which reads sin(x) (``c =
    sincos(c + t, &c)`` leaves the sine, of the old c)."""
    result = naiveopt.optimize(OPENCL_SINCOS, filename="rot.cl", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "sincos" not in result.code
    assert re.search(r"c\w* = cos\([^;]* \* 0\.5f\);\s*s\w* = sin\([^;]* \* 0\.5f\);",
                     result.code), result.code
    assert re.search(r"k = cos\(a\);\s*float s = sin\(a\);", result.code)
    # an argument that reads what the call stores is named first
    assert re.search(r"float naiveopt_angle0\w* = c\w* \+ ", result.code), result.code


@pytest.mark.parametrize("where, text", [
    ("if", "if (sincos(theta[i], &c) > 0.0f) cs[i] = c;"),
    ("sum", "float u = 1.0f + sincos(theta[i], &c);"),
    ("pointer", "float u = sincos(theta[i], cs);"),
    ("impure", "float u = sincos(theta[i++], &c);"),
    ("for", "for (float u = sincos(theta[i], &c); u < 1.0f; u += 1.0f) cs[i] = u;"),
])
def test_opencl_sincos_elsewhere_is_a_located_error(where, text):
    source = OPENCL_SINCOS.replace("        sincos(theta[i], &c);", "        " + text)
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="rot.cl", verify=False, arch="none")
    assert info.value.line == 17, info.value
    assert "sincos" in info.value.message or "address-of" in info.value.message, \
        info.value.message


def test_sincos_of_an_argument_it_overwrites_reads_it_once():
    """``sincosf(a[i] * 0.5f, &a[i], &c[i])`` was read as ``a[i] = sinf(a[i] * 0.5f); c[i] =
    cosf(a[i] * 0.5f);``, the cosine of the new a[i]: the naive kernel verification runs is
    read the same way, so nothing caught it. The argument is named first."""
    src = """__global__ void rot(float *a, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        sincosf(a[i] * 0.5f, &a[i], &c[i]);
}
"""
    body = code_only(to_c(parse_module("k.cu", src).procedures[0].body))
    assert re.search(r"float naiveopt_angle0 = a\[i\] \* 0\.5f;\s*a\[i\] = sinf\("
                     r"naiveopt_angle0\);\s*c\[i\] = cosf\(naiveopt_angle0\);", body), body
    plain = code_only(to_c(parse_module("k.cu", src.replace("&a[i], &c[i]", "&c[n + i], "
                                                             "&c[i]")).procedures[0].body))
    assert "naiveopt_angle" not in plain and "c[n + i] = sinf(a[i] * 0.5f);" in plain, plain


def test_sincos_of_an_argument_that_changes_something_is_a_located_error():
    source = SINCOS.replace("sincosf(theta[i] * 0.5f,", "sincosf(theta[i++],")
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="rot.cu", verify=False, arch="none")
    assert (info.value.line, info.value.col) == (6, 17)
    assert "must change nothing" in info.value.message
