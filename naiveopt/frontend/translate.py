"""Translate libclang cursors into pycparser c_ast nodes.

libclang gives a faithful, fully preprocessed AST; pycparser's c_ast gives a small mutable tree
with a visitor and a generator. This module maps the subset of C used in GPU kernels from one to
the other and rejects everything else with a located error, so that no construct is silently
dropped or mistranslated.
"""
from __future__ import annotations

import copy
import os
import re

import clang.cindex as ci
from pycparser import c_ast

from ..errors import UnsupportedConstruct
from ..ir import atomics, cu_complex, helper_math
from ..ir.build import expression
from ..ir.elements import element
from ..ir.literals import float_suffix, literal_token
from ..ir.typenames import type_node as ir_type_node
from ..ir.rewrite import side_effect_free as pure, walk
from . import clang_setup as cs
from . import typed_builtins, vector_casts
from .pointer_offsets import PointerOffsets, strip
from .prelude import (CONSTANTS, OUT_OF_SCOPE_FUNCTIONS, PROMOTING_FUNCTIONS,
                      cuda_device_function_names)

K = ci.CursorKind

_QUALIFIER_WORDS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "__global",
                    "__local", "__constant", "__private", "global", "local", "constant",
                    "private", "struct"}
_TYPEDEF_SPELLINGS = {"uint": "unsigned int", "uchar": "unsigned char",
                      "ushort": "unsigned short", "ulong": "unsigned long"}
VECTOR_TYPES = {f"{b}{n}" for b in ("float", "int", "uint", "char", "uchar", "short", "ushort",
                                    "long", "ulong", "double")
                for n in (2, 3, 4, 8, 16)}
_SCALAR_KINDS = {getattr(ci.TypeKind, k) for k in (
    "BOOL", "CHAR_U", "UCHAR", "USHORT", "UINT", "ULONG", "ULONGLONG", "CHAR_S", "SCHAR",
    "SHORT", "INT", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "HALF")}
_IDENT = re.compile(r"[A-Za-z_]\w*")


def _words(spelling: str) -> str:
    return " ".join(w for w in spelling.replace("*", " ").split() if w not in _QUALIFIER_WORDS)


#: OpenCL's vector loads and stores of 2, 3 or 4 elements (translated into scalar accesses).
_VLOAD = re.compile(r"vload[234]")
_VSTORE = re.compile(r"vstore[234]")


def _from_helper_math(ref: ci.Cursor | None) -> bool:
    """Whether a call's function is one helper_math.h declares (the stand-in the front end
    reads for it, frontend/prelude.header_files)."""
    if ref is None or ref.location.file is None:
        return False
    return os.path.basename(ref.location.file.name) == helper_math.HEADER


def _defined(cursor: ci.Cursor) -> bool:
    """Whether a call's function is one the file defines (not a built-in of that name)."""
    return cursor.referenced is not None and cursor.referenced.is_definition()


def _value_call(statement: ci.Cursor, name: str) -> int | None:
    """The hash of a call of built-in ``name`` that is ``statement``'s whole value: the
    statement itself, the initializer of its one declaration, or the right side of its
    plain assignment (a store the call makes may then move before the statement)."""
    node = strip(statement)
    if node.kind == K.DECL_STMT:
        decls = list(node.get_children())
        if len(decls) != 1 or decls[0].kind != K.VAR_DECL:
            return None
        init = cs.var_initializer(decls[0])
        node = strip(init) if init is not None else None
    elif node.kind == K.BINARY_OPERATOR and cs.binary_operator(node) == "=":
        node = strip(list(node.get_children())[1])
    if node is not None and node.kind == K.CALL_EXPR and node.spelling == name and \
            not _defined(node):
        return node.hash
    return None


def _opencl_sincos(cursor: ci.Cursor) -> bool:
    """Whether a call is OpenCL's built-in ``sincos(x, &c)`` (CUDA's takes three
    arguments)."""
    return cursor.spelling == "sincos" and len(list(cursor.get_arguments())) == 2 and \
        not _defined(cursor)


def _vector_name(ctype: ci.Type) -> str:
    """The name of a vector type as OpenCL and CUDA spell it (``float4``, ``uint2``), however
    clang spells it (``float __attribute__((ext_vector_type(4)))``)."""
    t = ctype.get_canonical()
    elem = t.element_type.get_canonical().spelling.replace("const ", "").strip()
    if elem.startswith("unsigned "):
        elem = "u" + elem.split()[-1]
    return f"{elem}{t.element_count}"


def base_type_name(ctype: ci.Type) -> str:
    """The unqualified spelling of a non-pointer, non-array type, valid in CUDA and OpenCL:
    the type a typedef denotes (``typedef float DATA_TYPE;``, ``size_t``), OpenCL's
    ``uint``/``uchar``/... spelled out, a vector type by its name."""
    name = _words(ctype.spelling)
    if name in VECTOR_TYPES:
        return name
    canonical = ctype.get_canonical()
    if name in _TYPEDEF_SPELLINGS and canonical.kind in _SCALAR_KINDS and \
            _words(canonical.spelling) != _TYPEDEF_SPELLINGS[name]:
        # a CUDA file's own ``typedef float uchar;``: the type it names, not OpenCL's
        return _words(canonical.spelling)
    if name not in _TYPEDEF_SPELLINGS and name != _words(canonical.spelling):
        if canonical.kind in _SCALAR_KINDS:
            name = _words(canonical.spelling)
        else:                         # a typedef of a vector type: its name
            decl = canonical.get_declaration()
            vector = _words(decl.spelling) if decl is not None else ""
            for candidate in (vector, _typedef_target(ctype)):
                if candidate in VECTOR_TYPES:
                    return candidate
    return _TYPEDEF_SPELLINGS.get(name, name)


def _unportable_size(ctype: ci.Type, depth: int = 0) -> str:
    """Why ``ctype``'s size differs between CUDA and OpenCL ('' where it does not): a
    3-component vector (12 bytes in CUDA, 16 in OpenCL), or a struct or array holding one."""
    t = ctype.get_canonical()
    if depth > 8:
        return ""
    if t.kind == ci.TypeKind.EXTVECTOR or t.kind == ci.TypeKind.VECTOR:
        return f"'{_vector_name(t)}'" if t.element_count == 3 else ""
    if t.kind == ci.TypeKind.RECORD:
        name = _words(ctype.spelling)
        if name in VECTOR_TYPES:            # CUDA's float3 is a struct
            return f"'{name}'" if name.endswith("3") else ""
        for field in t.get_fields():
            if _unportable_size(field.type, depth + 1):
                return f"'{name}' (it holds a {_unportable_size(field.type, depth + 1)})"
        return ""
    if t.kind == ci.TypeKind.CONSTANTARRAY:
        return _unportable_size(t.element_type, depth + 1)
    return ""


def _switch_break(cursor: ci.Cursor) -> ci.Cursor | None:
    """A break under ``cursor`` that leaves the enclosing switch (one not inside a loop or a
    switch of its own), or None; ``cursor`` itself is a statement of a case."""
    stack = [cursor]
    while stack:
        node = stack.pop()
        if node.kind == K.BREAK_STMT:
            return node
        if node.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.SWITCH_STMT):
            continue
        stack.extend(node.get_children())
    return None


def _typedef_target(ctype: ci.Type) -> str:
    """The vector type name a chain of typedefs ends in (``typedef float4 vec;``), or ''."""
    for _ in range(16):
        decl = ctype.get_declaration()
        if decl is None or decl.kind != K.TYPEDEF_DECL:
            return ""
        ctype = decl.underlying_typedef_type
        if _words(ctype.spelling) in VECTOR_TYPES:
            return _words(ctype.spelling)
    return ""


def through_typedefs(ctype: ci.Type) -> ci.Type:
    """A typedef of a pointer or array type (``typedef DATA_TYPE *DATA_PTR;``) as the type
    it names, one typedef at a time, so that the element keeps its spelling (``DATA_TYPE``);
    any other type as it is."""
    target = ctype.get_canonical().kind
    for _ in range(16):
        if ctype.kind == target:
            return ctype
        decl = ctype.get_declaration()
        if decl is None or decl.kind != K.TYPEDEF_DECL:
            return ctype.get_canonical()
        ctype = decl.underlying_typedef_type
    return ctype.get_canonical()


def file_typedefs(declarations: list[ci.Cursor]) -> dict[str, str]:
    """The typedefs of scalar and vector types among a file's top-level declarations:
    name -> the type it denotes (GModule.typedefs)."""
    out = {}
    for c in declarations:
        if c.kind == K.TYPEDEF_DECL:
            under = c.underlying_typedef_type
            if under.get_canonical().kind in _SCALAR_KINDS or \
                    base_type_name(under) in VECTOR_TYPES:
                out[c.spelling] = base_type_name(under)
    return out


def type_spelling(ctype: ci.Type) -> str | None:
    """The typedef name the user wrote for a scalar or vector type (``DATA_TYPE``,
    ``size_t``, ``int64_t``), or None where the type is written as itself (or as one of
    OpenCL's ``uint``/``uchar``/``ushort``/``ulong``, which the output spells out)."""
    name = _words(ctype.spelling)
    if name in VECTOR_TYPES or name in _TYPEDEF_SPELLINGS or name in cu_complex.TYPES or \
            not _IDENT.fullmatch(name):
        return None
    return name if name != base_type_name(ctype) else None


#: CUDA's sine-and-cosine functions -> the (sine, cosine) functions they stand for.
_SINCOS = {"sincosf": ("sinf", "cosf"), "__sincosf": ("__sinf", "__cosf"),
           "sincospif": ("sinpif", "cospif"), "sincos": ("sin", "cos"),
           "sincospi": ("sinpi", "cospi")}
#: Calls an argument read twice may make (math functions change nothing).
_PURE_CALLS = frozenset(cuda_device_function_names()) - set(_SINCOS)
#: ... and in helper_math.h's arithmetic, the vector constructors and geometric functions
_PURE_VECTOR_CALLS = _PURE_CALLS | {f"make_{t}" for t in VECTOR_TYPES} | helper_math.GEOMETRIC


class Translator:
    """Translates the cursors of one translation unit (one kernel file)."""

    def __init__(self, path: str, source: str, macro_at: dict[int, str]) -> None:
        self.path = path
        self.source = source
        self.source_bytes = source.encode()
        self.macro_at = macro_at          # literal cursor hash -> object-like macro name
        self.used_macros: set[str] = set()
        # helpers that take a struct (by value or const reference), read as its members:
        # name -> {argument position: the struct's type name} (frontend._function_def)
        self.struct_helpers: dict[str, dict[int, str]] = {}
        self.pointers = PointerOffsets(self.error, self.expr)   # local pointers into arrays
        self._stored = 0                  # values of vstore calls named so far
        # OpenCL's ``sincos(x, &c)`` the statement being translated may hold (its value, a
        # declaration's initializer or an assignment's right side), and the cosine stores
        # that precede the statement (_sincos_value)
        self._sincos_at: int | None = None
        self._before: list[c_ast.Node] = []
        self._angles = 0                  # sincos arguments named so far

    # ----------------------------------------------------------------- helpers
    def error(self, cursor: ci.Cursor, message: str) -> UnsupportedConstruct:
        loc = cursor.location
        file = self.path if loc.file is None or loc.file.name == cs.PRELUDE_NAME else loc.file.name
        return UnsupportedConstruct(message, file, loc.line, loc.column)

    def coord(self, cursor: ci.Cursor) -> str:
        return f"{self.path}:{cursor.location.line}:{cursor.location.column}"

    def token_at(self, cursor: ci.Cursor) -> str:
        """The identifier or literal text at a cursor's (expansion) location in the main file.

        Literals are read with C's own token grammar (``ir.literals``: a pp-number, so
        ``1e-5f`` and ``0x1.8p-3`` are one token; a character literal with its prefix)."""
        loc = cursor.location
        if loc.file is None or loc.file.name != self.path:
            return ""
        text = self.source_bytes[loc.offset:loc.offset + 256].decode(errors="replace")
        token = literal_token(text)
        if token:
            return token
        m = _IDENT.match(text)
        return m.group(0) if m else ""

    # ------------------------------------------------------------------- types
    def type_node(self, ctype: ci.Type, name: str | None, cursor: ci.Cursor,
                  dims: list[c_ast.Node] | None = None) -> c_ast.Node:
        """The c_ast declarator chain for a clang type (pointers, constant arrays, base).

        ``dims`` are the array dimensions as written (so a macro keeps its name)."""
        kind = ctype.kind
        if ctype.get_canonical().kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY,
                                          ci.TypeKind.INCOMPLETEARRAY,
                                          ci.TypeKind.VARIABLEARRAY) and kind != \
                ctype.get_canonical().kind:
            ctype = through_typedefs(ctype)    # a typedef of a pointer or array: written out
            kind = ctype.kind
        if kind == ci.TypeKind.POINTER:
            quals = []
            if ctype.is_const_qualified():
                quals.append("const")
            if ctype.is_restrict_qualified():
                quals.append("__restrict__")
            return c_ast.PtrDecl(quals, self.type_node(ctype.get_pointee(), name, cursor))
        if kind == ci.TypeKind.LVALUEREFERENCE:
            # a helper's reference parameter, ``float &hi`` or ``const float3 &a``: the
            # pointee's type and qualifiers, named with '&' (ir/references.py)
            inner = self.type_node(ctype.get_pointee(), name, cursor)
            if not (isinstance(inner, c_ast.TypeDecl) and
                    isinstance(inner.type, c_ast.IdentifierType)):
                raise self.error(cursor, f"a reference to '{ctype.get_pointee().spelling}' "
                                         "is not supported")
            inner.type.names = [" ".join(inner.type.names) + " &"]
            return inner
        if kind == ci.TypeKind.CONSTANTARRAY:
            dim = dims[0] if dims else c_ast.Constant("int", str(ctype.element_count))
            inner = self.type_node(ctype.element_type, name, cursor, dims[1:] if dims else None)
            return c_ast.ArrayDecl(inner, dim, [])
        if kind in (ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY):
            raise self.error(cursor, "arrays without a constant size are not supported")
        if ctype.get_canonical().kind == ci.TypeKind.RECORD and \
                base_type_name(ctype) not in VECTOR_TYPES:
            raise self.error(cursor, f"struct type '{ctype.spelling}' is not supported here: "
                             "naiveopt reads a struct as a parameter passed by value (or a "
                             "helper's const reference), member by member")
        quals = []
        if ctype.is_const_qualified():
            quals.append("const")
        if ctype.is_volatile_qualified():
            quals.append("volatile")
        return c_ast.TypeDecl(name, quals, None, ir_type_node(base_type_name(ctype),
                                                             type_spelling(ctype)))

    # ------------------------------------------------------------- statements
    def statement(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        """Translate one statement cursor into zero or more c_ast statements."""
        outer = self._sincos_at, self._before
        self._sincos_at, self._before = _value_call(cursor, "sincos"), []
        try:
            stmts = self._statement(cursor)
            return self._before + stmts
        finally:
            self._sincos_at, self._before = outer

    def _statement(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        kind = cursor.kind
        if kind == K.COMPOUND_STMT:
            return [self.compound(cursor)]
        if kind == K.DECL_STMT:
            decls = [child for child in cursor.get_children() if child.kind == K.VAR_DECL]
            if not decls:
                return self._reject(cursor)
            # a resolved local pointer (pointer_offsets.py) leaves no declaration
            return [d for d in map(self.var_decl, decls) if d is not None]
        if kind == K.FOR_STMT:
            return [self.for_stmt(cursor)]
        if kind == K.WHILE_STMT:
            cond, body = list(cursor.get_children())
            return [c_ast.While(self.expr(cond), self.block(body), coord=self.coord(cursor))]
        if kind == K.DO_STMT:
            body, cond = list(cursor.get_children())
            return [c_ast.DoWhile(self.expr(cond), self.block(body), coord=self.coord(cursor))]
        if kind == K.IF_STMT:
            children = list(cursor.get_children())
            if len(children) not in (2, 3):
                raise self.error(cursor, "if statements with declarations in the condition "
                                         "are not supported")
            els = self.block(children[2]) if len(children) == 3 else None
            return [c_ast.If(self.expr(children[0]), self.block(children[1]), els,
                             coord=self.coord(cursor))]
        if kind == K.RETURN_STMT:
            children = list(cursor.get_children())
            return [c_ast.Return(self.expr(children[0]) if children else None)]
        if kind == K.BREAK_STMT:
            return [c_ast.Break()]
        if kind == K.CONTINUE_STMT:
            return [c_ast.Continue()]
        if kind == K.NULL_STMT:
            return [c_ast.EmptyStatement()]
        if kind == K.CALL_EXPR and _VSTORE.fullmatch(cursor.spelling) and \
                not _defined(cursor):
            return self._vstore(cursor)
        if kind == K.CALL_EXPR and cursor.spelling in _SINCOS and not _defined(cursor) and \
                not _opencl_sincos(cursor):
            return self._sincos(cursor)         # (OpenCL's sincos(x, &c): _sincos_value)
        if kind.is_expression():
            if self.pointers.is_assignment(cursor):
                return []           # a resolved pointer's (pointer_offsets.py): no statement
            return [self.expr(cursor)]
        if kind == K.UNEXPOSED_STMT:
            return self._loop_hint(cursor)
        if kind == K.SWITCH_STMT:
            return self._switch(cursor)
        return self._reject(cursor)

    def _switch(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        """A ``switch`` as the if/else chain it means: each group of case labels a test of
        the value (``v == 1 || v == 2``), the default the final else. Exact where no group
        falls through into the next (each ends in break, return or continue, but the last)
        and no other break leaves the switch; the value is evaluated once (a local holds it
        unless it is a plain variable). The IR has no switch: the analyses read branches."""
        children = list(cursor.get_children())
        if len(children) != 2 or children[1].kind != K.COMPOUND_STMT:
            raise self.error(cursor, "a switch without a braced body, or with a declaration "
                                     "in its condition, is not supported")
        cond, body = children
        groups: list[tuple[list[ci.Cursor], bool, list[ci.Cursor]]] = []
        for child in body.get_children():
            labels, default, node = [], False, child
            while node.kind in (K.CASE_STMT, K.DEFAULT_STMT):
                parts = list(node.get_children())
                if node.kind == K.CASE_STMT:
                    if len(parts) != 2:
                        raise self.error(node, "case ranges are not supported")
                    labels.append(parts[0])
                else:
                    default = True
                node = parts[-1]
            if node is child:
                if not groups:
                    raise self.error(child, "a statement before the first case label of a "
                                            "switch is not supported")
                groups[-1][2].append(child)
            else:
                groups.append((labels, default, [node]))
        for n, (_, _, stmts) in enumerate(groups):
            while stmts and stmts[-1].kind == K.COMPOUND_STMT:  # case 1: { ...; break; }
                stmts[-1:] = list(stmts[-1].get_children())
            if not stmts:
                continue
            last = stmts[-1].kind
            if last == K.BREAK_STMT:
                stmts.pop()
            elif n < len(groups) - 1 and last not in (K.RETURN_STMT, K.CONTINUE_STMT):
                raise self.error(stmts[-1], "a switch case that falls through into the next "
                                            "is not supported: end it with break")
            for stmt in stmts:
                inner = _switch_break(stmt)
                if inner is not None:
                    raise self.error(inner, "a break that leaves a switch from inside a "
                                            "branch is not supported")
        value = self.expr(cond)
        out: list[c_ast.Node] = []
        if not isinstance(value, (c_ast.ID, c_ast.Constant)):
            self.switches = getattr(self, "switches", 0) + 1
            name = f"naiveopt_switch{self.switches}"
            decl = c_ast.Decl(name, [], [], [], [], self.type_node(cond.type, name, cond),
                              value, None, coord=self.coord(cursor))
            out.append(decl)
            value = c_ast.ID(name)
        chain: c_ast.Node | None = None
        for labels, default, stmts in groups:
            if default:
                chain = self._case_block(stmts)
        for labels, default, stmts in reversed(groups):
            if default:
                continue
            test: c_ast.Node | None = None
            for label in labels:
                eq = c_ast.BinaryOp("==", copy.deepcopy(value), self.expr(label))
                test = eq if test is None else c_ast.BinaryOp("||", test, eq)
            chain = c_ast.If(test, self._case_block(stmts), chain, coord=self.coord(cursor))
        return out + ([chain] if chain is not None else [])

    def _case_block(self, stmts: list[ci.Cursor]) -> c_ast.Compound:
        items: list[c_ast.Node] = []
        for stmt in stmts:
            items.extend(self.statement(stmt))
        return c_ast.Compound(items)

    def _loop_hint(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        """A loop under ``#pragma unroll`` (an attributed statement, unexposed in libclang):
        the pragma is kept as written before the loop (the postprocessor drops it if a
        pass left no loop after it)."""
        children = list(cursor.get_children())
        loops = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)
        lines = self.source.split("\n")
        line = cursor.location.line
        text = lines[line - 1].strip() if cursor.location.file is not None and \
            cursor.location.file.name == self.path and 0 < line <= len(lines) else ""
        m = re.match(r"#\s*pragma\s+(.*?)\s*$", text)
        if len(children) != 1 or children[0].kind not in loops or not m:
            return self._reject(cursor)
        return [c_ast.Pragma(m.group(1), coord=self.coord(cursor)),
                *self.statement(children[0])]

    def _reject(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        names = {K.GOTO_STMT: "goto", K.INDIRECT_GOTO_STMT: "goto", K.LABEL_STMT: "labels",
                 K.SWITCH_STMT: "switch statements", K.ASM_STMT: "inline asm",
                 K.MS_ASM_STMT: "inline asm"}
        what = names.get(cursor.kind, cursor.kind.name.lower().replace("_", " "))
        raise self.error(cursor, f"{what} not supported in kernels")

    def compound(self, cursor: ci.Cursor) -> c_ast.Compound:
        items: list[c_ast.Node] = []
        for child in cursor.get_children():
            items.extend(self.statement(child))
        return c_ast.Compound(items, coord=self.coord(cursor))

    def block(self, cursor: ci.Cursor) -> c_ast.Node:
        """A statement in a branch or loop body (single statements stay single)."""
        stmts = self.statement(cursor)
        return stmts[0] if len(stmts) == 1 else c_ast.Compound(stmts)

    def var_decl(self, cursor: ci.Cursor, file_scope: bool = False) -> c_ast.Decl | None:
        """A local variable, or (``file_scope``) the name, type and initializer of a
        file-scope one, without its address space (the front end keeps that apart). A local
        pointer into an array parameter is resolved (pointer_offsets.py) and gives None."""
        storage = []
        for child in cursor.get_children():
            if child.kind == K.CUDASHARED_ATTR:
                storage.append("__shared__")
            elif child.kind == K.CUDACONSTANT_ATTR and not file_scope:
                raise self.error(cursor, "__constant__ variables are only supported at file "
                                         "scope")
        ctype = cursor.type
        elem = ctype
        while elem.kind == ci.TypeKind.CONSTANTARRAY:
            elem = elem.element_type
        if elem.get_address_space() == 2 or "__local" in elem.spelling:
            storage.append("__shared__")
        if cursor.storage_class == ci.StorageClass.STATIC and "__shared__" not in storage \
                and not file_scope:
            raise self.error(cursor, "static variables are not supported in kernels")
        if cursor.storage_class == ci.StorageClass.EXTERN and not file_scope:
            return self._dynamic_shared(cursor, storage)
        init_cursor = written = cs.var_initializer(cursor)
        if init_cursor is not None and init_cursor.kind == K.CALL_EXPR and \
                init_cursor.referenced is not None and \
                init_cursor.referenced.kind == K.CONSTRUCTOR and \
                [t.spelling for t in init_cursor.get_tokens()] == [cursor.spelling]:
            # ``float4 r;`` in C++: the implicit default constructor, which leaves a vector
            # uninitialized as C's declaration does (``float4 r = float4();`` zeroes it)
            init_cursor = None
        if ctype.get_canonical().kind == ci.TypeKind.POINTER and \
                ctype.get_canonical().get_pointee().get_canonical().kind in (
                    ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO):
            raise self.error(cursor, "function pointers are not supported")
        if ctype.get_canonical().kind == ci.TypeKind.POINTER:
            if file_scope or storage:
                raise self.error(cursor, "pointer variables are only supported as local "
                                         "offsets of the kernel's array parameters")
            start = self.pointers.declare(cursor, init_cursor)
            if start is None:
                return None
            # a pointer that moves: the local of its element offset (pointer_offsets.py)
            return c_ast.Decl(cursor.spelling, [], [], [], [], c_ast.TypeDecl(
                cursor.spelling, [], None, ir_type_node("long", "ptrdiff_t")), start,
                None, coord=self.coord(cursor))
        if init_cursor is not None and not file_scope and \
                init_cursor.kind == K.INIT_LIST_EXPR and \
                ctype.get_canonical().kind in _SCALAR_KINDS:
            # C++ brace initialization of a scalar (``float acc{0.0f};``, ``int n{};``) is
            # the C initializer of its one value (braces forbid narrowing), or zero
            values = list(init_cursor.get_children())
            if len(values) > 1:
                raise self.error(init_cursor, "a scalar initialized by several values")
            init = self.expr(values[0]) if values else c_ast.Constant("int", "0")
        elif init_cursor is not None and not file_scope and \
                init_cursor.kind == K.INIT_LIST_EXPR and base_type_name(ctype) in VECTOR_TYPES:
            init = self._vector_braces(ctype, init_cursor)
        elif init_cursor is not None and not file_scope and \
                ctype.get_canonical().kind == ci.TypeKind.CONSTANTARRAY and \
                "__shared__" not in storage:
            init = self.initializer(init_cursor)    # a local table: {0.25f, 0.5f, 0.25f}
        else:
            init = (self.initializer(init_cursor) if file_scope else self.expr(init_cursor)) \
                if init_cursor is not None else None
        dims = [self.expr(c) for c in cursor.get_children() if c.kind.is_expression() and
                (written is None or c.hash != written.hash)][::-1]  # innermost first
        depth, t = 0, ctype
        while t.kind == ci.TypeKind.CONSTANTARRAY:
            depth, t = depth + 1, t.element_type
        type_node = self.type_node(ctype, cursor.spelling, cursor,
                                   dims if len(dims) == depth and depth else None)
        quals = list(getattr(type_node, "quals", []) or [])
        return c_ast.Decl(cursor.spelling, quals, [], storage, [], type_node, init, None,
                          coord=self.coord(cursor))

    def _vector_braces(self, ctype: ci.Type, braces: ci.Cursor) -> c_ast.Node:
        """A vector initialized by a brace list (``float3 acc = {0.0f, 0.0f, 0.0f};``,
        ``float4 v = {0};``, ``int2 p{};``): ``make_float3(...)``, the components the list
        leaves out zero, as an aggregate's are."""
        vector = base_type_name(ctype)
        lanes = int(re.search(r"\d+$", vector).group())
        parts = list(braces.get_children())
        if len(parts) > lanes or lanes > 4 or any(p.kind == K.INIT_LIST_EXPR for p in parts):
            raise self.error(braces, f"a {vector} initialized by this brace list is not "
                                     "supported: list its components")
        elem = element(re.sub(r"\d+$", "", vector))
        zero = "0.0f" if elem and elem.dtype == "float32" else \
            "0.0" if elem and elem.is_float else "0"
        values = [self.expr(p) for p in parts] + \
            [c_ast.Constant("float" if "." in zero else "int", zero)
             for _ in range(lanes - len(parts))]
        return c_ast.FuncCall(c_ast.ID(f"make_{vector}"), c_ast.ExprList(values),
                              coord=self.coord(braces))

    def _dynamic_shared(self, cursor: ci.Cursor, storage: list[str]) -> c_ast.Decl:
        """``extern __shared__ float s[];``: the kernel's dynamic shared memory, whose size
        the launch gives (its third configuration argument). Kept as written; the front end
        makes it a parameter of the procedure (address space "local", as OpenCL passes it)."""
        name, ctype = cursor.spelling, cursor.type
        if "__shared__" not in storage:
            raise self.error(cursor, f"extern variable '{name}' is not supported in a "
                                     "kernel: only extern __shared__ arrays")
        if ctype.kind != ci.TypeKind.INCOMPLETEARRAY:
            raise self.error(cursor, f"extern __shared__ '{name}' must be an array of "
                                     "unspecified size (``extern __shared__ float "
                                     f"{name}[];``)")
        elem = ctype.element_type
        if elem.get_canonical().kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.POINTER):
            raise self.error(cursor, f"extern __shared__ '{name}' must be a one-dimensional "
                                     "array of scalars or vectors")
        inner = self.type_node(elem, name, cursor)
        return c_ast.Decl(name, [], [], ["extern", "__shared__"], [],
                          c_ast.ArrayDecl(inner, None, []), None, None,
                          coord=self.coord(cursor))

    def initializer(self, cursor: ci.Cursor) -> c_ast.Node:
        """A file-scope initializer: an expression or a (nested) brace list as written."""
        if cursor.kind == K.INIT_LIST_EXPR:
            return c_ast.InitList([self.initializer(c) for c in cursor.get_children()],
                                  coord=self.coord(cursor))
        if cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            children = list(cursor.get_children())
            if len(children) == 1 and children[0].kind == K.INIT_LIST_EXPR:
                return self.initializer(children[0])
        return self.expr(cursor)

    def for_stmt(self, cursor: ci.Cursor) -> c_ast.For:
        children = list(cursor.get_children())
        present = self._for_parts_present(cursor, len(children))
        parts: list[ci.Cursor | None] = []
        it = iter(children)
        for has in present:
            parts.append(next(it) if has else None)
        body = next(it)
        init_c, cond_c, next_c = parts
        init = None
        if init_c is not None:
            if init_c.kind == K.DECL_STMT:
                decls = [self.var_decl(v) for v in init_c.get_children()]
                if None in decls:
                    raise self.error(init_c, "a pointer declared in a for statement's header "
                                             "is not supported")
                init = c_ast.DeclList(decls)
            else:
                init = self.expr(init_c)
        cond = self.expr(cond_c) if cond_c is not None else None
        nxt = self.expr(next_c) if next_c is not None else None
        return c_ast.For(init, cond, nxt, self.block(body), coord=self.coord(cursor))

    def _for_parts_present(self, cursor: ci.Cursor, n_children: int) -> list[bool]:
        """Which of (init, cond, increment) a for statement has (libclang omits missing ones)."""
        if n_children == 4:
            return [True, True, True]
        tokens = [t.spelling for t in cursor.get_tokens()]
        depth, sections, current = 0, [], []
        for tok in tokens[1:]:
            if tok == "(":
                depth += 1
                if depth == 1:
                    continue
            elif tok == ")":
                depth -= 1
                if depth == 0:
                    sections.append(current)
                    break
            if depth == 1 and tok == ";":
                sections.append(current)
                current = []
            else:
                current.append(tok)
        if len(sections) != 3:
            raise self.error(cursor, "cannot read this for statement's header (macro?)")
        return [bool(s) for s in sections]

    # ------------------------------------------------------------ expressions
    def expr(self, cursor: ci.Cursor) -> c_ast.Node:
        """Translate an expression cursor."""
        kind = cursor.kind
        coord = self.coord(cursor)
        constant = self._prelude_constant(cursor)
        if constant:
            return c_ast.ID(constant, coord=coord)
        if kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            children = list(cursor.get_children())
            if len(children) == 1:
                component = self._vector_component(cursor, children[0])
                if component:
                    return c_ast.StructRef(self.expr(children[0]), ".", c_ast.ID(component),
                                           coord=coord)
                return self.expr(children[0])
            if kind == K.UNEXPOSED_EXPR and not children:
                raise self.error(cursor, "unsupported expression")
            raise self.error(cursor, "unsupported expression")
        if kind == K.INTEGER_LITERAL or kind == K.FLOATING_LITERAL or kind == K.CHARACTER_LITERAL:
            return self.literal(cursor)
        if kind == K.CXX_BOOL_LITERAL_EXPR:
            return c_ast.Constant("int", "1" if self.token_at(cursor) == "true" else "0")
        if kind == K.DECL_REF_EXPR:
            ref = cursor.referenced
            alias = self.pointers.alias_of(cursor)
            if alias is not None and alias.moving:
                return c_ast.ID(cursor.spelling, coord=coord)     # its offset, moved
            if alias is not None:
                raise self.error(cursor, f"local pointer '{cursor.spelling}' is used other "
                                 f"than by indexing it ('{cursor.spelling}[i]', "
                                 f"'*{cursor.spelling}'): not supported")
            if ref is not None and ref.kind == K.ENUM_CONSTANT_DECL:
                return c_ast.Constant("int", str(ref.enum_value))
            return c_ast.ID(cursor.spelling, coord=coord)
        if kind == K.MEMBER_REF_EXPR:
            children = list(cursor.get_children())
            if len(children) != 1:
                raise self.error(cursor, "unsupported member access")
            base = children[0]
            op = "->" if base.type.kind == ci.TypeKind.POINTER else "."
            # ``p->x`` of a local pointer into an array of structs (Rodinia's ``LatLong
            # *latLong = d_locations + globalId; latLong->lat``), or ``(a + e)->x``, is
            # ``(*p).x``: the element the pointer resolves to (pointer_offsets.py)
            access = self.pointers.dereference(base, coord) if op == "->" and (
                self.pointers.alias_of(base) is not None or
                strip(base).kind == K.BINARY_OPERATOR) else None
            if access is not None:
                return c_ast.StructRef(access, ".", c_ast.ID(cursor.spelling), coord=coord)
            return c_ast.StructRef(self.expr(base), op, c_ast.ID(cursor.spelling), coord=coord)
        if kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, index = list(cursor.get_children())
            alias = self.pointers.alias_of(base)
            if alias is not None:
                return alias.access(self.expr(index), coord)
            return c_ast.ArrayRef(self.expr(base), self.expr(index), coord=coord)
        if kind == K.BINARY_OPERATOR and cs.binary_operator(cursor) in ("==", "!="):
            test = self._null_test(cursor)
            if test is not None:
                return test
        if kind == K.COMPOUND_ASSIGNMENT_OPERATOR and self._moves_pointer(cursor):
            left, right = list(cursor.get_children())      # the offset local moves
            return c_ast.Assignment(cs.binary_operator(cursor), self.expr(left),
                                    self.expr(right), coord=coord)
        if kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and any(
                c.type.get_canonical().kind == ci.TypeKind.POINTER
                for c in [cursor, *cursor.get_children()]):
            raise self.error(cursor, "pointer arithmetic and address-of are not supported")
        if kind == K.BINARY_OPERATOR:
            left, right = list(cursor.get_children())
            op = cs.binary_operator(cursor)
            if op == "=":
                return c_ast.Assignment("=", self.expr(left), self.expr(right), coord=coord)
            if op == ",":
                return c_ast.ExprList([self.expr(left), self.expr(right)], coord=coord)
            return c_ast.BinaryOp(op, self.expr(left), self.expr(right), coord=coord)
        if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
            left, right = list(cursor.get_children())
            return c_ast.Assignment(cs.binary_operator(cursor), self.expr(left), self.expr(right),
                                    coord=coord)
        if kind == K.UNARY_OPERATOR:
            (operand,) = list(cursor.get_children())
            op = cs.unary_operator(cursor)
            access = self.pointers.dereference(operand, coord) if op == "*" else None
            if access is not None:
                return access
            if op in ("&", "*"):
                raise self.error(cursor, "pointer arithmetic and address-of are not supported")
            return c_ast.UnaryOp(op, self.expr(operand), coord=coord)   # (p++: its offset)
        if kind == K.CONDITIONAL_OPERATOR:
            cond, a, b = list(cursor.get_children())
            return c_ast.TernaryOp(self.expr(cond), self.expr(a), self.expr(b), coord=coord)
        if kind == K.COMPOUND_LITERAL_EXPR:
            return self._vector_literal(cursor)
        if kind in (K.CSTYLE_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
                    K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR):
            # C++'s named casts convert as the C cast of the same type does (a
            # reinterpret_cast between pointer types is the C pointer cast)
            children = [c for c in cursor.get_children() if c.kind.is_expression()]
            if len(children) != 1:
                raise self.error(cursor, "unsupported cast")
            if base_type_name(cursor.type) in VECTOR_TYPES and \
                    children[0].type.get_canonical().kind in _SCALAR_KINDS:
                return self._vector_literal(cursor, splat=children[0])
            to = c_ast.Typename(None, [], None, self.type_node(cursor.type, None, cursor))
            moved = self._moved_pointer(children[0]) \
                if cursor.type.get_canonical().kind == ci.TypeKind.POINTER else None
            return c_ast.Cast(to, moved or self.expr(children[0]), coord=coord)
        if kind == K.CALL_EXPR:
            return self.call(cursor)
        if kind == K.CXX_UNARY_EXPR:
            return self._size_of(cursor)
        raise self.error(cursor, f"unsupported expression ({kind.name.lower()})")

    def _size_of(self, cursor: ci.Cursor) -> c_ast.Node:
        """``sizeof(T)``, ``sizeof x``, ``alignof(T)``: the size the compile gives, as an
        ``unsigned long`` literal (``pitch / sizeof(float)`` is ``pitch / 4ul``; the type of
        sizeof is size_t, unsigned long in both dialects), so that the analyses read it as the
        constant it is. A type whose size differs between CUDA and OpenCL (a 3-component
        vector: 12 bytes in CUDA, 16 in OpenCL, or a struct holding one) is refused: either
        output would compute with the other dialect's size."""
        tokens = [t.spelling for t in cursor.get_tokens()]
        word = tokens[0] if tokens else "sizeof"
        operands = [c for c in cursor.get_children()]
        if operands:
            why = _unportable_size(operands[0].type)
            if why:
                raise self.error(cursor, f"{word} of {why}, whose size differs between CUDA "
                                 "and OpenCL, is not supported")
        value = cs.evaluate(cursor)
        if not isinstance(value, int):
            raise self.error(cursor, f"{word} of a type whose size is not a constant is not "
                             "supported")
        return c_ast.Constant("int", f"{value}ul", coord=self.coord(cursor))

    def _moves_pointer(self, cursor: ci.Cursor) -> bool:
        """Whether a compound assignment moves a local pointer that is an offset local
        (``data_col_ptr += height_col * width_col``: pointer_offsets.py)."""
        left = next(iter(cursor.get_children()))
        alias = self.pointers.alias_of(left)
        return alias is not None and alias.moving

    def _moved_pointer(self, cursor: ci.Cursor) -> c_ast.Node | None:
        """``&a[e]`` for a pointer ``a + e``, ``&a[e]`` or a resolved local pointer that is
        cast to another pointer type (``reinterpret_cast<const float4 *>(x + 4 * i)``), or
        None: frontend/vector_casts.py reads such a cast's vector elements, and rejects
        what is left of it."""
        inner = strip(cursor)
        if inner.kind == K.UNARY_OPERATOR and cs.unary_operator(inner) == "&":
            (operand,) = inner.get_children()
            if strip(operand).kind != K.ARRAY_SUBSCRIPT_EXPR:
                return None
            ref = self.expr(strip(operand))
        elif inner.kind == K.BINARY_OPERATOR or self.pointers.alias_of(inner) is not None:
            ref = self.pointers.dereference(inner, self.coord(inner))
        else:
            return None
        if not isinstance(ref, c_ast.ArrayRef):
            return None
        return c_ast.UnaryOp("&", ref, coord=self.coord(inner))

    def _null_test(self, cursor: ci.Cursor) -> c_ast.Node | None:
        """``bias != NULL`` (or ``== 0``, ``!= nullptr``) on an array parameter: whether the
        host passed the array, kept as written (``NULL`` is 0 in OpenCL outputs); None for any
        other comparison."""
        def strip(c: ci.Cursor) -> ci.Cursor:
            while c.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CSTYLE_CAST_EXPR) and \
                    len(list(c.get_children())) == 1:
                c = next(c.get_children())
            return c

        left, right = (strip(c) for c in cursor.get_children())
        for ptr, null in ((left, right), (right, left)):
            if ptr.kind == K.DECL_REF_EXPR and \
                    ptr.type.get_canonical().kind == ci.TypeKind.POINTER and \
                    ptr.referenced is not None and ptr.referenced.kind == K.PARM_DECL and \
                    (null.kind in (K.CXX_NULL_PTR_LITERAL_EXPR, K.GNU_NULL_EXPR) or (
                        null.kind == K.INTEGER_LITERAL and cs.evaluate(null) == 0)):
                return c_ast.BinaryOp(cs.binary_operator(cursor), self.expr(ptr),
                                      c_ast.ID("NULL"), coord=self.coord(cursor))
        return None

    def _vector_literal(self, cursor: ci.Cursor, splat: ci.Cursor | None = None
                        ) -> c_ast.Node:
        """OpenCL's vector literal ``(float4)(a, b, c, d)``, its splat ``(float4)(x)`` and
        its concatenation ``(float4)(v2, w2)``: ``make_float4(...)`` in the IR (CUDA's
        spelling; cuda-to-opencl writes the literal back)."""
        vector = base_type_name(cursor.type)
        lanes = int(re.search(r"\d+$", vector).group())
        if splat is not None:
            parts = [splat]
        else:
            inits = [c for c in cursor.get_children() if c.kind == K.INIT_LIST_EXPR]
            parts = list(inits[0].get_children()) if len(inits) == 1 else []
        values: list[c_ast.Node] = []
        for part in parts:
            value = self.expr(part)
            if part.type.get_canonical().kind == ci.TypeKind.EXTVECTOR:
                width = int(re.search(r"\d+$", base_type_name(part.type)).group())
                if not pure(value) or width > 4:
                    raise self.error(part, "a vector literal built from this vector is not "
                                           "supported: name it first")
                values += [c_ast.StructRef(copy.deepcopy(value), ".", c_ast.ID("xyzw"[k]))
                           for k in range(width)]
            else:
                values.append(value)
        if len(values) == 1 and lanes > 1:
            if not pure(values[0]):
                raise self.error(cursor, "a vector splat of an expression with side effects is "
                                         "not supported: name the value first")
            values = [copy.deepcopy(values[0]) for _ in range(lanes)]
        if len(values) != lanes or lanes > 4:
            raise self.error(cursor, f"vector literal of type '{vector}' is not supported")
        return c_ast.FuncCall(c_ast.ID(f"make_{vector}"), c_ast.ExprList(values),
                              coord=self.coord(cursor))

    def _prelude_constant(self, cursor: ci.Cursor) -> str | None:
        """The name of a constant of the prelude (``INFINITY``, ``FLT_MAX``, ``M_PI``...) that
        this expression is exactly the expansion of, or None: the output keeps the name
        (frontend/prelude.py says which header a CUDA output includes for it)."""
        loc, extent = cursor.location, cursor.extent
        if loc.file is None or loc.file.name != self.path:
            return None
        name = self.token_at(cursor)
        if name not in CONSTANTS:
            return None
        if extent.start.offset != loc.offset or extent.end.offset > loc.offset + len(name):
            return None
        return name

    def _vector_component(self, cursor: ci.Cursor, child: ci.Cursor) -> str | None:
        """``v.x`` / ``v.yz`` on an OpenCL vector (an ExtVectorElementExpr, unexposed in
        libclang): the component, read from the tokens, or None for a plain implicit cast."""
        if child.type.get_canonical().kind != ci.TypeKind.EXTVECTOR:
            return None
        tokens = [t.spelling for t in cursor.get_tokens()]
        same = base_type_name(cursor.type) == base_type_name(child.type)
        if same and tokens == [t.spelling for t in child.get_tokens()]:
            return None         # an implicit cast around the vector
        if len(tokens) >= 2 and tokens[-2] == "." and _IDENT.fullmatch(tokens[-1]):
            # (a swizzle as wide as the vector is one too: ``c[i].yx`` of a float2 swaps;
            # only the identity, ``.xy`` of a float2, is the vector itself)
            width = child.type.get_canonical().get_array_size()
            identity = {"xyzw"[:width], "s" + "0123456789abcdef"[:width]}
            return None if same and tokens[-1] in identity else tokens[-1]
        if same:
            return None
        raise self.error(cursor, "cannot read this vector component access (macro?)")

    def call(self, cursor: ci.Cursor) -> c_ast.Node:
        ref = cursor.referenced
        if ref is not None and ref.kind == K.CONSTRUCTOR:
            args = list(cursor.get_arguments())
            if len(args) == 1:            # a copy: float2 v = A[i];
                return self.expr(args[0])
            raise self.error(cursor, f"constructor call '{cursor.spelling}' is not supported")
        if ref is not None and ref.kind == K.CXX_METHOD and cursor.spelling == "operator=":
            children = list(cursor.get_children())   # a struct copy: B[i] = v;
            return c_ast.Assignment("=", self.expr(children[0]), self.expr(children[-1]),
                                    coord=self.coord(cursor))
        name = cursor.spelling
        if not name:
            raise self.error(cursor, "calls through function pointers are not supported")
        if _from_helper_math(ref):
            return self._helper_math(cursor, name)
        if _opencl_sincos(cursor):
            return self._sincos_value(cursor)
        if atomics.is_atomic_name(name):
            return self._atomic(cursor, name)
        if name in OUT_OF_SCOPE_FUNCTIONS:
            raise self.error(cursor, f"{OUT_OF_SCOPE_FUNCTIONS[name]} are not supported in "
                                     f"kernels ('{name}')")
        if ref is not None and ref.kind == K.FUNCTION_DECL and any(
                c.kind == K.CUDAGLOBAL_ATTR for c in ref.get_children()):
            raise self.error(cursor, f"dynamic parallelism (launching kernel '{name}' from "
                                     "device code) is not supported")
        if name == "__ldg":
            return self._ldg(cursor)
        if _VLOAD.fullmatch(name) and not _defined(cursor):
            return self._vload(cursor)
        if _VSTORE.fullmatch(name) and not _defined(cursor):
            raise self.error(cursor, f"'{name}' inside an expression is not supported: "
                                     "write it as a statement of its own")
        args = [self._argument(cursor, ref, i, a) for i, a in enumerate(cursor.get_arguments())]
        if ref is None or not ref.is_definition():
            args = [self._converted(a, node) for a, node in zip(cursor.get_arguments(), args)]
        if name in PROMOTING_FUNCTIONS and cursor.type.get_canonical().kind == \
                ci.TypeKind.DOUBLE and ref is not None and \
                ref.location.file is not None and ref.location.file.name == cs.PRELUDE_NAME:
            args = [self._to_double(a, node) for a, node in zip(cursor.get_arguments(), args)]
        if typed_builtins.handles(name) and (ref is None or not ref.is_definition()):
            try:                          # an OpenCL built-in overloaded on types CUDA splits
                node = typed_builtins.translate(
                    name, args, [base_type_name(a.type) for a in cursor.get_arguments()])
            except ValueError as exc:
                raise self.error(cursor, str(exc)) from exc
            node.coord = self.coord(cursor)
            return node
        return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(args) if args else None,
                              coord=self.coord(cursor))

    def _to_double(self, arg: ci.Cursor, node: c_ast.Node) -> c_ast.Node:
        """An argument of a double-precision function called on mixed arguments (``fmax(0.0,
        z)``, z a float: C++ promotes it to double) converted to double where it is not one,
        so that OpenCL's overloads see two doubles."""
        if arg.type.get_canonical().kind == ci.TypeKind.DOUBLE:
            return node
        return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType(["double"]))), node, coord=node.coord)

    def _argument(self, call: ci.Cursor, ref: ci.Cursor | None, i: int, arg: ci.Cursor
                  ) -> c_ast.Node:
        """Argument ``i`` of a call: as written, or, where the call leaves it out, the
        default its function's parameter declares (``float slope = 0.01f``: clang gives the
        call an empty expression without a location there)."""
        if arg.kind == K.UNEXPOSED_EXPR and arg.location.file is None and \
                not list(arg.get_children()):
            params = [c for c in (ref.get_children() if ref is not None else [])
                      if c.kind == K.PARM_DECL]
            default = [c for c in params[i].get_children() if c.kind.is_expression()] \
                if i < len(params) else []
            if not default:
                raise self.error(call, "unsupported argument of a call")
            return self.expr(default[-1])
        return self.expr(arg)

    def _helper_math(self, cursor: ci.Cursor, name: str) -> c_ast.Node:
        """A call of helper_math.h (ir/helper_math.py): an operator as the C operator on the
        vectors, a function as what the header defines it as, a vector built from wider
        vectors or a scalar from its components."""
        coord = self.coord(cursor)
        args = list(cursor.get_arguments())
        if not args:                       # a member operator's operands are its children
            args = [c for c in cursor.get_children() if c.kind.is_expression()][1:]
        # (a double converted to the header's float parameter, as C++ does: OpenCL C does
        # not convert a double operand of a float vector's arithmetic)
        nodes = [self._float_operand(a, self._converted(a, self.expr(a))) for a in args]
        types = [base_type_name(a.type) for a in args]
        if name.startswith("operator"):
            op = name[len("operator"):]
            if len(nodes) == 1 and op == "-":
                return c_ast.UnaryOp("-", nodes[0], coord=coord)
            if len(nodes) == 2 and op in ("+", "-", "*", "/"):
                return c_ast.BinaryOp(op, nodes[0], nodes[1], coord=coord)
            if len(nodes) == 2 and op in ("+=", "-=", "*=", "/="):
                return c_ast.Assignment(op, nodes[0], nodes[1], coord=coord)
            raise self.error(cursor, f"helper_math.h's {name} is not supported")
        if name.startswith("make_"):
            return self._vector_of(cursor, name, nodes, types)
        widths = [helper_math.lanes(t) for t in types if t in VECTOR_TYPES]
        if name == "clamp" and len(types) == 3 and types[0] in VECTOR_TYPES and \
                types[1] not in VECTOR_TYPES:
            name = "clamp-scalar"
        template = helper_math.EXPANSIONS.get((name, widths[0])) if widths else \
            helper_math.SCALAR_EXPANSIONS.get((name, "uint" if types and types[0].startswith(
                "unsigned") else types[0] if types else ""))
        if template is None:
            if name in helper_math.VECTOR_MATH:
                return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(nodes), coord=coord)
            raise self.error(cursor, f"helper_math.h's {name} is not supported")
        for i, node in enumerate(nodes):
            if template.count(f"A{i}") > 1 and not pure(node, _PURE_VECTOR_CALLS):
                raise self.error(cursor, f"helper_math.h's {name} with an argument that has "
                                         "side effects is not supported")
        if name in helper_math.GEOMETRIC and any(
                template.count(f"A{i}") > 1 and sum(1 for _ in walk(node)) > 12
                for i, node in enumerate(nodes)):
            # a large argument read several times: the call, which both dialects have
            # (OpenCL's built-in, the header's or the output's definition in CUDA)
            return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(nodes), coord=coord)
        out = expression(template, **{f"A{i}": n for i, n in enumerate(nodes)})
        out.coord = coord
        return out

    def _float_operand(self, arg: ci.Cursor, node: c_ast.Node) -> c_ast.Node:
        """A double literal that a helper_math.h function takes as a float (``v * 0.5``)
        cast to float: OpenCL C keeps ``float3 * 0.5`` double, which it rejects."""
        if isinstance(node, c_ast.Constant) and node.type == "float" and \
                float_suffix(node.value) in ("", "l") and \
                arg.type.get_canonical().kind == ci.TypeKind.FLOAT:
            return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                None, [], None, c_ast.IdentifierType(["float"]))), node, coord=node.coord)
        return node

    def _vector_of(self, cursor: ci.Cursor, name: str, nodes: list[c_ast.Node],
                   types: list[str]) -> c_ast.Node:
        """``make_float3(v)`` of a float4 (``make_float4(v, w)``, ``make_float3(s)``): the
        constructor of the components, converted to the vector's scalar type."""
        target = name[len("make_"):]
        width = helper_math.lanes(target)
        scalar = target[:-1].replace("uint", "unsigned int")
        parts: list[c_ast.Node] = []
        for node, kind in zip(nodes, types):
            if kind in VECTOR_TYPES:
                if not pure(node, _PURE_VECTOR_CALLS):
                    raise self.error(cursor, f"{name} of a vector with side effects is not "
                                             "supported")
                for lane in "xyzw"[:helper_math.lanes(kind)]:
                    part: c_ast.Node = c_ast.StructRef(copy.deepcopy(node), ".", c_ast.ID(lane))
                    if kind[:-1] != target[:-1]:
                        part = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                            None, [], None, c_ast.IdentifierType(scalar.split()))), part)
                    parts.append(part)
            else:
                parts.append(node)
        if len(nodes) == 1 and types[0] not in VECTOR_TYPES:
            if not pure(nodes[0], _PURE_VECTOR_CALLS):
                raise self.error(cursor, f"{name} of a value with side effects is not "
                                         "supported")
            parts = [copy.deepcopy(nodes[0]) for _ in range(width)]
        return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(parts[:width]),
                              coord=self.coord(cursor))

    def _vload(self, cursor: ci.Cursor) -> c_ast.Node:
        """OpenCL's ``vload4(i, p)``: the four elements ``p[4*i]`` .. ``p[4*i + 3]`` as one
        value, ``make_float4(p[4*i], p[4*i + 1], ...)`` in the IR. The analyses and passes
        read the scalar accesses as any other (extents, coalescing, staging), and the
        vectorize pass writes a vector access again where it proves one legal."""
        offset, pointer = list(cursor.get_arguments())
        width = int(cursor.spelling[-1])
        refs = self._vector_elements(cursor, offset, pointer, width)
        vector = _vector_name(cursor.type)
        return c_ast.FuncCall(c_ast.ID(f"make_{vector}"), c_ast.ExprList(refs),
                              coord=self.coord(cursor))

    def _sincos(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        """CUDA's ``sincosf(x, &s, &c)`` (and its kin) as the two stores it makes, ``s =
        sinf(x); c = cosf(x);``: the same values (the functions' accuracy is the pair's),
        without the addresses of locals the IR does not model. ``x`` is read twice, so it
        must change nothing; where it reads what the stores write (``sincosf(a, &a, &c)``)
        it is named first: ``{ float a0 = a; a = sinf(a0); c = cosf(a0); }``."""
        args = list(cursor.get_arguments())
        if len(args) != 3:
            raise self.error(cursor, f"'{cursor.spelling}' takes three arguments")
        targets = [self._sincos_target(cursor, arg) for arg in args[1:]]
        named, angle = self._sincos_angle(cursor, args[0], targets)
        sin, cos = _SINCOS[cursor.spelling]
        coord = self.coord(cursor)
        stores = [c_ast.Assignment("=", target, c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(
                      [copy.deepcopy(angle)]), coord=coord), coord=coord)
                  for target, name in zip(targets, (sin, cos))]
        return [c_ast.Compound(named + stores)] if named else stores

    def _sincos_value(self, cursor: ci.Cursor) -> c_ast.Node:
        """OpenCL's ``s = sincos(x, &c)``: the sine it returns, ``sin(x)``, with the store of
        the cosine it makes, ``c = cos(x);``, before the statement (the call stores before
        the statement's own store: ``c = sincos(x, &c)`` leaves the sine). Only as a
        statement's whole value, a declaration's initializer or an assignment's right side,
        where the store may move out of the statement; ``x`` is read twice, so it must change
        nothing, and where it reads ``c`` it is named first."""
        angle_c, target_c = list(cursor.get_arguments())
        if cursor.hash != self._sincos_at:
            raise self.error(cursor, "'sincos' is supported as a declaration's initializer, "
                             "an assignment's right side or a statement of its own")
        target = self._sincos_target(cursor, target_c)
        named, angle = self._sincos_angle(cursor, angle_c, [target])
        coord = self.coord(cursor)
        self._before += named + [c_ast.Assignment("=", target, c_ast.FuncCall(
            c_ast.ID("cos"), c_ast.ExprList([copy.deepcopy(angle)]), coord=coord), coord=coord)]
        return c_ast.FuncCall(c_ast.ID("sin"), c_ast.ExprList([angle]), coord=coord)

    def _sincos_target(self, call: ci.Cursor, arg: ci.Cursor) -> c_ast.Node:
        """The element or variable a sincos call stores through (``&c``, ``&a[i]``)."""
        arg = strip(arg)
        if arg.kind != K.UNARY_OPERATOR or cs.unary_operator(arg) != "&":
            raise self.error(arg, f"'{call.spelling}' stores through '&variable' or "
                             "'&array[i]' only")
        return self.expr(next(iter(arg.get_children())))

    def _sincos_angle(self, call: ci.Cursor, arg: ci.Cursor, targets: list[c_ast.Node]
                      ) -> tuple[list[c_ast.Node], c_ast.Node]:
        """The argument of a sincos call, read once per store: as it is, or named first
        (``float naiveopt_angle0 = x;``) where it reads a variable or array a store writes."""
        angle = self.expr(arg)
        if not pure(angle, _PURE_CALLS):
            raise self.error(arg, f"the argument of '{call.spelling}' must change nothing "
                             "(it is read for the sine and the cosine)")
        written = set()
        for target in targets:
            while isinstance(target, (c_ast.ArrayRef, c_ast.StructRef)):
                target = target.name
            written |= {n.name for n, _ in walk(target) if isinstance(n, c_ast.ID)}
        if not {n.name for n, _ in walk(angle) if isinstance(n, c_ast.ID)} & written:
            return [], angle
        name = f"naiveopt_angle{self._angles}"
        self._angles += 1
        kind = "double" if arg.type.get_canonical().kind == ci.TypeKind.DOUBLE else "float"
        decl = c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(
            name, [], None, c_ast.IdentifierType([kind])), angle, None)
        return [decl], c_ast.ID(name)

    def _vstore(self, cursor: ci.Cursor) -> list[c_ast.Node]:
        """OpenCL's ``vstore4(v, i, p)`` statement: ``p[4*i + k] = v.<k>`` for each component,
        the value named first where it is not a plain variable (it is computed once)."""
        value, offset, pointer = list(cursor.get_arguments())
        width = int(cursor.spelling[-1])
        refs = self._vector_elements(cursor, offset, pointer, width)
        self._stored += 1
        stmts = vector_casts.component_stores(refs, self.expr(value), _vector_name(value.type),
                                              f"vstore_value{self._stored}",
                                              self.coord(cursor))
        return [c_ast.Compound(stmts)] if len(stmts) > width else stmts

    def _vector_elements(self, cursor: ci.Cursor, offset: ci.Cursor, pointer: ci.Cursor,
                         width: int) -> list[c_ast.ArrayRef]:
        """The ``width`` element accesses of a vload/vstore at ``offset`` (in vectors) through
        ``pointer`` (an array, ``a + e``, ``&a[e]`` or a resolved local pointer)."""
        coord = self.coord(cursor)
        start = self.pointers.dereference(pointer, coord)
        inner = strip(pointer)
        if start is None and inner.kind == K.UNARY_OPERATOR and \
                cs.unary_operator(inner) == "&":
            (operand,) = inner.get_children()
            if strip(operand).kind == K.ARRAY_SUBSCRIPT_EXPR:
                start = self.expr(strip(operand))
        if not isinstance(start, c_ast.ArrayRef):
            raise self.error(pointer, f"'{cursor.spelling}' through this pointer is not "
                             "supported: pass an array parameter, 'a + e' or '&a[e]'")
        index = self.expr(offset)
        defined = vector_casts.defined_functions(cursor)
        if not vector_casts.pure(index, defined):
            raise self.error(offset, f"the offset of '{cursor.spelling}' has side effects: "
                             "name it first")
        if not vector_casts.pure(start.subscript, defined):
            raise self.error(pointer, f"the pointer of '{cursor.spelling}' has side effects: "
                             "name its offset first")
        return vector_casts.elements(start.name.name, start.subscript, index, width)

    def _converted(self, arg: ci.Cursor, node: c_ast.Node) -> c_ast.Node:
        """An argument of a library function (``fmaxf``, ``sqrt``...) with the conversion to
        its floating parameter type that C++ makes implicitly written out: ``fmaxf(acc,
        1.5L * x)`` passes a float, yet OpenCL's ``fmax(float, double)`` is an ambiguous
        overload that no OpenCL compiler builds."""
        floating = (ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE)
        to = arg.type.get_canonical().kind
        children = list(arg.get_children())
        if arg.kind != K.UNEXPOSED_EXPR or len(children) != 1 or to not in floating:
            return node
        source = children[0].type.get_canonical().kind
        if source == to or source not in _SCALAR_KINDS | {ci.TypeKind.LONGDOUBLE}:
            return node
        if isinstance(node, c_ast.Constant):
            return node                 # a literal: the dialect pass writes it as it converts
        return c_ast.Cast(c_ast.Typename(None, [], None, self.type_node(arg.type, None, arg)),
                          node, coord=node.coord)

    def _atomic(self, cursor: ci.Cursor, name: str) -> c_ast.FuncCall:
        """An atomic update of one element (ir/atomics.py): its address ``&A[i]``, ``A + i``,
        ``p`` (a local pointer into an array) or ``&s`` (a __shared__ scalar) written ``&``
        of the element, so that the analyses see the array access."""
        cuda = name if name in atomics.CUDA_ATOMICS else (atomics.opencl_name(name) or
                                                          (None,))[0]
        args = list(cursor.get_arguments())
        if cuda is None or not args:
            raise self.error(cursor, f"atomic operation '{name}' is not supported")
        pointee = args[0].type.get_canonical().get_pointee()
        type_name = base_type_name(pointee)
        why = atomics.unsupported(cuda, element(type_name), type_name,
                                  opencl=cuda != name)
        if why:
            raise self.error(cursor, why.replace(f"'{cuda}'", f"'{name}'"))
        address = args[0]
        while address.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and \
                len(list(address.get_children())) == 1:
            address = next(address.get_children())
        if address.kind == K.UNARY_OPERATOR and cs.unary_operator(address) == "&":
            (operand,) = list(address.get_children())
            base = operand
            while base.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.ARRAY_SUBSCRIPT_EXPR) and \
                    list(base.get_children()):
                base = next(base.get_children())
            ref = base.referenced if base.kind == K.DECL_REF_EXPR else None
            if ref is not None and ref.kind == K.VAR_DECL and cs.at_file_scope(ref):
                raise self.error(cursor, f"'{name}' on file-scope data '{ref.spelling}' is not "
                                         "supported: pass the array as a kernel parameter")
            target = self.expr(operand)
        else:
            target = self.pointers.dereference(address, self.coord(cursor))
        if not isinstance(target, (c_ast.ArrayRef, c_ast.ID)):
            raise self.error(args[0], f"the address '{name}' updates is not supported: write "
                                      "&A[i], A + i or A")
        rest = [self.expr(a) for a in args[1:]]
        return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(
            [c_ast.UnaryOp("&", target, coord=self.coord(args[0]))] + rest),
            coord=self.coord(cursor))

    def _ldg(self, cursor: ci.Cursor) -> c_ast.Node:
        """``__ldg(&A[i])`` / ``__ldg(A + i)``: the read ``A[i]`` itself. The read-only
        cache is a hint a const __restrict__ array gets anyway, and the passes see the read
        (a staged one leaves global memory altogether)."""
        (arg,) = list(cursor.get_arguments())
        while arg.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and \
                len(list(arg.get_children())) == 1:
            arg = next(arg.get_children())
        if arg.kind == K.UNARY_OPERATOR and cs.unary_operator(arg) == "&":
            (operand,) = list(arg.get_children())
            return self.expr(operand)
        base, offsets = self._pointer_offset(arg)
        if base is not None:
            index: c_ast.Node = c_ast.Constant("int", "0")
            for i, off in enumerate(offsets):
                index = self.expr(off) if i == 0 else c_ast.BinaryOp("+", index, self.expr(off))
            return c_ast.ArrayRef(self.expr(base), index, coord=self.coord(cursor))
        raise self.error(cursor, "__ldg of this address is not supported: write "
                                 "__ldg(&A[i]) or __ldg(A + i)")

    def _pointer_offset(self, cursor: ci.Cursor
                        ) -> tuple[ci.Cursor | None, list[ci.Cursor]]:
        """(array parameter, integer offsets) of ``A + i + 1``-style addresses (``A`` alone:
        no offsets), or (None, []) for any other pointer expression."""
        while cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and \
                len(list(cursor.get_children())) == 1:
            cursor = next(cursor.get_children())
        if cursor.kind == K.DECL_REF_EXPR and \
                cursor.type.get_canonical().kind == ci.TypeKind.POINTER:
            return cursor, []
        if cursor.kind == K.BINARY_OPERATOR and cs.binary_operator(cursor) == "+":
            left, right = list(cursor.get_children())
            if right.type.get_canonical().kind == ci.TypeKind.POINTER:
                left, right = right, left
            base, offsets = self._pointer_offset(left)
            if base is not None and right.type.get_canonical().kind in _SCALAR_KINDS:
                return base, offsets + [right]
        return None, []

    def literal(self, cursor: ci.Cursor) -> c_ast.Node:
        """A literal, written exactly as in the source; one that came from an object-like
        macro keeps the macro's name, one from another macro is written from its value with
        the suffix its type needs (so ``0xFFFFFFFFu`` stays unsigned int)."""
        macro = self.macro_at.get(cursor.hash)
        if macro is not None:
            self.used_macros.add(macro)
            return c_ast.ID(macro, coord=self.coord(cursor))
        token = self.token_at(cursor)
        kind = cursor.kind
        if token.startswith(("L'", "u'", "U'", "u8'")):
            raise self.error(cursor, f"character literal {token} with an encoding prefix is "
                                     "not supported (write the plain 'c' or its value)")
        if kind == K.FLOATING_LITERAL and float_suffix(token) == "h":
            raise self.error(cursor, f"half literal '{token}' is not supported (CUDA has no "
                                     "half literals): write (half){token[:-1]}")
        if not token or (kind == K.FLOATING_LITERAL and float_suffix(token) is None) or (
                kind == K.INTEGER_LITERAL and not token[0].isdigit()):
            return self._literal_from_value(cursor)
        ctype = "float" if kind == K.FLOATING_LITERAL else (
            "char" if kind == K.CHARACTER_LITERAL else "int")
        return c_ast.Constant(ctype, token)

    def _literal_from_value(self, cursor: ci.Cursor) -> c_ast.Node:
        """A literal whose text is not at its location (it comes out of a macro): its value
        with the suffix of its type."""
        value = cs.evaluate(cursor)
        if value is None:
            raise self.error(cursor, "cannot evaluate literal from macro")
        spelling = cursor.type.get_canonical().spelling
        if cursor.kind == K.FLOATING_LITERAL:
            suffix = {"float": "f", "long double": "L", "half": "h"}.get(spelling, "")
            if suffix == "h":
                raise self.error(cursor, "half literals are not supported")
            if suffix == "f":               # the shortest text of that float: 0.01f
                import numpy as np

                return c_ast.Constant("float", str(np.float32(value)) + suffix)
            return c_ast.Constant("float", repr(float(value)) + suffix)
        if cursor.kind == K.CHARACTER_LITERAL:
            return c_ast.Constant("int", str(value))
        suffix = {"unsigned int": "u", "long": "l", "unsigned long": "ul", "long long": "ll",
                  "unsigned long long": "ull"}.get(spelling, "")
        if suffix.startswith("u") and value < 0:      # getAsLongLong of a wide unsigned value
            value += 1 << (32 if spelling == "unsigned int" else 64)
        return c_ast.Constant("int", str(value) + suffix)
