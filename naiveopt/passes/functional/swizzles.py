"""OpenCL swizzles in CUDA terms (part of opencl-to-cuda, for a CUDA output).

OpenCL reads and writes several components of a vector at once (``q.xyz - p.xyz``,
``vel[i].xyz += acc * dt``, ``v.s01``, ``v.lo``); CUDA's vector types have only ``.x`` to
``.w``. A CUDA output of such a kernel spells them out:

* a read of several components is the vector made of them: ``q.xyz`` is
  ``make_float3(q.x, q.y, q.z)`` (the base is repeated, so it must be free of side effects:
  a variable or an element of an array at an index that changes nothing);
* a store to several components is a store to each: ``vel[i].xyz += e;`` is
  ``float3 t = e; vel[i].x += t.x; vel[i].y += t.y; vel[i].z += t.z;`` (``e`` evaluated once;
  a scalar ``e`` is stored to each component, as OpenCL widens it);
* one component (``v.s2``) is that component (``v.z``);
* a scalar stored to a whole vector (``c[i] = 0.5f``) is stored to each component.

Components past ``.w`` (``s4`` to ``sF`` of 8- and 16-wide vectors) have no CUDA form: a
located error, as before. An OpenCL output keeps the swizzles as written (this module does
not run for it).
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from ...errors import error_at
from ...ir.build import fresh
from ...ir.rewrite import side_effect_free, walk

LANES = "xyzw"
_VECTOR = re.compile(r"^(float|double|u?int|u?short|u?char|u?long)(2|3|4|8|16)$")
#: Functions of vectors that return a scalar (the others return a vector like their first
#: argument: component-wise math, normalize, cross).
_SCALAR_RESULT = {"dot", "length", "distance", "fast_length", "fast_distance", "all", "any"}


def _lanes(field: str, width: int | None) -> list[int] | None:
    """The component indices a swizzle selects, or None where ``field`` is none."""
    if re.fullmatch(r"[xyzw]{1,4}", field):
        return [LANES.index(c) for c in field]
    if re.fullmatch(r"[sS][0-9a-fA-F]{1,16}", field):
        return [int(c, 16) for c in field[1:]]
    if field in ("lo", "hi", "even", "odd") and width in (2, 4, 8, 16):
        half = width // 2
        return {"lo": list(range(half)), "hi": list(range(half, width)),
                "even": list(range(0, width, 2)), "odd": list(range(1, width, 2))}[field]
    return None


class Swizzles:
    """Rewrites the swizzles of one function body (``types``: the vector type of each
    variable and array parameter's element, by name)."""

    def __init__(self, types: dict[str, str], path: str, taken: set[str]) -> None:
        self.types, self.path, self.taken = types, path, taken

    def run(self, body: c_ast.Node) -> None:
        for node, _ in list(walk(body)):
            if isinstance(node, c_ast.Compound) and node.block_items:
                items = []
                for item in node.block_items:
                    items += self._store(item)
                node.block_items = items
        for node, _ in walk(body):      # a store left: inside an expression
            target = node.lvalue if isinstance(node, c_ast.Assignment) else \
                node.expr if isinstance(node, c_ast.UnaryOp) and \
                node.op in ("++", "--", "p++", "p--") else None
            found = self._swizzle(target) if target is not None else None
            if found is not None and len(found[1]) > 1:
                raise error_at(target.coord, f"a store to components '.{target.field.name}' "
                               "inside an expression has no CUDA equivalent: write it as a "
                               "statement of its own", self.path)
        self._reads(body)

    # ------------------------------------------------------------------ types
    def vector_type(self, node: c_ast.Node) -> str | None:
        """The vector type of an expression the rewrite repeats or reads components of."""
        if isinstance(node, c_ast.ID):
            return self.types.get(node.name)
        if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID):
            return self.types.get(node.name.name)
        return None

    def _is_vector(self, node: c_ast.Node) -> bool:
        """Whether an expression's value is a vector (a scalar is widened on a store)."""
        if isinstance(node, (c_ast.ID, c_ast.ArrayRef)):
            return self.vector_type(node) is not None
        if isinstance(node, c_ast.StructRef):
            vtype = self.vector_type(node.name)
            width = int(_VECTOR.match(vtype).group(2)) if vtype else None
            lanes = _lanes(node.field.name, width) if isinstance(node.field, c_ast.ID) else None
            return lanes is not None and len(lanes) > 1
        if isinstance(node, c_ast.BinaryOp):
            return self._is_vector(node.left) or self._is_vector(node.right)
        if isinstance(node, c_ast.UnaryOp):
            return self._is_vector(node.expr)
        if isinstance(node, c_ast.TernaryOp):
            return self._is_vector(node.iftrue) or self._is_vector(node.iffalse)
        if isinstance(node, c_ast.Cast):
            return bool(_VECTOR.match(" ".join(getattr(node.to_type.type.type, "names", []))))
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
            name = node.name.name
            if name.startswith("make_"):
                return True
            args = node.args.exprs if node.args else []
            return name not in _SCALAR_RESULT and bool(args) and self._is_vector(args[0])
        return False

    # ------------------------------------------------------------------ stores
    def _store(self, item: c_ast.Node) -> list[c_ast.Node]:
        """The statements a store to several components stands for (``[item]`` otherwise)."""
        if not isinstance(item, c_ast.Assignment):
            return [item]
        found = self._swizzle(item.lvalue)
        vtype = self.vector_type(item.lvalue)
        if found is None and item.op == "=" and vtype and _VECTOR.match(vtype) and \
                int(_VECTOR.match(vtype).group(2)) <= 4 and not self._is_vector(item.rvalue):
            # a scalar stored to a whole vector (``c[i] = 0.5f``, ``c[i].xy`` of a float2):
            # OpenCL widens it; CUDA has no such assignment
            found = (item.lvalue, list(range(int(_VECTOR.match(vtype).group(2)))), vtype)
        if found is None:
            return [item]
        base, lanes, vtype = found
        if len(lanes) == 1:
            item.lvalue = _lane(base, lanes[0])
            return [item]
        value = item.rvalue
        if self._is_vector(value):
            elem = _VECTOR.match(vtype).group(1)
            tmp = fresh(self.taken, "naiveopt_swizzle")
            decl = c_ast.Decl(tmp, [], [], [], [], c_ast.TypeDecl(
                tmp, [], None, c_ast.IdentifierType([f"{elem}{len(lanes)}"])), value, None)
            parts = [_lane(c_ast.ID(tmp), k) for k in range(len(lanes))]
        else:       # a scalar: stored to each component (evaluated once where it reads more)
            decl, parts = None, [value] * len(lanes)
            if not isinstance(value, (c_ast.Constant, c_ast.ID)):
                tmp = fresh(self.taken, "naiveopt_swizzle")
                decl = c_ast.Decl(tmp, [], [], [], [], c_ast.TypeDecl(
                    tmp, [], None, c_ast.IdentifierType([_VECTOR.match(vtype).group(1)])),
                    value, None)
                parts = [c_ast.ID(tmp)] * len(lanes)
        stores = [c_ast.Assignment(item.op, _lane(copy.deepcopy(base), lane),
                                   copy.deepcopy(part), coord=item.coord)
                  for lane, part in zip(lanes, parts)]
        return ([decl] if decl is not None else []) + stores

    # ------------------------------------------------------------------- reads
    def _reads(self, body: c_ast.Node) -> None:
        from ...ir.rewrite import map_nodes

        def fn(node: c_ast.Node) -> c_ast.Node:
            found = self._swizzle(node)
            if found is None:
                return node
            base, lanes, vtype = found
            if len(lanes) == 1:
                return _lane(base, lanes[0])
            elem = _VECTOR.match(vtype).group(1)
            return c_ast.FuncCall(c_ast.ID(f"make_{elem}{len(lanes)}"), c_ast.ExprList(
                [_lane(copy.deepcopy(base), lane) for lane in lanes]), coord=node.coord)

        map_nodes(body, fn)

    def _swizzle(self, node: c_ast.Node) -> tuple[c_ast.Node, list[int], str] | None:
        """(base, lanes, the base's vector type) of a swizzle other than one of ``.x``-``.w``,
        or None; a located error where CUDA cannot say it."""
        if not (isinstance(node, c_ast.StructRef) and node.type == "." and
                isinstance(node.field, c_ast.ID)) or node.field.name in tuple(LANES):
            return None
        vtype = self.vector_type(node.name)
        width = int(_VECTOR.match(vtype).group(2)) if vtype and _VECTOR.match(vtype) else None
        lanes = _lanes(node.field.name, width)
        if lanes is None:
            return None
        if vtype is None or width is None or max(lanes) > 3 or \
                not side_effect_free(node.name):
            raise error_at(node.coord, f"vector component '.{node.field.name}' has no CUDA "
                           "equivalent" + ("" if vtype else " (of this expression)"), self.path)
        return node.name, lanes, vtype


def _lane(base: c_ast.Node, lane: int) -> c_ast.StructRef:
    return c_ast.StructRef(base, ".", c_ast.ID(LANES[lane]))




def declared_types(func: c_ast.Node) -> dict[str, str]:
    """The vector type of each vector variable of a function (``func``: its definition) and
    the element type of each array of vectors it declares or takes."""
    types = {}
    for node, _ in walk(func):
        if isinstance(node, c_ast.Decl) and node.name:
            inner = node.type
            while isinstance(inner, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                inner = inner.type
            if isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType):
                name = " ".join(inner.type.names)
                if _VECTOR.match(name):
                    types[node.name] = name
    return types
