"""One local per value: an integer local that straight-line code assigns again
(``int x = blockIdx.x * TILE + threadIdx.x; ... x = blockIdx.y * TILE + threadIdx.x;``, the
NVIDIA blog's transpose reusing x and y for its output) is a local per definition:
``int x_2 = blockIdx.y * TILE + threadIdx.x;`` and the reads after it read ``x_2``.

The analyses read an integer local defined once as a name for its value (a thread id, a
uniform, an offset); one defined twice they cannot read, and every index through it stays
opaque (verification cannot infer the extents it reaches, the passes cannot decompose it).

The rewrite is exact when every definition of the local is a statement of the block that
declares it (its declaration, then plain assignments ``x = e``: none inside a loop or a
branch, no ``x += e``, ``x++``, no address taken): each read then sees the latest definition
before it in that block, and renaming says so. Kernels with goto or switch are left alone.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.rewrite import walk
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import is_integer, is_plain_local, uses


class SplitLocals(CanonicalizationPass):
    name = "split-locals"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        if any(isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Switch))
               for n, _ in walk(proc.body)):
            return False
        taken = proc.names_taken()
        done = []
        for block in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Compound)]:
            for decl in [s for s in block.block_items or [] if isinstance(s, c_ast.Decl)]:
                names = _split(block, decl, uses(proc.body).get(id(decl), []), taken)
                if names:
                    done.append(f"{decl.name} -> {', '.join(names)}")
        if done:
            self.applied(proc, ctx, f"{len(done)} reassigned local(s) split, one per "
                         "definition: " + "; ".join(done))
        return bool(done)


def _split(block: c_ast.Compound, decl: c_ast.Decl, refs: list[c_ast.ID],
           taken: set[str]) -> list[str]:
    """Split ``decl``'s local in ``block`` (module docstring); the new names, or [] where it
    is defined once or otherwise than by statements of the block."""
    name = decl.name
    if decl.init is None or not is_plain_local(decl) or not is_integer(decl) or \
            "const" in decl.quals:
        return []
    items = block.block_items
    top = [i for i, s in enumerate(items) if isinstance(s, c_ast.Assignment) and s.op == "=" and
           isinstance(s.lvalue, c_ast.ID) and any(s.lvalue is r for r in refs)]
    if not top:
        return []
    defining = {id(items[i].lvalue) for i in top}
    for ref in refs:            # any other write: nested, compound, increment, address
        if id(ref) in defining:
            continue
        for node, parent in _parents_of(block, ref):
            if isinstance(parent, c_ast.Assignment) and parent.lvalue is node or \
                    isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++",
                                                                        "p--", "&"):
                return []
    names = []
    current = name
    start = items.index(decl) + 1
    bounds = top + [len(items)]
    for at, end in zip([None] + top, bounds):
        if at is not None:
            stmt = items[at]
            _rename(stmt.rvalue, refs, name, current)
            version = _fresh(name, taken)
            taken.add(version)
            new = copy.deepcopy(decl)
            new.name, new.init, new.coord = version, stmt.rvalue, stmt.coord
            t = new.type
            while not isinstance(t, c_ast.TypeDecl):
                t = t.type
            t.declname = version
            items[at] = new
            current = version
            names.append(version)
            start = at + 1
        for stmt in items[start:end]:
            _rename(stmt, refs, name, current)
    return names


def _parents_of(root: c_ast.Node, target: c_ast.Node):
    """(target, its parent) where ``target`` is under ``root``."""
    return [(n, p) for n, p in walk(root) if n is target]


def _rename(tree: c_ast.Node, refs: list[c_ast.ID], name: str, to: str) -> None:
    """Point the references of the local under ``tree`` to ``to``."""
    if to == name:
        return
    for node, _ in walk(tree):
        if isinstance(node, c_ast.ID) and any(node is r for r in refs):
            node.name = to


def _fresh(name: str, taken: set[str]) -> str:
    k = 2
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"
