"""CUDA built-ins and their OpenCL forms, both ways: work-item functions, the math library and
its intrinsics (renamed, or written as an expression where the other dialect has no function).

The front end's prelude (frontend/prelude.py) declares the CUDA functions kernels may call;
every one of them is translated here, shared, or listed as having no OpenCL form
(tests/test_prelude.py checks that the two agree).
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ...ir.build import expression
from ...ir.rewrite import side_effect_free

#: CUDA built-in struct -> OpenCL work-item function.
CUDA_TO_OPENCL_IDS = {"threadIdx": "get_local_id", "blockIdx": "get_group_id",
                      "blockDim": "get_local_size", "gridDim": "get_num_groups"}
OPENCL_TO_CUDA_IDS = {v: k for k, v in CUDA_TO_OPENCL_IDS.items()}
DIMS = ("x", "y", "z")

#: CUDA single-precision math and intrinsics -> the OpenCL built-in of the same meaning
#: (OpenCL's math built-ins are overloaded: ``sqrt`` of a float is float).
CUDA_TO_OPENCL_MATH = {
    "sqrtf": "sqrt", "rsqrtf": "rsqrt", "cbrtf": "cbrt", "expf": "exp", "exp2f": "exp2",
    "exp10f": "exp10", "expm1f": "expm1", "logf": "log", "log2f": "log2", "log10f": "log10",
    "log1pf": "log1p", "logbf": "logb", "powf": "pow", "sinf": "sin", "cosf": "cos",
    "tanf": "tan", "asinf": "asin", "acosf": "acos", "atanf": "atan", "sinhf": "sinh",
    "coshf": "cosh", "tanhf": "tanh", "asinhf": "asinh", "acoshf": "acosh", "atanhf": "atanh",
    "sinpif": "sinpi", "cospif": "cospi", "floorf": "floor", "ceilf": "ceil",
    "roundf": "round", "truncf": "trunc", "rintf": "rint", "nearbyintf": "rint",
    "nearbyint": "rint", "fabsf": "fabs", "erff": "erf", "erfcf": "erfc", "lgammaf": "lgamma",
    "tgammaf": "tgamma", "fminf": "fmin", "fmaxf": "fmax", "fmodf": "fmod",
    "remainderf": "remainder", "atan2f": "atan2", "hypotf": "hypot", "copysignf": "copysign",
    "fdimf": "fdim", "fmaf": "fma", "__fmaf_rn": "fma", "__fsqrt_rn": "sqrt",
    "__frsqrt_rn": "rsqrt", "__expf": "native_exp", "__exp10f": "native_exp10",
    "__logf": "native_log", "__log2f": "native_log2", "__log10f": "native_log10",
    "__sinf": "native_sin", "__cosf": "native_cos", "__tanf": "native_tan",
    "__powf": "native_powr", "__fdividef": "native_divide", "__float_as_int": "as_int",
    "__float_as_uint": "as_uint", "__int_as_float": "as_float", "__uint_as_float": "as_float",
    "__clz": "clz", "__clzll": "clz", "__mul24": "mul24", "__umul24": "mul24",
    "__mulhi": "mul_hi", "__umulhi": "mul_hi", "__mul64hi": "mul_hi", "__umul64hi": "mul_hi",
    "__float2int_rn": "convert_int_rte", "__float2int_rz": "convert_int_rtz",
    "__float2int_ru": "convert_int_rtp", "__float2int_rd": "convert_int_rtn",
    "__float2uint_rn": "convert_uint_rte", "__float2uint_rz": "convert_uint_rtz",
    "__int2float_rn": "convert_float_rte", "__int2float_rz": "convert_float_rtz",
    "__uint2float_rn": "convert_float_rte", "labs": "abs", "llabs": "abs",
}
#: CUDA functions OpenCL writes as an expression over the arguments (A0, A1, ...).
CUDA_TO_OPENCL_EXPRESSIONS = {
    "__fadd_rn": "(A0 + A1)", "__fsub_rn": "(A0 - A1)", "__fmul_rn": "(A0 * A1)",
    "__fdiv_rn": "(A0 / A1)", "__frcp_rn": "(1.0f / A0)", "rcbrtf": "(1.0f / cbrt(A0))",
    "__saturatef": "clamp(A0, 0.0f, 1.0f)", "__popc": "((int)popcount(A0))",
    "__popcll": "((int)popcount(A0))",
}
#: Functions both dialects have under the same name and meaning (C's double-precision math,
#: which CUDA's C++ and OpenCL both overload for float, and the integer min/max/abs).
SHARED_FUNCTIONS = frozenset({
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logb", "pow",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "floor", "ceil", "round", "trunc", "rint", "fabs", "erf", "erfc", "lgamma",
    "tgamma", "fmin", "fmax", "fmod", "remainder", "atan2", "hypot", "copysign", "fdim", "fma",
    "min", "max", "abs", "isnan", "isinf", "isfinite", "signbit", "rsqrt", "exp10", "sinpi",
    "cospi",
})
#: CUDA functions the prelude declares that OpenCL C 1.2 has no form of: a kernel calling one
#: cannot be written (or verified) as OpenCL, which the translation says.
CUDA_WITHOUT_OPENCL = frozenset({"__brev", "__ffs"})

#: OpenCL built-ins that CUDA spells differently (the rest of its math, e.g. sqrt/fabs/min,
#: fma/rsqrt, exists in both: SHARED_FUNCTIONS, whose C++ overloads keep a double argument
#: double; ``mad`` becomes the generic ``fma`` for the same reason, not float-only ``fmaf``).
#: The native_ and half_ functions take floats only.
OPENCL_TO_CUDA_MATH = {"native_exp": "__expf", "native_log": "__logf",
                       "native_divide": "__fdividef", "mad": "fma",
                       "native_sin": "__sinf", "native_cos": "__cosf",
                       "native_tan": "__tanf", "native_powr": "__powf", "native_exp2": "exp2f",
                       "native_exp10": "__exp10f", "native_log2": "__log2f",
                       "native_log10": "__log10f", "native_sqrt": "sqrtf",
                       "native_rsqrt": "rsqrtf", "half_sqrt": "sqrtf", "half_rsqrt": "rsqrtf",
                       "half_exp": "expf", "half_exp2": "exp2f", "half_exp10": "exp10f",
                       "half_log": "logf", "half_log2": "log2f", "half_log10": "log10f",
                       "half_sin": "sinf", "half_cos": "cosf", "half_tan": "tanf",
                       "half_powr": "powf", "powr": "pow", "mul24": "__mul24"}
#: (convert_T, as_T, mul_hi, popcount and clz depend on their argument types: the front end
#: writes them, frontend/typed_builtins.py.)
#: OpenCL built-ins CUDA writes as an expression over the arguments (A0, A1, ...).
OPENCL_TO_CUDA_EXPRESSIONS = {
    "clamp": "min(max(A0, A1), A2)", "mix": "(A0 + (A1 - A0) * A2)",
    "mad24": "(__mul24(A0, A1) + A2)", "native_recip": "(1.0f / A0)",
    "half_recip": "(1.0f / A0)", "half_divide": "(A0 / A1)", "step": "(A1 < A0 ? 0.0f : 1.0f)",
}

#: Functions without side effects that naiveopt may evaluate again or for a thread whose
#: result is discarded (partition camping's address arithmetic, fused thread-merge copies).
PURE_CALLS = frozenset(set(CUDA_TO_OPENCL_MATH) | set(CUDA_TO_OPENCL_MATH.values()) |
                       set(OPENCL_TO_CUDA_MATH) | SHARED_FUNCTIONS |
                       {"min", "max", "fabs", "sqrt", "exp", "log", "pow", "sin", "cos",
                        "floor", "ceil", "abs"} |
                       # the geometric functions (OpenCL's built-ins, helper_math.h's)
                       {"dot", "length", "distance", "normalize", "cross"})


def expand(template: str, args: list[c_ast.Node], name: str) -> c_ast.Node:
    """The expression ``template`` (over A0, A1, ...) with the call's arguments in place; an
    argument used twice must be free of side effects (it is evaluated twice)."""
    for i, arg in enumerate(args):
        if template.count(f"A{i}") > 1 and not pure(arg):
            raise ValueError(f"'{name}' with an argument that has side effects")
    return expression(template, **{f"A{i}": copy.deepcopy(a) for i, a in enumerate(args)})


def pure(node: c_ast.Node) -> bool:
    """Whether evaluating ``node`` twice is the same as once (calls only to the math of the
    tables above)."""
    known = (set(CUDA_TO_OPENCL_MATH) | set(CUDA_TO_OPENCL_MATH.values()) | SHARED_FUNCTIONS
             | set(OPENCL_TO_CUDA_MATH) | set(OPENCL_TO_CUDA_MATH.values()))
    return side_effect_free(node, known)


def cuda_builtin(struct: str, dim: str) -> c_ast.StructRef:
    """``threadIdx.x`` and friends as a c_ast node."""
    return c_ast.StructRef(c_ast.ID(struct), ".", c_ast.ID(dim))


def call(name: str, *args: c_ast.Node) -> c_ast.FuncCall:
    """A function call node."""
    return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(list(args)) if args else None)


def call_name(node: c_ast.Node) -> str | None:
    """The callee name of a direct call, else None."""
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
        return node.name.name
    return None


def call_args(node: c_ast.FuncCall) -> list[c_ast.Node]:
    return list(node.args.exprs) if node.args is not None else []
