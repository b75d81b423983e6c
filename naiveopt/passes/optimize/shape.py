"""The top-level shape of a naive kernel, and making its bounds guard barrier-safe.

Staging through shared memory puts ``__syncthreads()`` into a loop, and every thread of a block
must reach it. Naive kernels guard their work (``if (i < n) { ... }`` or
``if (i >= n) return;``), so the threads of the last block that fail the guard would skip the
barrier. :func:`hoist_guard` rewrites the kernel so that every thread runs the staged loop and
only the work of active threads stays guarded:

    const int active = <guard>;
    <pure declarations>            // for all threads
    if (active) { <side effects> } // guarded, split around the loop
    <staged loop>                  // barriers reached by all threads; its body tests 'active'
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from ...ir import GLoop, GProcedure, MemoryExpression
from ...ir.rewrite import walk
from ..functional.predefined import guard_bounds, id_aliases, is_return


@dataclass
class KernelShape:
    """prologue: leading pure declarations (and pure assignments to them); guard: the bounds
    condition (None when unguarded);
    body: the statements the guard protects, in order."""

    prologue: list[c_ast.Node]
    guard: c_ast.Node | None
    body: list[c_ast.Node]
    bounds: dict[str, c_ast.Node]      # exclusive bounds of idx / idy from the guard


def enclosing_loop(proc: GProcedure, m: MemoryExpression, iterator: str) -> GLoop | None:
    """The loop over ``iterator`` that encloses the access ``m``. A kernel may reuse an
    iterator name in sibling loops (``for (int k ...)`` twice), so the name alone does not
    say which loop an access is in."""
    return next((lp for lp in proc.loops if lp.iterator == iterator and
                 any(x is m for x in lp.memory_expressions)), None)


def is_pure(node: c_ast.Node | None) -> bool:
    """An expression that reads no memory and calls nothing (safe for inactive threads)."""
    if node is None:
        return True
    for n, _ in walk(node):
        if isinstance(n, (c_ast.ArrayRef, c_ast.FuncCall, c_ast.Assignment)):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "*", "&"):
            return False
    return True


def _is_pure_decl(stmt: c_ast.Node) -> bool:
    return isinstance(stmt, c_ast.Decl) and not isinstance(stmt.type, c_ast.ArrayDecl) and \
        not stmt.storage and is_pure(stmt.init)


def _sets_prologue_local(stmt: c_ast.Node, prologue: list[c_ast.Node]) -> bool:
    """``c = 0.5f;`` for a scalar the prologue declared: constants set before the guard
    (PolyBench's coefficients) belong to the prologue too."""
    return isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
        isinstance(stmt.lvalue, c_ast.ID) and is_pure(stmt.rvalue) and \
        any(isinstance(d, c_ast.Decl) and d.name == stmt.lvalue.name for d in prologue)


def kernel_shape(proc: GProcedure) -> tuple[KernelShape | None, str]:
    """The kernel's shape, or (None, why it has none naiveopt can restructure)."""
    items = list(proc.body.block_items or [])
    prologue: list[c_ast.Node] = []
    while items and (_is_pure_decl(items[0]) or _sets_prologue_local(items[0], prologue)):
        prologue.append(items.pop(0))
    aliases = id_aliases(proc)
    if items and isinstance(items[0], c_ast.If) and items[0].iffalse is None:
        first = items[0]
        if is_return(first.iftrue):
            if not is_pure(first.cond):
                return None, "the early-return condition reads memory"
            cond = c_ast.UnaryOp("!", first.cond)
            return KernelShape(prologue, cond, items[1:],
                               guard_bounds(first.cond, aliases, negated=True)), ""
        if len(items) == 1 and is_pure(first.cond):
            body = first.iftrue.block_items if isinstance(first.iftrue, c_ast.Compound) \
                else [first.iftrue]
            return KernelShape(prologue, first.cond, list(body or []),
                               guard_bounds(first.cond, aliases)), ""
    return KernelShape(prologue, None, items, {}), ""


def guarded(stmts: list[c_ast.Node], active: str) -> tuple[list[c_ast.Node], str]:
    """Statements made safe to run by every thread: pure declarations stay, other
    declarations are split (declared for all, assigned when active), everything else runs
    under ``if (active)``. Returns ('', why) style error text when a statement cannot be
    split (a return or break that would skip later barriers is not allowed here)."""
    out: list[c_ast.Node] = []
    pending: list[c_ast.Node] = []

    def flush() -> None:
        if pending:
            out.append(c_ast.If(c_ast.ID(active), c_ast.Compound(list(pending)), None))
            pending.clear()

    for stmt in stmts:
        if any(isinstance(n, (c_ast.Return, c_ast.Break, c_ast.Goto)) for n, _ in walk(stmt)):
            return [], "a return or break before the staged loop"
        if isinstance(stmt, c_ast.Decl):
            if isinstance(stmt.type, c_ast.ArrayDecl) or stmt.storage:
                return [], f"array or shared declaration '{stmt.name}' under the guard"
            if _is_pure_decl(stmt):
                flush()
                out.append(stmt)
                continue
            init, stmt.init = stmt.init, None
            flush()
            out.append(stmt)
            if init is not None:
                pending.append(c_ast.Assignment("=", c_ast.ID(stmt.name), init))
            continue
        pending.append(stmt)
    flush()
    return out, ""


def contains_barrier(node: c_ast.Node) -> bool:
    return any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
               n.name.name == "__syncthreads" for n, _ in walk(node))
