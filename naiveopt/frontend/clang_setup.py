"""libclang set-up: loading, the extra C entry points the Python bindings lack, the preludes.

libclang parses kernels without any SDK headers (they do not parse cleanly, see
shared/toolchain.md): a small prelude declares the CUDA built-ins, and OpenCL uses clang's own
builtin declarations plus a few typedefs.
"""
from __future__ import annotations

import ctypes
from functools import cache

import clang.cindex as ci

from ..errors import NaiveoptError

PRELUDE_NAME = "/naiveopt-prelude/prelude.h"

CUDA_PRELUDE = r"""
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline
#define __restrict__ __restrict
struct __nv_uint3 { unsigned int x, y, z; };
extern const __device__ struct __nv_uint3 threadIdx, blockIdx, blockDim, gridDim;
__device__ void __syncthreads(void);
__device__ void __threadfence(void);
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
__device__ float2 make_float2(float, float);
__device__ float4 make_float4(float, float, float, float);
__device__ int2 make_int2(int, int);
__device__ int4 make_int4(int, int, int, int);
__device__ int min(int, int);
__device__ int max(int, int);
__device__ unsigned int min(unsigned int, unsigned int);
__device__ unsigned int max(unsigned int, unsigned int);
__device__ float min(float, float);
__device__ float max(float, float);
__device__ int abs(int);
__device__ float fabsf(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float expf(float);
__device__ float exp2f(float);
__device__ float logf(float);
__device__ float log2f(float);
__device__ float powf(float, float);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float tanf(float);
__device__ float tanhf(float);
__device__ float floorf(float);
__device__ float ceilf(float);
__device__ float roundf(float);
__device__ float fminf(float, float);
__device__ float fmaxf(float, float);
__device__ float fmaf(float, float, float);
__device__ float __expf(float);
__device__ float sqrt(float); __device__ double sqrt(double);
__device__ float rsqrt(float);
__device__ float fabs(float); __device__ double fabs(double);
__device__ float exp(float); __device__ double exp(double);
__device__ float exp2(float); __device__ double exp2(double);
__device__ float log(float); __device__ double log(double);
__device__ float log2(float); __device__ double log2(double);
__device__ float pow(float, float); __device__ double pow(double, double);
__device__ float sin(float); __device__ double sin(double);
__device__ float cos(float); __device__ double cos(double);
__device__ float tan(float); __device__ double tan(double);
__device__ float tanh(float); __device__ double tanh(double);
__device__ float floor(float); __device__ double floor(double);
__device__ float ceil(float); __device__ double ceil(double);
__device__ float round(float); __device__ double round(double);
__device__ float fmin(float, float); __device__ double fmin(double, double);
__device__ float fmax(float, float); __device__ double fmax(double, double);
__device__ float fma(float, float, float); __device__ double fma(double, double, double);
__device__ int atomicAdd(int *, int); __device__ float atomicAdd(float *, float);
__device__ unsigned int atomicAdd(unsigned int *, unsigned int);
__device__ int atomicSub(int *, int); __device__ int atomicExch(int *, int);
__device__ float atomicExch(float *, float);
__device__ int atomicMin(int *, int); __device__ int atomicMax(int *, int);
__device__ int atomicCAS(int *, int, int);
__device__ float __logf(float);
__device__ float __fdividef(float, float);
"""

OPENCL_PRELUDE = r"""
#define __opencl_c_named_address_space_builtins 1
typedef unsigned int uint;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef unsigned long size_t;
typedef uint cl_mem_fence_flags;
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int int4 __attribute__((ext_vector_type(4)));
typedef uint uint2 __attribute__((ext_vector_type(2)));
typedef uint uint4 __attribute__((ext_vector_type(4)));
"""

#: Names of the paper's predefined thread ids. Kernels in the paper's macro style use them
#: without declaring them; the front end then defines them (in CUDA terms) before parsing.
PAPER_IDS: dict[str, str] = {
    "idx": "(blockIdx.x*blockDim.x+threadIdx.x)",
    "idy": "(blockIdx.y*blockDim.y+threadIdx.y)",
    "tidx": "threadIdx.x",
    "tidy": "threadIdx.y",
    "bidx": "blockIdx.x",
    "bidy": "blockIdx.y",
    "blockDimX": "blockDim.x",
    "blockDimY": "blockDim.y",
    "gridDimX": "gridDim.x",
    "gridDimY": "gridDim.y",
}
PAPER_IDS_OPENCL: dict[str, str] = {
    "idx": "((int)get_global_id(0))",
    "idy": "((int)get_global_id(1))",
    "tidx": "((int)get_local_id(0))",
    "tidy": "((int)get_local_id(1))",
    "bidx": "((int)get_group_id(0))",
    "bidy": "((int)get_group_id(1))",
    "blockDimX": "((int)get_local_size(0))",
    "blockDimY": "((int)get_local_size(1))",
    "gridDimX": "((int)get_num_groups(0))",
    "gridDimY": "((int)get_num_groups(1))",
}


def cuda_args(defines: dict[str, str]) -> list[str]:
    """Command-line flags that make libclang accept a CUDA kernel file without the SDK."""
    return ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
            "--cuda-gpu-arch=sm_90", "-Wno-unknown-cuda-version", "-include", PRELUDE_NAME,
            *[f"-D{k}={v}" for k, v in defines.items()]]


def opencl_args(defines: dict[str, str]) -> list[str]:
    """Flags for OpenCL C 1.2 with clang's builtin declarations instead of opencl-c.h."""
    return ["-x", "cl", "-cl-std=CL1.2", "-cl-no-stdinc", "-Xclang",
            "-fdeclare-opencl-builtins", "-include", PRELUDE_NAME,
            *[f"-D{k}={v}" for k, v in defines.items()]]


@cache
def _lib() -> ctypes.CDLL:
    """The loaded libclang with the operator-kind and evaluation entry points registered."""
    lib = ci.conf.lib
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    lib.clang_getBinaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lib.clang_getBinaryOperatorKindSpelling.restype = ci._CXString
    lib.clang_getUnaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lib.clang_getUnaryOperatorKindSpelling.restype = ci._CXString
    lib.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
    lib.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    return lib


def binary_operator(cursor: ci.Cursor) -> str:
    """The spelling of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursor ('+', '+=', ...)."""
    lib = _lib()
    kind = lib.clang_getCursorBinaryOperatorKind(cursor)
    return ci._CXString.from_result(lib.clang_getBinaryOperatorKindSpelling(kind))


def unary_operator(cursor: ci.Cursor) -> str:
    """The pycparser spelling of a UNARY_OPERATOR cursor ('p++' for postfix increment)."""
    lib = _lib()
    kind = lib.clang_getCursorUnaryOperatorKind(cursor)
    spelling = ci._CXString.from_result(lib.clang_getUnaryOperatorKindSpelling(kind))
    return {"PostInc": "p++", "PostDec": "p--", "PreInc": "++", "PreDec": "--"}.get(
        _UNARY_NAMES.get(kind, ""), spelling)


_UNARY_NAMES = {1: "PostInc", 2: "PostDec", 3: "PreInc", 4: "PreDec"}


def var_initializer(cursor: ci.Cursor) -> ci.Cursor | None:
    """The initializer expression of a VAR_DECL, or None (the bindings cannot tell otherwise)."""
    init = _lib().clang_Cursor_getVarDeclInitializer(cursor)
    if init is None or init.kind.is_invalid():
        return None
    init._tu = cursor._tu  # what Cursor.from_result would do; keeps children walkable
    return init


def evaluate(cursor: ci.Cursor) -> int | float | None:
    """Constant-fold an expression cursor (used for literals that come out of macros)."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == 1:  # CXEval_Int
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == 2:  # CXEval_Float
            return float(lib.clang_EvalResult_getAsDouble(res))
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


def parse(path: str, source: str, dialect: str, defines: dict[str, str]) -> ci.TranslationUnit:
    """Parse ``source`` (named ``path``) as CUDA or OpenCL; raise on the first error."""
    _lib()
    prelude = CUDA_PRELUDE if dialect == "cuda" else OPENCL_PRELUDE
    args = cuda_args(defines) if dialect == "cuda" else opencl_args(defines)
    index = ci.Index.create()
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        tu = index.parse(path, args=args, unsaved_files=[(path, source), (PRELUDE_NAME, prelude)],
                         options=options)
    except ci.TranslationUnitLoadError as exc:
        raise NaiveoptError(f"libclang could not parse the file ({exc})", path) from exc
    return tu


def first_error(tu: ci.TranslationUnit, path: str, source: str = ""
                ) -> NaiveoptError | None:
    """The first error diagnostic of a translation unit as a located NaiveoptError.

    An error inside a header the kernel includes is reported at the #include line: kernels are
    parsed without system or SDK headers, so the include itself is the problem."""
    for diag in tu.diagnostics:
        if diag.severity >= ci.Diagnostic.Error:
            loc = diag.location
            file = loc.file.name if loc.file else path
            if file == PRELUDE_NAME:
                file = path
            if file != path:
                for number, line in enumerate(source.splitlines(), start=1):
                    if line.lstrip().startswith("#") and "include" in line:
                        return NaiveoptError(
                            f"'{line.strip()}': naiveopt parses kernels without system or "
                            "SDK headers; remove the include", path, number,
                            line.index("#") + 1)
            return NaiveoptError(diag.spelling, file, loc.line, loc.column)
    return None
