"""3-vector arrays keep their input's memory layout when written in the other dialect.

A CUDA ``float3`` takes 12 bytes (three floats, aligned to 4); an OpenCL ``float3`` takes 16,
the size and alignment of a ``float4`` (OpenCL C 1.2, 6.1.5). Written as ``float3 *`` in the
other dialect, an array of them strides by another size: the buffer the user's host code
fills for the input kernel reads wrong, and nothing says so -- verification runs the naive
kernel and the output in one dialect, each with its own float3. So a kernel translated
across dialects keeps the layout of its input's arrays:

- CUDA -> OpenCL (:func:`pack`): ``const float3 *p`` becomes ``const float *p``: ``p[i]`` is
  ``vload3(i, p)``, ``p[i] = v`` is ``vstore3(v, i, p)``, a component ``p[i].y`` is
  ``p[3 * i + 1]`` (``*p`` and ``p->y`` as ``p[0]``), and so through a cast
  ``((float3 *)x)[i]``. An array used otherwise (passed whole to a function, its address
  taken) keeps OpenCL's float3 and the output's header says that its elements take 16 bytes
  there.
- OpenCL -> CUDA (:func:`pad`): ``__global float3 *p`` becomes ``float4 *p``, whose elements
  take 16 bytes as the input's do; components and pointer arithmetic are a float4's already,
  a whole element is read and written as a float3 at its address (``*(float3 *)&p[i]``).

The same holds for every 3-vector (int3, uchar3, double3, ...): vload3/vstore3 take any
element type. Verification of a CUDA input runs both kernels packed, so the translation is
exercised on every check; the header of a translated output names each array it keeps.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from ...ir import GModule, GProcedure
from ...ir.elements import element
from ...ir.rewrite import (STATEMENT_SLOTS, map_children, pointer_root, side_effect_free,
                           walk)
from ..manager import Pass, PassContext

_COMPONENTS = {"x": 0, "y": 1, "z": 2, "s0": 0, "s1": 1, "s2": 2}

# statements an assignment may be written as (vstore3 returns nothing)
# (a for's step too)
_STATEMENT_SLOTS = {**STATEMENT_SLOTS, c_ast.For: ("next", "stmt")}


def three_vector(name: str) -> str | None:
    """The element type of a 3-vector type name (``float3`` -> ``float``), or None."""
    m = re.fullmatch(r"(\w*?[a-z])3", name.strip())
    return m.group(1) if m and element(m.group(1)) is not None else None


class Vector3Layout(Pass):
    name = "vector3-layout"
    requires = ("postprocessor",)

    def run_module(self, module: GModule, ctx: PassContext) -> None:
        if module.dialect == ctx.target:
            return
        if ctx.target == "opencl":
            for proc, (packed, kept) in zip(module.procedures, pack(module)):
                for name, kind in packed.items():
                    proc.layout_notes.append(f"{name}: {kind} elements of 12 bytes, as in "
                                             f"the CUDA input (vload3/vstore3 here)")
                for name, why in kept.items():
                    proc.layout_notes.append(f"{name}: 3-vector elements of OpenCL's 16 "
                                             f"bytes (CUDA's take 12): {why}")
                    ctx.remark("missed", self.name, proc, f"{name}: OpenCL's 3-vector layout "
                               f"kept, 16 bytes an element where the CUDA input's take 12: "
                               f"{why}")
        else:
            for helper in module.helpers:
                pad(helper)
            for proc in module.procedures:
                for name, kind in pad(proc.func, lambda d: proc.param(d.name) is None or
                                      proc.param(d.name).address_space != "local").items():
                    proc.layout_notes.append(f"{name}: {kind} elements of 16 bytes, as in the "
                                             f"OpenCL input ({kind[:-1]}4 here)")
        for proc in module.procedures:
            for note in proc.layout_notes:
                ctx.remark("analysis", self.name, proc, note)

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        raise NotImplementedError("vector3-layout runs on the whole module (helpers too)")


def _params(func: c_ast.FuncDef) -> list[c_ast.Node]:
    """``func``'s parameter declarations ([] for ``f()``)."""
    return list(func.decl.type.args.params) if func.decl.type.args else []


def _arrays(func: c_ast.FuncDef, keep=lambda decl: True) -> dict[str, str]:
    """Name -> 3-vector type of ``func``'s 3-vector pointer parameters (those ``keep``
    accepts), in order."""
    out = {}
    for d in _params(func):
        if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.PtrDecl) and \
                isinstance(d.type.type, c_ast.TypeDecl) and \
                isinstance(d.type.type.type, c_ast.IdentifierType) and keep(d):
            name = " ".join(d.type.type.type.names)
            if three_vector(name):
                out[d.name] = name
    return out


def _retype(func: c_ast.FuncDef, name: str, type_name: str) -> None:
    """Give ``func``'s pointer parameter ``name`` the pointee type ``type_name``."""
    decl = next(d for d in _params(func) if getattr(d, "name", None) == name)
    decl.type.type.type.names = [type_name]


class _Keep(Exception):
    """An array's use the translation cannot write in the other layout: (array, why)."""

    def __init__(self, name: str | None, why: str) -> None:
        super().__init__(why)
        self.name, self.why = name, why


def _vector_pointer(node: c_ast.Node) -> str | None:
    """The 3-vector type of a cast to a pointer to one (``(float3 *)x``), or None."""
    if isinstance(node, c_ast.Cast) and isinstance(node.to_type, c_ast.Typename) and \
            isinstance(node.to_type.type, c_ast.PtrDecl) and \
            isinstance(node.to_type.type.type, c_ast.TypeDecl) and \
            isinstance(node.to_type.type.type.type, c_ast.IdentifierType):
        name = " ".join(node.to_type.type.type.type.names)
        return name if three_vector(name) else None
    return None


def _call(name: str, *args: c_ast.Node) -> c_ast.FuncCall:
    return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(list(args)))


def _int(value: int) -> c_ast.Constant:
    return c_ast.Constant("int", str(value))


_CASTS = "casts to 3-vector pointers"


def pack(module: GModule) -> list[tuple[dict[str, str], dict[str, str]]]:
    """Write the module's 3-vector arrays (pointer parameters of kernels and helpers, and
    casts to 3-vector pointers) with CUDA's layout in OpenCL (module docstring); returns,
    for each kernel, the parameters packed (name -> 3-vector type) and those kept in
    OpenCL's layout (name -> why).

    A helper's parameter is packed when its body allows and every call passes it an array
    that is packed too (a float3 array kept whole passed to a packed ``float *`` would read
    12-byte elements of 16-byte ones); the decisions are made together, until none
    changes."""
    functions = [h for h in module.helpers] + [p.func for p in module.procedures]
    kernels = {id(p.func) for p in module.procedures}
    # (helper, position) of the helper parameters still to be packed
    positions = {(h.decl.name, k) for h in module.helpers
                 for k, d in enumerate(_params(h))
                 if getattr(d, "name", None) in _arrays(h)}
    while True:
        trials = {}
        dropped = set()
        for func in functions:
            names = _arrays(func) if id(func) in kernels else {
                d.name: kind for k, d in enumerate(_params(func))
                for kind in [_arrays(func).get(getattr(d, "name", None))]
                if kind and (func.decl.name, k) in positions}
            body, kept, violations = _trial(func, names, positions)
            trials[id(func)] = (body, {n: names[n] for n in names if n not in kept}, kept)
            dropped |= violations
            if id(func) not in kernels:
                params = _params(func)
                dropped |= {(func.decl.name, k) for k, d in enumerate(params)
                            if getattr(d, "name", None) in kept}
        if not dropped & positions:
            break
        positions -= dropped
    out = []
    for func in functions:
        body, packed, kept = trials[id(func)]
        func.body = body
        for name, kind in packed.items():
            _retype(func, name, three_vector(kind))
        if id(func) in kernels:
            out.append((packed, kept))
    return out


def _trial(func: c_ast.FuncDef, names: dict[str, str], positions: set[tuple[str, int]]
           ) -> tuple[c_ast.Compound, dict[str, str], set[tuple[str, int]]]:
    """``func``'s body with the arrays ``names`` and its 3-vector casts packed, as far as
    they can be: (body, kept array -> why, helper positions passed anything but a packed
    array)."""
    kept: dict[str, str] = {}
    names, casts = set(names), True
    while True:
        packer = _Packer(names, positions, casts)
        try:
            body = packer.visit(copy.deepcopy(func.body), True)
        except _Keep as why:
            if why.name is None and casts:        # a cast: casts stay as written
                kept[_CASTS], casts = why.why, False
            elif why.name in names:
                kept[why.name] = why.why
                names.discard(why.name)
            else:
                raise AssertionError(f"no array to keep for: {why.why}") from why
            continue
        return body, kept, packer.violations


class _Packer:
    """Rewrites the accesses of 3-vector pointers (parameters named ``names``, and casts
    unless ``casts`` is False) into element accesses of their scalar type; raises _Keep on
    any other use. ``positions``: the (helper, parameter position) packed, to which such
    an array may be passed whole (``violations`` collects those passed anything else)."""

    def __init__(self, names: set[str], positions: set[tuple[str, int]],
                 casts: bool = True) -> None:
        self.names, self.positions, self.casts = names, positions, casts
        self.violations: set[tuple[str, int]] = set()

    def _pointer(self, node: c_ast.Node) -> c_ast.Node | None:
        """The scalar pointer a 3-vector pointer expression is read through, or None."""
        if isinstance(node, c_ast.ID) and node.name in self.names:
            return node
        kind = _vector_pointer(node) if self.casts else None
        if kind is not None:
            cast = copy.deepcopy(node)
            cast.to_type.type.type.type.names = [three_vector(kind)]
            cast.expr = self.visit(cast.expr, False)
            return cast
        return None

    def _element(self, node: c_ast.Node) -> tuple[c_ast.Node, c_ast.Node] | None:
        """(pointer, index) of a whole 3-vector element ``p[i]`` or ``*p``, or None."""
        if isinstance(node, c_ast.ArrayRef):
            pointer = self._pointer(node.name)
            if pointer is not None:
                return pointer, self.visit(node.subscript, False)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            pointer = self._pointer(node.expr)
            if pointer is not None:
                return pointer, _int(0)
        return None

    def _owner(self, node: c_ast.Node) -> str | None:
        """The parameter a 3-vector access reads (None: a cast)."""
        while isinstance(node, (c_ast.ArrayRef, c_ast.StructRef, c_ast.UnaryOp)):
            node = node.name if not isinstance(node, c_ast.UnaryOp) else node.expr
        return node.name if isinstance(node, c_ast.ID) and node.name in self.names else None

    def _component(self, node: c_ast.Node) -> c_ast.Node | None:
        """``p[3 * i + k]`` for a component ``p[i].y`` / ``p->y``, or None."""
        if not isinstance(node, c_ast.StructRef) or not isinstance(node.field, c_ast.ID):
            return None
        if node.type == "->":
            pointer = self._pointer(node.name)
            where = (pointer, _int(0)) if pointer is not None else None
        else:
            where = self._element(node.name)
        if where is None:
            return None
        if node.field.name not in _COMPONENTS:
            raise _Keep(self._owner(node), f"its component '{node.field.name}' is read as a "
                        "vector")
        pointer, index = where
        k = _COMPONENTS[node.field.name]
        flat = c_ast.BinaryOp("*", _int(3), index)
        return c_ast.ArrayRef(pointer, c_ast.BinaryOp("+", flat, _int(k)) if k else flat)

    def _passed(self, node: c_ast.FuncCall) -> c_ast.Node | None:
        """A call passing packed arrays whole to packed helper parameters, rewritten."""
        if not (isinstance(node.name, c_ast.ID) and node.args is not None):
            return None
        helper = node.name.name
        if not any(h == helper for h, _ in self.positions):
            return None
        exprs = []
        for k, arg in enumerate(node.args.exprs):
            if (helper, k) in self.positions:
                if isinstance(arg, c_ast.ID) and arg.name in self.names:
                    exprs.append(arg)
                    continue
                self.violations.add((helper, k))
            exprs.append(self.visit(arg, False))
        node.args.exprs = exprs
        return node

    def visit(self, node: c_ast.Node, statement: bool) -> c_ast.Node:
        """``node`` rewritten; ``statement``: it stands as a statement (a store may be)."""
        if isinstance(node, c_ast.Assignment):
            where = self._element(node.lvalue)
            if where is not None:
                owner = self._owner(node.lvalue)
                if not statement:
                    raise _Keep(owner, "an element's store is used as a value")
                pointer, index = where
                value = self.visit(node.rvalue, False)
                if node.op != "=":
                    if not side_effect_free(index):
                        raise _Keep(owner, f"'{node.op}' on an element whose index has side "
                                    "effects")
                    value = c_ast.BinaryOp(node.op[:-1],
                                           _call("vload3", copy.deepcopy(index), pointer),
                                           value)
                return _call("vstore3", value, index, copy.deepcopy(pointer))
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and \
                self._element(node.expr) is not None:
            raise _Keep(self._owner(node.expr), "an element is incremented")
        component = self._component(node)
        if component is not None:
            return component
        where = self._element(node)
        if where is not None:
            return _call("vload3", where[1], where[0])
        if isinstance(node, c_ast.FuncCall):
            passed = self._passed(node)
            if passed is not None:
                return passed
        if isinstance(node, c_ast.ID) and node.name in self.names:
            raise _Keep(node.name, "the array is used as a pointer, not only indexed")
        if self.casts and _vector_pointer(node) is not None:
            raise _Keep(None, "a cast to a 3-vector pointer is used as a pointer")
        statements = _STATEMENT_SLOTS.get(type(node), ())
        return map_children(node, lambda child, slot: self.visit(child, slot in statements))


def pad(func: c_ast.FuncDef, keep=lambda decl: True) -> dict[str, str]:
    """Write ``func``'s 3-vector pointer parameters (those ``keep`` accepts) with OpenCL's
    layout in CUDA: as 4-vector arrays, whose whole elements are read and written as
    3-vectors at their addresses; returns them (name -> 3-vector type)."""
    arrays = _arrays(func, keep)
    params = {d.name: d for d in _params(func) if getattr(d, "name", None) in arrays}
    for name, kind in arrays.items():
        _retype(func, name, kind[:-1] + "4")
    # local pointers into them (``__global float3 *row = p + k``) take the 4-vector too
    pointers = dict(arrays)
    const = {name: "const" in d.type.type.quals for name, d in params.items()}
    for node, _ in walk(func.body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.PtrDecl) and \
                isinstance(node.type.type, c_ast.TypeDecl) and \
                isinstance(node.type.type.type, c_ast.IdentifierType) and \
                node.init is not None and pointer_root(node.init) in pointers:
            kind = " ".join(node.type.type.type.names)
            if three_vector(kind):
                node.type.type.type.names = [kind[:-1] + "4"]
                pointers[node.name] = kind
                const[node.name] = "const" in node.type.type.quals

    def whole(target: c_ast.Node, kind: str, const: bool) -> c_ast.Node:
        quals = ["const"] if const else []
        ptr = c_ast.PtrDecl([], c_ast.TypeDecl(None, quals, None, c_ast.IdentifierType([kind])))
        address = target.expr if isinstance(target, c_ast.UnaryOp) else \
            c_ast.UnaryOp("&", target)
        return c_ast.UnaryOp("*", c_ast.Cast(c_ast.Typename(None, [], None, ptr), address))

    def visit(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.StructRef) and node.type == ".":
            node.name = visit_inner(node.name)       # p[i].y: a float4's component
            return node
        map_children(node, lambda child, slot: visit(child))
        base = node.name if isinstance(node, c_ast.ArrayRef) else \
            node.expr if isinstance(node, c_ast.UnaryOp) and node.op == "*" else None
        if isinstance(base, c_ast.ID) and base.name in pointers:
            return whole(node, pointers[base.name], const[base.name])
        return node

    def visit_inner(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID) and \
                node.name.name in pointers:
            node.subscript = visit(node.subscript)
            return node
        return visit(node)

    if arrays:
        func.body = visit(func.body)
    return arrays
