"""Front end: a CUDA or OpenCL kernel file -> GModule (GProcedure per kernel).

libclang parses the file (no SDK headers: the prelude declares what kernels name, see prelude.py;
host code is told apart and passed through, see host.py), Translator turns each kernel body into
a pycparser c_ast tree, and the thread configuration the paper expresses as macros
(``#define blockDimX 16``, ``#define globalDimY 1``) and ``#pragma`` lines is collected into
each kernel's GPragma.
"""
from __future__ import annotations

import copy
import itertools
import os
import re
from dataclasses import dataclass

import clang.cindex as ci
from pycparser import c_ast

from ..errors import NaiveoptError, UnsupportedConstruct
from ..errors import error_at
from ..ir import GlobalVar, GModule, GPragma, GProcedure, Param
from ..ir import array_params, dynamic_shared, helper_math, structs
from ..ir.cgen import to_c
from ..ir.globals import helper_globals, kernel_globals
from ..ir.rewrite import identifiers, map_nodes, walk
from ..ir.literals import integer_literals_to_decimal
from . import clang_setup as cs
from . import host, named_constants, prelude, templates, vector_casts, verbatim
from .launch_sites import host_launch_sites
from ..verify.expr import evaluate
from ..ir.typenames import type_node as ir_type_node, without_integer_casts
from .translate import (_SCALAR_KINDS, VECTOR_TYPES, Translator, base_type_name,
                        file_typedefs, through_typedefs, type_spelling)

K = ci.CursorKind
CONFIG_MACROS = ("blockDimX", "blockDimY", "globalDimX", "globalDimY")
_UNDECLARED = re.compile(r"use of undeclared identifier '(\w+)'")
#: ``#define NAME(params) value`` (a trailing comment is not part of the value)
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)(\([^)]*\))?\s*(.*?)\s*(?://.*|/\*.*?\*/\s*)?$")
_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(.*?)\s*$")


def dialect_of(path: str) -> str:
    """'cuda' for .cu/.cuh files, 'opencl' for .cl files."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".cu", ".cuh"):
        return "cuda"
    if ext == ".cl":
        return "opencl"
    raise NaiveoptError(f"cannot tell the dialect of '{path}': expected a .cu or .cl file", path)


def object_macros(source: str) -> dict[str, str]:
    """Object-like ``#define NAME value`` lines of a file, name -> value text."""
    out = {}
    for line in source.splitlines():
        m = _DEFINE.match(line)
        if m and not m.group(2):
            out[m.group(1)] = m.group(3)
    return out


def fixed_macros(source: str, defines: dict[str, str]) -> tuple[dict[str, int], set[str]]:
    """The integer values a compile of this file fixes, and the names it leaves overridable.

    Fixed: every ``-D NAME=VALUE`` with an integer value (the command line pins a problem
    size for this compile: verification runs at exactly that size), and object-like integer
    ``#define`` lines outside any ``#if``/``#ifdef``/``#ifndef`` that no ``#undef`` removes.
    A ``#define`` under a conditional (``#ifndef W / #define W 4096``) is only a default
    that a build may override with ``-D`` (verification does, at the metadata's sizes):
    such names are returned as overridable, not fixed. A name the file and -D give different
    values is left out (the compile that counts is ambiguous)."""
    from ..verify.expr import evaluate

    def integer(text: str, names: dict[str, int]) -> int | None:
        try:
            value = evaluate(without_integer_casts(integer_literals_to_decimal(text)), names)
        except (ValueError, ZeroDivisionError):
            return None
        return value if isinstance(value, int) else None

    given = {k: v for k, v in ((k, integer(v, {})) for k, v in defines.items())
             if v is not None}
    file: dict[str, int | None] = {}
    defaults: set[str] = set()
    depth = 0
    for line in source.splitlines():
        directive = re.match(r"\s*#\s*(\w+)\s*(\w*)", line)
        if not directive:
            continue
        kind, name = directive.groups()
        if kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif kind == "endif":
            depth = max(0, depth - 1)
        elif kind == "undef":
            file[name] = None
            given.pop(name, None)
        elif kind == "define":
            m = _DEFINE.match(line)
            if m and not m.group(2):
                if depth:
                    defaults.add(m.group(1))
                    file[m.group(1)] = None
                else:
                    file[m.group(1)] = integer(m.group(3), {**given, **{
                        k: v for k, v in file.items() if v is not None}})
    fixed = dict(given)
    for name, value in file.items():
        if name in given and given[name] != value and value is not None:
            fixed.pop(name)
        elif value is not None:
            fixed[name] = value
    return fixed, defaults - set(given)


#: Words that start a declaration of a scalar a ``-D`` name may also be (``int N``,
#: ``const unsigned int n``, ``size_t len``): such a name is a variable of the kernel.
_DECL_WORDS = ("int", "unsigned", "signed", "long", "short", "char", "float", "double",
               "size_t", "uint", "ulong", "int32_t", "int64_t", "uint32_t", "uint64_t", "bool")


def macro_defines(source: str, defines: dict[str, str]) -> dict[str, str]:
    """The ``-D`` definitions that are macros for this file.

    ``-D NAME=VALUE`` both defines a macro and names a problem size. A name the file defines
    or tests as a macro (#define NAME, #ifdef, #ifndef, #undef, defined(), #if) goes to the
    preprocessor, and so does a name the file uses but never declares (``A[i * WIDTH + j]``
    with WIDTH given on the command line, also from a macro body: ``#define AT(i, j)
    A[(i) * WIDTH + (j)]``); a name the file declares (a parameter such as ``int N``) is a
    size only, or the definition would rewrite the kernel's own code (``int 64``), even when
    a macro body mentions it (``#define L_AT(i, k) L[(i) * N + (k)]``)."""
    directive = re.compile(r"\s*#\s*(define|undef|ifn?def|if|elif)\b(.*)")
    out = {}
    for name, value in defines.items():
        word = re.compile(rf"\b{re.escape(name)}\b")
        as_macro = False
        for line in source.splitlines():
            m = directive.match(line)
            if not m:
                continue
            rest = m.group(2)
            if m.group(1) in ("if", "elif"):
                as_macro = as_macro or bool(word.search(rest))
            elif re.match(rf"\s*{re.escape(name)}\b", rest):
                as_macro = True
        declared = re.search(rf"\b(?:{'|'.join(_DECL_WORDS)})\b[\w\s]*?[\s*&]"
                             rf"{re.escape(name)}\s*[,;=)\[]", source)
        if as_macro or not declared:
            out[name] = value
    return out


@dataclass(frozen=True)
class SourceUnit:
    """One kernel file as the front end read it: all that later stages need from the text.

    The source is read here once (:func:`parse_unit`); the pipeline, verification and emission
    take this, not the text, so none of them parses or scans it again. ``module`` is never
    changed: each consumer (the optimized compile, an unoptimized one, the naive program of
    verification) takes its own copy with :meth:`fresh_module`. ``source`` stays for where the
    text itself is the product: an OpenCL input is its own naive program, and the GPU kit
    stores the naive file as the user wrote it."""

    path: str
    source: str
    dialect: str
    defines: dict[str, str]      # the -D NAME=VALUE given, macros and problem sizes alike
    macros: dict[str, str]       # those of them that are preprocessor macros (macro_defines)
    fixed: dict[str, int]        # the integer values this compile fixes (fixed_macros)
    overridable: set[str]        # #define defaults under a conditional a build may override
    module: GModule              # the parsed file; copy it with fresh_module

    def fresh_module(self) -> GModule:
        """A copy of the parsed module for a consumer to transform (the unit keeps its own)."""
        return copy.deepcopy(self.module)

    def macros_among(self, defines: dict[str, str]) -> dict[str, str]:
        """Which of ``defines`` (another size set's names, say) are macros for this file."""
        return macro_defines(self.source, defines)


def parse_unit(path: str, source: str, defines: dict[str, str] | None = None) -> SourceUnit:
    """Read a kernel file once: its GModule, its macros and the sizes its compile fixes, or
    a located NaiveoptError.

    libclang may parse the text more than once within this call, and only here: again with
    the paper's predefined ids (``idx``...) defined when the file uses them undeclared (the
    first parse is how naiveopt learns which), and once more with every integer macro set to
    a sentinel value (:func:`_macro_literals`: clang folds macros away, and the twin parse is
    how a literal is traced back to the macro it came from)."""
    defines = dict(defines or {})
    instances = templates.Instances()
    # templates first: a named constant read inside a kernel template is read by device code
    # only once the template's instances are kernels (both rewrites keep the lines)
    if dialect_of(path) == "cuda" and "template" in source:
        source, instances = templates.instantiate(path, source,
                                                  macro_defines(source, defines))
    if dialect_of(path) == "cuda" and named_constants.candidates(source):
        source = named_constants.rewrite(path, source, macro_defines(source, defines))
    macros = macro_defines(source, defines)
    try:
        module = _parse(path, source, macros, instances.line)
    except NaiveoptError as err:
        raise instances.locate(err, path) from None
    instances.relocate(module)
    fixed, overridable = fixed_macros(source, defines)
    module.fixed, module.overridable = dict(fixed), set(overridable)
    return SourceUnit(path, source, module.dialect, defines, macros, fixed, overridable, module)


def parse_module(path: str, source: str, defines: dict[str, str] | None = None) -> GModule:
    """Parse a kernel file into a GModule, or raise a located NaiveoptError (the module of
    :func:`parse_unit`, for callers that need nothing else)."""
    return parse_unit(path, source, defines).module


def _parse(path: str, source: str, defines: dict[str, str],
           line_of=lambda line: line) -> GModule:
    """The GModule of a file; ``defines`` are the -D definitions that are its macros;
    ``line_of`` gives the user's line of a line of ``source`` (a template instance's
    definition follows the file, frontend/templates.py)."""
    dialect = dialect_of(path)
    if "\0" in source:
        raise NaiveoptError("the file is binary, not a kernel source", path, 1, 1)
    prelude.check_headers(path, source)
    tu = cs.parse(path, source, dialect, defines)
    missing = _undeclared_paper_ids(tu)
    if missing:
        tu = cs.parse(path, source, dialect, {**_paper_defines(dialect, missing), **defines})
    parts = host.FileParts(tu, path, source, dialect)
    err = cs.first_error(tu, path, source, parts.in_host_code,
                         prelude.unknown_headers(path, source))
    if err is not None:
        raise parts.explain(err)
    for cursor in parts.device:
        if cursor.kind == K.FUNCTION_TEMPLATE:
            raise UnsupportedConstruct("__device__ function templates are not supported: "
                                       "write the function for one type", path,
                                       cursor.location.line, cursor.location.column)
    file_macros = object_macros(source)
    macro_values = _integer_macros(file_macros, defines)
    macro_at = _macro_literals(tu, path, source, dialect, defines, macro_values,
                               {n: table_value for n, table_value in _paper_defines(
                                   dialect, missing).items()})
    translator = Translator(path, source, macro_at)
    module = GModule(path=path, dialect=dialect, procedures=[], paper_ids=missing,
                     helper_math=any(os.path.basename(name) == helper_math.HEADER
                                     for _, _, name in prelude.includes(source)))
    functions = [c for c in parts.declarations
                 if c.kind == K.FUNCTION_DECL and c.is_definition()]
    config = _config_from_macros(file_macros, defines)
    pragma_lines = _pragmas_by_line(source)
    spans = [(line_of(f.location.line), line_of(f.extent.end.line)) for f in functions]
    for fn in functions:            # (a helper called before its definition, through a prototype)
        if not _is_kernel(fn, dialect) and parts.is_device(fn):
            positions = {k: _struct_param(arg, translator, ctype).type.name
                         for k, arg in enumerate(fn.get_arguments())
                         if (ctype := _helper_struct(arg.type)) is not None}
            if positions:
                translator.struct_helpers[fn.spelling] = positions
    unread: list[tuple[ci.Cursor, UnsupportedConstruct]] = []
    unread_helpers: dict[str, tuple[ci.Cursor, UnsupportedConstruct]] = {}
    for fn in functions:
        _check_not_recursive(fn, translator)
        # the pragma lines between the function before it and its head
        start = line_of(fn.location.line)
        previous_end = max((end for _, end in spans if end < start), default=0)
        user = [text for line, text in pragma_lines if previous_end < line < start]
        if _is_kernel(fn, dialect):
            try:
                module.procedures.append(_procedure(fn, translator, dialect, config, user,
                                                    macro_values))
            except UnsupportedConstruct as err:
                unread.append((fn, err))
        elif parts.is_device(fn):
            try:
                helper = _function_def(fn, translator, "__device__", dialect)
            except UnsupportedConstruct as err:
                unread_helpers[fn.spelling] = (fn, err)
                continue
            module.helpers.append(helper)
            extern = dynamic_shared.in_helpers(module.helpers[-1:])
            if extern is not None:
                raise error_at(extern.coord, f"extern __shared__ '{extern.name}' in a "
                               "__device__ function: declare it in the kernel and pass the "
                               "array", path)
    if unread_helpers:
        _callers_unread(module, functions, unread_helpers, unread, dialect)
    module.helpers = _callees_first(module.helpers)
    module.pragmas = [structs.unspell([s for p in module.procedures for s in p.struct_params],
                                      text)
                      for _, text in pragma_lines if text.startswith("naiveopt")]
    namespaced = [(f"kernel '{k.spelling}' is declared in namespace "
                   f"'{k.semantic_parent.spelling or '(anonymous)'}': naiveopt reads kernels at "
                   "file scope (declare it outside the namespace)", k.location.line,
                   k.location.column) for k in _kernels_in_namespaces(tu, path)]
    if not module.procedures:
        for _, err in sorted(unread, key=lambda entry: entry[0].extent.start.line) + \
                list(unread_helpers.values()):
            raise err
        for message, line, column in namespaced:
            raise UnsupportedConstruct(message, path, line, column)
        raise NaiveoptError("no kernel (__global__ / __kernel function) found", path)
    # beside file-scope kernels, a namespace's are text around them: written as they are,
    # and the result says so (OptimizeResult.left_as_written)
    for fn, err in sorted(unread_helpers.values(), key=lambda entry: entry[0].extent.start.line):
        _left_as_written(fn, err, module, source, line_of, "function")
    unread.sort(key=lambda entry: entry[0].extent.start.line)
    module.left_as_written = namespaced + [_left_as_written(fn, err, module, source, line_of)
                                           for fn, err in unread]
    module.left_as_written.sort(key=lambda entry: entry[1:])
    parts.check_device_code(translator.error)
    for c in parts.device:
        if c.kind != K.VAR_DECL:
            continue
        if _struct_global(c, dialect):
            g = _struct_param(c, translator)        # (its type read as a parameter's)
            g = structs.StructGlobal(g.name, g.type, g.symbols)
            module.struct_globals.append(g)
            module.globals += [_member_global(c, sym, resolved, spelled)
                               for (_, resolved, spelled), sym in zip(g.type.members,
                                                                       g.symbols.values())]
        else:
            module.globals.append(_global(c, translator, dialect))
    structs.read_global_members([h for h in module.helpers] + [p.func for p in module.procedures],
                                module.struct_globals,
                                lambda coord, message: error_at(coord, message, path))
    if module.struct_globals:       # a pragma's ``sizes(params.n = 1000)``
        module.pragmas = [structs.unspell(module.struct_globals, t) for t in module.pragmas]
        for proc in module.procedures:
            proc.pragma.user = [structs.unspell(module.struct_globals, t)
                                for t in proc.pragma.user]
    module.typedefs = file_typedefs(parts.device)
    module.preamble, module.host_code = parts.split_text(source)
    if dialect == "cuda" and parts.host:
        module.launch_sites = host_launch_sites(
            source, {p.name: dynamic_shared.cuda_arguments(p) for p in module.procedures},
            parts.in_host_code,
            module.preamble)
    _check_globals_read_only(module)
    helpers = helper_globals(module)
    for proc in module.procedures:
        proc.global_args = [g.name for g in kernel_globals(module, proc, helpers)
                            if g.host_filled]
    verbatim_macros = module.verbatim_names & set(file_macros)
    module.macros = {name: defines.get(name, file_macros.get(name, ""))
                     for name in sorted(translator.used_macros | verbatim_macros)}
    return module


def _callers_unread(module: GModule, functions: list[ci.Cursor],
                    unread_helpers: dict[str, tuple[ci.Cursor, UnsupportedConstruct]],
                    unread: list[tuple[ci.Cursor, UnsupportedConstruct]], dialect: str) -> None:
    """Helpers the translation refused (a warp reduction in a ``__device__`` function): the
    helpers and kernels that call one, directly or through other helpers, are unread too
    (added to ``unread_helpers`` and ``unread``, their translations dropped from ``module``),
    each saying which helper it calls and why that one was refused."""
    calls = {fn.spelling: {n.referenced.spelling for n in fn.walk_preorder()
                           if n.kind == K.CALL_EXPR and n.referenced is not None}
             for fn in functions}
    helpers = [fn for fn in functions if not _is_kernel(fn, dialect)]
    grown = True
    while grown:
        grown = False
        for fn in helpers:
            hit = sorted(calls[fn.spelling] & set(unread_helpers))
            if hit and fn.spelling not in unread_helpers:
                unread_helpers[fn.spelling] = (fn, _via(hit[0], unread_helpers[hit[0]][1]))
                grown = True
    module.helpers = [h for h in module.helpers if h.decl.name not in unread_helpers]
    for fn in functions:
        hit = sorted(calls[fn.spelling] & set(unread_helpers))
        if hit and _is_kernel(fn, dialect) and all(u is not fn for u, _ in unread):
            module.procedures = [p for p in module.procedures if p.name != fn.spelling]
            unread.append((fn, _via(hit[0], unread_helpers[hit[0]][1])))


def _via(helper: str, err: UnsupportedConstruct) -> UnsupportedConstruct:
    """The error of a function that calls ``helper``, which the translation refused with
    ``err`` (located where ``err`` is: the construct itself)."""
    return UnsupportedConstruct(f"it calls '{helper}', which naiveopt cannot read: "
                                f"{err.message}", err.file, err.line, err.col)


def _left_as_written(fn: ci.Cursor, err: UnsupportedConstruct, module: GModule, source: str,
                     line_of, what: str = "kernel") -> tuple[str, int, int]:
    """A kernel (or a helper) the translation refused, beside kernels it read: carried into
    the output as it is written (frontend/verbatim.py) and reported as (why, line, column);
    where the output could not hold it unchanged, the file is refused with ``err`` as
    before."""
    if line_of(fn.location.line) != fn.location.line:      # a template's instance
        raise err
    why = verbatim.blocker(fn, source)
    if why is not None:
        raise UnsupportedConstruct(f"{err.message} ({what} '{fn.spelling}' cannot be written "
                                   f"as it is beside the others: {why})", err.file, err.line,
                                   err.col)
    module.verbatim.append(verbatim.text(fn, source))
    module.verbatim_names |= verbatim.names(fn)
    return f"{what} '{fn.spelling}': {err.message}", err.line or 0, err.col or 0


def _struct_global(cursor: ci.Cursor, dialect: str) -> bool:
    """Whether a file-scope variable is a struct the host fills (``__constant__ Params p;``,
    no initializer, not an array): read member by member (ir/structs.StructGlobal)."""
    attrs = {c.kind for c in cursor.get_children()}
    init = cs.var_initializer(cursor)
    implicit = init is not None and init.kind == K.CALL_EXPR and init.referenced is not None \
        and init.referenced.kind == K.CONSTRUCTOR and not list(init.get_arguments())
    return dialect == "cuda" and bool(attrs & {K.CUDACONSTANT_ATTR, K.CUDADEVICE_ATTR}) and \
        _is_struct(cursor.type) and (init is None or implicit) and \
        cursor.storage_class != ci.StorageClass.EXTERN


def _member_global(cursor: ci.Cursor, symbol: str, resolved: str, spelled: str) -> GlobalVar:
    """The host-filled scalar global a struct global's member is read as."""
    attrs = {c.kind for c in cursor.get_children()}
    decl = c_ast.Decl(symbol, [], [], [], [], c_ast.TypeDecl(
        symbol, [], None, ir_type_node(resolved, spelled)), None, None)
    return GlobalVar(symbol, resolved, [], [], "constant" if K.CUDACONSTANT_ATTR in attrs
                     else "device", cursor.type.is_const_qualified(), decl,
                     cursor.location.line)


def _global(cursor: ci.Cursor, translator: Translator, dialect: str) -> GlobalVar:
    """A file-scope variable: CUDA ``__constant__`` / ``__device__`` data, OpenCL
    program-scope ``__constant`` data (ir.GlobalVar); anything else is rejected."""
    attrs = {c.kind for c in cursor.get_children()}
    name = cursor.spelling
    if dialect == "cuda":
        if K.CUDASHARED_ATTR in attrs:
            raise translator.error(cursor, f"file-scope __shared__ variable '{name}' is not "
                                           "supported: declare shared memory in the kernel")
        if K.CUDACONSTANT_ATTR in attrs:
            space = "constant"
        elif K.CUDADEVICE_ATTR in attrs:
            space = "device"
        else:
            raise translator.error(cursor, f"host variable '{name}' is not supported: "
                                           "kernels read file-scope data declared "
                                           "__constant__ or __device__")
    elif cursor.type.get_address_space() == 3 or "__constant" in cursor.type.spelling:
        space = "constant"
    else:
        raise translator.error(cursor, f"program-scope variable '{name}' is not supported: "
                                       "only __constant data")
    if cursor.storage_class == ci.StorageClass.EXTERN:
        raise translator.error(cursor, f"extern variable '{name}' is not supported: define "
                                       "it in the kernel file")
    elem = cursor.type
    while elem.kind == ci.TypeKind.CONSTANTARRAY:
        elem = elem.element_type
    if cursor.type.get_canonical().kind == ci.TypeKind.POINTER or \
            elem.get_canonical().kind == ci.TypeKind.POINTER:
        raise translator.error(cursor, f"file-scope pointer variable '{name}' is not "
                                       "supported")
    decl = translator.var_decl(cursor, file_scope=True)
    decl.storage = []
    dims, extents, t, ct = [], [], decl.type, cursor.type
    while isinstance(t, c_ast.ArrayDecl):
        dims.append(to_c(t.dim))
        extents.append(ct.element_count)
        t, ct = t.type, ct.element_type
    return GlobalVar(name, base_type_name(elem), dims, extents, space,
                     elem.is_const_qualified(), decl, cursor.location.line)


def _check_globals_read_only(module: GModule) -> None:
    """Kernels only read file-scope data: a write (mutable global state, which naiveopt does
    not model), a local or parameter that shadows it, or an array passed on as a pointer
    (OpenCL would need its address space in the callee's type) is a located error."""
    names = {g.name: g for g in module.globals}
    if not names:
        return
    functions = [h for h in module.helpers] + [p.func for p in module.procedures]
    for func in functions:
        args = func.decl.type.args.params if func.decl.type.args is not None else []
        for node, parent in [(a, None) for a in args] + list(walk(func.body)):
            if isinstance(node, c_ast.Decl) and node.name in names:
                raise error_at(node.coord or func.decl.coord or func.body.coord,
                               f"'{node.name}' in '{func.decl.name}' shadows the file-scope "
                               f"variable '{node.name}': rename it", module.path)
            target = None
            if isinstance(node, c_ast.Assignment):
                target = node.lvalue
            elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
                target = node.expr
            while isinstance(target, (c_ast.ArrayRef, c_ast.StructRef)):
                target = target.name
            if isinstance(target, c_ast.ID) and target.name in names:
                g = names[target.name]
                what = "__constant__" if g.space == "constant" else "__device__"
                raise error_at(node.coord, f"'{func.decl.name}' writes the file-scope "
                               f"{what} variable '{g.name}': mutable global state is not "
                               "supported (pass the data as a kernel argument)", module.path)
            if isinstance(node, c_ast.ID) and node.name in names and names[node.name].dims \
                    and not (isinstance(parent, c_ast.ArrayRef) and parent.name is node):
                raise error_at(node.coord or getattr(parent, "coord", None),
                               f"the file-scope array '{node.name}' is used other than by "
                               "subscripts (passed as a pointer?): index it where it is read",
                               module.path)


def _paper_defines(dialect: str, names: list[str]) -> dict[str, str]:
    table = cs.PAPER_IDS if dialect == "cuda" else cs.PAPER_IDS_OPENCL
    return {n: table[n] for n in names}


def _integer_macros(file_macros: dict[str, str], defines: dict[str, str]) -> dict[str, int]:
    """Object-like macros (from the file or -D) whose value is an integer constant."""
    out = {}
    for name in (set(file_macros) | set(defines)) - set(CONFIG_MACROS) - set(cs.PAPER_IDS):
        text = defines.get(name, file_macros.get(name, ""))
        try:
            value = evaluate(integer_literals_to_decimal(text), {})
        except ValueError:
            continue
        if isinstance(value, int):
            out[name] = value
    return out


def _function_literals(tu: ci.TranslationUnit, path: str) -> list[ci.Cursor]:
    """The integer literals of the file's functions and file-scope variables, in order."""
    out = []
    for fn in cs.top_level(tu.cursor):
        if fn.kind in (K.FUNCTION_DECL, K.VAR_DECL) and fn.location.file is not None and \
                fn.location.file.name == path and (fn.kind == K.VAR_DECL or fn.is_definition()):
            out.extend(c for c in fn.walk_preorder() if c.kind == K.INTEGER_LITERAL)
    return out


def _macro_literals(tu: ci.TranslationUnit, path: str, source: str, dialect: str,
                    defines: dict[str, str], macros: dict[str, int],
                    paper: dict[str, str]) -> dict[int, str]:
    """Which integer literals of ``tu`` come from which object-like macro: cursor hash -> name.

    Clang folds macros away, and a literal that comes out of a function-like macro's body
    (``#define A(y,x) A[(y)*WIDTH+(x)]``) has no trace of ``WIDTH`` left. So the file is parsed
    once more with every such macro set to a unique sentinel value; the two ASTs have the same
    shape, and a literal whose twin holds a sentinel is that macro. If the shapes differ the
    macros are not preserved (their values are inlined), which is still correct.
    """
    if not macros:
        return {}
    sentinel = {name: 900_001 + 7 * i for i, name in enumerate(sorted(macros))}
    by_value = {v: k for k, v in sentinel.items()}
    lines = []
    for line in source.split("\n"):
        m = _DEFINE.match(line)
        if m and not m.group(2) and m.group(1) in sentinel:
            line = f"#define {m.group(1)} {sentinel[m.group(1)]}"
        lines.append(line)
    twin_defines = {**paper, **defines, **{k: str(sentinel[k]) for k in defines if k in sentinel}}
    twin = cs.parse(path, "\n".join(lines), dialect, twin_defines)
    mine, theirs = _function_literals(tu, path), _function_literals(twin, path)
    if len(mine) != len(theirs):
        return {}
    out = {}
    for a, b in zip(mine, theirs):
        value = cs.evaluate(b)
        if value in by_value and cs.evaluate(a) == macros[by_value[value]]:
            out[a.hash] = by_value[value]
    return out


def _undeclared_paper_ids(tu: ci.TranslationUnit) -> list[str]:
    names = []
    for diag in tu.diagnostics:
        m = _UNDECLARED.search(diag.spelling)
        if m and m.group(1) in cs.PAPER_IDS and m.group(1) not in names:
            names.append(m.group(1))
    return names


def _config_from_macros(macros: dict[str, str], defines: dict[str, str]) -> dict[str, str]:
    merged = {**macros, **defines}
    return {k: merged[k] for k in CONFIG_MACROS if k in merged}


def _pragmas_by_line(source: str) -> list[tuple[int, str]]:
    return [(i + 1, m.group(1)) for i, line in enumerate(source.splitlines())
            if (m := _PRAGMA.match(line))]


def _kernels_in_namespaces(tu: ci.TranslationUnit, path: str) -> list[ci.Cursor]:
    """The CUDA kernels of the file declared inside a namespace (which naiveopt does not
    read: its kernels, helpers and launches are at file scope)."""
    return [c for c in tu.cursor.walk_preorder()
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and c.location.file is not None
            and c.location.file.name == path and c.semantic_parent is not None
            and c.semantic_parent.kind == K.NAMESPACE
            and any(a.kind == K.CUDAGLOBAL_ATTR for a in c.get_children())]


def _is_kernel(fn: ci.Cursor, dialect: str) -> bool:
    if dialect == "cuda":
        return any(c.kind == K.CUDAGLOBAL_ATTR for c in fn.get_children())
    tokens = [t.spelling for t in fn.get_tokens()][:4]
    return "__kernel" in tokens or "kernel" in tokens


def _check_not_recursive(fn: ci.Cursor, translator: Translator) -> None:
    for node in fn.walk_preorder():
        if node.kind == K.CALL_EXPR and node.referenced is not None and \
                node.referenced.get_usr() == fn.get_usr():
            raise translator.error(node, f"recursive call to '{fn.spelling}' is not supported")


def _param(cursor: ci.Cursor, translator: Translator, dialect: str) -> Param:
    ctype = cursor.type
    if ctype.get_canonical().kind == ci.TypeKind.POINTER:
        if ctype.kind != ci.TypeKind.POINTER:
            ctype = through_typedefs(ctype)      # a typedef of a pointer: written out
        pointee = ctype.get_pointee()
        if pointee.get_canonical().kind == ci.TypeKind.POINTER:
            raise translator.error(cursor, "pointer-to-pointer parameters are not supported")
        if pointee.get_canonical().kind == ci.TypeKind.RECORD and \
                base_type_name(pointee) not in VECTOR_TYPES:
            raise translator.error(cursor, f"parameter type '{ctype.spelling}' is not "
                                           "supported: arrays of structs")
        if pointee.get_canonical().kind == ci.TypeKind.FUNCTIONPROTO:
            raise translator.error(cursor, "function pointer parameters are not supported")
        space = {1: "global", 2: "local", 3: "constant"}.get(pointee.get_address_space(),
                                                             "global")
        return Param(cursor.spelling, base_type_name(pointee), True,
                     const=pointee.is_const_qualified() or space == "constant",
                     restrict=ctype.is_restrict_qualified(), address_space=space,
                     spelling=type_spelling(pointee) or "")
    if "image" in ctype.spelling or "sampler" in ctype.spelling:
        raise translator.error(cursor, f"parameter type '{ctype.spelling}' is not supported "
                                       "in naive kernels")
    if ctype.get_canonical().kind not in _SCALAR_KINDS and \
            base_type_name(ctype) not in VECTOR_TYPES:
        raise translator.error(cursor, f"parameter type '{ctype.spelling}' is not supported")
    return Param(cursor.spelling, base_type_name(ctype), False,
                 const=ctype.is_const_qualified(), spelling=type_spelling(ctype) or "")


def param_decl(p: Param) -> c_ast.Decl:
    """The c_ast declaration of a parameter (dialect-neutral: no address-space qualifier)."""
    base = c_ast.TypeDecl(p.name, ["const"] if p.const else [], None,
                          ir_type_node(p.base_type, p.spelling))
    if p.is_pointer:
        ptr_quals = ["__restrict__"] if p.restrict else []
        type_node: c_ast.Node = c_ast.PtrDecl(ptr_quals, base)
    else:
        type_node = base
    return c_ast.Decl(p.name, list(base.quals), [], [], [], type_node, None, None)


def _function_def(fn: ci.Cursor, translator: Translator, funcspec: str, dialect: str
                  ) -> c_ast.FuncDef:
    params, structs_here, positions = [], [], {}
    for k, arg in enumerate(fn.get_arguments()):
        ctype = _helper_struct(arg.type)
        if ctype is not None:
            # a struct by value or const reference: its members, as a kernel's (the helper
            # is the file's own: its signature is not the host's)
            structs_here.append(_struct_param(arg, translator, ctype))
            positions[k] = structs_here[-1].type.name
            for (member, resolved, spelled), sym in zip(structs_here[-1].type.members,
                                                        structs_here[-1].symbols.values()):
                params.append(c_ast.Decl(sym, [], [], [], [], c_ast.TypeDecl(
                    sym, [], None, ir_type_node(resolved, spelled)), None, None))
            continue
        node = translator.type_node(arg.type, arg.spelling, arg)
        quals = list(getattr(node, "quals", []) or [])
        params.append(c_ast.Decl(arg.spelling, quals, [], [], [], node, None, None))
    ret = translator.type_node(fn.result_type, fn.spelling, fn)
    body_cursor = next(c for c in fn.get_children() if c.kind == K.COMPOUND_STMT)
    body = translator.compound(body_cursor)
    _check_member_names(body, structs_here, [], translator)
    _struct_arguments(body, structs_here, translator)
    _read_members(body, structs_here, [], translator)
    if positions:
        translator.struct_helpers[fn.spelling] = positions
    pointees = {}
    for arg in fn.get_arguments():
        t = arg.type.get_canonical()
        if t.kind == ci.TypeKind.POINTER:
            words = t.get_pointee().get_canonical().spelling.split()
            pointees[arg.spelling] = " ".join(w for w in words if w not in (
                "const", "volatile", "__global", "__constant", "__local", "__private"))
    vector_casts.lower(body, pointees, vector_casts.defined_functions(fn), dialect == "opencl")
    decl = c_ast.Decl(fn.spelling, [], [], [], [funcspec],
                      c_ast.FuncDecl(c_ast.ParamList(params) if params else None, ret), None,
                      None)
    return c_ast.FuncDef(decl, None, body)


def _procedure(fn: ci.Cursor, translator: Translator, dialect: str, config: dict[str, str],
               user_pragmas: list[str], macro_values: dict[str, int]) -> GProcedure:
    if fn.result_type.kind != ci.TypeKind.VOID:
        raise translator.error(fn, "a kernel must return void")
    params, by_value = [], []
    arrays, rows = [], []
    for arg in fn.get_arguments():
        shape = _array_shape(arg.type)
        if shape is not None:
            params.append(_param_of_elements(arg, shape[0], translator))
            if shape[1]:
                rows.append(array_params.ArrayParam(arg.spelling, shape[1]))
        elif _points_to_struct(arg.type):
            param, array = _struct_array(arg, translator, dialect)
            params.append(param)
            arrays.append(array)
        elif _is_struct(arg.type):
            by_value.append(_struct_param(arg, translator))
            params += [Param(sym, resolved, False, const=by_value[-1].const,
                             spelling=spelled if spelled != resolved else "")
                       for (member, resolved, spelled), sym in zip(
                           by_value[-1].type.members, by_value[-1].symbols.values())]
        else:
            params.append(_param(arg, translator, dialect))
    body_cursor = next((c for c in fn.get_children() if c.kind == K.COMPOUND_STMT), None)
    if body_cursor is None:
        raise translator.error(fn, "kernel has no body")
    body = translator.compound(body_cursor)
    array_params.flatten(body, rows, lambda coord, message: error_at(coord, message,
                                                                     translator.path))
    _check_member_names(body, by_value, params, translator)
    _struct_arguments(body, by_value, translator)
    _read_members(body, by_value, params, translator)
    _read_array_members(body, arrays, translator)
    user_pragmas = [structs.unspell(by_value, text) for text in user_pragmas]
    vector_casts.lower(body, {p.name: p.base_type for p in params if p.is_pointer},
                       vector_casts.defined_functions(fn), dialect == "opencl")
    params += _dynamic_shared(fn, body, params, translator)
    passed = [p for p in params if p.address_space != "local"]
    decl = c_ast.Decl(fn.spelling, [], [], [], ["__global__"],
                      c_ast.FuncDecl(c_ast.ParamList([param_decl(p) for p in passed])
                                     if passed else None,
                                     c_ast.TypeDecl(fn.spelling, [], None,
                                                    c_ast.IdentifierType(["void"]))),
                      None, None)
    pragma = GPragma(block_dim=(config.get("blockDimX"), config.get("blockDimY")),
                     global_dim=(config.get("globalDimX"), config.get("globalDimY")),
                     global_dim_source="define" if any(
                         k in config for k in ("globalDimX", "globalDimY")) else "",
                     user=user_pragmas)
    bounds = _launch_bounds(fn, body_cursor, translator.source_bytes)
    first = bounds.split(",")[0].strip()
    most = int(first) if first.isdigit() else macro_values.get(first)
    required, group = _work_group_size(fn, body_cursor, translator.source_bytes, macro_values) \
        if dialect == "opencl" else ("", None)
    if group is not None:
        pragma.block_dim = (str(group[0]), str(group[1]))
        if group[2] > 1:
            pragma.block_dim_z = str(group[2])
    return GProcedure(name=fn.spelling, params=params, func=c_ast.FuncDef(decl, None, body),
                      file=translator.path, line=fn.location.line, dialect=dialect,
                      pragma=pragma, launch_bounds=bounds, max_threads=most,
                      struct_params=by_value, struct_arrays=arrays, array_params=rows,
                      extern_c=cs.extern_c(fn),
                      work_group_size=", ".join(map(str, group)) if group else "")


def _array_shape(ctype: ci.Type) -> tuple[ci.Type, list[int]] | None:
    """(element type, extents after the first) of a parameter declared as an array
    (``float a[N][M]``, ``float a[][M]``, ``float a[]``: clang keeps the array type) or as a
    pointer to rows (``float (*a)[M]``), or None for any other parameter."""
    canonical = ctype.get_canonical()
    if canonical.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        elem = canonical.element_type           # (the first extent: the rows, any number)
    elif canonical.kind == ci.TypeKind.POINTER and \
            canonical.get_pointee().get_canonical().kind == ci.TypeKind.CONSTANTARRAY:
        elem = canonical.get_pointee()
    else:
        return None
    extents = []
    while elem.get_canonical().kind == ci.TypeKind.CONSTANTARRAY:
        extents.append(elem.get_canonical().get_array_size())
        elem = elem.get_canonical().element_type
    return elem, extents


def _param_of_elements(arg: ci.Cursor, elem: ci.Type, translator: Translator) -> Param:
    """The flat array parameter an array parameter is read as (ir/array_params.py)."""
    if elem.get_canonical().kind not in _SCALAR_KINDS and \
            base_type_name(elem) not in VECTOR_TYPES:
        raise translator.error(arg, f"parameter type '{arg.type.spelling}' is not supported: "
                                    "arrays of scalars or vectors only")
    space = {1: "global", 2: "local", 3: "constant"}.get(elem.get_address_space(), "global")
    # (libclang's element types drop qualifiers: the written type's words before its
    # extents say whether the elements are const)
    const = "const" in re.split(r"[\[(]", arg.type.spelling)[0].split()
    return Param(arg.spelling, base_type_name(elem), True,
                 const=const or space == "constant", address_space=space,
                 spelling=type_spelling(elem) or "")


def _is_struct(ctype: ci.Type) -> bool:
    return ctype.get_canonical().kind == ci.TypeKind.RECORD and \
        base_type_name(ctype) not in VECTOR_TYPES


def _callees_first(helpers: list[c_ast.FuncDef]) -> list[c_ast.FuncDef]:
    """The helpers in source order, except that each comes after the helpers it calls: the
    output writes definitions only, so a helper that called one defined after it (through a
    prototype) would call an undeclared function there."""
    by_name = {h.decl.name: h for h in helpers}
    out: list[c_ast.FuncDef] = []
    placed: set[str] = set()

    def place(h: c_ast.FuncDef, path: tuple[str, ...] = ()) -> None:
        if h.decl.name in placed or h.decl.name in path:
            return
        for node, _ in walk(h.body):
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                    node.name.name in by_name:
                place(by_name[node.name.name], path + (h.decl.name,))
        placed.add(h.decl.name)
        out.append(h)
    for h in helpers:
        place(h)
    return out


def _helper_struct(ctype: ci.Type) -> ci.Type | None:
    """The struct type a helper's parameter takes by value or by const reference, or None."""
    if ctype.kind == ci.TypeKind.LVALUEREFERENCE:
        ctype = ctype.get_pointee()
        if not ctype.is_const_qualified():
            return None
    return ctype if _is_struct(ctype) else None


def _check_member_names(body: c_ast.Compound, params: list[structs.StructParam],
                        scalars: list[Param], translator: Translator) -> None:
    """The names the members are read as (ir/structs.member_symbol) are the kernel's own."""
    mine = {v for s in params for v in s.symbols.values()}
    taken = identifiers(body) | {p.name for p in scalars if p.name not in mine}
    for s in params:
        for sym in s.symbols.values():
            if sym in taken:
                raise error_at(body.coord, f"struct parameter '{s.name}': its member's name "
                               f"'{sym}', which naiveopt reads it as, is taken in the kernel: "
                               "rename that variable", translator.path)


def _struct_arguments(body: c_ast.Compound, params: list[structs.StructParam],
                      translator: Translator) -> None:
    """A struct parameter passed whole to a helper that takes that struct
    (Translator.struct_helpers): the call passes its members, as the helper takes them."""
    helpers = translator.struct_helpers
    if not helpers:
        return
    by_name = {s.name: s for s in params}
    for node, _ in walk(body):
        if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and
                node.name.name in helpers and node.args is not None):
            continue
        args = []
        for k, arg in enumerate(node.args.exprs):
            wanted = helpers[node.name.name].get(k)
            if wanted is None:
                args.append(arg)
                continue
            s = by_name.get(arg.name) if isinstance(arg, c_ast.ID) else None
            if s is None or s.type.name != wanted:
                raise error_at(arg.coord or node.coord, f"'{node.name.name}' takes a "
                               f"'{wanted}' here: naiveopt passes a struct parameter of that "
                               "type to it, nothing else", translator.path)
            args += [c_ast.ID(sym, coord=arg.coord) for sym in s.symbols.values()]
        node.args.exprs = args


def _struct_param(cursor: ci.Cursor, translator: Translator, ctype: ci.Type | None = None
                  ) -> structs.StructParam:
    """A parameter of struct type passed by value (ir/structs.py): its members, each a
    scalar; anything else is a located error naming the member. ``ctype``: the struct type
    where the parameter's is a reference to it (a helper's ``const Params &p``)."""
    ctype = ctype or cursor.type
    what = f"struct parameter '{cursor.spelling}'"
    kind = _struct_type(cursor, ctype, what, translator)
    const = ctype.is_const_qualified()
    return structs.StructParam(cursor.spelling, kind, const, {
        m: structs.member_symbol(cursor.spelling, m) for m, _, _ in kind.members})


def _struct_type(cursor: ci.Cursor, ctype: ci.Type, what: str,
                 translator: Translator) -> structs.StructType:
    """The struct type ``ctype`` names (a parameter's, or an array parameter's element):
    scalar members only, laid out as C lays them out; anything else is a located error."""
    record = ctype.get_canonical().get_declaration()
    if record.kind != K.STRUCT_DECL:
        raise translator.error(cursor, f"parameter type '{cursor.type.spelling}' is not "
                                       "supported: unions")
    members = []
    for child in record.get_children():
        if child.kind != K.FIELD_DECL:
            if child.kind in (K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.CXX_BASE_SPECIFIER,
                              K.FUNCTION_TEMPLATE, K.VAR_DECL):
                raise translator.error(child, f"{what}: its type '{record.spelling}' has "
                                              f"more than data members ('{child.spelling}'): "
                                              "not supported")
            continue
        kind = child.type.get_canonical().kind
        if child.is_bitfield() or kind not in _SCALAR_KINDS:
            why = "a bit-field" if child.is_bitfield() else {
                ci.TypeKind.POINTER: "a pointer (OpenCL passes no pointer inside a struct "
                                     "argument: pass the array as a parameter of its own)",
                ci.TypeKind.CONSTANTARRAY: "an array"}.get(kind, f"of type "
                                                                 f"'{child.type.spelling}'")
            raise translator.error(child, f"{what}: member '{child.spelling}' is {why}; "
                                          "naiveopt reads struct members that are scalars")
        resolved = base_type_name(child.type)
        members.append((child.spelling, resolved, type_spelling(child.type) or resolved))
    if not members:
        raise translator.error(cursor, f"{what}: its type has no data members")
    _natural_layout(record, ctype.get_canonical(), what, translator)
    named = ctype
    while named.kind == ci.TypeKind.ELABORATED:
        named = named.get_named_type()
    decl = named.get_declaration()
    typedef = decl is not None and decl.kind == K.TYPEDEF_DECL
    # libclang spells an unnamed struct by its typedef's name: the tokens tell
    words = [t.spelling for t in itertools.islice(record.get_tokens(), 2)]
    tag = "" if words[1:] == ["{"] else record.spelling
    return structs.StructType(decl.spelling if typedef else tag, tag, typedef, members)


def _points_to_struct(ctype: ci.Type) -> bool:
    canonical = ctype.get_canonical()
    return canonical.kind == ci.TypeKind.POINTER and \
        canonical.get_pointee().get_canonical().kind == ci.TypeKind.RECORD and \
        base_type_name(through_typedefs(ctype).get_pointee()) not in VECTOR_TYPES


def _struct_array(cursor: ci.Cursor, translator: Translator, dialect: str
                  ) -> tuple[Param, structs.StructArray]:
    """A pointer parameter to structs whose members share one scalar type (``Particle *p``
    of ``float x, y, z, w``): the array of that type the IR reads (ir/structs.StructArray)."""
    ctype = cursor.type
    if ctype.kind != ci.TypeKind.POINTER:
        ctype = through_typedefs(ctype)
    pointee = ctype.get_pointee()
    what = f"struct array parameter '{cursor.spelling}'"
    kind = _struct_type(cursor, pointee, what, translator)
    types = {resolved for _, resolved, _ in kind.members}
    if len(types) > 1:
        raise translator.error(cursor, f"{what}: the members of '{kind.spelled}' have "
                                       f"different types ({', '.join(sorted(types))}): "
                                       "naiveopt reads an array of structs whose members "
                                       "share one scalar type")
    (member_type,) = types
    spelled = kind.members[0][2]
    space = {1: "global", 2: "local", 3: "constant"}.get(pointee.get_address_space(),
                                                         "global")
    if space == "local":
        raise translator.error(cursor, f"{what}: a __local array of structs is not "
                                       "supported")
    param = Param(cursor.spelling, member_type, True,
                  const=pointee.is_const_qualified() or space == "constant",
                  restrict=ctype.is_restrict_qualified(), address_space=space,
                  spelling=spelled if spelled != member_type else "")
    return param, structs.StructArray(cursor.spelling, kind, len(kind.members),
                                      {m: k for k, (m, _, _) in enumerate(kind.members)})


def _read_array_members(body: c_ast.Compound, arrays: list[structs.StructArray],
                        translator: Translator) -> None:
    """Each ``p[i].y`` (``p->y``: ``p[0].y``) of a struct array as ``p[i * S + k]``, its
    element in the array of the members' type (ir/structs.StructArray); the array used
    otherwise (a whole struct read or written, passed to a helper) is a located error."""
    if not arrays:
        return
    by_name = {a.name: a for a in arrays}
    rewritten: set[int] = set()

    def flat(node: c_ast.Node) -> c_ast.Node:
        if not isinstance(node, c_ast.StructRef):
            return node
        base, index = node.name, None
        if node.type == "." and isinstance(base, c_ast.ArrayRef) and \
                isinstance(base.name, c_ast.ID) and base.name.name in by_name:
            name, index = base.name.name, base.subscript
        elif node.type == "->" and isinstance(base, c_ast.ID) and base.name in by_name:
            name = base.name
        else:
            return node
        a = by_name[name]
        offset = a.offsets[node.field.name]
        if index is None:
            at: c_ast.Node = c_ast.Constant("int", str(offset))
        else:
            at = c_ast.BinaryOp("*", index, c_ast.Constant("int", str(a.stride)))
            if offset:
                at = c_ast.BinaryOp("+", at, c_ast.Constant("int", str(offset)))
        out = c_ast.ArrayRef(c_ast.ID(name, coord=node.coord), at, coord=node.coord)
        rewritten.add(id(out))
        return out
    map_nodes(body, flat)
    for node, parent in walk(body):
        if isinstance(node, c_ast.ID) and node.name in by_name and not (
                isinstance(parent, c_ast.ArrayRef) and id(parent) in rewritten and
                parent.name is node):
            raise error_at(node.coord, f"struct array parameter '{node.name}' is used other "
                           f"than by its elements' members ('{node.name}[i]."
                           f"{next(iter(by_name[node.name].offsets))}'): not supported",
                           translator.path)


def _natural_layout(record: ci.Cursor, ctype: ci.Type, what: str,
                    translator: Translator) -> None:
    """The struct is laid out as C lays out its members (each at its own alignment, the
    whole padded to the largest), which the output's definition and verification's argument
    repeat; an alignment or packing attribute, which they would drop, is a located error."""
    offset, most = 0, 1
    for child in record.get_children():
        if child.kind != K.FIELD_DECL:
            continue
        size = child.type.get_canonical().get_size()
        offset = -(-offset // size) * size
        if ctype.get_offset(child.spelling) != 8 * offset:
            break
        offset, most = offset + size, max(most, size)
    else:
        if ctype.get_size() == -(-offset // most) * most:
            return
    raise translator.error(record, f"{what}: its type '{record.spelling}' is not laid out as "
                                   f"its members are ({ctype.get_size()} bytes, an alignment "
                                   "or packing attribute): not supported")


def _read_members(body: c_ast.Compound, params: list[structs.StructParam], scalars: list[Param],
                  translator: Translator) -> None:
    """Each ``p.n`` of a struct parameter read as its member's scalar (ir/structs.py); the
    struct used otherwise (passed whole, copied, its address taken) is a located error."""
    if not params:
        return
    symbols = {s.name: s.symbols for s in params}

    def member(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.StructRef) and node.type == "." and \
                isinstance(node.name, c_ast.ID) and node.name.name in symbols:
            return c_ast.ID(symbols[node.name.name][node.field.name], coord=node.coord)
        return node
    map_nodes(body, member)
    for node, _ in walk(body):
        if isinstance(node, c_ast.ID) and node.name in symbols:
            raise error_at(node.coord, f"struct parameter '{node.name}' is used other than "
                           f"by its members ('{node.name}.{next(iter(symbols[node.name]))}'):"
                           " not supported", translator.path)


def _dynamic_shared(fn: ci.Cursor, body: c_ast.Compound, params: list[Param],
                    translator: Translator) -> list[Param]:
    """Dynamic shared memory, sized by the launch: a CUDA kernel's ``extern __shared__ T
    s[];`` (kept in the body) becomes a parameter of address space "local" after the
    others, as OpenCL passes it (``__local T *s``); an OpenCL kernel's ``__local T *s``
    parameter stays in its place and its body gains the CUDA declaration, so that the
    CUDA-style IR reads both alike (ir/dynamic_shared.py). CUDA places every extern
    __shared__ array of a kernel at one address: a kernel that declares two, which alias,
    is rejected."""
    declared = dynamic_shared.declarations(body)
    if len(declared) > 1:
        second = declared[1]
        raise error_at(second.coord, f"a second extern __shared__ array '{second.name}': CUDA "
                       f"places every one at the same address (it aliases "
                       f"'{declared[0].name}'); naiveopt reads one per kernel",
                       translator.path)
    added = [dynamic_shared.param_of(d) for d in declared]
    for p in params:
        if p.address_space == "local":
            body.block_items = [dynamic_shared.declaration(p)] + list(body.block_items or [])
    return added


def _launch_bounds(fn: ci.Cursor, body: ci.Cursor, source: bytes) -> str:
    """The arguments of the kernel's ``__launch_bounds__(...)`` as written (``256, 2``), or
    ''. The prelude defines the macro away (the IR has no place for it); the text of the
    kernel's head still holds it, or the text before it (``__launch_bounds__(128)`` on the
    line before ``__global__``, as in the CUDA samples, is outside the function's extent)."""
    return _head_attribute(fn, body, source, "__launch_bounds__")


def _work_group_size(fn: ci.Cursor, body: ci.Cursor, source: bytes,
                     macros: dict[str, int]) -> tuple[str, tuple[int, int, int] | None]:
    """An OpenCL kernel's ``__attribute__((reqd_work_group_size(X, Y, Z)))``: (its arguments
    as written, ``64, 1, 1``, or ''; their values, None where one is not an integer literal
    or macro). The runtime refuses any other local size, so it is the naive launch's block."""
    text = _head_attribute(fn, body, source, "reqd_work_group_size")
    parts = [p.strip() for p in text.split(",")] if text else []
    values = [int(p, 0) if re.fullmatch(r"\d+|0[xX][0-9a-fA-F]+", p) else macros.get(p)
              for p in parts]
    if len(values) != 3 or None in values or min(values) < 1:
        return text, None
    return text, (values[0], values[1], values[2])


def _head_attribute(fn: ci.Cursor, body: ci.Cursor, source: bytes, name: str) -> str:
    """The arguments of the attribute ``name(...)`` in the text of a kernel's head or before
    it (:func:`_launch_bounds`), as written with spaces normalized; '' where there is none."""
    start = fn.extent.start.offset
    before = source[:start].decode(errors="replace")
    # back to the end of what precedes the kernel: a declaration, a block, a # line
    lead = max(before.rfind(";"), before.rfind("}"), before.rfind("\n#"))
    head = re.sub(r"//[^\n]*|/\*.*?\*/", " ", before[lead + 1:], flags=re.S) + \
        source[start:body.extent.start.offset].decode(errors="replace")
    m = re.search(rf"\b{name}\s*\(", head)
    if m is None:
        return ""
    depth, at = 1, m.end()
    while at < len(head) and depth:
        depth += (head[at] == "(") - (head[at] == ")")
        at += 1
    text = " ".join(head[m.end():at - 1].split())
    return re.sub(r"\s*,\s*", ", ", text)


__all__ = ["dialect_of", "parse_module", "parse_unit", "SourceUnit", "param_decl", "NaiveoptError",
           "UnsupportedConstruct"]
