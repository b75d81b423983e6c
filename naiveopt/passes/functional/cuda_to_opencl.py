"""CUDA -> OpenCL (paper 002, functional pass (7)).

Rewrites the postprocessed CUDA tree into OpenCL C 1.2: __global__ -> __kernel, pointer
parameters gain __global/__constant, __shared__ -> __local, CUDA built-ins -> work-item
functions (blockIdx.x*blockDim.x+threadIdx.x -> get_global_id(0)), __syncthreads() -> barrier(),
CUDA's *f math functions -> OpenCL's overloaded built-ins, vector accesses -> vloadN/vstoreN,
make_float2(a, b) -> (float2)(a, b), atomicAdd -> atomic_add (a float's: a compare-and-swap
helper, ir/atomics.py).
File-scope data the host fills becomes extra kernel arguments (ir/globals.py).
Literals keep their text where OpenCL C has it (ir.literals.opencl_literal says where not).
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ...errors import error_at
from ...ir import GModule, GProcedure, atomics, dynamic_shared, references
from ...ir.elements import element
from ...ir.globals import pass_as_arguments
from ...ir.literals import float_suffix, integer_value, opencl_literal
from ...ir.rewrite import map_nodes, pointer_root, walk
from ...ir.typenames import is_wide_integer
from ...ir import typenames
from ...ir.textures import bind_textures
from ...ir.async_copy import AsyncCopy, drop_fences
from ...ir.vector import VectorLoad, VectorStore
from ..manager import Pass, PassContext
from .builtins import (CUDA_TO_OPENCL_EXPRESSIONS, CUDA_TO_OPENCL_IDS, CUDA_TO_OPENCL_MATH,
                       CUDA_WITHOUT_OPENCL, DIMS, call, call_args, call_name, expand)
from .names import rename_reserved

_FENCE = c_ast.BinaryOp("|", c_ast.ID("CLK_LOCAL_MEM_FENCE"), c_ast.ID("CLK_GLOBAL_MEM_FENCE"))


class CUDAToOpenCL(Pass):
    name = "cuda-to-opencl"
    requires = ("postprocessor",)

    def run_module(self, module: GModule, ctx: PassContext) -> None:
        notes: list[str] = []
        for proc in module.procedures:          # address spaces are looked up by the IR's names
            dynamic_shared.to_opencl(proc)       # extern __shared__ -> a __local parameter
            _qualify_pointer_params(proc.func.decl.type.args, _space_of(proc))
            bind_textures(proc, "opencl")        # texture objects -> read_only image1d_buffer_t
        before = {p.name: dict(p.renamed) for p in module.procedures}
        rename_reserved(module, "opencl")       # before the rewrite writes barrier() & co.
        for proc in module.procedures:
            for written, user in proc.renamed.items():
                if before[proc.name].get(written) != user:
                    ctx.remark("analysis", self.name, proc, f"'{user}' is reserved in OpenCL "
                               f"C: written '{written}'")
        for helper in module.helpers:
            helper.decl.funcspec = []
            _qualify_pointer_params(helper.decl.type.args, lambda name: "__global")
            notes += _rewrite_body(helper.body, module.path)
            _atomics(helper, set())
            _qualify_pointer_casts(helper.body, lambda name: "__global")
            _opencl_type_names(helper)
            typenames.to_opencl(helper)
        references.to_pointers(module, module.path)
        for proc in module.procedures:
            self.run_kernel(proc, ctx)
            for note in notes:
                ctx.remark("analysis", self.name, proc, f"in a helper: {note}")
        pass_as_arguments(module)            # host-filled file-scope data -> arguments

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        proc.func.decl.funcspec = ["__kernel"]
        for note in _rewrite_body(proc.body, proc.file):
            ctx.remark("analysis", self.name, proc, note)
        shared = {n.name for n, _ in walk(proc.body)
                  if isinstance(n, c_ast.Decl) and "__local" in n.storage} | \
            {p.name for p in dynamic_shared.params(proc)}
        space = _space_of(proc)
        _qualify_pointer_casts(proc.body, lambda name: "__local" if name in shared
                               else space(name) if name else "__global")
        _atomics(proc.func, shared)
        _opencl_type_names(proc.func)
        typenames.to_opencl(proc.func, proc.func.decl.type.args)
        proc.dialect = "opencl"


def _atomics(func: c_ast.FuncDef, shared: set[str]) -> None:
    """CUDA's atomic calls in ``func`` in OpenCL's spelling (ir/atomics.py): by the element
    type and address space of the array each updates."""
    types = {}
    for node, _ in walk(func):
        if isinstance(node, c_ast.Decl) and node.name:
            t = node.type
            while not isinstance(t, c_ast.TypeDecl) and hasattr(t, "type"):
                t = t.type
            if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
                types[node.name] = " ".join(t.type.names)
    for node, _ in walk(func.body):
        target = atomics.atomic_target(node)
        if target is not None:
            name = atomics.array_of(target)
            atomics.to_opencl(node, element(types.get(name, "")),
                              "__local" if name in shared else "__global")


def _space_of(proc: GProcedure):
    def space(name: str) -> str:
        param = proc.param(name)
        if param is not None and param.address_space in ("constant", "local"):
            return f"__{param.address_space}"
        return "__global"
    return space


_OPENCL_TYPE_NAMES = typenames.OPENCL_TYPE_NAMES


def _opencl_type_names(node: c_ast.Node) -> None:
    """Respell the type names of ``node``'s declarations and casts for OpenCL."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, c_ast.IdentifierType):
            name = " ".join(" ".join(current.names).split())
            if name in _OPENCL_TYPE_NAMES:
                current.names = [_OPENCL_TYPE_NAMES[name]]
        stack.extend(child for _, child in current.children())


def _qualify_pointer_params(params: c_ast.ParamList | None, space) -> None:
    for decl in params.params if params else []:
        if isinstance(decl.type, c_ast.PtrDecl):
            decl.type.quals = ["restrict" if q == "__restrict__" else q for q in decl.type.quals]
            base = decl.type.type
            base.quals = [space(decl.name)] + [q for q in base.quals if not q.startswith("__")]


_SPACES = {"__global", "__local", "__constant", "__private"}


def _qualify_pointer_casts(body: c_ast.Node, space) -> None:
    """A cast to a pointer type (``((float4 *)x)[i]``, ``(float2 *)&a[2 * i]``) points where
    its operand does: OpenCL C makes an unqualified pointer type __private, and a cast of a
    __global pointer to it is an error, so the cast's pointee gains the address space of the
    array it casts (``space(name)``: the parameter's, __local for shared memory)."""
    for node, _ in walk(body):
        if not (isinstance(node, c_ast.Cast) and isinstance(node.to_type, c_ast.Typename) and
                isinstance(node.to_type.type, c_ast.PtrDecl) and
                isinstance(node.to_type.type.type, c_ast.TypeDecl)):
            continue
        base = node.to_type.type.type
        if not _SPACES & set(base.quals):
            base.quals = [space(pointer_root(node.expr))] + list(base.quals)


def _rewrite_body(body: c_ast.Node, path: str) -> list[str]:
    """Rewrite a body in place; returns notes on literals whose OpenCL spelling differs in
    type (``1e-5L`` -> ``1e-5``)."""
    notes: list[str] = []
    drop_fences(body)                       # OpenCL's copies are synchronous
    for node, _ in walk(body):
        if isinstance(node, c_ast.Decl) and "__shared__" in node.storage:
            node.storage = ["__local" if s == "__shared__" else s for s in node.storage]
        elif isinstance(node, (VectorLoad, VectorStore)):
            node.dialect = "opencl"         # vloadN/vstoreN: no alignment requirement
        elif isinstance(node, AsyncCopy):
            node.dialect = "opencl"         # a plain copy (ir/async_copy.py)
        elif isinstance(node, c_ast.Constant):
            node.value, note = opencl_literal(node.value)
            if note and note not in notes:
                notes.append(note)

    def fn(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ID) and node.name == "NULL":
            return c_ast.Constant("int", "0")       # OpenCL C 1.2 has no NULL
        if isinstance(node, c_ast.StructRef) and isinstance(node.name, c_ast.ID) and \
                node.name.name in CUDA_TO_OPENCL_IDS and isinstance(node.field, c_ast.ID):
            dim = DIMS.index(node.field.name)
            return call(CUDA_TO_OPENCL_IDS[node.name.name], c_ast.Constant("int", str(dim)))
        if isinstance(node, c_ast.BinaryOp) and node.op == "+":
            gid = _global_id(node)
            if gid is not None:
                return call("get_global_id", c_ast.Constant("int", str(gid)))
        name = call_name(node)
        if name == "__syncthreads":
            return call("barrier", _FENCE)
        if name == "__threadfence":
            return call("mem_fence", c_ast.ID("CLK_GLOBAL_MEM_FENCE"))
        if name in CUDA_TO_OPENCL_MATH or name in CUDA_TO_OPENCL_EXPRESSIONS:
            if node.args is not None and (name.endswith("f") or name.startswith("__f")):
                # fmaxf(x, 0.25) converts 0.25 to float; fmax(float, double) is ambiguous
                node.args.exprs = [_to_float(a) for a in node.args.exprs]
            if name in CUDA_TO_OPENCL_MATH:
                node.name = c_ast.ID(CUDA_TO_OPENCL_MATH[name])
                return node
            try:
                return expand(CUDA_TO_OPENCL_EXPRESSIONS[name], call_args(node), name)
            except ValueError as exc:
                raise error_at(node.coord, f"{exc} has no OpenCL translation", path) from exc
        if name in CUDA_WITHOUT_OPENCL:
            raise error_at(node.coord, f"'{name}' has no OpenCL translation", path)
        elif name and _MAKE_VECTOR.fullmatch(name):
            return _vector_literal(node, name, path)
        return node

    map_nodes(body, fn)
    return notes


_MAKE_VECTOR = re.compile(r"make_(u?char|u?short|u?int|u?long|u?longlong|float|double)"
                          r"([1-4])")


def _vector_literal(node: c_ast.FuncCall, name: str, path: str) -> c_ast.Node:
    """``make_float2(a, b)`` -> OpenCL's vector literal ``(float2)(a, b)`` (``make_float1(a)``,
    a one-lane vector OpenCL lacks, is the scalar itself)."""
    m = _MAKE_VECTOR.fullmatch(name)
    base, lanes = m.group(1).replace("longlong", "long"), m.group(2)
    args = call_args(node)
    if lanes == "1":
        if len(args) != 1:
            raise error_at(node.coord, f"'{name}' takes one argument", path)
        return args[0]
    vector = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType([base + lanes]))
    return c_ast.Cast(c_ast.Typename(None, [], None, vector), c_ast.ExprList(args),
                      coord=node.coord)


def _to_float(arg: c_ast.Node) -> c_ast.Node:
    """A double literal argument of a CUDA float function, converted as CUDA converts it."""
    if isinstance(arg, c_ast.Constant) and arg.type == "float" and \
            float_suffix(arg.value) in ("", "l"):
        float_type = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["float"]))
        return c_ast.Cast(c_ast.Typename(None, [], None, float_type), arg)
    return arg


def _global_id(node: c_ast.BinaryOp) -> int | None:
    """d if node is get_group_id(d)*get_local_size(d) + get_local_id(d) in some order (a
    factor cast to a 64-bit integer too: get_global_id's size_t is the 64-bit id)."""
    def dim_of(n: c_ast.Node, name: str) -> int | None:
        if isinstance(n, c_ast.Cast) and is_wide_integer(n.to_type):
            n = n.expr
        if call_name(n) == name:
            (arg,) = call_args(n)
            return integer_value(arg.value)
        return None

    for mul, tid in ((node.left, node.right), (node.right, node.left)):
        if isinstance(mul, c_ast.BinaryOp) and mul.op == "*":
            d = dim_of(tid, "get_local_id")
            if d is None:
                continue
            pairs = ((mul.left, mul.right), (mul.right, mul.left))
            if any(dim_of(a, "get_group_id") == d and dim_of(b, "get_local_size") == d
                   for a, b in pairs):
                return d
    return None
