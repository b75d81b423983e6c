"""Identifiers that one dialect allows and the other reserves, renamed by the translations.

A CUDA local named ``half`` or a parameter named ``local`` is fine C++ but a keyword in
OpenCL C; an OpenCL array named ``new`` or a local named ``threadIdx`` is fine OpenCL C but a
C++ keyword or a CUDA built-in. A translation that kept such a name would write a kernel that
does not compile (or, for ``threadIdx``, one that means something else), so the translations
rename every identifier the kernel declares (parameters, locals, helper functions) that the
target dialect reserves, or that the translation itself introduces (``barrier``,
``get_global_id``, the math built-ins): ``half`` -> ``half_``, then ``half_1``, ``half_2``...,
avoiding every name in the module. Other names are kept.

The IR keeps the user's name of each renamed identifier (``GProcedure.renamed``, written name ->
user's name): parameters are still the user's to the host (which passes arguments by
position), to verification's metadata and pragmas, and to the launch sidecar and geometry,
which name the user's parameters. A name renamed on the way into the IR (OpenCL -> CUDA) is
given back on the way out to OpenCL, where it is legal.

Kernel names are not renamed (the host launches a kernel by name): a kernel whose name the
target reserves is a located error.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ...errors import NaiveoptError
from ...ir import GModule
from ...ir.nodes import PREDEFINED_IDS, TexFetch
from ...ir.rewrite import identifiers, walk
from .builtins import (CUDA_TO_OPENCL_IDS, CUDA_TO_OPENCL_MATH, OPENCL_TO_CUDA_MATH,
                       SHARED_FUNCTIONS)

_SIZES = (2, 3, 4, 8, 16)

#: Names an OpenCL C 1.2 kernel cannot declare: keywords and reserved words (6.1, 6.1.9,
#: 6.7-6.9), built-in scalar, vector and opaque type names, the functions and constants
#: cuda-to-opencl writes, and the math built-ins (a CUDA helper named ``max`` would redeclare
#: OpenCL's).
OPENCL_RESERVED = frozenset({
    "kernel", "global", "local", "constant", "private", "read_only", "write_only",
    "read_write", "__kernel", "__global", "__local", "__constant", "__private", "__read_only",
    "__write_only", "__read_write", "restrict", "half", "quad", "complex", "imaginary",
    "uchar", "ushort", "uint", "ulong", "image1d_t", "image1d_array_t", "image1d_buffer_t",
    "image2d_t", "image2d_array_t", "image3d_t", "image2d_depth_t", "image2d_array_depth_t",
    "sampler_t", "event_t", "queue_t", "clk_event_t", "reserve_id_t", "ndrange_t",
    "cl_mem_fence_flags", "CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE", "barrier", "mem_fence",
    "read_imagef", "read_imagei", "read_imageui",
    *{f"{t}{n}" for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                          "float", "double", "half", "bool", "quad") for n in _SIZES},
    *{f"{f}{n}" for f in ("vload", "vstore") for n in _SIZES},
    *CUDA_TO_OPENCL_IDS.values(), "get_global_id", "get_global_size",
    *CUDA_TO_OPENCL_MATH.values(), *SHARED_FUNCTIONS,
})

#: Names a CUDA (C++) kernel cannot declare: C++ keywords that C lacks, CUDA's built-in
#: variables and types, and the functions opencl-to-cuda writes.
CUDA_RESERVED = frozenset({
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t",
    "char16_t", "char32_t", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "const_cast", "consteval", "constexpr", "constinit", "decltype", "delete", "dynamic_cast",
    "explicit", "export", "false", "friend", "mutable", "namespace", "new", "noexcept", "not",
    "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",
    "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual",
    "wchar_t", "xor", "xor_eq",
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3",
    "cudaTextureObject_t", "tex1Dfetch",
    *{f"{t}{n}" for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                          "longlong", "ulonglong", "float", "double") for n in (1, 2, 3, 4)},
    *OPENCL_TO_CUDA_MATH.values(),
})

RESERVED = {"opencl": OPENCL_RESERVED, "cuda": CUDA_RESERVED}


def rename_reserved(module: GModule, target: str) -> None:
    """Rename, in ``module``'s trees and parameters, every declared identifier ``target``
    reserves; first give back the user's names that ``target`` allows (an OpenCL name renamed
    for the CUDA IR, written out to OpenCL again)."""
    reserved = RESERVED[target]
    for proc in module.procedures:
        if proc.name in reserved:
            raise NaiveoptError(f"kernel name '{proc.name}' is reserved in "
                           f"{'OpenCL C' if target == 'opencl' else 'CUDA'} and a kernel "
                           "cannot be renamed (the host launches it by name)", proc.file, proc.line,
                                proc.func.decl.coord.column if proc.func.decl.coord else None)
    used = _module_names(module)
    if target == "opencl":      # CUDA built-ins and *f math calls: gone after the rewrite
        used -= set(CUDA_TO_OPENCL_IDS) | set(CUDA_TO_OPENCL_MATH)
    back = {}
    for proc in module.procedures:
        for written, user in proc.renamed.items():
            if user not in reserved and user not in used:
                back[written] = user
    if back:
        _apply(module, back)
        used = _module_names(module)
    declared = _declared(module)
    avoid = used | reserved | set(module.macros) | set(PREDEFINED_IDS) | \
        RESERVED["cuda"] | RESERVED["opencl"]
    mapping: dict[str, str] = {}
    for name in sorted(declared & reserved):
        new, k = f"{name}_", 0
        while new in avoid:
            k += 1
            new = f"{name}_{k}"
        avoid.add(new)
        mapping[name] = new
    if mapping:
        _apply(module, mapping)


def _module_names(module: GModule) -> set[str]:
    names = set()
    for tree in [*module.helpers, *(p.func for p in module.procedures)]:
        names |= identifiers(tree)
    for proc in module.procedures:
        names |= {p.name for p in proc.params}
    return names


def _declared(module: GModule) -> set[str]:
    """Names the user's code declares: helper functions, file-scope data (``__constant__
    int half;``: an OpenCL kernel argument, or program-scope data, there), parameters and
    locals."""
    names = {h.decl.name for h in module.helpers} | {g.name for g in module.globals}
    for tree in [*module.helpers, *(p.func for p in module.procedures)]:
        for node, _ in walk(tree):
            if isinstance(node, c_ast.Decl) and node.name and \
                    not isinstance(node.type, c_ast.FuncDecl):
                names.add(node.name)
    for proc in module.procedures:
        names |= {p.name for p in proc.params}
    return names


def _rename_text(expr: str | None, mapping: dict[str, str]) -> str | None:
    """A C expression string (a thread-space extent) with the names renamed."""
    if not expr:
        return expr
    return re.sub(r"[A-Za-z_]\w*", lambda m: mapping.get(m.group(0), m.group(0)), expr)


def _apply(module: GModule, mapping: dict[str, str]) -> None:
    """Rename declarations and uses (not struct fields, and calls only of helpers)."""
    helpers = {h.decl.name for h in module.helpers}
    for tree in [*module.helpers, *(p.func for p in module.procedures)]:
        skip = set()
        for node, parent in walk(tree):
            if isinstance(parent, c_ast.StructRef) and node is parent.field:
                skip.add(id(node))
            if isinstance(parent, c_ast.FuncCall) and node is parent.name and \
                    isinstance(node, c_ast.ID) and node.name not in helpers:
                skip.add(id(node))
        for node, _ in walk(tree):
            if isinstance(node, c_ast.ID) and node.name in mapping and id(node) not in skip:
                node.name = mapping[node.name]
            elif isinstance(node, c_ast.Decl) and node.name in mapping:
                if isinstance(node.type, c_ast.FuncDecl) and node.name not in helpers:
                    continue                      # a kernel's own declaration
                _rename_declaration(node, mapping)
            elif isinstance(node, TexFetch) and node.array in mapping:
                node.array = mapping[node.array]
    for g in module.globals:
        if g.name in mapping:
            g.name = mapping[g.name]
            _rename_declaration(g.decl, mapping)
    for proc in module.procedures:             # the analyses' records follow the tree
        proc.global_args = [mapping.get(n, n) for n in proc.global_args]
        for p in proc.params:
            if p.name in mapping:
                p.name = mapping[p.name]
        for m in proc.memory_expressions:
            m.array = mapping.get(m.array, m.array)
        for loop in proc.loops:
            loop.iterator = mapping.get(loop.iterator, loop.iterator)
        proc.pragma.global_dim = tuple(_rename_text(e, mapping)
                                       for e in proc.pragma.global_dim)
        renamed = {}
        for written, user in proc.renamed.items():
            renamed[mapping.get(written, written)] = user
        for old, new in mapping.items():
            if old not in proc.renamed:          # else the user's name is carried above
                renamed[new] = old
        proc.renamed = {w: u for w, u in renamed.items() if w != u}


def _rename_declaration(decl: c_ast.Decl, mapping: dict[str, str]) -> None:
    decl.name = mapping[decl.name]
    t = decl.type
    while not isinstance(t, c_ast.TypeDecl) and hasattr(t, "type"):
        t = t.type
    if isinstance(t, c_ast.TypeDecl):
        t.declname = mapping[t.declname] if t.declname in mapping else t.declname
