"""Making a naive kernel's bounds guard barrier-safe (its shape: analysis/shape.py).

Staging through shared memory puts ``__syncthreads()`` into a loop, and every thread of a block
must reach it. Naive kernels guard their work (``if (i < n) { ... }`` or
``if (i >= n) return;``), so the threads of the last block that fail the guard would skip the
barrier. :func:`guarded` rewrites the kernel's statements so that every thread runs the staged
loop and only the work of active threads stays guarded:

    const int active = <guard>;
    <pure declarations>            // for all threads
    if (active) { <side effects> } // guarded, split around the loop
    <staged loop>                  // barriers reached by all threads; its body tests 'active'
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.shape import is_pure_decl
from ...ir import GLoop, GProcedure, MemoryExpression
from ...ir.rewrite import walk


def enclosing_loop(proc: GProcedure, m: MemoryExpression, iterator: str) -> GLoop | None:
    """The loop over ``iterator`` that encloses the access ``m``. A kernel may reuse an
    iterator name in sibling loops (``for (int k ...)`` twice), so the name alone does not
    say which loop an access is in."""
    return next((lp for lp in proc.loops if lp.iterator == iterator and
                 any(x is m for x in lp.memory_expressions)), None)


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
            if is_pure_decl(stmt):
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
