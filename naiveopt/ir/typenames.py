"""Type names as the user spelled them: typedefs (``DATA_TYPE``, ``size_t``, ``int64_t``).

The analyses and passes reason about the type a name denotes (``float``, ``unsigned long``):
its element size, whether it is floating point, what a snippet may declare with it (pycparser
knows no typedef). The output should still say ``DATA_TYPE alpha`` and ``size_t i`` where the
input did. So a declaration or cast whose type the user spelled through a typedef holds a
:class:`TypeName`: an ``IdentifierType`` whose ``names`` are the resolved type, for everyone
who reads the tree, and whose ``spelling`` is what the printer writes.

A user's typedef is written into the output (``typedef float DATA_TYPE;``, from
``GModule.typedefs``) when the kernels still spell a type through it. The standard names need
no line: CUDA has them from its headers (the output includes the header, see
frontend/prelude.py) and OpenCL C has ``size_t``, ``ptrdiff_t``, ``intptr_t`` and
``uintptr_t`` built in; the fixed-width names of <stdint.h> are written as OpenCL's own types,
and OpenCL C forbids the size types as kernel arguments, where the resolved type is written.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from .elements import element
from .rewrite import walk

#: Type words of C and OpenCL integer types (``unsigned``, ``size_t``, ``uint``...).
INTEGER_WORDS = {"int", "unsigned", "signed", "long", "short", "char", "size_t", "ptrdiff_t",
                 "uint", "ushort", "ulong", "uchar", "int32_t", "uint32_t", "int64_t",
                 "uint64_t"}
_INTEGER_CAST = re.compile(r"\(\s*(?:(?:%s)\s*)+\)(?=\s*[\w(])" % "|".join(
    sorted(INTEGER_WORDS | {"const"}, key=len, reverse=True)))


def without_integer_casts(text: str) -> str:
    """``text`` (C integer arithmetic) without its casts to integer types (``(long) w``,
    ``((unsigned)(4))``): for the non-negative, in-range sizes and constants naiveopt
    evaluates, such a cast changes no value."""
    return _INTEGER_CAST.sub(" ", text)


#: Those among them whose values are never negative.
UNSIGNED_WORDS = {"unsigned", "size_t", "uint", "ushort", "ulong", "uchar", "uint32_t",
                  "uint64_t"}




def integer_type(type_node: c_ast.Node) -> bool:
    """Whether a type (a cast's ``to_type`` Typename, a TypeDecl or its IdentifierType) is a
    plain integer type, qualifiers allowed (``long``, ``const size_t``, a typedef of one)."""
    while isinstance(type_node, (c_ast.Typename, c_ast.TypeDecl)):
        type_node = type_node.type
    if not isinstance(type_node, c_ast.IdentifierType):
        return False
    words = [w for name in type_node.names for w in name.split()
             if w not in ("const", "volatile")]
    return bool(words) and all(w in INTEGER_WORDS for w in words)


#: CUDA type spellings OpenCL C does not have: 'long long' is reserved there (PoCL aborts on
#: it); OpenCL's 64-bit integer is 'long', as CUDA's 'long long' is.
OPENCL_TYPE_NAMES = {"long long": "long", "long long int": "long", "signed long long": "long",
                     "unsigned long long": "ulong", "unsigned long long int": "ulong"}

#: <stdint.h> names, spelled as OpenCL C's types of the same width and signedness.
OPENCL_SPELLINGS = {"int8_t": "char", "uint8_t": "uchar", "int16_t": "short",
                    "uint16_t": "ushort", "int32_t": "int", "uint32_t": "uint",
                    "int64_t": "long", "uint64_t": "ulong"}
#: Types OpenCL C does not allow as kernel arguments (6.9.k), spelled as what they denote.
OPENCL_NO_KERNEL_ARGUMENT = ("size_t", "ptrdiff_t", "intptr_t", "uintptr_t")


class TypeName(c_ast.IdentifierType):
    """A type the user spelled through a typedef: ``names`` is the type it denotes (what the
    passes read), ``spelling`` the name the output writes."""

    __slots__ = ("spelling",)
    attr_names = ("names", "spelling")

    def __init__(self, names: list[str], spelling: str, coord: object = None) -> None:
        super().__init__(names, coord)
        self.spelling = spelling


def type_node(resolved: str, spelling: str | None) -> c_ast.IdentifierType:
    """The IdentifierType of a declaration: a TypeName where the user's spelling differs."""
    if spelling and spelling != resolved:
        return TypeName([resolved], spelling)
    return c_ast.IdentifierType([resolved])


def spellings(node: c_ast.Node) -> set[str]:
    """The typedef names a tree still writes."""
    return {n.spelling for n, _ in walk(node) if isinstance(n, TypeName)}


def to_opencl(node: c_ast.Node, kernel_params: c_ast.ParamList | None = None) -> None:
    """Respell a tree's type names for OpenCL C: <stdint.h> names as OpenCL's types, and the
    size types of ``kernel_params`` (a kernel's parameter list) as what they denote."""
    for n, _ in walk(node):
        if isinstance(n, TypeName) and n.spelling in OPENCL_SPELLINGS:
            n.spelling = OPENCL_SPELLINGS[n.spelling]
    for decl in kernel_params.params if kernel_params is not None else []:
        for n, _ in walk(decl):
            if isinstance(n, TypeName) and n.spelling in OPENCL_NO_KERNEL_ARGUMENT:
                n.spelling = " ".join(n.names)


def module_trees(module) -> list[c_ast.Node]:
    """The trees of a module that the output writes: kernels and helper functions."""
    return [p.func for p in module.procedures] + list(module.helpers)


def used_names(module) -> set[str]:
    """Identifiers and typedef spellings the written trees use (for the headers a CUDA output
    includes, frontend/prelude.headers_for)."""
    out: set[str] = set()
    for tree in module_trees(module):
        for n, _ in walk(tree):
            if isinstance(n, TypeName):
                out.add(n.spelling)
            elif isinstance(n, c_ast.ID):
                out.add(n.name)
    return out | module.verbatim_names


def typedef_lines(module, target: str) -> list[str]:
    """``typedef float DATA_TYPE;`` for each of the file's typedefs the written trees still
    spell a type through, in the file's order (OpenCL: the type in OpenCL C's spelling)."""
    used = set().union(*(spellings(t) for t in module_trees(module)))
    if target == module.dialect:
        used |= module.verbatim_names           # kernels written as they are (emit.py)
    lines = []
    for name, resolved in module.typedefs.items():
        if name in used:
            if target == "opencl":
                resolved = OPENCL_TYPE_NAMES.get(resolved, resolved)
            lines.append(f"typedef {resolved} {name};")
    return lines


def scalar_locals(body: c_ast.Node, accepted) -> dict[str, str]:
    """The scalar locals declared in ``body`` whose resolved type is one of ``accepted``
    (``float``, ``unsigned long``, ...): name -> type. A name declared twice is left out:
    which declaration an update refers to is then not a name's matter."""
    seen: dict[str, str | None] = {}
    for node, _ in walk(body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.TypeDecl) and \
                isinstance(node.type.type, c_ast.IdentifierType):
            name = " ".join(node.type.type.names)
            seen[node.name] = name if node.name not in seen and name in accepted else None
    return {n: t for n, t in seen.items() if t}



def is_wide_integer(type_node: c_ast.Node) -> bool:
    """Whether a type (a cast's ``to_type`` Typename, a TypeDecl or its IdentifierType) is a
    64-bit integer type (``size_t``, ``int64_t``, ``long long``, a typedef of one)."""
    while isinstance(type_node, (c_ast.Typename, c_ast.TypeDecl)):
        type_node = type_node.type
    if not isinstance(type_node, c_ast.IdentifierType) or not integer_type(type_node):
        return False
    e = element(" ".join(w for name in type_node.names for w in name.split()
                         if w not in ("const", "volatile")))
    return e is not None and e.dtype in ("int64", "uint64")
