"""libclang set-up: loading, the extra C entry points the Python bindings lack, the flags.

libclang parses kernels without any system or SDK header (they do not parse cleanly, see
shared/toolchain.md): the prelude (prelude.py) declares what kernel code may name, and the
headers it covers are read as empty files; OpenCL also uses clang's own builtin declarations.
"""
from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from functools import cache

import clang.cindex as ci

from ..errors import NaiveoptError
from .prelude import (INCLUDE_DIR, PRELUDE_NAME, cuda_prelude, header_files, opencl_prelude,
                      prelude_words)

#: Names of the paper's predefined thread ids. Kernels in the paper's macro style use them
#: without declaring them; the front end then defines them (in CUDA terms) before parsing.
PAPER_IDS: dict[str, str] = {
    "idx": "(blockIdx.x*blockDim.x+threadIdx.x)",
    "idy": "(blockIdx.y*blockDim.y+threadIdx.y)",
    "tidx": "threadIdx.x",
    "tidy": "threadIdx.y",
    "bidx": "blockIdx.x",
    "bidy": "blockIdx.y",
    "blockDimX": "blockDim.x",
    "blockDimY": "blockDim.y",
    "gridDimX": "gridDim.x",
    "gridDimY": "gridDim.y",
    "globalDimX": "(gridDim.x*blockDim.x)",
    "globalDimY": "(gridDim.y*blockDim.y)",
}
PAPER_IDS_OPENCL: dict[str, str] = {
    "idx": "((int)get_global_id(0))",
    "idy": "((int)get_global_id(1))",
    "tidx": "((int)get_local_id(0))",
    "tidy": "((int)get_local_id(1))",
    "bidx": "((int)get_group_id(0))",
    "bidy": "((int)get_group_id(1))",
    "blockDimX": "((int)get_local_size(0))",
    "blockDimY": "((int)get_local_size(1))",
    "gridDimX": "((int)get_num_groups(0))",
    "gridDimY": "((int)get_num_groups(1))",
    "globalDimX": "((int)get_global_size(0))",
    "globalDimY": "((int)get_global_size(1))",
}


#: Flags for both dialects: no system header is ever read (the prelude's empty stand-ins are
#: found instead), and no error limit (errors in host code, which naiveopt passes through
#: without judging, must not stop the parse before a kernel further down).
_COMMON = ["-nostdinc", "-nostdinc++", "-isystem", INCLUDE_DIR, "-ferror-limit=0"]


def cuda_args(defines: dict[str, str]) -> list[str]:
    """Command-line flags that make libclang accept a CUDA kernel file without the SDK."""
    return ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
            "--cuda-gpu-arch=sm_90", "-Wno-unknown-cuda-version", *_COMMON,
            "-include", PRELUDE_NAME, *[f"-D{k}={v}" for k, v in defines.items()]]


def opencl_args(defines: dict[str, str]) -> list[str]:
    """Flags for OpenCL C 1.2 with clang's builtin declarations instead of opencl-c.h."""
    return ["-x", "cl", "-cl-std=CL1.2", "-cl-no-stdinc", "-Xclang",
            "-fdeclare-opencl-builtins", *_COMMON, "-include", PRELUDE_NAME,
            *[f"-D{k}={v}" for k, v in defines.items()]]


@cache
def _lib() -> ctypes.CDLL:
    """The loaded libclang with the operator-kind and evaluation entry points registered."""
    lib = ci.conf.lib
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    lib.clang_getBinaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lib.clang_getBinaryOperatorKindSpelling.restype = ci._CXString
    lib.clang_getUnaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lib.clang_getUnaryOperatorKindSpelling.restype = ci._CXString
    lib.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
    lib.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    return lib


def top_level(cursor: ci.Cursor):
    """The declarations at file scope under ``cursor`` (a translation unit's cursor), those
    of ``extern "C"`` blocks and declarations (``extern "C" __global__ void k(...)``, as code
    loaded by name from Python or C writes its kernels) in their place."""
    for child in cursor.get_children():
        if child.kind == ci.CursorKind.LINKAGE_SPEC:
            yield from top_level(child)
        else:
            yield child


def at_file_scope(cursor: ci.Cursor) -> bool:
    """Whether a declaration is at file scope (inside ``extern "C"`` too)."""
    parent = cursor.semantic_parent
    while parent is not None and parent.kind == ci.CursorKind.LINKAGE_SPEC:
        parent = parent.semantic_parent
    return parent is not None and parent.kind == ci.CursorKind.TRANSLATION_UNIT


def extern_c(cursor: ci.Cursor) -> bool:
    """Whether a file-scope declaration is written in an ``extern "C"`` declaration or
    block (C linkage: its name is not mangled)."""
    parent = cursor.lexical_parent
    if parent is None or parent.kind != ci.CursorKind.LINKAGE_SPEC:
        return False
    return [t.spelling for _, t in zip(range(2), parent.get_tokens())] == ["extern", '"C"']


def binary_operator(cursor: ci.Cursor) -> str:
    """The spelling of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR cursor ('+', '+=', ...)."""
    lib = _lib()
    kind = lib.clang_getCursorBinaryOperatorKind(cursor)
    return ci._CXString.from_result(lib.clang_getBinaryOperatorKindSpelling(kind))


def unary_operator(cursor: ci.Cursor) -> str:
    """The pycparser spelling of a UNARY_OPERATOR cursor ('p++' for postfix increment)."""
    lib = _lib()
    kind = lib.clang_getCursorUnaryOperatorKind(cursor)
    spelling = ci._CXString.from_result(lib.clang_getUnaryOperatorKindSpelling(kind))
    return {"PostInc": "p++", "PostDec": "p--", "PreInc": "++", "PreDec": "--"}.get(
        _UNARY_NAMES.get(kind, ""), spelling)


_UNARY_NAMES = {1: "PostInc", 2: "PostDec", 3: "PreInc", 4: "PreDec"}


def var_initializer(cursor: ci.Cursor) -> ci.Cursor | None:
    """The initializer expression of a VAR_DECL, or None (the bindings cannot tell otherwise)."""
    init = _lib().clang_Cursor_getVarDeclInitializer(cursor)
    if init is None or init.kind.is_invalid():
        return None
    init._tu = cursor._tu  # what Cursor.from_result would do; keeps children walkable
    return init


def evaluate(cursor: ci.Cursor) -> int | float | None:
    """Constant-fold an expression cursor (used for literals that come out of macros)."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == 1:  # CXEval_Int
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == 2:  # CXEval_Float
            return float(lib.clang_EvalResult_getAsDouble(res))
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


@cache
def _prelude(dialect: str, words: frozenset[str]) -> str:
    return cuda_prelude(set(words)) if dialect == "cuda" else opencl_prelude(set(words))


def parse(path: str, source: str, dialect: str, defines: dict[str, str]) -> ci.TranslationUnit:
    """Parse ``source`` (named ``path``) as CUDA or OpenCL; raise on the first error."""
    _lib()
    prelude = _prelude(dialect, prelude_words(path, source, defines))
    args = cuda_args(defines) if dialect == "cuda" else opencl_args(defines)
    index = ci.Index.create()
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    files = [(path, source), (PRELUDE_NAME, prelude), *header_files(path, source)]
    try:
        tu = index.parse(path, args=args, unsaved_files=files, options=options)
    except ci.TranslationUnitLoadError as exc:
        raise NaiveoptError(f"libclang could not parse the file ({exc})", path) from exc
    return tu


#: An undeclared name of OpenCL's image API (a sampler flag, an image read or query).
_IMAGE_NAME = re.compile(r"'((?:CLK_(?:ADDRESS|FILTER|NORMALIZED)_\w+)|(?:(?:read|write)_image"
                         r"\w*)|(?:get_image_\w+))'")


def first_error(tu: ci.TranslationUnit, path: str, source: str = "",
                ignore: Callable[[int, int], bool] | None = None,
                unread: list[str] | None = None) -> NaiveoptError | None:
    """The first error diagnostic of a translation unit as a located NaiveoptError.

    Errors at locations of the file that ``ignore(line, col)`` accepts (host code, see
    host.py) are not naiveopt's to report. An error inside a header the kernel includes is
    reported at the #include line: kernels are parsed without system or SDK headers, so the
    include itself is the problem; ``unread`` names the headers that were not read (their
    names are what an undeclared identifier most likely came from)."""
    for diag in tu.diagnostics:
        if diag.severity >= ci.Diagnostic.Error:
            loc = diag.location
            file = loc.file.name if loc.file else path
            if file == PRELUDE_NAME:
                file = path
            if file == path and ignore is not None and ignore(loc.line, loc.column):
                continue
            if file != path and not file.startswith(INCLUDE_DIR):
                for number, line in enumerate(source.splitlines(), start=1):
                    if line.lstrip().startswith("#") and "include" in line:
                        return NaiveoptError(
                            f"'{line.strip()}': naiveopt parses kernels without system or "
                            "SDK headers; remove the include", path, number,
                            line.index("#") + 1)
            message = diag.spelling
            image = _IMAGE_NAME.search(message)
            if image:
                message = ("OpenCL images and samplers are not supported: naiveopt optimizes "
                           f"kernels over buffers (__global pointers) ('{image.group(1)}')")
            elif unread and ("undeclared" in message or "unknown type name" in message):
                message += (" (naiveopt does not read " + ", ".join(f"<{h}>" for h in unread)
                            + ": declare the name in the file, or avoid it in kernel code)")
            return NaiveoptError(message, file, loc.line, loc.column)
    return None
