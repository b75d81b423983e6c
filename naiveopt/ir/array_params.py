"""Array parameters of fixed inner extents (``float a[N][M]``, ``float (*a)[M]``).

Textbook and C-derived kernels take a matrix as a two-dimensional array parameter and index
it ``a[i][j]``. The parameter is a pointer to rows of M elements, so ``a[i][j]`` is the
element ``i * M + j`` of the same bytes read as a flat array. naiveopt's analyses read flat
arrays of a kernel parameter: the front end reads the parameter as a pointer to its scalar
elements and each full subscript as the flat index (:func:`flatten`); a row used other than
by indexing its elements (``a[i]`` passed on) is a located error.

The output keeps the signature the host compiles against: a CUDA output declares the
parameter as the pointer to rows it is (``float (*a)[M]``, the type ``float a[N][M]``
decays to) and reads the elements through a flat pointer to them declared first
(``float *a_flat = (float *)a;``; :func:`fold`). An OpenCL output takes the flat
``__global float *a``: its host passes a buffer, whatever the parameter's type.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from .build import read_through_flat_pointer
from .rewrite import identifiers, map_children


@dataclass
class ArrayParam:
    """A kernel parameter that points to rows of a fixed shape: ``dims`` are the extents
    after the first (``a[N][M][K]``: [M, K])."""

    name: str
    dims: list[int]


def flatten(body: c_ast.Node, arrays: list[ArrayParam], error) -> None:
    """Each full subscript ``a[i][j]`` of an array parameter as ``a[i * M + j]``;
    ``error(coord, message)`` makes the located error of a partial one."""
    by_name = {a.name: a for a in arrays}
    if not by_name:
        return

    def visit(node: c_ast.Node, slot: str = "") -> c_ast.Node:
        indices, base = [], node
        while isinstance(base, c_ast.ArrayRef):
            indices.insert(0, base.subscript)
            base = base.name
        if isinstance(base, c_ast.ID) and base.name in by_name:
            a = by_name[base.name]
            if len(indices) != len(a.dims) + 1:
                raise error(node.coord, f"array parameter '{a.name}' used other than by "
                            f"indexing its elements ({len(a.dims) + 1} subscripts): not "
                            "supported")
            flat = visit(indices[0])
            for index, dim in zip(indices[1:], a.dims):
                flat = c_ast.BinaryOp("+", c_ast.BinaryOp("*", flat, c_ast.Constant(
                    "int", str(dim))), visit(index))
            return c_ast.ArrayRef(c_ast.ID(a.name, coord=base.coord), flat, coord=node.coord)
        return map_children(node, visit)

    map_children(body, visit)


def fold(proc) -> None:
    """Write ``proc``'s array parameters back for a CUDA output: each declared as the
    pointer to rows it is, its elements read through a flat pointer declared first."""
    arrays = proc.array_params
    if not arrays or proc.func.decl.type.args is None:
        return
    taken = identifiers(proc.func.body) | {getattr(d, "name", None)
                                           for d in proc.func.decl.type.args.params}
    flats = []
    for a in arrays:
        decl = next((d for d in proc.func.decl.type.args.params
                     if getattr(d, "name", None) == a.name), None)
        if decl is None or not isinstance(decl.type, c_ast.PtrDecl):
            continue
        flats.append(read_through_flat_pointer(proc.func, decl, taken))
        rows: c_ast.Node = decl.type.type                # T (*a)[M][K]
        for dim in reversed(a.dims):
            rows = c_ast.ArrayDecl(rows, c_ast.Constant("int", str(dim)), [])
        decl.type = c_ast.PtrDecl(list(decl.type.quals), rows)
    proc.func.body.block_items = flats + list(proc.func.body.block_items or [])
