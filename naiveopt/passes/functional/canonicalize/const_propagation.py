"""Constant propagation: a ``const`` integer local whose value is the same for every thread
(``const int kk = K;``, ``const int radius = MASK_WIDTH / 2;``) is written into the loop
headers, guards and array indices that read it, its value folded to a number where it is one
(``4 / 2`` is ``2``).

The analyses follow such a local to its value already, but the code the passes generate copies
loop bounds, guards and indices into new places (hoisted loads, merged copies, the thread
space of the launch, which the host evaluates): there a local means nothing. Its value does.
The declaration stays, with the local's other uses. Values that read memory or thread ids, or
locals assigned again, are left alone.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.cgen import to_c
from ....ir.literals import integer_value
from ....ir.rewrite import assigned_names, walk
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import is_integer, is_plain_local, replace_names

_OPS = {"+", "-", "*", "/", "%", "<<", ">>"}
INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


class ConstPropagation(CanonicalizationPass):
    name = "const-propagation"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        values = uniform_consts(proc, set(ctx.module.macros))
        if not values:
            return False
        counts: dict[str, dict[str, int]] = {n: {"loop header": 0, "guard": 0, "index": 0}
                                             for n in values}

        def substitute(node: c_ast.Node, site: str) -> c_ast.Node:
            seen: list[str] = []
            node = replace_names(node, values, seen)
            for name in seen:
                counts[name][site] += 1
            return node

        for node, _ in list(walk(proc.body)):
            if isinstance(node, c_ast.For):
                for slot in ("init", "cond", "next"):
                    part = getattr(node, slot)
                    if part is not None and not isinstance(part, c_ast.DeclList):
                        setattr(node, slot, substitute(part, "loop header"))
                if isinstance(node.init, c_ast.DeclList):
                    for d in node.init.decls:
                        if d.init is not None:
                            d.init = substitute(d.init, "loop header")
            elif isinstance(node, c_ast.If):
                node.cond = substitute(node.cond, "guard")
            elif isinstance(node, c_ast.ArrayRef):
                node.subscript = substitute(node.subscript, "index")
        said = []
        for name, sites in counts.items():
            where = ", ".join(f"{k} {n}" for k, n in sites.items() if n)
            if where:
                said.append(f"{name} = {to_c(values[name])} into {where}")
        if not said:
            return False
        self.applied(proc, ctx, "const value(s) written where they are used: "
                     + "; ".join(said))
        return True


def uniform_consts(proc: GProcedure, macros: set[str]) -> dict[str, c_ast.Node]:
    """The ``const`` integer locals defined once with a value that is the same for every
    thread, each with that value (other such locals in it replaced, numbers folded)."""
    counts = assigned_names(proc.body)
    params = {p.name for p in proc.params if not p.is_pointer and not counts.get(p.name)}
    decls = [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Decl) and n.name and
             "const" in n.quals and n.init is not None and is_integer(n) and
             is_plain_local(n) and counts.get(n.name) == 1]
    names = [d.name for d in decls]
    if len(set(names)) != len(names):       # shadowed names: leave them all alone
        decls = [d for d in decls if names.count(d.name) == 1]
    values: dict[str, c_ast.Node] = {}
    for d in decls:             # in source order: a const reads only those declared before
        if _uniform(d.init, params | macros, values):
            value = replace_names(copy.deepcopy(d.init), values)
            folded = fold(value)
            values[d.name] = value if folded is None else (
                c_ast.Constant("int", str(folded)) if folded >= 0 else
                c_ast.UnaryOp("-", c_ast.Constant("int", str(-folded))))
    return values


def _uniform(node: c_ast.Node, names: set[str], consts: dict[str, c_ast.Node]) -> bool:
    for n, _ in walk(node):
        if isinstance(n, c_ast.ID):
            if n.name not in names and n.name not in consts:
                return False
        elif isinstance(n, c_ast.Constant):
            if n.type not in ("int", "char") or integer_value(n.value) is None:
                return False
        elif isinstance(n, c_ast.BinaryOp):
            if n.op not in _OPS:
                return False
        elif isinstance(n, c_ast.UnaryOp):
            if n.op not in ("-", "+"):
                return False
        elif not isinstance(n, (c_ast.Cast, c_ast.Typename, c_ast.TypeDecl,
                                c_ast.IdentifierType)):
            return False
    return True


def fold(node: c_ast.Node) -> int | None:
    """The value of an integer expression of plain ``int`` literals, as C computes it in int
    (division truncates toward zero), or None where it is not one or leaves int's range."""
    if isinstance(node, c_ast.Constant):
        if node.type != "int" or not node.value.isdigit() or node.value.startswith("0") and \
                node.value != "0":
            return None       # suffixed, octal, hex: left as the user wrote them
        value = int(node.value)
    elif isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        inner = fold(node.expr)
        value = None if inner is None else (-inner if node.op == "-" else inner)
    elif isinstance(node, c_ast.BinaryOp) and node.op in _OPS:
        a, b = fold(node.left), fold(node.right)
        if a is None or b is None:
            return None
        if node.op in ("/", "%"):
            if b == 0:
                return None
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            value = q if node.op == "/" else a - q * b
        elif node.op in ("<<", ">>"):
            if a < 0 or not 0 <= b < 31:
                return None
            value = a << b if node.op == "<<" else a >> b
        else:
            value = a + b if node.op == "+" else (a - b if node.op == "-" else a * b)
    else:
        return None
    return value if value is not None and INT_MIN <= value <= INT_MAX else None
