"""Struct parameters passed by value (``Params p`` read as ``p.n``, ``p.scale``).

Real kernels bundle their sizes and coefficients into one struct argument
(``typedef struct { int n; float scale; } Params;``, ``const MatDims d``). The analyses reason
about scalars: a loop bound ``d.cols`` must be a size, a guard ``i < p.n`` the thread space.
So the front end reads each member as a scalar parameter of its own, named
:func:`member_symbol` (``p_n``), and every ``p.n`` in the body as that name: for the passes,
verification's sizes and the cost model, ``p.n`` is a size like any other.

The output keeps the kernel's signature (the host passes one struct): the pass
``struct-params`` writes the members back into one parameter of the struct type and each
``p_n`` as ``p.n``, and emission writes the struct's definition (:func:`definitions`). What a
user reads (the header's launch, the sidecar, the launcher) says ``p.n`` (:func:`spell`);
verification builds the struct argument from the members' values
(ir/textures.param_layout, verify/opencl.packed).

Members are scalars only: OpenCL C passes no pointer inside a kernel's struct argument, and
arrays and nested structs are not read (a located error says which member).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from pycparser import c_ast

from .build import read_through_flat_pointer
from .rewrite import identifiers, map_nodes, walk
from .typenames import OPENCL_NO_KERNEL_ARGUMENT, OPENCL_SPELLINGS, OPENCL_TYPE_NAMES


@dataclass
class StructType:
    """A struct type a kernel takes by value: how the input names it and its members."""

    name: str                       # the typedef name, or the tag (``struct MatDims``)
    tag: str                        # the struct's tag ('' for an anonymous one)
    typedef: bool                   # named through a typedef (``Params``) rather than its tag
    # (member, resolved scalar type, the type as the user spelled it) in declaration order
    members: list[tuple[str, str, str]] = field(default_factory=list)
    # members the output's dialect reserves (``read_only`` in OpenCL C, ``new`` in C++):
    # member -> the name the output writes (the layout is by position; the struct-params
    # pass fills it for the target)
    written: dict[str, str] = field(default_factory=dict)

    @property
    def spelled(self) -> str:
        """The type as a parameter declaration writes it (C and OpenCL C need ``struct``
        before a tag)."""
        return self.name if self.typedef else f"struct {self.tag}"


@dataclass
class StructParam:
    """A kernel parameter of struct type: its name, type, qualifiers and the scalar
    parameter standing for each member (member -> its symbol)."""

    name: str
    type: StructType
    const: bool
    symbols: dict[str, str] = field(default_factory=dict)


@dataclass
class StructArray:
    """A kernel parameter that points to structs whose members all have one scalar type
    (``Particle *p`` of ``struct { float x, y, z, w; }``): the IR reads it as an array of
    that type, ``p[i].y`` as ``p[i * stride + offset]`` (the same bytes), and the output
    points to the struct again, the accesses going through a flat pointer to its members
    (``const float *p_flat = (const float *)p;``)."""

    name: str
    type: StructType
    stride: int                                  # members per element
    offsets: dict[str, int] = field(default_factory=dict)   # member -> index in an element


def input_layout(proc) -> list[tuple[int | tuple[int, ...], int]]:
    """How the input kernel's own parameters take the arguments (one per GProcedure.params
    entry, in order): each struct packed from its members' arguments where its first member
    stands (the binding of ir/textures.param_layout for a kernel run as written)."""
    first = {next(iter(s.symbols.values())): s for s in proc.struct_params}
    rest = {sym for s in proc.struct_params for sym in list(s.symbols.values())[1:]}
    positions = {p.name: i for i, p in enumerate(proc.params)}
    return [(tuple(positions[sym] for sym in first[p.name].symbols.values()), 0)
            if p.name in first else (i, 0)
            for i, p in enumerate(proc.params) if p.name not in rest]


def member_symbol(param: str, member: str) -> str:
    """The scalar the IR reads for ``param.member``."""
    return f"{param}_{member}"


def symbols(proc) -> dict[str, tuple[str, str]]:
    """symbol -> (parameter, member) of ``proc``'s struct parameters."""
    return {sym: (s.name, member) for s in proc.struct_params
            for member, sym in s.symbols.items()}


def spell(proc, text: str | None) -> str | None:
    """``text`` (C) with each member symbol written as the user does (``p_n`` -> ``p.n``)."""
    names = symbols(proc) if text else {}
    if not names:
        return text
    return re.sub(r"(?<![.\w])[A-Za-z_]\w*", lambda m: "%s.%s" % names[m.group(0)]
                  if m.group(0) in names else m.group(0), text)


def unspell(params: list[StructParam], text: str) -> str:
    """``text`` with each ``p.n`` of ``params`` written as its member's symbol (``p_n``):
    a pragma's sizes (``sizes(p.n = 1000)``), a C host function that takes the sizes one by
    one (launcher.opencl_header)."""
    members = {f"{s.name}.{m}": sym for s in params for m, sym in s.symbols.items()}
    if not members:
        return text
    return re.sub(r"(?<![.\w])[A-Za-z_]\w*\s*\.\s*[A-Za-z_]\w*", lambda m: members.get(
        re.sub(r"\s", "", m.group(0)), m.group(0)), text)


def in_output(proc, text: str) -> str:
    """``text`` (in the user's names, :func:`spell`) with the members the output renamed
    written as it writes them: code inside the output file (a launcher, a launch check)."""
    renamed = {f"{s.name}.{m}": f"{s.name}.{w}" for s in proc.struct_params
               for m, w in s.type.written.items()}
    if not renamed or not text:
        return text
    return re.sub(r"(?<![.\w])[A-Za-z_]\w*\.[A-Za-z_]\w*",
                  lambda m: renamed.get(m.group(0), m.group(0)), text)


def fold_arrays(proc) -> None:
    """Write ``proc``'s struct arrays back: the parameter points to the struct type again
    (qualifiers and address space kept), and the body reads the members through a flat
    pointer to them declared first (every use of the array, as the passes left it)."""
    if not proc.struct_arrays or proc.func.decl.type.args is None:
        return
    taken = identifiers(proc.func.body) | {getattr(d, "name", None)
                                           for d in proc.func.decl.type.args.params}
    flats = []
    for a in proc.struct_arrays:
        decl = next((d for d in proc.func.decl.type.args.params
                     if getattr(d, "name", None) == a.name), None)
        if decl is None or not isinstance(decl.type, c_ast.PtrDecl):
            continue
        flats.append(read_through_flat_pointer(proc.func, decl, taken))
        decl.type.type.type = c_ast.IdentifierType([a.type.spelled])
    proc.func.body.block_items = flats + list(proc.func.body.block_items or [])


def fold(proc) -> None:
    """Write ``proc``'s struct parameters back: one declaration of the struct type where its
    first member's scalar stood, and ``p.n`` for each ``p_n`` in the body."""
    fold_arrays(proc)
    if not proc.struct_params or proc.func.decl.type.args is None:
        return
    names = symbols(proc)
    first = {s.name: next(iter(s.symbols.values())) for s in proc.struct_params}
    by_name = {s.name: s for s in proc.struct_params}
    params = []
    for decl in proc.func.decl.type.args.params:
        name = getattr(decl, "name", None)
        if name not in names:
            params.append(decl)
        elif first[names[name][0]] == name:
            params.append(declaration(by_name[names[name][0]]))
    proc.func.decl.type.args.params = params

    def member(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ID) and node.name in names:
            param, field_name = names[node.name]
            written = by_name[param].type.written.get(field_name, field_name)
            return c_ast.StructRef(c_ast.ID(param), ".", c_ast.ID(written), node.coord)
        return node
    map_nodes(proc.func.body, member)


def declaration(s: StructParam) -> c_ast.Decl:
    quals = ["const"] if s.const else []
    return c_ast.Decl(s.name, list(quals), [], [], [], c_ast.TypeDecl(
        s.name, quals, None, c_ast.IdentifierType([s.type.spelled])), None, None)


def definitions(module, target: str) -> list[str]:
    """The definition of each struct type the kernels take, in the order they appear, and of
    the struct globals a CUDA output declares, for ``target`` (OpenCL: its spellings of the
    members' types; none OpenCL forbids in a kernel argument)."""
    seen, lines = set(), []
    folded = [g.type for g in module.struct_globals
              if any(v.name == g.name for v in module.globals)]     # (fold_globals: CUDA)
    for proc in [*module.procedures, None]:
        types = [g for g in folded] if proc is None else \
            [s.type for s in proc.struct_params] + [a.type for a in proc.struct_arrays]
        for t in types:
            if t.name in seen:
                continue
            seen.add(t.name)
            members = " ".join(f"{_member_type(resolved, spelled, target, module)} "
                               f"{t.written.get(name, name)};"
                               for name, resolved, spelled in t.members)
            if t.typedef:
                tag = f" {t.tag}" if t.tag else ""
                lines.append(f"typedef struct{tag} {{ {members} }} {t.name};")
            else:
                lines.append(f"struct {t.tag} {{ {members} }};")
    return lines


def _member_type(resolved: str, spelled: str, target: str, module) -> str:
    if spelled in module.typedefs:
        spelled = ""                    # the user's typedef: written as what it denotes
    if target != "opencl":
        return spelled or resolved
    if resolved == "bool":
        return "uchar"                  # OpenCL C takes no bool in a kernel's argument; C++'s is a byte
    if spelled and spelled not in OPENCL_NO_KERNEL_ARGUMENT:
        return OPENCL_SPELLINGS.get(spelled, spelled)
    return OPENCL_TYPE_NAMES.get(resolved, resolved)


@dataclass
class StructGlobal:
    """File-scope data of struct type the host fills (``__constant__ SimParams params;``,
    cudaMemcpyToSymbol): read as one host-filled scalar global per member
    (:func:`member_symbol`, ``params_gravity``) by every analysis, verification and an
    OpenCL output (which takes each as an argument); a CUDA output declares the struct again
    (:func:`fold_globals`), so the host's cudaMemcpyToSymbol of it still fits."""

    name: str
    type: StructType
    symbols: dict[str, str] = field(default_factory=dict)     # member -> scalar global


def read_global_members(trees: list[c_ast.Node], struct_globals: list[StructGlobal],
                        error) -> None:
    """Each ``params.m`` in ``trees`` as the member's global (``params_m``); the struct
    used otherwise (copied whole, passed on) is a located error (``error(coord, message)``)."""
    by_name = {g.name: g for g in struct_globals}
    if not by_name:
        return

    def fn(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.StructRef) and node.type == "." and \
                isinstance(node.name, c_ast.ID) and node.name.name in by_name:
            return c_ast.ID(by_name[node.name.name].symbols[node.field.name], coord=node.coord)
        return node

    for tree in trees:
        map_nodes(tree, fn)
        for node, parent in walk(tree):
            if isinstance(node, c_ast.ID) and node.name in by_name and not (
                    isinstance(parent, c_ast.StructRef) and parent.field is node):
                raise error(node.coord, f"the struct '{node.name}' is read other than member "
                            f"by member ('{node.name}.m'): not supported")


def as_written(module, target: str):
    """``module`` as a ``target`` output writes it: for CUDA, a copy with its struct
    globals written back (:func:`fold_globals`); the module itself otherwise (and where it
    has none). The module the passes and verification use keeps the members apart."""
    if target != "cuda" or not module.struct_globals:
        return module
    written = copy.deepcopy(module)
    fold_globals(written)
    return written


def fold_globals(module) -> None:
    """Write the struct globals back for a CUDA output: one declaration of the struct where
    its first member stood, each member's global read as ``params.m`` again, and the kernels'
    arguments from file-scope data (GProcedure.global_args) naming the struct."""
    if not module.struct_globals:
        return
    owner = {sym: (g, m) for g in module.struct_globals for m, sym in g.symbols.items()}
    out, done = [], set()
    for v in module.globals:
        if v.name not in owner:
            out.append(v)
            continue
        g = owner[v.name][0]
        if g.name in done:
            continue
        done.add(g.name)
        decl = c_ast.Decl(g.name, [], [], [], [], c_ast.TypeDecl(
            g.name, [], None, c_ast.IdentifierType([g.type.spelled])), None, None)
        out.append(type(v)(g.name, g.type.spelled, [], [], v.space, v.const, decl, v.line))
    module.globals = out

    def fn(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ID) and node.name in owner:
            g, member = owner[node.name]
            return c_ast.StructRef(c_ast.ID(g.name, coord=node.coord), ".", c_ast.ID(member),
                                   coord=node.coord)
        return node

    for tree in [h for h in module.helpers] + [p.func for p in module.procedures]:
        map_nodes(tree, fn)
    for proc in module.procedures:
        names = [owner[n][0].name if n in owner else n for n in proc.global_args]
        proc.global_args = list(dict.fromkeys(names))

