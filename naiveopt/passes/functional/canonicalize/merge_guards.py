"""One bounds guard: kernels guard their work in more than one spelling, and the analyses read
a single top-level guard (analysis/shape.py: ``if (cond) return;`` or ``if (cond) { ... }``).

- consecutive early returns, ``if (row >= M) return; if (col >= N) return;``, are
  ``if (row >= M || col >= N) return;`` (the second test runs only where the first failed,
  as ``||`` evaluates it);
- an ``if`` that holds nothing but another ``if`` (neither with an ``else``),
  ``if (row < M) { if (col < N) { ... } }``, is ``if (row < M && col < N) { ... }``;
- a ``return;`` that ends the kernel, or ends the body of the guard that ends it (Rodinia's
  ``if (id < n) { ... } return;``), does nothing: it is removed, so that the guard is the
  kernel's last statement, as the analyses read it;
- a block that stands alone as a top-level statement (``if (i >= n) return; { ... }``) is
  its statements, where none of its declarations names something the kernel declares
  elsewhere (its scope then changes nothing).

Only the kernel's top-level statements are merged, and only conditions that read no memory.
"""
from __future__ import annotations

from pycparser import c_ast

from ....analysis.guards import is_return
from ....analysis.shape import is_pure
from ....ir import GProcedure
from ....ir.cgen import to_c
from ....ir.rewrite import walk
from ...manager import PassContext
from .base import CanonicalizationPass


class MergeGuards(CanonicalizationPass):
    name = "merge-guards"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        items = proc.body.block_items or []
        removed = _trailing_returns(items) + _bare_blocks(items)
        done: list[str] = []
        index = 0
        while index < len(items):
            stmt = items[index]
            if _early_return(stmt) and index + 1 < len(items) and _early_return(items[index + 1]):
                stmt.cond = c_ast.BinaryOp("||", stmt.cond, items[index + 1].cond)
                del items[index + 1]
                done.append(f"if ({to_c(stmt.cond)}) return;")
                continue
            inner = _lone_if(stmt)
            if inner is not None:
                stmt.cond = c_ast.BinaryOp("&&", stmt.cond, inner.cond)
                stmt.iftrue = inner.iftrue
                done.append(f"if ({to_c(stmt.cond)})")
                continue
            index += 1
        said = ([f"{len(done)} guard(s) merged: " + "; ".join(done)] if done else []) + removed
        if said:
            self.applied(proc, ctx, "; ".join(said))
        return bool(said)


def _trailing_returns(items: list[c_ast.Node]) -> list[str]:
    """Remove the ``return;`` ending the kernel's statements ``items`` and the one ending
    the body of a guard that ends them; say what was removed."""
    done = []
    while items and isinstance(items[-1], c_ast.Return) and items[-1].expr is None:
        del items[-1]
        done.append("the return; ending the kernel removed")
    last = items[-1] if items else None
    if isinstance(last, c_ast.If) and last.iffalse is None and \
            isinstance(last.iftrue, c_ast.Compound):
        body = last.iftrue.block_items or []
        if len(body) > 1 and isinstance(body[-1], c_ast.Return) and body[-1].expr is None:
            del body[-1]
            done.append("the return; ending the guard's body removed")
    return done


def _bare_blocks(items: list[c_ast.Node]) -> list[str]:
    """Splice each top-level block of ``items`` whose declarations the rest of the kernel
    does not declare; say so."""
    done = []
    for k in range(len(items) - 1, -1, -1):
        block = items[k]
        if not isinstance(block, c_ast.Compound):
            continue
        inside = {d.name for d in block.block_items or [] if isinstance(d, c_ast.Decl)}
        outside = {n.name for i, item in enumerate(items) if i != k
                   for n, _ in walk(item) if isinstance(n, c_ast.Decl) and n.name}
        if inside & outside:
            continue
        items[k:k + 1] = list(block.block_items or [])
        done.append("a block of its own made the kernel's statements")
    return done


def _early_return(stmt: c_ast.Node) -> bool:
    return isinstance(stmt, c_ast.If) and stmt.iffalse is None and is_return(stmt.iftrue) \
        and is_pure(stmt.cond)


def _lone_if(stmt: c_ast.Node) -> c_ast.If | None:
    """The if that ``stmt``, an if without else, holds and nothing else (None if none)."""
    if not (isinstance(stmt, c_ast.If) and stmt.iffalse is None and is_pure(stmt.cond)):
        return None
    body = stmt.iftrue
    if isinstance(body, c_ast.Compound):
        if len(body.block_items or []) != 1:
            return None
        body = body.block_items[0]
    if isinstance(body, c_ast.If) and body.iffalse is None and is_pure(body.cond):
        return body
    return None
