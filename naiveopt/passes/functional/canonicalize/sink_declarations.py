"""Declarations at first definition: C89 code declares its locals at the top of a block and
assigns them later (``int i; ... i = blockIdx.x * blockDim.x + threadIdx.x;``). The analyses
read an integer local defined once by its declaration as a name for its value in indices,
bounds and guards (a thread id, a uniform); so the declaration moves to where the value is
first assigned: ``int i = idx;``. Other locals (``float acc; ... acc = 0;``) stay as written:
no analysis reads their values.

It moves into the innermost block that holds every use of the local, whose first statement to
touch the local is that assignment (not reading the local): in each run of that block the
value is then written before anything reads it, and nothing outside the block reads it, so no
value flows from one run of the block to the next or out of it. Kernels with goto or switch
are left alone.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.cgen import to_c
from ....ir.rewrite import walk
from ...manager import PassContext
from .base import CanonicalizationPass
from .locals import is_integer, is_plain_local, mentions, parents, uses


class SinkDeclarations(CanonicalizationPass):
    name = "sink-declarations"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        if any(isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Switch))
               for n, _ in walk(proc.body)):
            return False
        moved = []
        while True:
            found = _next_move(proc)
            if found is None:
                break
            decl, home, target, index = found
            assignment = target.block_items[index]
            new = copy.deepcopy(decl)
            new.init = assignment.rvalue
            new.coord = assignment.coord
            target.block_items[index] = new
            home.block_items = [s for s in home.block_items if s is not decl]
            moved.append(to_c(new).strip())
        if moved:
            self.applied(proc, ctx, f"{len(moved)} local(s) declared where first assigned: "
                         + "; ".join(moved))
        return bool(moved)


def _next_move(proc: GProcedure) -> tuple[c_ast.Decl, c_ast.Compound, c_ast.Compound, int] | None:
    """A declaration to move: (the declaration, its block, the block it moves to, the index
    there of the assignment it replaces)."""
    up = parents(proc.body)
    named = uses(proc.body)
    for decl in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Decl) and n.name]:
        name = decl.name
        home = up.get(id(decl))
        if decl.init is not None or not is_plain_local(decl) or not is_integer(decl) or \
                "const" in decl.quals or not isinstance(home, c_ast.Compound):
            continue
        refs = named.get(id(decl), [])
        if not refs:
            continue
        chains = [_compounds_above(r, up) for r in refs]
        common = [c for c in chains[0] if all(any(c is x for x in ch) for ch in chains[1:])]
        if not common:
            continue
        target = common[0]                       # the innermost block holding every use
        if not _inside(target, home, up) or any(
                isinstance(s, c_ast.Decl) and s.name == name and s is not decl
                for s in target.block_items or []):
            continue
        for index, stmt in enumerate(target.block_items or []):
            if any(r is n for r in refs for n, _ in walk(stmt)):
                if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and \
                        isinstance(stmt.lvalue, c_ast.ID) and stmt.lvalue.name == name and \
                        not mentions(stmt.rvalue, name):
                    return decl, home, target, index
                break
    return None


def _compounds_above(node: c_ast.Node, up: dict[int, c_ast.Node]) -> list[c_ast.Compound]:
    """The compounds enclosing ``node``, innermost first."""
    out = []
    n = up.get(id(node))
    while n is not None:
        if isinstance(n, c_ast.Compound):
            out.append(n)
        n = up.get(id(n))
    return out


def _inside(node: c_ast.Node, ancestor: c_ast.Node, up: dict[int, c_ast.Node]) -> bool:
    n = node
    while n is not None:
        if n is ancestor:
            return True
        n = up.get(id(n))
    return False
