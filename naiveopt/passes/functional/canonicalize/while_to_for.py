"""While loops with a counter: ``k = 0; while (k < n) { body; k += 1; }`` is
``for (k = 0; k < n; k += 1) { body }``, the loop form the analyses read.

The rewrite is exact when the statement before the loop initialises the counter that the
condition tests (``int k = 0;`` becomes ``int k;`` and the loop's ``k = 0``; statements in
between that do not mention the counter, such as ``int stride = blockDim.x * gridDim.x;`` or
a barrier, may separate them), the body's last statement steps it (``k++``, ``++k``, ``k += c``, ``k = k + c``
and their decrements) and nothing else in the body assigns it, and no ``continue`` of this loop
skips the step (in a for loop it would run it). Other while loops stay, with the reason.
"""
from __future__ import annotations

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.cgen import to_c
from ....ir.rewrite import assigned_names, side_effect_free, walk
from ..builtins import PURE_CALLS
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import has_loop_jump, is_plain_local, mentions


class WhileToFor(CanonicalizationPass):
    name = "while-to-for"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        done = []
        for compound, _ in [(n, p) for n, p in walk(proc.body) if isinstance(n, c_ast.Compound)]:
            items = compound.block_items or []
            for index, stmt in enumerate(items):
                if not isinstance(stmt, c_ast.While):
                    continue
                counter = _counter(stmt.cond, stmt.stmt)
                at = _initialised_at(items, index, counter)
                why = _obstacle(stmt, counter, items[at] if at is not None else None) or \
                    _moved_past(items[at], items[at + 1:index])
                if why:
                    self.missed(proc, ctx, f"while ({to_c(stmt.cond)}) kept: {why}")
                    continue
                body = stmt.stmt
                step = body.block_items[-1]
                init = before = items[at]
                if isinstance(before, c_ast.Decl):     # int k = 0; -> int k; for (k = 0; ...)
                    init = c_ast.Assignment("=", c_ast.ID(counter), before.init, before.coord)
                    before.init = None
                else:
                    before = None
                body.block_items = body.block_items[:-1]
                loop = c_ast.For(init, stmt.cond, step, body, stmt.coord)
                items[at] = before                   # keep the indices of this pass
                items[index] = loop
                done.append(f"while ({to_c(stmt.cond)}) -> for ({to_c(init)}; "
                            f"{to_c(stmt.cond)}; {to_c(step)})")
            compound.block_items = [s for s in items if s is not None]
        if done:
            self.applied(proc, ctx, f"{len(done)} while loop(s) with a counter written as for "
                         "loops: " + "; ".join(done))
        return bool(done)


def _counter(cond: c_ast.Node, body: c_ast.Node) -> str | None:
    """The variable a loop condition compares (``k < n``, ``n > k``...) that the body's last
    statement steps (the first one compared where none is)."""
    names = []
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "!="):
        for side, other in ((cond.left, cond.right), (cond.right, cond.left)):
            if isinstance(side, c_ast.ID) and not mentions(other, side.name):
                names.append(side.name)
    last = body.block_items[-1] if isinstance(body, c_ast.Compound) and body.block_items \
        else None
    return next((k for k in names if last is not None and is_step(last, k)),
                names[0] if names else None)


def is_step(stmt: c_ast.Node, k: str) -> bool:
    """``k++``, ``++k``, ``k--``, ``--k``, ``k += c``, ``k -= c``, ``k = k + c``, ``k = c + k``,
    ``k = k - c`` with c not reading k."""
    if isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("++", "p++", "--", "p--"):
        return isinstance(stmt.expr, c_ast.ID) and stmt.expr.name == k
    if not (isinstance(stmt, c_ast.Assignment) and isinstance(stmt.lvalue, c_ast.ID) and
            stmt.lvalue.name == k):
        return False
    if stmt.op in ("+=", "-="):
        return not mentions(stmt.rvalue, k)
    rv = stmt.rvalue
    if stmt.op == "=" and isinstance(rv, c_ast.BinaryOp) and rv.op in ("+", "-"):
        pairs = [(rv.left, rv.right)] + ([(rv.right, rv.left)] if rv.op == "+" else [])
        return any(isinstance(a, c_ast.ID) and a.name == k and not mentions(b, k)
                   for a, b in pairs)
    return False


def _initialised_at(items: list, index: int, k: str | None) -> int | None:
    """The position of the statement before ``items[index]`` that may initialise ``k``: the
    nearest one that mentions k, where the statements after it do not (``int i = idx; int
    stride = ...; __syncthreads(); while (i < n)``: the initialisation may move into the
    loop's header, past statements that neither read nor write k)."""
    for at in range(index - 1, -1, -1):
        if items[at] is None:
            continue
        declares = any(isinstance(n, c_ast.Decl) and n.name == k for n, _ in walk(items[at]))
        if k is None or declares or mentions(items[at], k) or \
                isinstance(items[at], (c_ast.Label, c_ast.Case)):
            return at
    return None


def _moved_past(init: c_ast.Node, between: list) -> str:
    """Why the counter's initial value may not be computed after the statements
    ``between`` (where it would be, in the loop's header), or ''. It must read no memory
    and call nothing (those statements may store or have effects), and they must not assign
    a variable it reads."""
    between = [b for b in between if b is not None]
    if not between:
        return ""
    value = init.init if isinstance(init, c_ast.Decl) else init.rvalue
    if not side_effect_free(value, PURE_CALLS) or \
            any(isinstance(n, c_ast.ArrayRef) for n, _ in walk(value)):
        return f"its counter's initial value {to_c(value)} reads memory or calls a function, " \
            "and statements stand between"
    assigned = assigned_names(c_ast.Compound(between))
    read = {n.name for n, _ in walk(value) if isinstance(n, c_ast.ID)}
    if read & set(assigned):
        return f"a statement between it and its counter's initialisation assigns " \
            f"{sorted(read & set(assigned))[0]}"
    return ""


def _obstacle(loop: c_ast.While, k: str | None, before: c_ast.Node | None) -> str:
    if k is None:
        return "its condition does not compare a counter"
    sets = isinstance(before, c_ast.Assignment) and before.op == "=" and \
        isinstance(before.lvalue, c_ast.ID) and before.lvalue.name == k and \
        not mentions(before.rvalue, k)
    declares = isinstance(before, c_ast.Decl) and before.name == k and \
        before.init is not None and is_plain_local(before) and \
        not isinstance(before.init, c_ast.InitList)
    if not (sets or declares):
        return f"the statement before it does not initialise {k}"
    body = loop.stmt
    if not (isinstance(body, c_ast.Compound) and body.block_items and
            is_step(body.block_items[-1], k)):
        return f"its body does not end by stepping {k}"
    if assigned_names(c_ast.Compound(body.block_items[:-1])).get(k):
        return f"its body assigns {k} before the step"
    if has_loop_jump(body, c_ast.Continue):
        return "a continue would skip the step"
    return ""
