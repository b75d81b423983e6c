"""A clamp written as if-statements is a clamp: ``if (xx < 0) xx = 0; if (xx >= w) xx = w - 1;``
and ``if (xx < 0) xx = 0; else if (xx >= w) xx = w - 1;``, the way tutorials and image code
keep a neighbour's coordinate inside the image, become ``xx = xx < 0 ? 0 : xx;`` and
``xx = xx < 0 ? 0 : xx >= w ? w - 1 : xx;``.

Why: a local assigned under an ``if`` is opaque to the analyses, so every index through it was
"array shape unknown" and the kernel was written unverified, while the same clamp written with
ternaries or min/max verified and could be staged. As plain assignments in the block that
declares the local, split-locals gives each definition its own local, and a ternary that
compares the two values it picks from is read as min/max (ir/symbolic.py), which verification's
extents and the stencil pass (analysis/clamps.py) read.

``if (c) v = e;`` is ``v = c ? e : v;`` exactly where c and e read no memory and call nothing
(c is evaluated as before, e only where c holds, as before) and e is an integer expression
(the ternary's type is then an integer type, through which v's value passes unchanged); an
else-if chain assigning v in every branch is the nested ternary. Only assignments whose
ternary is a min or a max are rewritten (ir/symbolic.py's ``picks``): a clamp, where the test
compares v with a bound and the branch assigns that bound (``v >= w`` may assign ``w - 1``,
the same clamp for integers), and a reflection at the border, ``if (v < 0) v = -v;`` (|v|)
and ``if (v >= w) v = 2 * w - v - 2;``; any other conditional assignment stays as written,
since the ternary would not make it readable.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.cgen import to_c
from ....ir.rewrite import walk
from ....ir.nodes import PredefId
from ....ir.symbolic import SymbolEnv, Unresolved, nonnegative, picks, to_sympy
from ....ir.typenames import INTEGER_WORDS
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import declarations, is_integer, is_plain_local, mentions

_COMPARISONS = ("<", "<=", ">", ">=")
#: An integer literal's text (no float, no character literal).
_INTEGER_LITERAL = re.compile(r"(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
#: A macro whose text is integer arithmetic of integer literals.
_INTEGER_MACRO = re.compile(r"(?:\s|[()+\-*/%]|0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)+")


class ClampIfs(CanonicalizationPass):
    name = "clamp-ifs"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        integers = _integer_names(proc, ctx)
        local_integers = {name for name, decls in declarations(proc.body).items()
                          if all(is_plain_local(d) and is_integer(d) for d in decls)}
        done = []
        for block in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Compound)]:
            items = block.block_items or []
            for at, stmt in enumerate(items):
                found = _clamp_chain(stmt, local_integers, integers)
                if found is None:
                    continue
                name, branches = found
                value: c_ast.Node = c_ast.ID(name)
                for cond, bound in reversed(branches):
                    value = c_ast.TernaryOp(cond, bound, value)
                items[at] = c_ast.Assignment("=", c_ast.ID(name, coord=stmt.coord), value,
                                             coord=stmt.coord)
                done.append(to_c(items[at]))
        if done:
            self.applied(proc, ctx, f"{len(done)} clamp(s) written as if-statements read as "
                         "ternaries: " + "; ".join(done))
        return bool(done)


def _integer_names(proc: GProcedure, ctx: PassContext) -> set[str]:
    """Names of integer value in the kernel: integer scalar parameters and locals, and macros
    whose text is integer arithmetic."""
    names = {p.name for p in proc.params if not p.is_pointer and
             set(p.base_type.split()) & INTEGER_WORDS and
             set(p.base_type.split()) <= INTEGER_WORDS | {"const"}}
    names |= {name for name, decls in declarations(proc.body).items()
              if all(is_integer(d) for d in decls)}
    names |= {name for name, text in ctx.module.macros.items()
              if _INTEGER_MACRO.fullmatch(text or "") and re.search(r"\d", text)}
    return names


def _clamp_chain(stmt: c_ast.Node, locals_: set[str], integers: set[str]
                 ) -> tuple[str, list[tuple[c_ast.Node, c_ast.Node]]] | None:
    """(the local, [(test, bound)...]) of ``if (test) v = bound; [else if (test) v = bound;]...``
    where every branch clamps the same integer local v; None otherwise."""
    branches: list[tuple[c_ast.Node, c_ast.Node]] = []
    name = None
    node = stmt
    while node is not None:
        if not isinstance(node, c_ast.If):
            return None
        assigned = _lone_assignment(node.iftrue)
        if assigned is None or (name is not None and assigned.lvalue.name != name):
            return None
        name = assigned.lvalue.name
        if name not in locals_ or not _clamps(node.cond, assigned.rvalue, name, integers):
            return None
        branches.append((node.cond, assigned.rvalue))
        node = node.iffalse
    return (name, branches) if branches else None


def _lone_assignment(stmt: c_ast.Node) -> c_ast.Assignment | None:
    """``v = e`` where ``stmt`` is that statement alone (braced or not)."""
    if isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
            isinstance(stmt.lvalue, c_ast.ID):
        return stmt
    return None


def _clamps(cond: c_ast.Node, bound: c_ast.Node, name: str, integers: set[str]) -> bool:
    """Whether ``if (cond) name = bound;`` clamps or reflects ``name``: cond compares it with
    an integer expression, and ``cond ? bound : name`` is a min or max of the two."""
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in _COMPARISONS):
        return False
    sides = (cond.left, cond.right)
    if sum(isinstance(s, c_ast.ID) and s.name == name for s in sides) != 1:
        return False
    if not all(_integer(n, integers) for n in (*sides, bound)) or \
            any(mentions(s, name) for s in sides if not isinstance(s, c_ast.ID)):
        return False
    names = {n.name for part in (*sides, bound) for n, _ in walk(part)
             if isinstance(n, c_ast.ID)}
    env = SymbolEnv(names, set(), {})
    left, right, value = (to_sympy(n, env) for n in (*sides, bound))
    if any(e.has(Unresolved) for e in (left, right, value)):
        return False
    return picks(nonnegative(cond.op, left, right), value, to_sympy(c_ast.ID(name), env)) \
        is not None


def _integer(node: c_ast.Node, integers: set[str]) -> bool:
    """An integer expression that reads no memory and calls nothing: integer literals and
    names, thread ids, integer casts, + - * / % << >> and unary minus of those."""
    if isinstance(node, PredefId):
        return True
    if isinstance(node, c_ast.ID):
        return node.name in integers
    if isinstance(node, c_ast.Constant):
        return node.type != "char" and bool(_INTEGER_LITERAL.fullmatch(node.value))
    if isinstance(node, c_ast.UnaryOp):
        return node.op in ("-", "+") and _integer(node.expr, integers)
    if isinstance(node, c_ast.BinaryOp):
        return node.op in ("+", "-", "*", "/", "%", "<<", ">>") and \
            _integer(node.left, integers) and _integer(node.right, integers)
    if isinstance(node, c_ast.Cast):
        t = node.to_type.type
        words = t.type.names if isinstance(t, c_ast.TypeDecl) and \
            isinstance(t.type, c_ast.IdentifierType) else []
        return bool(words) and all(w in INTEGER_WORDS for name in words for w in name.split()) \
            and _integer(node.expr, integers)
    return False
