"""Reads and stores of an array through a pointer cast to its vector type, as its elements.

CUDA code reads four floats at once by a cast (``reinterpret_cast<float4 *>(x)[i]``,
``((float4 *)x)[i]``, ``reinterpret_cast<float4 *>(&x[e])[0]``; OpenCL
``((__global float4 *)x)[i]``). The analyses index arrays by
their elements, so such an access left x's extent unknown ("used in a cast, not only
indexed") and itself out of the memory expressions: no verification without a pragma, no
pass could read it. A read of such an element is the vector of its elements
(``make_float4(x[4*i], x[4*i + 1], x[4*i + 2], x[4*i + 3])``) and a store of a whole vector
(``((float4 *)x)[i] = v;``) one store per component, as OpenCL's vloadN/vstoreN are
(frontend/translate.py); vectorize writes each whole group as one vector access again (in
CUDA through the helper that takes the vector path where the address is aligned, as the
input's cast assumed it is).

Only where that is exact: the vector's components are the array's element type (float4 over
float), 2, 3 or 4 of them (a float3 takes the room of 3 elements in CUDA and of 4 in OpenCL:
``padded3``), and the subscript has no side effects; a store is a whole-vector ``=`` that is a statement; a component
(``((float4 *)x)[i].y``, ``((float2 *)(x + e))->y``) is its element, whatever is done with
it (``x[4*i + 1] += 1``). Any other use (``+=`` on a whole vector, the address taken) is
left as written.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast

from ..errors import UnsupportedConstruct
from ..ir.build import fresh
from ..ir.rewrite import STATEMENT_SLOTS, identifiers, replace_child, side_effect_free, walk

_VECTOR = re.compile(r"^([a-z]+?)([234])$")
_COMPONENT = {"uint": "unsigned int", "uchar": "unsigned char", "ushort": "unsigned short",
              "ulong": "unsigned long"}
_LANES = "xyzw"


@dataclass
class _Scope:
    """The pointer parameters' element types, and the functions the file defines."""

    types: dict[str, str]
    defined: set[str]
    padded3: bool = False

    def pure(self, node: c_ast.Node) -> bool:
        return pure(node, self.defined)


def pure(node: c_ast.Node, defined: set[str]) -> bool:
    """Whether ``node`` may be evaluated once per element: no assignment or increment, and no
    call but to functions the file does not define (built-ins: ``max(0, i - 2)``)."""
    calls = {n.name.name for n, _ in walk(node)
             if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}
    return side_effect_free(node, calls - defined)


def defined_functions(cursor) -> set[str]:
    """The functions the file of ``cursor`` (a libclang cursor) defines."""
    from clang.cindex import CursorKind as K

    from .clang_setup import top_level

    return {c.spelling for c in top_level(cursor.translation_unit.cursor)
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and c.is_definition()}


def lower(body: c_ast.Compound, types: dict[str, str], defined: set[str] = frozenset(),
          padded3: bool = False) -> int:
    """Rewrite the vector-cast accesses in ``body`` of the pointer parameters ``types``
    (name -> element type); returns how many were rewritten. ``defined``: the functions the
    file defines (a call to any other, a built-in such as ``max``, has no side effects).
    ``padded3``: a 3-vector takes the room of 4 elements (OpenCL), not 3 (CUDA)."""
    scope = _Scope(types, set(defined), padded3)
    components = []
    for node, parent in walk(body):
        if not isinstance(node, c_ast.StructRef):
            continue
        # ((float2 *)p)[i].y, or ((float2 *)(p + e))->y: element 0's
        ref = node.name if node.type == "." else \
            c_ast.ArrayRef(node.name, c_ast.Constant("int", "0"))
        access = _access(ref, scope)
        if access is not None and node.field.name in _LANES[:access[2]]:
            components.append((node, parent, access, ref.subscript))
    for node, parent, access, subscript in components:
        # one component is one element, whatever is done with it (read, stored, +=)
        k = _LANES.index(node.field.name)
        replace_child(parent, node, _elements(access, subscript)[k])
    stores = _stores(body, scope)
    lvalues = set()
    for node, _ in walk(body):
        if isinstance(node, c_ast.Assignment):
            lvalues.add(id(node.lvalue))
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("&", "++", "--", "p++", "p--"):
            lvalues.add(id(node.expr))
    reads = []
    for node, parent in walk(body):
        found = _access(node, scope)
        if found is None or id(node) in lvalues:
            continue
        if isinstance(parent, c_ast.StructRef) and parent.name is node and \
                id(parent) in lvalues:
            continue
        reads.append((node, parent, found))
    for node, parent, access in reads:
        replace_child(parent, node, c_ast.FuncCall(
            c_ast.ID(f"make_{access[1]}"), c_ast.ExprList(_elements(access, node.subscript)),
            coord=node.coord))
    taken = identifiers(body)
    for stmt, parent, access in reversed(stores):
        out = component_stores(_elements(access, stmt.lvalue.subscript), stmt.rvalue,
                               access[1], fresh(taken, "vector_value"), stmt.coord)
        if isinstance(parent, c_ast.Compound) and len(out) == access[2]:
            at = next(i for i, item in enumerate(parent.block_items) if item is stmt)
            parent.block_items[at:at + 1] = out
        else:
            replace_child(parent, stmt, c_ast.Compound(out))
    for node, _ in walk(body):
        if isinstance(node, c_ast.Cast) and isinstance(node.expr, c_ast.UnaryOp) and \
                node.expr.op == "&":
            # an address the front end let through for the forms above, used otherwise
            file, line, col = str(node.expr.coord).rsplit(":", 2)
            raise UnsupportedConstruct("pointer arithmetic and address-of are not supported",
                                       file, int(line), int(col))
    return len(components) + len(reads) + len(stores)


#: Statements whose child statements a store may be (a block's items, a branch, a body).
_HOLDERS = tuple(STATEMENT_SLOTS)


def _stores(body: c_ast.Compound, scope: _Scope) -> list:
    """(statement, parent, access) of each whole-vector store statement."""
    out = []
    for stmt, parent in walk(body):
        if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
                isinstance(parent, _HOLDERS) and not (
                    isinstance(parent, (c_ast.If, c_ast.For, c_ast.While, c_ast.DoWhile)) and
                    stmt is not getattr(parent, "iftrue", None) and
                    stmt is not getattr(parent, "iffalse", None) and
                    stmt is not getattr(parent, "stmt", None)):
            found = _access(stmt.lvalue, scope)
            if found is not None:
                out.append((stmt, parent, found))
    return out


def _access(node: c_ast.Node, scope: _Scope
            ) -> tuple[str, str, int, c_ast.Node | None, int] | None:
    """(array, vector type, width, element offset, stride) where ``node`` is ``((T *)P)[i]`` with P
    the array, ``array + e``, ``e + array`` or ``&array[e]`` (offset e), as above."""
    if not (isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.Cast)):
        return None
    pointer, offset = node.name.expr, None
    if isinstance(pointer, c_ast.BinaryOp) and pointer.op == "+":
        pointer, offset = (pointer.left, pointer.right) if isinstance(pointer.left, c_ast.ID) \
            else (pointer.right, pointer.left)
    elif isinstance(pointer, c_ast.UnaryOp) and pointer.op == "&" and \
            isinstance(pointer.expr, c_ast.ArrayRef):
        pointer, offset = pointer.expr.name, pointer.expr.subscript
    if not (isinstance(pointer, c_ast.ID) and pointer.name in scope.types):
        return None
    ptr = node.name.to_type.type
    if not (isinstance(ptr, c_ast.PtrDecl) and isinstance(ptr.type, c_ast.TypeDecl) and
            isinstance(ptr.type.type, c_ast.IdentifierType) and
            len(ptr.type.type.names) == 1):
        return None
    vector = ptr.type.type.names[0]
    m = _VECTOR.match(vector)
    if m is None or _COMPONENT.get(m.group(1), m.group(1)) != scope.types[pointer.name] or \
            not scope.pure(node.subscript) or (offset is not None and not scope.pure(offset)):
        return None
    width = int(m.group(2))
    return pointer.name, vector, width, offset, 4 if width == 3 and scope.padded3 else width


def _elements(access: tuple, subscript: c_ast.Node) -> list[c_ast.ArrayRef]:
    array, _, width, offset, stride = access
    return elements(array, offset, subscript, width, stride)


def elements(array: str, offset: c_ast.Node | None, subscript: c_ast.Node, width: int,
             stride: int | None = None) -> list[c_ast.ArrayRef]:
    """``array[offset + stride*subscript + k]`` for k < width (a 0 left out; ``stride``
    defaults to ``width``): the elements of vector ``subscript`` from element ``offset``
    (also OpenCL's vloadN, translate.py)."""
    zero = [n for n in (offset, subscript) if isinstance(n, c_ast.Constant) and n.value == "0"]
    parts = [copy.deepcopy(offset)] if offset is not None and offset not in zero else []
    if subscript not in zero:
        parts.append(c_ast.BinaryOp("*", c_ast.Constant("int", str(stride or width)),
                                    copy.deepcopy(subscript)))
    out = []
    for k in range(width):
        terms = [copy.deepcopy(p) for p in parts] + ([c_ast.Constant("int", str(k))]
                                                     if k or not parts else [])
        index = terms[0]
        for term in terms[1:]:
            index = c_ast.BinaryOp("+", index, term)
        out.append(c_ast.ArrayRef(c_ast.ID(array), index))
    return out


def component_stores(refs: list[c_ast.ArrayRef], value: c_ast.Node, vector: str, name: str,
                     coord=None) -> list[c_ast.Node]:
    """``refs[k] = value.<k>`` for each component, ``value`` first named ``name`` (a local
    of type ``vector``) where it is not a plain variable: it is computed once."""
    out: list[c_ast.Node] = []
    if not isinstance(value, c_ast.ID):
        out.append(c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(
            name, [], None, c_ast.IdentifierType([vector])), value, None, coord=coord))
        value = c_ast.ID(name)
    for k, ref in enumerate(refs):
        out.append(c_ast.Assignment("=", ref, c_ast.StructRef(
            copy.deepcopy(value), ".", c_ast.ID(_LANES[k])), coord=coord))
    return out
