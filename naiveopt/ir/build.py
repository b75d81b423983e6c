"""Building c_ast fragments for transformations: from C snippets and from sympy expressions,
new names, array declarations.

Passes write the code they generate as C text (readable, reviewable) and splice it into the
kernel's tree; placeholders let them drop existing subtrees in. Predefined ids are written as
``@tidx`` in snippets and become PredefId nodes. The variables they introduce get names no
identifier of the kernel has (:func:`fresh`), so that generated code never captures or
shadows the user's.
"""
from __future__ import annotations

import copy
import re

import sympy
from pycparser import c_ast, c_parser
from sympy.printing.c import C99CodePrinter
from sympy.printing.precedence import precedence

from .nodes import PREDEFINED_IDS, PredefId
from .rewrite import map_nodes, walk

_PREDEF = re.compile(r"@(\w+)")
_PREFIX = "__naiveopt_pid_"


def _predef_ids(node: c_ast.Node) -> c_ast.Node:
    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name.startswith(_PREFIX):
            return PredefId(n.name[len(_PREFIX):])
        return n

    return map_nodes(node, fn)


def statements(text: str, **placeholders: c_ast.Node | list[c_ast.Node]) -> list[c_ast.Node]:
    """Parse C statements; ``NAME;`` statements are replaced by placeholders[NAME] and
    identifiers NAME (in expressions) by the given node."""
    source = "void __naiveopt_f(void) {\n" + _PREDEF.sub(_PREFIX + r"\1", text) + "\n}"
    tree = c_parser.CParser().parse(source)
    body = tree.ext[0].body
    _predef_ids(body)

    for node, _ in list(walk(body)):
        # a placeholder standing as a statement ('BODY;') is replaced by its statements
        if isinstance(node, c_ast.Compound) and node.block_items:
            items = []
            for item in node.block_items:
                value = placeholders.get(item.name) if isinstance(item, c_ast.ID) else None
                if value is None:
                    items.append(item)
                elif isinstance(value, c_ast.Compound):
                    items.extend(value.block_items or [])
                elif isinstance(value, list):
                    items.extend(value)
                else:
                    items.append(value)
            node.block_items = items

    used: set[str] = set()

    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name in placeholders:
            value = placeholders[n.name]
            if n.name in used:
                # a placeholder the text names twice: a copy, so that no node stands in two
                # places of the tree (a pass rewriting one in place would change both)
                value = copy.deepcopy(value)
            used.add(n.name)
            return value if isinstance(value, c_ast.Node) else c_ast.Compound(list(value))
        return n

    map_nodes(body, fn)
    return list(body.block_items or [])


def expression(text: str, **placeholders: c_ast.Node) -> c_ast.Node:
    """Parse one C expression (with @ids and placeholders)."""
    (stmt,) = statements(f"__naiveopt_x = {text};", **placeholders)
    return stmt.rvalue


class _IndexPrinter(C99CodePrinter):
    """ccode for integer index expressions: an integer power is a product (ccode's
    ``pow(M, 2)`` is a floating-point call, and an ambiguous one in OpenCL C on ints)."""

    def _print_Pow(self, expr):  # noqa: N802 (sympy's naming)
        if expr.exp.is_Integer and expr.exp > 1:
            return "*".join([self.parenthesize(expr.base, precedence(expr))] * int(expr.exp))
        return super()._print_Pow(expr)


def sympy_text(expr: sympy.Expr, expand: bool = True) -> str:
    """C text of an integer sympy expression, predefined ids written ``@id`` (for snippets).
    ``expand=False`` keeps a product such as ``(32*bidy + r)*(W + K - 1)`` factored."""
    text = _IndexPrinter().doprint(sympy.expand(expr) if expand else expr)
    for name in PREDEFINED_IDS:
        text = re.sub(rf"\b{name}\b", "@" + name, text)
    return text


def from_sympy(expr: sympy.Expr) -> c_ast.Node:
    """A c_ast expression for an integer sympy expression over ids, params and locals."""
    return expression(sympy_text(expr))


def fresh(taken: set[str], base: str) -> str:
    """``base``, or ``base_1``, ``base_2``... : the first not in ``taken`` (which gets it)."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def shared_array(name: str, elem_type: str, dims: list[int]) -> c_ast.Decl:
    """``__shared__ elem_type name[d0][d1]...;``"""
    return _array(name, elem_type, dims, ["__shared__"])


def private_array(name: str, elem_type: str, dims: list[int]) -> c_ast.Decl:
    """``elem_type name[d0]...;``: a thread's own array (in registers where it is indexed by
    constants only)."""
    return _array(name, elem_type, dims, [])


def _array(name: str, elem_type: str, dims: list[int], storage: list[str]) -> c_ast.Decl:
    node: c_ast.Node = c_ast.TypeDecl(name, [], None, c_ast.IdentifierType([elem_type]))
    for dim in reversed(dims):
        node = c_ast.ArrayDecl(node, c_ast.Constant("int", str(dim)), [])
    return c_ast.Decl(name, [], [], storage, [], node, None, None)


def read_through_flat_pointer(func: c_ast.FuncDef, decl: c_ast.Decl, taken: set[str]
                              ) -> c_ast.Decl:
    """The declaration ``T *p_flat = (T *)p;`` of a flat pointer to the elements of the
    pointer parameter ``decl`` (``T *p`` as the IR reads it, qualifiers kept), with every use
    of ``p`` in ``func``'s body reading it instead: the output then declares ``p`` as the
    host passes it (an array of structs, rows of a fixed width) and the body stays flat."""
    flat = fresh(taken, f"{decl.name}_flat")
    local = copy.deepcopy(decl.type)
    local.type.declname = flat
    cast = copy.deepcopy(decl.type)
    cast.type.declname = None
    for node, parent in walk(func.body):         # (not a member's name: blockIdx.x)
        if isinstance(node, c_ast.ID) and node.name == decl.name and not (
                isinstance(parent, c_ast.StructRef) and parent.field is node):
            node.name = flat
    return c_ast.Decl(flat, list(local.type.quals), [], [], [], local,
                      c_ast.Cast(c_ast.Typename(None, [], None, cast), c_ast.ID(decl.name)),
                      None)

