"""Dynamic shared memory: an array in shared (OpenCL: local) memory whose size the launch gives.

CUDA declares it in the kernel, ``extern __shared__ float sdata[];``, and sizes it with the
launch's third configuration argument (bytes); OpenCL passes it as a kernel argument,
``__local float *sdata``, sized by ``clSetKernelArg(kernel, i, bytes, NULL)``. The IR is
written in CUDA terms, so a kernel's tree holds the CUDA declaration (in the body; the kernel's
parameter list does not name it), and its GProcedure holds the array as a Param of address
space "local": after the other parameters for a CUDA input, in its own place for an OpenCL
one. That Param is what verification and the launchers read (a local-memory argument of the
array's size, a shared-memory byte count), and where the OpenCL output puts the ``__local``
parameter back (:func:`to_opencl`).

CUDA places every extern __shared__ array of a kernel at one address, so the front end takes
one per kernel (two would alias); an OpenCL kernel may pass several, which only its own
dialect can write (opencl-to-cuda refuses a CUDA output of it).
"""
from __future__ import annotations

from pycparser import c_ast

from .gprocedure import GProcedure, Param
from .rewrite import walk
from .typenames import TypeName, type_node


def is_declaration(node: c_ast.Node) -> bool:
    """Whether ``node`` is an ``extern __shared__ T s[];`` declaration."""
    return isinstance(node, c_ast.Decl) and "extern" in (node.storage or []) and \
        "__shared__" in (node.storage or []) and isinstance(node.type, c_ast.ArrayDecl) and \
        node.type.dim is None


def declarations(tree: c_ast.Node) -> list[c_ast.Decl]:
    """The extern __shared__ declarations of ``tree``, in order."""
    return [n for n, _ in walk(tree) if is_declaration(n)]


def param_of(decl: c_ast.Decl) -> Param:
    """The Param (address space "local") of an extern __shared__ declaration."""
    t = decl.type.type
    names = t.type.names if isinstance(t, c_ast.TypeDecl) else ["float"]
    base = " ".join(names)
    spelling = t.type.spelling if isinstance(t.type, TypeName) else ""
    return Param(decl.name, base, True, address_space="local", spelling=spelling)


def declaration(param: Param) -> c_ast.Decl:
    """``extern __shared__ T name[];`` for a local-memory parameter."""
    inner = c_ast.TypeDecl(param.name, [], None, type_node(param.base_type, param.spelling))
    return c_ast.Decl(param.name, [], [], ["extern", "__shared__"], [],
                      c_ast.ArrayDecl(inner, None, []), None, None)


def params(proc: GProcedure) -> list[Param]:
    """The kernel's dynamic shared arrays, in parameter order."""
    return [p for p in proc.params if p.is_pointer and p.address_space == "local"]


def cuda_arguments(proc: GProcedure) -> int:
    """How many arguments a CUDA launch of the kernel passes (its dynamic shared arrays are
    no parameters there; a struct parameter is one, though its members are parameters of
    the IR: ir/structs.py; the sizes a bounds guard added are not the host's to pass: its
    NAME_launch_from does, GProcedure.size_params)."""
    members = sum(len(s.symbols) - 1 for s in proc.struct_params)
    return len(proc.params) - len(params(proc)) - members - len(proc.size_params)


def to_opencl(proc: GProcedure) -> None:
    """OpenCL's form of a kernel's dynamic shared memory: each extern __shared__ declaration
    leaves the body and becomes a ``__local T *name`` parameter where GProcedure.params puts
    it (the address space is added with the others' by cuda-to-opencl)."""
    local = {p.name for p in params(proc)}
    if not local:
        return
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Compound) and node.block_items:
            node.block_items = [s for s in node.block_items
                                if not (is_declaration(s) and s.name in local)]
    args = proc.func.decl.type.args
    decls = list(args.params) if args is not None else []
    for position, p in enumerate(proc.params):
        if p.name in local:
            inner = c_ast.TypeDecl(p.name, [], None, type_node(p.base_type, p.spelling))
            decls.insert(position, c_ast.Decl(p.name, [], [], [], [],
                                              c_ast.PtrDecl([], inner), None, None))
    proc.func.decl.type.args = c_ast.ParamList(decls)


def in_helpers(helpers: list[c_ast.FuncDef]) -> c_ast.Decl | None:
    """The first extern __shared__ declaration in a helper function, or None."""
    return next((d for h in helpers for d in declarations(h)), None)
