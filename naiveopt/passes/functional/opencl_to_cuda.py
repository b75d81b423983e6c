"""OpenCL -> CUDA (paper 002, functional pass (1)).

The IR is written in CUDA terms, so OpenCL kernels are translated first: work-item functions
become CUDA built-ins (get_global_id(0) -> blockIdx.x*blockDim.x+threadIdx.x), barrier() becomes
__syncthreads(), __local storage becomes __shared__ (done while parsing) and the few math
built-ins CUDA spells differently are renamed; ``clamp(v, lo, hi)``, which CUDA lacks, becomes
``min(max(v, lo), hi)`` (its definition, for integers and floats alike); atomic functions
take CUDA's names (``atomic_inc(p)`` -> ``atomicAdd(p, 1)``, ir/atomics.py). Address spaces of
parameters stay on the Param.
"""
from __future__ import annotations

from pycparser import c_ast

from ...errors import NaiveoptError, error_at
from ...ir import GModule, GProcedure, atomics, dynamic_shared
from ...ir.literals import integer_value
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.vector import GEOMETRIC
from ..manager import Pass, PassContext
from .builtins import (CUDA_TO_OPENCL_EXPRESSIONS, CUDA_TO_OPENCL_MATH, DIMS,
                       OPENCL_TO_CUDA_EXPRESSIONS, OPENCL_TO_CUDA_IDS, OPENCL_TO_CUDA_MATH,
                       SHARED_FUNCTIONS, call, call_args, call_name, cuda_builtin, expand)
from .names import rename_reserved
from .swizzles import Swizzles, declared_types


class OpenCLToCUDA(Pass):
    name = "opencl-to-cuda"

    def run_module(self, module: GModule, ctx: PassContext) -> None:
        if module.dialect == "opencl":
            rename_reserved(module, "cuda")     # before the rewrite writes threadIdx & co.
            for proc in module.procedures:
                for written, user in proc.renamed.items():
                    ctx.remark("analysis", self.name, proc, f"'{user}' is reserved in CUDA: "
                               f"written '{written}'")
        helpers = {h.decl.name for h in module.helpers}
        for helper in module.helpers:
            if module.dialect == "opencl" and ctx.target == "cuda":
                _spell_swizzles(helper, helper.body, module.path)
            self._rewrite(helper.body, module.path, module.dialect == "opencl", ctx.target)
        for proc in module.procedures:
            self.run_kernel(proc, ctx)
        if module.dialect == "opencl" and ctx.target == "cuda":
            for proc in module.procedures:
                _check_one_dynamic_array(proc)
            for tree in [h.body for h in module.helpers] + [p.body for p in module.procedures]:
                _check_cuda_has(tree, helpers, module.path)

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        if proc.dialect != "opencl":
            return
        if ctx.target == "cuda":
            _spell_swizzles(proc.func, proc.body, proc.file)
        self._rewrite(proc.body, proc.file, True, ctx.target)
        proc.dialect = "cuda"
        ctx.remark("analysis", self.name, proc, "translated OpenCL work-item functions, "
                   "barriers and address spaces into the CUDA-style IR")

    def _rewrite(self, body: c_ast.Node, path: str, opencl: bool, target: str) -> None:
        """``opencl``: the body is OpenCL's (not a CUDA file's helper, whose ``clamp`` would
        be its own function). Swizzles (``p.xyz``, ``v.s01``, ``v.lo``) stay for an OpenCL
        ``target``, which writes them back as they are; CUDA has none."""
        def fn(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, c_ast.StructRef) and isinstance(node.field, c_ast.ID) and \
                    node.field.name not in ("x", "y", "z", "w") and target == "cuda":
                raise _located(node, path, f"vector component '.{node.field.name}' has no "
                               "CUDA equivalent")
            name = call_name(node)
            if name is None:
                return node
            args = call_args(node)
            if name in OPENCL_TO_CUDA_IDS or name in ("get_global_id", "get_global_size"):
                dim = _dimension(node, args, path)
                if name == "get_global_id":
                    return c_ast.BinaryOp("+", c_ast.BinaryOp(
                        "*", cuda_builtin("blockIdx", dim), cuda_builtin("blockDim", dim)),
                        cuda_builtin("threadIdx", dim))
                if name == "get_global_size":
                    return c_ast.BinaryOp("*", cuda_builtin("gridDim", dim),
                                          cuda_builtin("blockDim", dim))
                return cuda_builtin(OPENCL_TO_CUDA_IDS[name], dim)
            if name in ("barrier", "work_group_barrier"):
                return call("__syncthreads")
            if name in ("mem_fence", "write_mem_fence", "read_mem_fence"):
                return call("__threadfence")
            if name in ("get_work_dim", "get_global_offset", "get_enqueued_local_size"):
                raise _located(node, path, f"'{name}' is not supported")
            if opencl and atomics.opencl_name(name) is not None:
                cuda, value = atomics.opencl_name(name)
                node.name = c_ast.ID(cuda)
                if value is not None:
                    node.args.exprs.append(c_ast.Constant("int", value))
                return node
            if name.startswith(("vload", "vstore", "read_image", "write_image", "atom")):
                raise _located(node, path, f"'{name}' is not supported in naive kernels")
            if name == "clamp" and len(args) == 3 and opencl:
                return call("min", call("max", args[0], args[1]), args[2])
            if name in OPENCL_TO_CUDA_MATH:
                node.name = c_ast.ID(OPENCL_TO_CUDA_MATH[name])
            elif name in OPENCL_TO_CUDA_EXPRESSIONS:
                try:
                    return expand(OPENCL_TO_CUDA_EXPRESSIONS[name], args, name)
                except ValueError as exc:
                    raise _located(node, path, f"{exc} has no CUDA translation") from exc
            return node

        map_nodes(body, fn)


def _spell_swizzles(func: c_ast.Node, body: c_ast.Node, path: str) -> None:
    """A function's OpenCL swizzles in CUDA terms (swizzles.py)."""
    Swizzles(declared_types(func), path, set(identifiers(func))).run(body)


#: Calls the IR may hold that are CUDA's own (written by the translations and the passes).
_CUDA_CALLS = {"__syncthreads", "__threadfence"} | set(atomics.CUDA_ATOMICS)


def _check_cuda_has(tree: c_ast.Node, helpers: set[str], path: str) -> None:
    """A CUDA output of an OpenCL kernel needs a CUDA form of every built-in it calls: one
    that has none (``fract``, ``select``...) is a located error, not a file nvcc rejects."""
    cuda = (SHARED_FUNCTIONS | set(OPENCL_TO_CUDA_MATH.values()) | set(CUDA_TO_OPENCL_MATH)
            | set(CUDA_TO_OPENCL_EXPRESSIONS) | _CUDA_CALLS | helpers | set(GEOMETRIC))
    for node, _ in walk(tree):
        name = call_name(node)
        if name and name not in cuda and not name.startswith("make_"):
            raise _located(node, path, f"OpenCL built-in '{name}' has no CUDA translation")


def _check_one_dynamic_array(proc: GProcedure) -> None:
    """A CUDA kernel has one dynamic shared-memory array (every ``extern __shared__``
    declaration names the same address): an OpenCL kernel that takes two __local pointers
    has no CUDA form that keeps its parameters, and is a located error."""
    local = dynamic_shared.params(proc)
    if len(local) > 1:
        raise NaiveoptError(f"kernel '{proc.name}' takes {len(local)} __local pointer "
                            f"parameters ({', '.join(p.name for p in local)}): a CUDA kernel "
                            "has one dynamic shared-memory array; write the CUDA output of "
                            "a kernel that takes one", proc.file, proc.line, 1)


def _dimension(node: c_ast.FuncCall, args: list[c_ast.Node], path: str) -> str:
    value = integer_value(args[0].value) if len(args) == 1 and isinstance(
        args[0], c_ast.Constant) and args[0].type == "int" else None
    if value in (0, 1, 2):
        return DIMS[value]
    raise _located(node, path, "work-item functions need a constant dimension 0, 1 or 2")


def _located(node: c_ast.Node, path: str, message: str) -> NaiveoptError:
    return error_at(node.coord, message, path)
