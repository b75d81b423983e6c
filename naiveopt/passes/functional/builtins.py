"""CUDA built-in variables and their OpenCL work-item functions, shared by both translations."""
from __future__ import annotations

from pycparser import c_ast

#: CUDA built-in struct -> OpenCL work-item function.
CUDA_TO_OPENCL_IDS = {"threadIdx": "get_local_id", "blockIdx": "get_group_id",
                      "blockDim": "get_local_size", "gridDim": "get_num_groups"}
OPENCL_TO_CUDA_IDS = {v: k for k, v in CUDA_TO_OPENCL_IDS.items()}
DIMS = ("x", "y", "z")

#: CUDA single-precision math -> OpenCL overloaded built-ins.
CUDA_TO_OPENCL_MATH = {
    "sqrtf": "sqrt", "rsqrtf": "rsqrt", "expf": "exp", "exp2f": "exp2", "logf": "log",
    "log2f": "log2", "powf": "pow", "sinf": "sin", "cosf": "cos", "tanf": "tan",
    "tanhf": "tanh", "floorf": "floor", "ceilf": "ceil", "roundf": "round", "fabsf": "fabs",
    "fminf": "fmin", "fmaxf": "fmax", "fmaf": "fma", "__expf": "native_exp",
    "__logf": "native_log", "__fdividef": "native_divide",
}
#: OpenCL built-ins that CUDA spells differently (the rest, e.g. sqrt/fabs/min, exist in both).
OPENCL_TO_CUDA_MATH = {"native_exp": "__expf", "native_log": "__logf",
                       "native_divide": "__fdividef", "mad": "fmaf", "rsqrt": "rsqrtf",
                       "fma": "fmaf"}


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
