"""The prelude: what kernel code may name without declaring it, in CUDA and in OpenCL C.

naiveopt parses kernels with libclang but without any system or SDK header: the CUDA headers
do not parse cleanly outside nvcc, and a kernel needs few of their names. Yet kernels as people
write them use those names all the time (``size_t`` ids, ``INFINITY``, ``FLT_MAX``, ``expf``,
``make_float2``, ``#include <math.h>``), and nvcc or an OpenCL compiler accepts them, so
naiveopt must too. This module declares them, for each dialect, in one place:

- a prelude that libclang reads before the kernel file (``-include``): the CUDA built-in
  variables, vector types and math library, the standard typedefs (``size_t``, ``int64_t``...,
  from ir/elements.py's table), the constants of <math.h>, <float.h> and <limits.h>, and enough
  of the CUDA runtime API and C library for host code around the kernels to parse; of the
  library, only the names the file uses (prelude_words: all of it made every parse slower);
- the headers that are read as empty files, since the prelude declares their names
  (``#include <cuda_runtime.h>``, ``<math.h>``, ``<float.h>``, ``<stdint.h>``...), and the
  out-of-scope headers whose include is an error naming the construct;
- which header the output needs for each constant or typedef name a kernel uses, so that the
  CUDA output includes it (OpenCL C has these names built in).

Every function declared here is a name the translations must know (passes/functional/
builtins.py: each CUDA function has an OpenCL form and each OpenCL built-in a CUDA one, or the
translation says it has none); tests/test_prelude.py holds the two tables to each other.
"""
from __future__ import annotations

import os
import re
from functools import cache

from ..errors import UnsupportedConstruct
from ..ir import cu_complex, helper_math
from ..ir.elements import STANDARD_TYPEDEFS

VIRTUAL_ROOT = "/naiveopt-prelude"
PRELUDE_NAME = f"{VIRTUAL_ROOT}/prelude.h"
#: Where the empty stand-ins of ignored headers live (searched first; system headers never).
INCLUDE_DIR = f"{VIRTUAL_ROOT}/include"

#: Headers whose names the prelude declares: an ``#include`` of one is read as an empty file.
IGNORED_HEADERS = (
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "device_launch_parameters.h",
    "device_functions.h", "math_functions.h", "vector_types.h", "vector_functions.h",
    "builtin_types.h", "driver_types.h", "math.h", "cmath", "float.h", "cfloat", "stdint.h",
    "cstdint", "inttypes.h", "cinttypes", "stddef.h", "cstddef", "limits.h", "climits",
    "stdio.h", "cstdio", "stdlib.h", "cstdlib", "string.h", "cstring", "stdbool.h", "time.h",
    "ctime", "assert.h", "cassert", "cuComplex.h",
)

#: Headers that bring in constructs naiveopt does not model: including one is an error that
#: names the construct (at the #include line).
OUT_OF_SCOPE_HEADERS = {
    "cooperative_groups.h": "cooperative groups",
    "cooperative_groups/reduce.h": "cooperative groups",
    "cooperative_groups/memcpy_async.h": "cooperative groups",
    "cuda/atomic": "atomics (libcu++ cuda::atomic)",
    "cuda/barrier": "asynchronous barriers (libcu++ cuda::barrier)",
    "cuda_pipeline.h": "asynchronous copies (cuda_pipeline.h)",
    "mma.h": "warp matrix operations (WMMA)",
    "cub/cub.cuh": "CUB block and warp primitives",
    "sm_30_intrinsics.h": "warp intrinsics",
}

#: Object-like constants the prelude defines: name -> (CUDA value, header that declares it
#: in a CUDA build). OpenCL C has all of them built in (the OpenCL prelude defines them for
#: parsing); the output keeps the name.
CONSTANTS: dict[str, tuple[str, str]] = {
    "INFINITY": ("__builtin_inff()", "math.h"),
    "NAN": ("__builtin_nanf(\"\")", "math.h"),
    "HUGE_VALF": ("__builtin_huge_valf()", "math.h"),
    "HUGE_VAL": ("__builtin_huge_val()", "math.h"),
    "M_E": ("2.718281828459045235360287471352662498", "math.h"),
    "M_LOG2E": ("1.442695040888963407359924681001892137", "math.h"),
    "M_LOG10E": ("0.434294481903251827651128918916605082", "math.h"),
    "M_LN2": ("0.693147180559945309417232121458176568", "math.h"),
    "M_LN10": ("2.302585092994045684017991454684364208", "math.h"),
    "M_PI": ("3.141592653589793238462643383279502884", "math.h"),
    "M_PI_2": ("1.570796326794896619231321691639751442", "math.h"),
    "M_PI_4": ("0.785398163397448309615660845819875721", "math.h"),
    "M_1_PI": ("0.318309886183790671537767526745028724", "math.h"),
    "M_2_PI": ("0.636619772367581343075535053490057448", "math.h"),
    "M_2_SQRTPI": ("1.128379167095512573896158903121545172", "math.h"),
    "M_SQRT2": ("1.414213562373095048801688724209698079", "math.h"),
    "M_SQRT1_2": ("0.707106781186547524400844362104849039", "math.h"),
    "FLT_MAX": ("3.40282347e+38F", "float.h"),
    "FLT_MIN": ("1.17549435e-38F", "float.h"),
    "FLT_EPSILON": ("1.1920929e-07F", "float.h"),
    "DBL_MAX": ("1.7976931348623157e+308", "float.h"),
    "DBL_MIN": ("2.2250738585072014e-308", "float.h"),
    "DBL_EPSILON": ("2.2204460492503131e-16", "float.h"),
    "CHAR_BIT": ("8", "limits.h"),
    "SCHAR_MAX": ("127", "limits.h"),
    "SCHAR_MIN": ("(-127-1)", "limits.h"),
    "UCHAR_MAX": ("255", "limits.h"),
    "SHRT_MAX": ("32767", "limits.h"),
    "SHRT_MIN": ("(-32767-1)", "limits.h"),
    "USHRT_MAX": ("65535", "limits.h"),
    "INT_MAX": ("2147483647", "limits.h"),
    "INT_MIN": ("(-2147483647-1)", "limits.h"),
    "UINT_MAX": ("4294967295U", "limits.h"),
    "LONG_MAX": ("9223372036854775807L", "limits.h"),
    "LONG_MIN": ("(-9223372036854775807L-1)", "limits.h"),
    "ULONG_MAX": ("18446744073709551615UL", "limits.h"),
}

#: Header a CUDA output includes for each standard typedef the kernels use.
TYPEDEF_HEADERS = {name: ("stddef.h" if name in ("size_t", "ptrdiff_t") else "stdint.h")
                   for name in STANDARD_TYPEDEFS}

#: Element types of the vector types and their lane counts (CUDA has 1 to 4 lanes, OpenCL C
#: 2, 3, 4, 8 and 16; the common ones are declared in both).
VECTOR_BASES = {"char": "signed char", "uchar": "unsigned char", "short": "short",
                "ushort": "unsigned short", "int": "int", "uint": "unsigned int",
                "long": "long", "ulong": "unsigned long", "float": "float",
                "double": "double"}
_FIELDS = ("x", "y", "z", "w")


def _cuda_vectors(words: set[str]) -> str:
    lines = []
    bases = [(name, scalar) for name, scalar in VECTOR_BASES.items()] + [
        ("longlong", "long long"), ("ulonglong", "unsigned long long")]
    for name, scalar in bases:
        for n in (1, 2, 3, 4):
            if f"{name}{n}" not in words and f"make_{name}{n}" not in words:
                continue
            fields = ", ".join(_FIELDS[:n])
            args = ", ".join(f"{scalar} {f}" for f in _FIELDS[:n])
            lines.append(f"struct {name}{n} {{ {scalar} {fields}; }};")
            lines.append(f"__host__ __device__ {name}{n} make_{name}{n}({args});")
    return "\n".join(lines)


def _opencl_vectors(words: set[str]) -> str:
    return "\n".join(f"typedef {name if name == 'char' else scalar} {name}{n} "
                     f"__attribute__((ext_vector_type({n})));"
                     for name, scalar in VECTOR_BASES.items() for n in (2, 3, 4, 8, 16)
                     if f"{name}{n}" in words)


#: CUDA device functions by signature: (return, parameters) -> names. Single precision, its
#: intrinsics (``__expf``), the C++ overloads of the double-precision names, integer intrinsics.
CUDA_FUNCTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("float", "float"): (
        "sqrtf", "rsqrtf", "cbrtf", "rcbrtf", "expf", "exp2f", "exp10f", "expm1f", "logf",
        "log2f", "log10f", "log1pf", "logbf", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf",
        "sinhf", "coshf", "tanhf", "asinhf", "acoshf", "atanhf", "sinpif", "cospif", "floorf",
        "ceilf", "roundf", "truncf", "rintf", "nearbyintf", "fabsf", "erff", "erfcf",
        "lgammaf", "tgammaf", "__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__sinf",
        "__cosf", "__tanf", "__saturatef", "__frcp_rn", "__fsqrt_rn", "__frsqrt_rn"),
    ("float", "float, float"): (
        "powf", "fminf", "fmaxf", "fmodf", "remainderf", "atan2f", "hypotf", "copysignf",
        "fdimf", "__powf", "__fdividef", "__fadd_rn", "__fsub_rn", "__fmul_rn", "__fdiv_rn"),
    ("float", "float, float, float"): ("fmaf", "__fmaf_rn"),
    ("double", "double"): (
        "sqrt", "rsqrt", "cbrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10",
        "log1p", "logb", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "sinpi", "cospi", "floor", "ceil", "round", "trunc",
        "rint", "nearbyint", "fabs", "erf", "erfc", "lgamma", "tgamma"),
    ("double", "double, double"): (
        "pow", "fmin", "fmax", "fmod", "remainder", "atan2", "hypot", "copysign", "fdim"),
    ("double", "double, double, double"): ("fma",),
    ("int", "unsigned int"): ("__popc",),
    ("int", "unsigned long long"): ("__popcll",),
    ("int", "long long"): ("__clzll",),
    ("long long", "long long, long long"): ("__mul64hi",),
    ("unsigned long long", "unsigned long long, unsigned long long"): ("__umul64hi",),
    ("int", "int"): ("__clz", "__ffs", "abs"),
    ("unsigned int", "unsigned int"): ("__brev",),
    ("int", "int, int"): ("__mul24", "__mulhi"),
    ("unsigned int", "unsigned int, unsigned int"): ("__umul24", "__umulhi"),
    ("long", "long"): ("labs",),
    ("long long", "long long"): ("llabs",),
    ("int", "float"): ("__float_as_int", "__float2int_rn", "__float2int_rz", "__float2int_ru",
                       "__float2int_rd"),
    ("unsigned int", "float"): ("__float_as_uint", "__float2uint_rn", "__float2uint_rz"),
    ("float", "int"): ("__int_as_float", "__int2float_rn", "__int2float_rz"),
    ("float", "unsigned int"): ("__uint_as_float", "__uint2float_rn"),
}

#: Functions the front end reads as others (frontend/translate.Translator._sincos: the sine
#: and the cosine stored through the pointers), so the IR never holds them.
CUDA_READ_AS_OTHERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("void", "float, float *, float *"): ("sincosf", "__sincosf", "sincospif"),
    ("void", "double, double *, double *"): ("sincos", "sincospi"),
}

#: Overloads C++ gives the double-precision names for float (``sqrt(x)`` on a float is float),
#: min/max for each arithmetic type, and the classification macros of <math.h> as functions.
_CUDA_OVERLOADS = (
    [f"float {n}({', '.join(['float'] * k)});"
     for (ret, params), names in CUDA_FUNCTIONS.items() if ret == "double"
     for k in [params.count("double")] for n in names]
    + [f"{t} {f}({t}, {t});" for f in ("min", "max")
       for t in ("int", "unsigned int", "long", "unsigned long", "long long",
                 "unsigned long long", "float", "double")]
    + ["float abs(float);", "double abs(double);", "long abs(long);",
       "long long abs(long long);"]
    + [f"bool {f}({t});" for f in ("isnan", "isinf", "isfinite", "signbit")
       for t in ("float", "double")]
)

#: The double-precision names of more than one argument, which C++ (and nvcc) also call on
#: mixed arguments, promoted to double (``fmax(0.0, z)`` of a float z: <cmath>'s additional
#: overloads); declared as templates, which only a mixed call selects (the translator writes
#: the promotions out: OpenCL's fmax(double, float) is ambiguous).
PROMOTING_FUNCTIONS = frozenset(
    n for (ret, params), names in CUDA_FUNCTIONS.items()
    if ret == "double" and params.count("double") > 1 for n in names)
_CUDA_PROMOTING = [
    "template <" + ", ".join(f"typename A{i}" for i in range(k)) + f"> __device__ double "
    f"{n}(" + ", ".join(f"A{i}" for i in range(k)) + ");"
    for (ret, params), names in CUDA_FUNCTIONS.items()
    if ret == "double" and params.count("double") > 1
    for k in [params.count("double")] for n in names]

#: Device functions that are out of naiveopt's scope -> the construct, which the translator's
#: error names ("warp shuffles are not supported in kernels ('__shfl_down_sync')").
OUT_OF_SCOPE_FUNCTIONS = {
    "__shfl_sync": "warp shuffles", "__shfl_up_sync": "warp shuffles",
    "__shfl_down_sync": "warp shuffles", "__shfl_xor_sync": "warp shuffles",
    "__shfl": "warp shuffles", "__shfl_up": "warp shuffles", "__shfl_down": "warp shuffles",
    "__shfl_xor": "warp shuffles", "__ballot_sync": "warp votes", "__any_sync": "warp votes",
    "__all_sync": "warp votes", "__activemask": "warp votes", "__syncwarp": "warp barriers",
    "clock": "clock reads", "clock64": "clock reads", "printf": "device-side printf calls",
    "assert": "device-side asserts", "__trap": "traps", "malloc": "device-side allocations",
    "free": "device-side allocations",
}


def cuda_device_function_names() -> set[str]:
    """Every function name the CUDA prelude declares for device code (make_<vector> aside)."""
    names = {n for names in CUDA_FUNCTIONS.values() for n in names}
    return names | {"min", "max", "abs", "isnan", "isinf", "isfinite", "signbit"}


_CUDA_DEVICE = r"""
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define NULL 0
struct __nv_uint3 { unsigned int x, y, z; };
extern const __device__ struct __nv_uint3 threadIdx, blockIdx, blockDim, gridDim;
extern const __device__ int warpSize;
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
template <class T> __device__ T __ldg(const T *);
__device__ int atomicAdd(int *, int); __device__ float atomicAdd(float *, float);
__device__ unsigned int atomicAdd(unsigned int *, unsigned int);
__device__ double atomicAdd(double *, double);
__device__ unsigned long long atomicAdd(unsigned long long *, unsigned long long);
__device__ int atomicAdd_block(int *, int); __device__ int atomicAdd_system(int *, int);
__device__ int atomicSub(int *, int); __device__ unsigned int atomicSub(unsigned int *, unsigned int);
__device__ int atomicExch(int *, int); __device__ float atomicExch(float *, float);
__device__ unsigned int atomicExch(unsigned int *, unsigned int);
__device__ unsigned long long atomicExch(unsigned long long *, unsigned long long);
__device__ int atomicMin(int *, int); __device__ int atomicMax(int *, int);
__device__ unsigned int atomicMin(unsigned int *, unsigned int);
__device__ unsigned int atomicMax(unsigned int *, unsigned int);
__device__ long long atomicMin(long long *, long long);
__device__ long long atomicMax(long long *, long long);
__device__ int atomicCAS(int *, int, int);
__device__ unsigned int atomicCAS(unsigned int *, unsigned int, unsigned int);
__device__ unsigned long long atomicCAS(unsigned long long *, unsigned long long,
                                        unsigned long long);
__device__ unsigned int atomicInc(unsigned int *, unsigned int);
__device__ unsigned int atomicDec(unsigned int *, unsigned int);
__device__ int atomicAnd(int *, int); __device__ int atomicOr(int *, int);
__device__ int atomicXor(int *, int);
__device__ unsigned int atomicAnd(unsigned int *, unsigned int);
__device__ unsigned int atomicOr(unsigned int *, unsigned int);
__device__ unsigned int atomicXor(unsigned int *, unsigned int);
__device__ unsigned int __shfl_sync(unsigned int, unsigned int, int, int = 32);
__device__ float __shfl_sync(unsigned int, float, int, int = 32);
__device__ int __shfl_sync(unsigned int, int, int, int = 32);
__device__ float __shfl_down_sync(unsigned int, float, unsigned int, int = 32);
__device__ int __shfl_down_sync(unsigned int, int, unsigned int, int = 32);
__device__ float __shfl_up_sync(unsigned int, float, unsigned int, int = 32);
__device__ int __shfl_up_sync(unsigned int, int, unsigned int, int = 32);
__device__ float __shfl_xor_sync(unsigned int, float, int, int = 32);
__device__ int __shfl_xor_sync(unsigned int, int, int, int = 32);
__device__ float __shfl(float, int, int = 32); __device__ int __shfl(int, int, int = 32);
__device__ float __shfl_down(float, unsigned int, int = 32);
__device__ float __shfl_up(float, unsigned int, int = 32);
__device__ float __shfl_xor(float, int, int = 32);
__device__ unsigned int __ballot_sync(unsigned int, int);
__device__ int __any_sync(unsigned int, int); __device__ int __all_sync(unsigned int, int);
__device__ unsigned int __activemask(void); __device__ void __syncwarp(unsigned int = 0xffffffff);
__device__ long long clock64(void); __device__ void __trap(void);
__host__ __device__ void assert(int);
"""

#: Enough of the CUDA runtime API and the C library for host code around the kernels to
#: parse (host code is passed through verbatim; errors inside it are not naiveopt's to judge,
#: but the fewer there are, the surer the kernels' parse).
_CUDA_HOST = r"""
#define cudaSuccess 0
typedef int cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
struct CUstream_st; typedef struct CUstream_st *cudaStream_t;
struct CUevent_st; typedef struct CUevent_st *cudaEvent_t;
struct dim3 {
    unsigned int x, y, z;
    __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1)
        : x(x), y(y), z(z) {}
};
struct cudaDeviceProp { char name[256]; size_t totalGlobalMem; size_t sharedMemPerBlock;
    int regsPerBlock; int warpSize; int maxThreadsPerBlock; int maxThreadsDim[3];
    int maxGridSize[3]; int clockRate; int major; int minor; int multiProcessorCount;
    int memoryClockRate; int memoryBusWidth; };
extern "C" unsigned __cudaPushCallConfiguration(dim3, dim3, size_t = 0, cudaStream_t = 0);
template <class T> cudaError_t cudaMalloc(T **, size_t);
template <class T> cudaError_t cudaMallocManaged(T **, size_t, unsigned int = 1);
template <class T> cudaError_t cudaMallocHost(T **, size_t);
template <class T> cudaError_t cudaMemcpyToSymbol(const T &, const void *, size_t, size_t = 0,
                                                  cudaMemcpyKind = cudaMemcpyHostToDevice);
cudaError_t cudaHostAlloc(void **, size_t, unsigned int);
cudaError_t cudaFree(void *); cudaError_t cudaFreeHost(void *);
cudaError_t cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t = 0);
cudaError_t cudaMemset(void *, int, size_t);
cudaError_t cudaDeviceSynchronize(void); cudaError_t cudaDeviceReset(void);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaGetLastError(void); cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t);
cudaError_t cudaSetDevice(int); cudaError_t cudaGetDevice(int *);
cudaError_t cudaGetDeviceCount(int *);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *, int);
cudaError_t cudaEventCreate(cudaEvent_t *); cudaError_t cudaEventDestroy(cudaEvent_t);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float *, cudaEvent_t, cudaEvent_t);
cudaError_t cudaStreamCreate(cudaStream_t *); cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
typedef struct _FILE FILE; extern FILE *stdin, *stdout, *stderr;
__host__ __device__ int printf(const char *, ...); int fprintf(FILE *, const char *, ...);
int sprintf(char *, const char *, ...); int snprintf(char *, size_t, const char *, ...);
int puts(const char *); int scanf(const char *, ...); int fscanf(FILE *, const char *, ...);
FILE *fopen(const char *, const char *); int fclose(FILE *);
size_t fread(void *, size_t, size_t, FILE *); size_t fwrite(const void *, size_t, size_t, FILE *);
__host__ __device__ void *malloc(size_t); void *calloc(size_t, size_t);
void *realloc(void *, size_t); __host__ __device__ void free(void *);
void exit(int); void abort(void);
int rand(void); void srand(unsigned int); int atoi(const char *); double atof(const char *);
long atol(const char *); long strtol(const char *, char **, int);
double drand48(void); void srand48(long);
#define RAND_MAX 2147483647
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
void *memset(void *, int, size_t); void *memcpy(void *, const void *, size_t);
int memcmp(const void *, const void *, size_t); size_t strlen(const char *);
int strcmp(const char *, const char *);
typedef long time_t; typedef long clock_t; time_t time(time_t *); clock_t clock(void);
#define CLOCKS_PER_SEC 1000000l
"""

_OPENCL_BASE = r"""
#define __opencl_c_named_address_space_builtins 1
typedef unsigned int uint;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned long ulong;
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef uint cl_mem_fence_flags;
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define M_PI_F 3.14159274101257f
#define M_E_F 2.71828174591064f
#define M_SQRT2_F 1.41421353816986f
#define MAXFLOAT 3.40282347e+38F
#define NULL 0
int printf(__constant const char *, ...);
"""


def _opencl_reinterprets(words: set[str]) -> str:
    """``as_int(float)`` and kin between scalars of one size (opencl-c-base.h has them as
    __builtin_astype macros, which libclang does not expose as calls)."""
    sizes = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4,
             "long": 8, "ulong": 8, "double": 8}
    return "\n".join(f"{t} __attribute__((overloadable)) as_{t}({f});"
                     for t in sizes if f"as_{t}" in words for f in sizes
                     if sizes[f] == sizes[t])


def _typedefs(words: set[str]) -> str:
    return "\n".join(f"typedef {under} {name};" for name, under in
                     {**STANDARD_TYPEDEFS, **_CUDA_EXTRA_TYPEDEFS}.items() if name in words)


#: OpenCL's unsigned names, which nvcc's headers (glibc's <sys/types.h>) also declare.
_CUDA_EXTRA_TYPEDEFS = {"uint": "unsigned int", "ushort": "unsigned short",
                        "ulong": "unsigned long"}


def _constants(words: set[str]) -> str:
    return "\n".join(f"#define {name} {value}" for name, (value, _) in CONSTANTS.items()
                     if name in words)


def _cuda_functions(words: set[str]) -> str:
    lines = []
    for (ret, params), names in [*CUDA_FUNCTIONS.items(), *CUDA_READ_AS_OTHERS.items()]:
        for name in names:
            if name in words:                # __device__ alone, as nvcc's: a kernel
                lines.append(f"__device__ {ret} {name}({params});")   # file may define its own
    lines += [f"__device__ {decl}" for decl in _CUDA_OVERLOADS
              if re.search(r"(\w+)\(", decl).group(1) in words]
    lines += [decl for decl in _CUDA_PROMOTING
              if re.search(r"(\w+)\((?!typename)", decl).group(1) in words]
    return "\n".join(lines)


#: Every name the CUDA host block declares: the block is read when a file names one of them
#: (or launches a kernel).
_HOST_NAMES = frozenset(re.findall(r"\b(?:cuda\w+|dim3|FILE|std\w+|printf|fprintf|sprintf|"
                                   r"snprintf|puts|scanf|fscanf|fopen|fclose|fread|fwrite|"
                                   r"malloc|calloc|realloc|free|exit|abort|rand|srand|atoi|"
                                   r"atof|atol|strtol|drand48|srand48|RAND_MAX|EXIT_\w+|"
                                   r"memset|memcpy|memcmp|strlen|strcmp|time_t|clock_t|time|"
                                   r"clock|CLOCKS_PER_SEC)\b", _CUDA_HOST))


def prelude_words(path: str, source: str, defines: dict[str, str]) -> frozenset[str]:
    """The prelude names that a file, the headers beside it that it includes, and its -D
    values use: the prelude declares only those, so that libclang reads a few declarations
    for each file, not the whole library (which made every parse several times slower)."""
    texts = [source, " ".join(defines.values())]
    here = os.path.dirname(os.path.abspath(path))
    for _, delim, name in includes(source):
        local = os.path.join(here, name)
        if delim == '"' and os.path.isfile(local):
            try:
                with open(local, encoding="utf-8", errors="replace") as fh:
                    texts.append(fh.read())
            except OSError:
                pass
    text = "\n".join(texts)
    words = set(re.findall(r"[A-Za-z_]\w*", text))
    if any(os.path.basename(name) == helper_math.HEADER for _, _, name in includes(source)):
        words |= set(re.findall(r"[A-Za-z_]\w*", helper_math.declarations()))
    if any("<<<" in t for t in texts):
        words.add("dim3")                # a launch needs the runtime's call configuration
    # a type the file defines itself is not the library's (CUDA by Example's own
    # ``struct cuComplex`` is not <cuComplex.h>'s float2)
    words -= _defined_types(text)
    return frozenset(words & prelude_names())


def _defined_types(text: str) -> set[str]:
    """The type names a file defines: ``struct NAME {``, ``class NAME {``, ``typedef ...
    NAME;``."""
    found = set(re.findall(r"\b(?:struct|class|union)\s+([A-Za-z_]\w*)\s*(?::[^{;]*)?\{", text))
    found |= set(re.findall(r"\btypedef\b[^;{}]*?\b([A-Za-z_]\w*)\s*;", text))
    found |= set(re.findall(r"\}\s*([A-Za-z_]\w*)\s*;", text)) & \
        set(re.findall(r"\btypedef\s+(?:struct|union)\b[^;]*?\}\s*([A-Za-z_]\w*)\s*;", text))
    return found


def cuda_prelude(words: set[str]) -> str:
    """The text libclang reads before a CUDA file that names ``words``."""
    host = bool(words & _HOST_NAMES)
    if host:
        words = words | {"size_t"}
    complex_numbers = bool(words & cu_complex.NAMES)
    if complex_numbers:
        words = words | set(cu_complex.TYPES.values())
    return "\n".join([_CUDA_DEVICE, _typedefs(words), _constants(words), _cuda_vectors(words),
                      _cuda_functions(words), cu_complex.prelude() if complex_numbers else "",
                      _CUDA_HOST if host else ""])


def opencl_prelude(words: set[str]) -> str:
    """The text libclang reads before an OpenCL C file that names ``words`` (clang declares
    the built-in functions itself: -fdeclare-opencl-builtins)."""
    return "\n".join([_OPENCL_BASE, _opencl_vectors(words), _constants(words),
                      _opencl_reinterprets(words)])


@cache
def prelude_names() -> frozenset[str]:
    """Every name a prelude may declare (the part of a file's words that selects its
    prelude)."""
    names = set(STANDARD_TYPEDEFS) | set(_CUDA_EXTRA_TYPEDEFS) | set(CONSTANTS) | _HOST_NAMES
    names |= cu_complex.NAMES
    names |= {n for names_ in [*CUDA_FUNCTIONS.values(), *CUDA_READ_AS_OTHERS.values()]
              for n in names_}
    names |= {re.search(r"(\w+)\(", d).group(1) for d in _CUDA_OVERLOADS}
    for name in list(VECTOR_BASES) + ["longlong", "ulonglong"]:
        for n in (1, 2, 3, 4, 8, 16):
            names |= {f"{name}{n}", f"make_{name}{n}"}
    names |= {f"as_{t}" for t in ("char", "uchar", "short", "ushort", "int", "uint", "float",
                                   "long", "ulong", "double")}
    return frozenset(names)


_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def includes(source: str) -> list[tuple[int, str, str]]:
    """The ``#include`` lines of a file: (line number, '<' or '"', header name)."""
    out = []
    for m in _INCLUDE.finditer(source):
        out.append((source.count("\n", 0, m.start()) + 1, m.group(1), m.group(2).strip()))
    return out


def check_headers(path: str, source: str) -> None:
    """An include of a header whose constructs naiveopt does not model is a located error
    that names the construct."""
    for line, _, name in includes(source):
        if name in OUT_OF_SCOPE_HEADERS:
            text = source.split("\n")[line - 1]
            raise UnsupportedConstruct(f"{OUT_OF_SCOPE_HEADERS[name]} are not supported "
                                       f"(#include <{name}>)", path, line, text.index("#") + 1)


def header_files(path: str, source: str) -> list[tuple[str, str]]:
    """The virtual files libclang reads for the includes of ``source``: an empty stand-in for
    every header that the prelude covers, and for every other header that is not found
    beside the file (a system or SDK header naiveopt does not read: host code may use its
    names, and if kernel code does, the error says which header it is)."""
    files = {f"{INCLUDE_DIR}/{h}": "" for h in IGNORED_HEADERS}
    here = os.path.dirname(os.path.abspath(path))
    for _, delim, name in includes(source):
        if delim == '"' and os.path.exists(os.path.join(here, name)):
            continue
        # the CUDA samples' vector arithmetic: its declarations (ir/helper_math.py)
        files.setdefault(f"{INCLUDE_DIR}/{name}", helper_math.declarations()
                         if os.path.basename(name) == helper_math.HEADER else "")
    return sorted(files.items())


def unknown_headers(path: str, source: str) -> list[str]:
    """Headers ``source`` includes that naiveopt neither knows nor finds beside the file."""
    here = os.path.dirname(os.path.abspath(path))
    return [name for _, delim, name in includes(source)
            if name not in IGNORED_HEADERS and name not in OUT_OF_SCOPE_HEADERS
            and os.path.basename(name) != helper_math.HEADER
            and not (delim == '"' and os.path.exists(os.path.join(here, name)))]


#: Functions the prelude declares that nvcc declares only through a header (a kernel carried
#: as written may call them: frontend/verbatim.py).
FUNCTION_HEADERS = {"printf": "cstdio", **{name: "cuComplex.h" for name in cu_complex.FUNCTIONS}}


def headers_for(names: set[str]) -> list[str]:
    """The headers a CUDA output includes for the constants, functions and typedef names it
    uses."""
    out = []
    for name in sorted(names):
        header = CONSTANTS[name][1] if name in CONSTANTS else \
            FUNCTION_HEADERS.get(name) or TYPEDEF_HEADERS.get(name)
        if header and header not in out:
            out.append(header)
    return sorted(out)
