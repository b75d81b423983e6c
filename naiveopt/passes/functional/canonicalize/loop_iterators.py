"""Loop iterators declared in their loops: C89 code declares its iterators at the top of the
kernel or before the loop (``int k; for (k = 0; k < n; k++)``) and sibling loops share one;
the passes that restructure a loop (tiling, staging) need the loop to own its iterator, so
that nothing outside the loop sees what they do to it. Each such loop becomes
``for (int k = 0; k < n; k++)``, keeping the iterator's name and type.

Where the kernel reads k outside the loops that own it now (after a loop, or in a loop
that does not set it), the outer k keeps its declaration and gets, after each rewritten loop,
the value it had there: ``k = 0 < n ? n : 0;`` for the loop above (from its bounds and step,
which the body must not change, for a canonical loop (analysis/loops.py) the body cannot leave
with a ``break``); a loop whose final value cannot be written so stays as it was, saying why.
Where nothing reads the outer k any more, its declaration goes. Loops over integer locals are
rewritten, canonical or not (a reversed loop, ``k--``, owns its iterator as well).
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....analysis.loops import analyse_loop
from ....analysis.shape import is_pure
from ....ir import GLoop, GProcedure
from ....ir.cgen import to_c
from ....ir.rewrite import assigned_names, identifiers, walk
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import has_loop_jump, is_integer, is_plain_local, mentions, parents, uses


class LoopIterators(CanonicalizationPass):
    name = "loop-iterators"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        named = uses(proc.body)
        declared_by = {id(ref): decl for decl, _ in walk(proc.body)
                       if isinstance(decl, c_ast.Decl) for ref in named.get(id(decl), [])}
        candidates: dict[int, tuple[c_ast.Decl, list[tuple[c_ast.For, GLoop]]]] = {}
        for node, _ in walk(proc.body):
            if not (isinstance(node, c_ast.For) and isinstance(node.init, c_ast.Assignment) and
                    node.init.op == "=" and isinstance(node.init.lvalue, c_ast.ID)):
                continue
            k = node.init.lvalue.name
            decl = declared_by.get(id(node.init.lvalue))     # None: a parameter
            if decl is None or not is_plain_local(decl) or not is_integer(decl) or \
                    "const" in decl.quals or mentions(node.init.rvalue, k):
                continue
            loop = analyse_loop(node, None, ctx.module.macros)
            candidates.setdefault(id(decl), (decl, []))[1].append((node, loop))
        done = []
        for decl, loops in candidates.values():
            done += self._own(proc, ctx, decl, loops, named.get(id(decl), []))
        if done:
            self.applied(proc, ctx, f"{len(done)} loop(s) declare their iterator: "
                         + "; ".join(done))
        return bool(done)

    def _own(self, proc: GProcedure, ctx: PassContext, decl: c_ast.Decl,
             loops: list[tuple[c_ast.For, GLoop]], refs: list[c_ast.ID]) -> list[str]:
        """Give each of ``loops`` its own ``decl.name`` (``refs``: the uses of ``decl``); say
        what was done."""
        k = decl.name
        inside = {id(n) for node, _ in loops for n, _ in walk(node)}
        live = any(id(r) not in inside for r in refs)
        done, kept = [], 0
        for node, loop in loops:
            final = None
            if live:
                final, why = final_value(node, loop)
                if final is None:
                    self.missed(proc, ctx, f"for ({to_c(node.init)}; ...) keeps {k} declared "
                                f"before it: {k} is read after the loop and {why}")
                    kept += 1
                    continue
            own = copy.deepcopy(decl)
            own.init, own.coord = node.init.rvalue, node.init.coord
            own.quals = [q for q in own.quals if q != "const"]
            node.init = c_ast.DeclList([own], node.init.coord)
            text = f"for ({to_c(own).strip()}; ...)"
            if final is not None:
                assign = c_ast.Assignment("=", c_ast.ID(k), final)
                _insert_after(proc.body, node, assign)
                text += f" then {to_c(assign)}"
            done.append(text)
        if not live and not kept and (decl.init is None or is_pure(decl.init)):
            up = parents(proc.body)
            home = up.get(id(decl))
            if isinstance(home, c_ast.Compound):
                home.block_items = [s for s in home.block_items if s is not decl]
                done[-1] += f" (the declaration of {k} before {'it' if len(done) == 1 else 'them'} " \
                            "removed: nothing else reads it)"
        return done


def final_value(node: c_ast.For, loop: GLoop) -> tuple[c_ast.Node | None, str]:
    """The iterator's value after the loop, as an expression, or (None, why not)."""
    if not loop.canonical:
        return None, f"the loop is not canonical ({loop.why_not_canonical})"
    if has_loop_jump(node.stmt, c_ast.Break) or any(
            isinstance(n, (c_ast.Goto, c_ast.Label)) for n, _ in walk(node.stmt)):
        return None, "the body may leave the loop early"
    lower, upper, step = loop.lower, loop.upper, loop.step
    changed = set(assigned_names(node.stmt))
    for part in (lower, upper):
        if not is_pure(part) or identifiers(part) & changed:
            return None, "its bounds may change in the loop"
    if node.cond.op == "!=":
        return copy.deepcopy(upper), ""

    def lo() -> c_ast.Node:
        return copy.deepcopy(lower)

    def up() -> c_ast.Node:
        return copy.deepcopy(upper)

    def num(value: int) -> c_ast.Node:
        return c_ast.Constant("int", str(value))

    last = up() if step == 1 else c_ast.BinaryOp("+", lo(), c_ast.BinaryOp("*", c_ast.BinaryOp(
        "/", c_ast.BinaryOp("+", c_ast.BinaryOp("-", up(), lo()), num(step - 1)), num(step)),
        num(step)))
    return c_ast.TernaryOp(c_ast.BinaryOp("<", lo(), up()), last, lo()), ""


def _insert_after(root: c_ast.Node, stmt: c_ast.Node, new: c_ast.Node) -> None:
    """Put ``new`` right after the statement ``stmt`` (in a block made for them where
    ``stmt`` stands alone, as the body of an if or a loop)."""
    parent = parents(root)[id(stmt)]
    if isinstance(parent, c_ast.Compound):
        items = parent.block_items
        index = next(i for i, s in enumerate(items) if s is stmt)
        items.insert(index + 1, new)
        return
    for slot in [s for s in parent.__slots__ if s not in ("coord", "__weakref__")]:
        if getattr(parent, slot) is stmt:
            setattr(parent, slot, c_ast.Compound([stmt, new], stmt.coord))
            return
    raise AssertionError(f"{type(parent).__name__} does not hold the loop")
