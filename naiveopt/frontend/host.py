"""Host code in a kernel file: told apart from device code, kept out of the IR, passed through.

Tutorials and whole programs put ``main()`` (``cudaMalloc``, ``cudaMemcpy``, the launch, the
check) next to the kernels. naiveopt optimizes kernels; host code is not its to judge or
rewrite (rewriting the launches is the launch tooling's job), so it is taken apart from the
device code here and written into a CUDA output verbatim, after the optimized kernels:

- a top-level declaration of the input file is *device code* when it is a kernel, a
  ``__device__`` function, ``__constant__``/``__device__`` data, a typedef, or a struct a
  kernel takes by value or points to (written before the kernels: ir/structs.py); everything
  else (host functions and their prototypes, host variables, classes, namespaces, using
  directives, templates without ``__global__``/``__device__``) is *host code*;
- libclang parses the host code with the rest (the prelude declares the common CUDA runtime
  and C library names, so most host code parses cleanly), but errors inside it are ignored:
  nvcc judges it, and a kernel that parsed is no less correct for a host error further down;
- the host code's text is the input with the device code, the ``#pragma naiveopt`` lines
  and the file's leading comment cut out; a CUDA output writes what runs to the last
  ``#include`` (the preamble: includes and the defines they may depend on) before the
  kernels and the rest after them.
"""
from __future__ import annotations

import re

import clang.cindex as ci

from . import clang_setup as cs

K = ci.CursorKind

#: Top-level cursor kinds that are declarations of the program (not preprocessing records).
_DECLARATIONS = {K.FUNCTION_DECL, K.VAR_DECL, K.FUNCTION_TEMPLATE, K.CLASS_TEMPLATE,
                 K.CLASS_DECL, K.STRUCT_DECL, K.UNION_DECL, K.ENUM_DECL, K.NAMESPACE,
                 K.LINKAGE_SPEC, K.USING_DIRECTIVE, K.USING_DECLARATION, K.TYPE_ALIAS_DECL,
                 K.TYPEDEF_DECL, K.NAMESPACE_ALIAS, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION,
                 K.STATIC_ASSERT}
_DEVICE_ATTRS = {K.CUDAGLOBAL_ATTR, K.CUDADEVICE_ATTR, K.CUDACONSTANT_ATTR,
                 K.CUDASHARED_ATTR}
_DEVICE_WORDS = {"__global__", "__device__", "__constant__", "__shared__", "__managed__"}


class FileParts:
    """The top-level declarations of one parsed file, told apart into device and host code."""

    def __init__(self, tu: ci.TranslationUnit, path: str, source: str, dialect: str) -> None:
        self.path, self.dialect = path, dialect
        self._bytes = source.encode()
        self.declarations = [c for c in cs.top_level(tu.cursor)
                             if c.kind in _DECLARATIONS and c.location.file is not None
                             and c.location.file.name == path]
        self._kernel_structs = {
            record.get_usr()
            for c in self.declarations if c.kind == K.FUNCTION_DECL and any(
                a.kind == K.CUDAGLOBAL_ATTR for a in c.get_children())
            for arg in c.get_arguments()
            if (record := _record(arg.type)) is not None} | {
            record.get_usr()        # a struct the host fills in device memory: written first
            for c in self.declarations if c.kind == K.VAR_DECL and any(
                a.kind in (K.CUDACONSTANT_ATTR, K.CUDADEVICE_ATTR) for a in c.get_children())
            if (record := _record(c.type)) is not None}
        self.device = [c for c in self.declarations if self.is_device(c)]
        self.host = [c for c in self.declarations if not self.is_device(c)]
        self._host_usrs = {c.get_usr() for c in self.host}
        self._host_extents = [((c.extent.start.line, c.extent.start.column),
                               (c.extent.end.line, c.extent.end.column)) for c in self.host]

    def is_device(self, cursor: ci.Cursor) -> bool:
        """Whether a top-level declaration is device code (or a typedef, which both sides
        may use); in OpenCL C every declaration is."""
        if self.dialect == "opencl" or cursor.kind == K.TYPEDEF_DECL:
            return True
        if cursor.kind in (K.STRUCT_DECL, K.CLASS_DECL) and \
                cursor.get_usr() in self._kernel_structs:
            return True                 # a kernel's struct parameter: written before it
        if any(c.kind in _DEVICE_ATTRS for c in cursor.get_children()):
            return True
        # spelled device code whose attribute clang dropped for an error (``__global__ int
        # k``): its errors are naiveopt's to report
        start = cursor.extent.start.offset
        head = self._bytes[start:max(start, cursor.location.offset)].decode(errors="replace")
        return any(w in _DEVICE_WORDS for w in re.findall(r"\w+", head))

    def is_host(self, cursor: ci.Cursor) -> bool:
        """Whether a declaration (referenced from anywhere) is one of the file's host ones."""
        return cursor.get_usr() in self._host_usrs

    def in_host_code(self, line: int, col: int) -> bool:
        """Whether a location of the input file lies inside host code."""
        return any(a <= (line, col) <= b for a, b in self._host_extents)


    def explain(self, err: NaiveoptError) -> NaiveoptError:
        """A parse error, reworded where clang's words hide the cause: device code calling
        one of the file's host functions is 'no matching function' to clang."""
        called = re.match(r"no matching function for call to '(\w+)'", err.message)
        if called and called.group(1) in {c.spelling for c in self.host}:
            err.message = (f"host function '{called.group(1)}' is called from device code: "
                           "declare it __device__")
        return err

    def check_device_code(self, error: Callable[[ci.Cursor, str], NaiveoptError]) -> None:
        """Device code that names the file's host code (a host variable, a host function) is
        a located error (``error(cursor, message)``): the output's kernels could not compile."""
        for fn in self.device:
            if fn.kind != K.FUNCTION_DECL:
                continue
            for node in fn.walk_preorder():
                ref = node.referenced if node.kind in (K.DECL_REF_EXPR, K.CALL_EXPR) else None
                if ref is None or not self.is_host(ref):
                    continue
                if ref.kind == K.VAR_DECL:
                    raise error(node, f"host variable '{ref.spelling}' is read in device "
                                      "code: kernels read file-scope data declared "
                                      "__constant__ or __device__")
                if ref.kind == K.FUNCTION_DECL:
                    raise error(node, f"host function '{ref.spelling}' is called from device "
                                      "code: declare it __device__")

    def split_text(self, source: str) -> tuple[str, str]:
        """(preamble, host code) as written (split_text); the host code is '' when the file
        has none (what is left is then macros and comments the kernels already carry)."""
        preamble, rest = split_text(source, self.device)
        return preamble, rest if self.host else ""


def _record(ctype: ci.Type) -> ci.Cursor | None:
    """The struct a parameter's type is or points to, or None."""
    ctype = ctype.get_canonical()
    if ctype.kind == ci.TypeKind.POINTER:
        ctype = ctype.get_pointee().get_canonical()
    return ctype.get_declaration() if ctype.kind == ci.TypeKind.RECORD else None


_NAIVEOPT_PRAGMA = re.compile(r"^\s*#\s*pragma\s+naiveopt\b")
_INCLUDE_LINE = re.compile(r"^\s*#\s*include\b")
_OPENS = re.compile(r"^\s*#\s*if(n?def)?\b")
_CLOSES = re.compile(r"^\s*#\s*endif\b")


#: A line that holds only ``__launch_bounds__(...)``, which the prelude defines away: the
#: kernel's extent starts after it.
_BOUNDS_LINE = re.compile(r"^\s*__launch_bounds__\s*\([^()]*\)\s*$")


def first_line(cursor: ci.Cursor, lines: list[str]) -> int:
    """The first line (1-based) of a declaration's text: its extent's, or the line above it
    where that holds the kernel's ``__launch_bounds__`` alone."""
    line = cursor.extent.start.line
    while line > 1 and _BOUNDS_LINE.match(lines[line - 2]):
        line -= 1
    return line


def split_text(source: str, device: list[ci.Cursor]) -> tuple[str, str]:
    """(preamble, rest) of the input's text with its device code and ``#pragma naiveopt``
    lines cut out, verbatim. The preamble runs to the last ``#include`` (and the end of any
    conditional around it), so the defines an include depends on stay before it; the rest is
    the host code and what surrounds it (macros, comments). The file's leading comment, which
    describes the kernels, is left out."""
    lines = source.split("\n")
    cut = [False] * len(lines)
    for c in device:
        if c.kind == K.TYPEDEF_DECL:
            continue
        for line in range(first_line(c, lines), c.extent.end.line + 1):
            if 0 < line <= len(lines):
                cut[line - 1] = True
        # a declaration's ';' after its extent (a variable) goes with it
        end = c.extent.end.line - 1
        if 0 <= end < len(lines) - 1 and lines[end + 1].strip() == ";":
            cut[end + 1] = True
    kept = [line for line, gone in zip(lines, cut) if not gone and not _NAIVEOPT_PRAGMA.match(line)]
    while kept and (not kept[0].strip() or kept[0].lstrip().startswith("//")):
        kept.pop(0)
    last = max((i for i, line in enumerate(kept) if _INCLUDE_LINE.match(line)), default=-1)
    depth = sum(1 if _OPENS.match(line) else -1 if _CLOSES.match(line) else 0
                for line in kept[:last + 1])
    while depth > 0 and last + 1 < len(kept):
        last += 1
        depth += 1 if _OPENS.match(kept[last]) else -1 if _CLOSES.match(kept[last]) else 0
    return _tidy(kept[:last + 1]), _tidy(kept[last + 1:])


#: An ``extern "C" { }`` block left empty once its device code is cut out.
_EMPTY_EXTERN_C = re.compile(r'^[ \t]*extern[ \t]+"C"[ \t]*\{\s*\}[ \t]*;?[ \t]*$\n?', re.M)


def _tidy(lines: list[str]) -> str:
    text = _EMPTY_EXTERN_C.sub("", "\n".join(lines))
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return text + "\n" if text.strip() else ""
