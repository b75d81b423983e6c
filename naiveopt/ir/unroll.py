"""Full unrolling of loops whose trip count is a constant, and folding of the constants left.

nvcc unrolls a loop of constant trip count under ``#pragma unroll`` and then keeps a value
read twice in a register; what it does is invisible to naiveopt's own readers of the code (the
cost model, the profiler), which count accesses per loop iteration as written. Where a pass
wants those readers to see the reuse across iterations (a stencil's sliding window: the input
a filter tap reads is the one the next tap of the neighbouring output reads), it unrolls the
loops itself: each iteration a block of its own, ``{ BODY[i := v] }``, so that locals the
body declares stay apart.

A loop is unrolled when it is canonical in the sense that matters here: ``for (int i = A;
i OP B; STEP)`` with A and B integer constant expressions (after the pass substituted the
runtime sizes it specialises on), STEP ``i++``, ``++i``, ``i--``, ``i += c``, ``i -= c`` or
``i = i + c``, and a body that neither assigns ``i`` nor leaves the loop (``break``,
``continue``, ``return``, ``goto``). Nests are unrolled outside in while the product of their
trip counts stays within ``limit``.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from .literals import integer_value
from .rewrite import assigned_names, map_nodes, walk

_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_COMPARE = {"<": lambda v, b: v < b, "<=": lambda v, b: v <= b, ">": lambda v, b: v > b,
            ">=": lambda v, b: v >= b, "!=": lambda v, b: v != b}


def constant(node: c_ast.Node | None) -> int | None:
    """The value of an integer constant expression (literals, + - * / % and unary minus),
    or None."""
    if isinstance(node, c_ast.Constant):
        return integer_value(node.value) if node.type in ("int", "char") or \
            node.type.endswith("int") else None
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        value = constant(node.expr)
        return None if value is None else (-value if node.op == "-" else value)
    if isinstance(node, c_ast.Cast):
        return constant(node.expr)
    if isinstance(node, c_ast.BinaryOp):
        a, b = constant(node.left), constant(node.right)
        if a is None or b is None:
            return None
        if node.op in _FOLD:
            return _FOLD[node.op](a, b)
        if node.op in ("/", "%") and b != 0:
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)   # C truncates
            return q if node.op == "/" else a - q * b
    return None


def trip_values(loop: c_ast.For, limit: int) -> tuple[str, list[int]] | None:
    """The iterator and the values it takes, for a loop this module unrolls within ``limit``
    iterations (module docstring), else None."""
    init = loop.init
    if not (isinstance(init, c_ast.DeclList) and len(init.decls) == 1):
        return None
    decl = init.decls[0]
    start = constant(decl.init)
    name = decl.name
    cond, step = loop.cond, _step(loop.next, name)
    if start is None or step in (None, 0) or not (
            isinstance(cond, c_ast.BinaryOp) and cond.op in _COMPARE and
            isinstance(cond.left, c_ast.ID) and cond.left.name == name):
        return None
    bound = constant(cond.right)
    if bound is None:
        return None
    body = loop.stmt
    if name in assigned_names(body) or any(
            isinstance(n, (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto))
            for n, _ in walk(body)):
        return None
    values, v = [], start
    while _COMPARE[cond.op](v, bound):
        values.append(v)
        if len(values) > limit:
            return None
        v += step
    return name, values


def _step(node: c_ast.Node | None, name: str) -> int | None:
    if isinstance(node, c_ast.UnaryOp) and isinstance(node.expr, c_ast.ID) and \
            node.expr.name == name:
        return {"++": 1, "p++": 1, "--": -1, "p--": -1}.get(node.op)
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and \
            node.lvalue.name == name:
        if node.op in ("+=", "-="):
            c = constant(node.rvalue)
            return None if c is None else (c if node.op == "+=" else -c)
        value = node.rvalue
        if node.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op == "+" and \
                isinstance(value.left, c_ast.ID) and value.left.name == name:
            return constant(value.right)
    return None


def unroll(stmts: list[c_ast.Node], limit: int = 64) -> tuple[list[c_ast.Node], int]:
    """``stmts`` with every loop of constant trip count unrolled (nests while the product of
    their trips stays within ``limit``) and the constants folded; also how many loops were
    unrolled."""
    count = 0

    def block(items: list[c_ast.Node], budget: int) -> list[c_ast.Node]:
        nonlocal count
        out = []
        for st in items:
            if isinstance(st, c_ast.For):
                found = trip_values(st, budget)
                if found is not None and found[1]:
                    name, values = found
                    count += 1
                    inner = max(1, budget // len(values))
                    for v in values:
                        body = _substitute(copy.deepcopy(st.stmt), name, v)
                        items_v = body.block_items or [] if isinstance(body, c_ast.Compound) \
                            else [body]
                        out.append(c_ast.Compound(block(items_v, inner)))
                    continue
                if found is not None:           # no iteration at all
                    count += 1
                    continue
            out.append(_descend(st, budget))
        return out

    def _descend(st: c_ast.Node, budget: int) -> c_ast.Node:
        if isinstance(st, c_ast.Compound):
            st.block_items = block(st.block_items or [], budget)
        elif isinstance(st, c_ast.If):
            st.iftrue = _descend(st.iftrue, budget) if st.iftrue is not None else None
            st.iffalse = _descend(st.iffalse, budget) if st.iffalse is not None else None
        elif isinstance(st, c_ast.For):
            inner = st.stmt if isinstance(st.stmt, c_ast.Compound) else \
                c_ast.Compound([st.stmt])
            st.stmt = _descend(inner, budget)
        return st

    return [fold(st) for st in block(list(stmts), limit)], count


def _substitute(node: c_ast.Node, name: str, value: int) -> c_ast.Node:
    literal = str(value) if value >= 0 else None

    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name == name:
            return c_ast.Constant("int", literal) if literal is not None else \
                c_ast.UnaryOp("-", c_ast.Constant("int", str(-value)))
        return n

    return map_nodes(node, fn)


def fold(node: c_ast.Node) -> c_ast.Node:
    """``node`` with integer constant sub-expressions folded and ``e + 0``, ``0 + e``,
    ``e - 0``, ``e * 1``, ``1 * e`` simplified (what unrolling leaves in indices)."""

    def fn(n: c_ast.Node) -> c_ast.Node:
        if not isinstance(n, c_ast.BinaryOp) or n.op not in _FOLD:
            return n
        a, b = constant(n.left), constant(n.right)
        if a is not None and b is not None:
            v = _FOLD[n.op](a, b)
            return c_ast.Constant("int", str(v)) if v >= 0 else \
                c_ast.UnaryOp("-", c_ast.Constant("int", str(-v)))
        if n.op == "+" and a == 0:
            return n.right
        if n.op in ("+", "-") and b == 0:
            return n.left
        if n.op == "*" and a == 1:
            return n.right
        if n.op == "*" and b == 1:
            return n.left
        if n.op == "+" and b is not None and b < 0:        # e + -3 -> e - 3
            return c_ast.BinaryOp("-", n.left, c_ast.Constant("int", str(-b)))
        return n

    def subscripts(n: c_ast.Node) -> c_ast.Node:
        n = fn(n)
        if isinstance(n, c_ast.ArrayRef):
            n.subscript = _gather(n.subscript)
        return n

    return map_nodes(node, subscripts)


def _gather(node: c_ast.Node) -> c_ast.Node:
    """An integer index's sum with its constants gathered at the end (``1 + 4 * tidx + 1``
    as ``4 * tidx + 2``); the index unchanged where it has fewer than two constant terms."""
    terms: list[tuple[int, c_ast.Node]] = []

    def flatten(n: c_ast.Node, sign: int) -> None:
        if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-"):
            flatten(n.left, sign)
            flatten(n.right, sign if n.op == "+" else -sign)
        else:
            terms.append((sign, n))

    flatten(node, 1)
    constants = [sign * constant(n) for sign, n in terms if constant(n) is not None]
    if len(constants) < 2:
        return node
    rest = [(sign, n) for sign, n in terms if constant(n) is None]
    total = sum(constants)
    out: c_ast.Node | None = None
    for sign, n in rest:
        if out is None:
            out = n if sign > 0 else c_ast.UnaryOp("-", n)
        else:
            out = c_ast.BinaryOp("+" if sign > 0 else "-", out, n)
    if out is None:
        return c_ast.Constant("int", str(total)) if total >= 0 else \
            c_ast.UnaryOp("-", c_ast.Constant("int", str(-total)))
    if total:
        out = c_ast.BinaryOp("+" if total > 0 else "-", out,
                             c_ast.Constant("int", str(abs(total))))
    return out
