"""Kernels naiveopt cannot read, written into the output as they are.

A file of several kernels often holds one that uses what naiveopt does not model (a warp
shuffle reduction beside elementwise maps, a debugging ``printf``). Rejecting the file would
leave its readable kernels unoptimized; instead such a kernel is carried through as text, with
a located warning that it is neither optimized nor verified (OptimizeResult.left_as_written),
and only where the output can hold it unchanged: the input's own dialect, and nothing it needs
that the output would not define. What it needs is read from the clang cursor:

* a kernel that launches another (dynamic parallelism) keeps the file out: the launched
  kernel's optimized form may need another geometry;
* file-scope data (``__constant__`` / ``__device__`` variables) it names keeps the file out:
  the readable kernels are analysed and verified on the assumption that no kernel writes them;
* struct types and function-like macros it uses are not written by the output for a kernel it
  did not read (structs are written for the kernels' parameters, macros are expanded by the
  translation);
* object-like macros and the file's scalar typedefs it names are (GModule.verbatim_names).
"""

from __future__ import annotations

import re

import clang.cindex as ci

from . import clang_setup as cs
from . import host

K = ci.CursorKind

_FUNCTION_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)\(", re.M)


def blocker(fn: ci.Cursor, source: str) -> str | None:
    """Why kernel ``fn`` cannot be written as it is into an output of its own dialect, or
    None when it can."""
    function_macros = set(_FUNCTION_MACRO.findall(source))
    for token in _tokens(fn):
        if token.kind == ci.TokenKind.IDENTIFIER and token.spelling in function_macros:
            return f"it uses the function-like macro '{token.spelling}'"
    for node in fn.walk_preorder():
        if node.kind in (K.CALL_EXPR, K.DECL_REF_EXPR) and node.referenced is not None and \
                node.referenced.kind == K.FUNCTION_DECL and \
                any(c.kind == K.CUDAGLOBAL_ATTR for c in node.referenced.get_children()):
            # (a launch from device code: the kernel it launches may change its geometry)
            return f"it launches kernel '{node.referenced.spelling}'"
        if node.kind == K.CALL_EXPR and node.referenced is not None and \
                not _builtin(node.referenced) and \
                any(_record(arg.type) for arg in node.referenced.get_arguments()):
            # (the translation passes a helper's struct parameters field by field)
            return f"it calls '{node.spelling}', which takes a struct"
        if node.kind == K.DECL_REF_EXPR and node.referenced is not None and \
                node.referenced.kind == K.VAR_DECL and \
                not _builtin(node.referenced) and node.referenced.lexical_parent is not None and \
                node.referenced.lexical_parent.kind in (K.TRANSLATION_UNIT, K.LINKAGE_SPEC,
                                                         K.NAMESPACE):
            return f"it names the file-scope variable '{node.spelling}'"
        if node.kind == K.TYPE_REF:
            if _record(node.type):
                return f"it uses the type '{node.type.spelling}'"
    return None


def _record(ctype: ci.Type) -> bool:
    """Whether a type is, or points to, a struct, union or enum of the file."""
    canonical = ctype.get_canonical()
    while canonical.kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY):
        canonical = (canonical.get_pointee() if canonical.kind == ci.TypeKind.POINTER
                     else canonical.element_type).get_canonical()
    return canonical.kind in (ci.TypeKind.RECORD, ci.TypeKind.ENUM) and \
        not _builtin(canonical.get_declaration())


def _builtin(decl: ci.Cursor) -> bool:
    """A declaration of the prelude (CUDA's vector types, ``uint3``...), not of the file."""
    loc = decl.location
    return loc.file is None or loc.file.name == cs.PRELUDE_NAME


def text(fn: ci.Cursor, source: str) -> str:
    """The kernel's definition as the input writes it (its whole lines), with ``extern "C"``
    before it where it stands in an ``extern "C" {}`` block the output does not keep."""
    lines = source.split("\n")
    lines = lines[host.first_line(fn, lines) - 1:fn.extent.end.line]
    written = "\n".join(lines).rstrip()
    if cs.extern_c(fn) and not re.match(r'\s*extern\s+"C"', written):
        written = 'extern "C" ' + written.lstrip()
    return written


def names(fn: ci.Cursor) -> set[str]:
    """The identifiers the kernel's text spells (macros and typedefs the output must define)."""
    return {t.spelling for t in _tokens(fn) if t.kind == ci.TokenKind.IDENTIFIER}


def _tokens(fn: ci.Cursor):
    """The tokens of the kernel's lines. (``fn.get_tokens()`` yields none for a CUDA kernel:
    its extent starts inside ``__global__``, a macro of the prelude.)"""
    tu, end = fn.translation_unit, fn.extent.end
    start = ci.SourceLocation.from_position(tu, end.file, fn.extent.start.line, 1)
    return tu.get_tokens(extent=ci.SourceRange.from_locations(start, end))
