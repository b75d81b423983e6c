"""Texture parameters of a kernel, derived from its texture fetches (``--memory texture``).

A read-only array read through the texture path is not a pointer in the kernel any more: it is
one CUDA texture object (``cudaTextureObject_t``) or OpenCL image (``read_only
image1d_buffer_t``) per vector width its fetches use, each created by the host over the same
linear buffer (see launch.py for the host side). The fetches are the single source of truth:
passes that add or regroup fetches (the texture pass, vectorization) call
:func:`bind_textures` and the parameter list follows, as does the write-back to OpenCL.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from pycparser import c_ast

from .gprocedure import GProcedure
from .nodes import TexFetch, texture_param
from .rewrite import walk

#: The parameter type of a texture in each dialect: (qualifiers, type name).
TEXTURE_TYPES = {"cuda": ([], "cudaTextureObject_t"),
                 "opencl": (["read_only"], "image1d_buffer_t")}


@dataclass(frozen=True)
class TextureParam:
    """One texture/image parameter of a kernel and the host array it reads."""

    param: str          # the kernel parameter
    array: str          # the naive kernel's array argument it replaces
    position: int       # that array's position among the naive kernel's arguments
    elem: str           # element type (float | int)
    width: int          # elements per texel (1, 2 or 4)


def fetches(node: c_ast.Node) -> list[TexFetch]:
    """The texture fetches in a tree, in pre-order."""
    return [n for n, _ in walk(node) if isinstance(n, TexFetch)]


def texture_params(proc: GProcedure) -> list[TextureParam]:
    """The kernel's texture parameters, in parameter order (empty without textures)."""
    found: dict[str, TextureParam] = {}
    positions = _positions(proc)
    for f in fetches(proc.body):
        width = 1 if f.param == f.array else f.width
        found.setdefault(f.param, TextureParam(f.param, f.array, positions[f.array], f.elem,
                                               width))
    return sorted(found.values(), key=lambda t: (t.position, t.width))


def _positions(proc: GProcedure) -> dict[str, int]:
    """Each parameter's position among the arguments a runner passes: the kernel's own, then
    the host-filled file-scope data (ir/globals.py), then the sizes a bounds guard added
    (GProcedure.size_params, parameters ``naiveopt_NAME``)."""
    added = proc.size_param_names
    own = [p for p in proc.params if p.name not in added.values()]
    positions = {p.name: i for i, p in enumerate(own)}
    positions.update({name: len(own) + i for i, name in enumerate(proc.global_args)})
    positions.update({added[name]: len(own) + len(proc.global_args) + i
                      for i, name in enumerate(proc.size_params)})
    return positions


def host_texture_params(proc: GProcedure) -> list[TextureParam]:
    """:func:`texture_params` for the host (header notes, launch sidecar): each names the
    user's array, also where a translation renamed it (``local`` written ``local_`` in
    OpenCL); ``param`` is the kernel's parameter as written."""
    return [replace(t, array=proc.renamed.get(t.array, t.array)) for t in texture_params(proc)]


def bind_textures(proc: GProcedure, dialect: str) -> None:
    """Spell every fetch in ``dialect`` and rewrite the parameter list to match: each array
    that has fetches is replaced, in place, by one texture parameter per width it uses; the
    other parameters keep their declarations."""
    found = fetches(proc.body)
    if not found:
        return                  # no textures: the parameter list is the kernel's own
    for f in found:
        f.dialect = dialect
    params = proc.func.decl.type.args
    declared = {d.name: d for d in params.params}
    by_array: dict[str, list[TextureParam]] = {}
    for t in texture_params(proc):
        by_array.setdefault(t.array, []).append(t)
    quals, type_name = TEXTURE_TYPES[dialect]
    out = []
    for p in proc.params:
        if p.name not in by_array:
            out.append(declared[p.name])
            continue
        for t in by_array[p.name]:
            out.append(c_ast.Decl(t.param, [], [], [], [], c_ast.TypeDecl(
                t.param, list(quals), None, c_ast.IdentifierType([type_name])), None, None))
    params.params = out


def texture_names(array: str) -> set[str]:
    """Every parameter name a texture of ``array`` may take (to avoid clashes)."""
    return {texture_param(array, w, d) for w in (1, 2, 4) for d in TEXTURE_TYPES}


def param_layout(proc: GProcedure) -> list[tuple[int | tuple[int, ...], int]]:
    """How a runner binds the naive kernel's arguments to this kernel's parameters: for each
    parameter, (position of the argument it takes, texel width), width 0 meaning the argument
    itself (a buffer or a scalar) and 1/2/4 a texture/image over that array's buffer; a
    struct parameter (ir/structs.py) takes a tuple of positions, its members' arguments in
    order, packed as one struct."""
    positions = _positions(proc)
    textures = {t.param: t for t in texture_params(proc)}
    members = {s.name: tuple(positions[sym] for sym in s.symbols.values())
               for s in proc.struct_params}
    # the members' own declarations where the struct is not yet written back (the naive
    # input as parsed): the struct stands at its first member
    for s in proc.struct_params:
        first, *rest = s.symbols.values()
        members[first] = members[s.name]
        members.update({sym: None for sym in rest})
    out = []
    for d in proc.func.decl.type.args.params:
        if d.name in members:
            if members[d.name] is not None:
                out.append((members[d.name], 0))
        elif d.name in textures:
            out.append((textures[d.name].position, textures[d.name].width))
        else:
            out.append((positions[d.name], 0))
    return out