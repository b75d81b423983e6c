"""File-scope named constants of CUDA files, read as the macros they stand for.

CUDA code often names its tile and block sizes as host variables rather than macros
(``const int TILE_DIM = 32;`` in the NVIDIA blog's transpose, ``constexpr int BS = 16;``,
``static const float SCALE = 0.5f;``). nvcc lets device code read such a variable when it is
const, of scalar type and initialized by a constant expression (CUDA C++ Programming Guide,
"Const-qualified variables"), so kernels use them in indexes, loop bounds and shared-memory
extents. naiveopt's IR reads file-scope data only as ``__constant__``/``__device__`` arrays,
and its OpenCL output could not declare a shared array by a variable's size; a compile-time
constant is what a macro is, so each such line is rewritten, in place, to the ``#define``
of its value (its type kept by a cast where the literal alone would not have it), before
the file is parsed. Every later stage then sees an ordinary fixed macro: the block-constant
reading of ``blockIdx.x * TILE_DIM + threadIdx.x``, sizes fixed at compile time, the output's
macro definitions; host code that reads the name reads the macro.

A line is rewritten only when device code reads the name (a kernel, a helper, or the extent
or initializer of __constant__/__device__ data) and the file declares it nowhere else: a
macro would replace a parameter, local, member or function of that name too, so libclang
counts the declarations of every name (:func:`rewrite`); the declaration stands alone on
its line at file scope, and its initializer is literals, names and integer arithmetic.
"""
from __future__ import annotations

import re

from clang.cindex import CursorKind as K

from . import clang_setup as cs

_TYPES = ("unsigned long long int", "unsigned long long", "long long int", "long long",
          "unsigned long int", "unsigned long", "unsigned int", "unsigned", "long int", "long",
          "short", "int", "size_t", "float", "double")
_DECLARATION = re.compile(
    r"^(?P<indent>[ \t]*)(?P<quals>(?:(?:static|const|constexpr)\s+)+)"
    r"(?P<type>" + "|".join(t.replace(" ", r"\s+") for t in _TYPES) + r")\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<init>[^;,{}]+?)\s*;(?P<rest>\s*(?://.*|/\*.*?\*/\s*)?)$")
_INITIALIZER = re.compile(r"^[\w\s.+\-*/%()<>|&^~]+$")
_INTEGER_LITERAL = re.compile(r"^\d+$")
_CALL = re.compile(r"[A-Za-z_]\w*\s*\(")


def candidates(source: str) -> dict[int, re.Match]:
    """The lines (0-based) that declare a named constant at file scope, by their text."""
    code = _code_only(source).split("\n")
    lines = source.split("\n")
    out: dict[int, re.Match] = {}
    stack: list[bool] = []          # per open brace: whether it opens a scope (not extern "C")
    for n, line in enumerate(lines):
        m = _DECLARATION.match(line)
        quals = m.group("quals").split() if m else []
        if not any(stack) and m and ("const" in quals or "constexpr" in quals) and \
                _INITIALIZER.match(m.group("init")) and not _CALL.search(m.group("init")) and \
                code[n].strip():
            out[n] = m
        for at, ch in enumerate(code[n]):
            if ch == "{":
                # ``extern "C" {`` opens no scope: its declarations are at file scope
                stack.append(not _LINKAGE.search(line[:at]))
            elif ch == "}" and stack:
                stack.pop()
    return out


#: The head of a linkage block, ``extern "C" {`` (its brace on the same line).
_LINKAGE = re.compile(r'\bextern\s+"C(?:\+\+)?"\s*$')


def rewrite(path: str, source: str, macros: dict[str, str]) -> str:
    """``source`` with the file-scope named constants its device code reads (kernels,
    helpers, the extents and initializers of __constant__/__device__ data) as macros
    (the module docstring); names declared more than once in the file stay as written.
    ``macros``: the -D definitions that are the file's macros. libclang parses the file
    once more for this, only for files with candidates."""
    tu = cs.parse(path, source, "cuda", macros)
    declared: dict[str, int] = {}
    read: set[str] = set()
    device = (K.CUDAGLOBAL_ATTR, K.CUDADEVICE_ATTR, K.CUDACONSTANT_ATTR)
    for cursor in tu.cursor.walk_preorder():
        if cursor.location.file is None or cursor.location.file.name != path:
            continue
        if cursor.kind in (K.VAR_DECL, K.PARM_DECL, K.FIELD_DECL, K.FUNCTION_DECL,
                           K.TYPEDEF_DECL, K.ENUM_CONSTANT_DECL, K.CXX_METHOD,
                           K.FUNCTION_TEMPLATE, K.TEMPLATE_NON_TYPE_PARAMETER):
            declared[cursor.spelling] = declared.get(cursor.spelling, 0) + 1
        # device functions, and device data whose extent or initializer names a constant
        # (``__constant__ float CT[CW];``)
        if cursor.kind in (K.FUNCTION_DECL, K.VAR_DECL) and \
                cs.at_file_scope(cursor) and \
                any(c.kind in device for c in cursor.get_children()):
            read |= {n.spelling for n in cursor.walk_preorder()
                     if n.kind == K.DECL_REF_EXPR and n.referenced is not None and
                     n.referenced.kind == K.VAR_DECL and
                     cs.at_file_scope(n.referenced)}
    rewritten, _ = as_macros(
        source, {n: c for n, c in declared.items() if n in read})
    return rewritten


def as_macros(source: str, declared: dict[str, int]) -> tuple[str, list[str]]:
    """``source`` with its file-scope named constants as ``#define`` lines (module
    docstring), and their names in order; lines keep their numbers. ``declared`` counts the
    declarations (variables, parameters, members, functions) of each name in the file, as
    the compiler sees them: a name declared more than once is left alone."""
    lines = source.split("\n")
    names = []
    for n, m in candidates(source).items():
        name = m.group("name")
        if declared.get(name, 0) != 1:
            continue
        type_ = " ".join(m.group("type").split())
        init = m.group("init").strip()
        value = init if type_ == "int" and _INTEGER_LITERAL.match(init) \
            else f"(({type_})({init}))"
        lines[n] = f"{m.group('indent')}#define {name} {value}{m.group('rest')}"
        names.append(name)
    return "\n".join(lines), names


def _code_only(source: str) -> str:
    """``source`` with comments, string and character literals blanked (newlines kept)."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank,
                  source, flags=re.S)
