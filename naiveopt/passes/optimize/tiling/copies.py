"""Thread-merge copies: one thread doing the work of several.

Thread merge makes each thread compute MX x MY outputs, so that a value it loads (from a
shared tile or window) serves all of them from a register. The kernel's code is copied once
per output; copy (my, mx) of thread (tx, ty) in block (bx, by) takes the ids

    idx = bx*BX*MX + mx*BX + tx        idy = by*BY*MY + my*BY + ty

so that neighbouring threads keep neighbouring outputs (their accesses stay coalesced) and
each block covers BX*MX x BY*MY outputs. A register-tiled plan (``group`` G > 1) instead
gives each thread runs of G adjacent outputs, G*BX apart:

    idx = bx*BX*MX + (mx / G)*BX*G + tx*G + mx % G

so that the values a thread reads for its copies from a tile row are adjacent: nvcc loads
each run with one 128-bit shared load (LDS.128) instead of G scalar ones, which is what lets
an 8x8 micro-tile issue 4 shared loads per 64 FMAs (the register tiling of cuBLAS-class
SGEMM; the global writes of a run are G words apart per lane, written once per output).

Each copy gets its own local variables (renamed with the copy's suffix) and, where the
kernel has a bounds guard, its own flag ``active_my_mx``, computed for every thread before
the first barrier so that inactive threads still reach it.

Both staging engines' plans (generation.py for tiled loops, window.py for neighbourhood
windows) make their copies here; the vectorize pass merges lanes across threads with the
same renaming (:func:`local_names`, :func:`rewrite_copy`).
"""
from __future__ import annotations

import copy
import itertools

import sympy
from pycparser import c_ast

from ....ir import GProcedure, PredefId
from ....ir.build import fresh, from_sympy, statements
from ....ir.rewrite import map_nodes, walk
from .plan import SYM


def local_names(p: GProcedure, iterator: str, suffix: str, taken: set[str]) -> dict[str, str]:
    """New names for every local variable of the kernel in one thread-merge copy."""
    params = {q.name for q in p.params}
    names = {}
    for n, _ in walk(p.body):
        if isinstance(n, c_ast.Decl) and n.name and n.name not in params and \
                n.name != iterator and n.name not in names:
            names[n.name] = fresh(taken, n.name + suffix)
    return names


def rewrite_copy(node: c_ast.Node, subst: dict[str, c_ast.Node], renames: dict[str, str]
             ) -> c_ast.Node:
    """Substitute merged ids and rename locals in a (copied) subtree (not member names:
    ``v.x`` keeps its ``x`` when a local ``x`` is renamed)."""
    members = {id(n.field) for n, _ in walk(node) if isinstance(n, c_ast.StructRef)}

    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, PredefId) and n.name in subst:
            return copy.deepcopy(subst[n.name])
        if isinstance(n, c_ast.ID) and n.name in renames and id(n) not in members:
            n.name = renames[n.name]
        elif isinstance(n, c_ast.Decl) and n.name in renames:
            n.name = renames[n.name]
            t = n.type
            while not isinstance(t, c_ast.TypeDecl):
                t = t.type
            t.declname = n.name
        return n

    return map_nodes(node, fn)


def when_active(active: str, stmts: list[c_ast.Node]) -> list[c_ast.Node]:
    """``if (active) { stmts }``: what only the copy's active threads may run."""
    return [c_ast.If(c_ast.ID(active), c_ast.Compound(stmts), None)]


class ThreadCopies:
    """The copies a thread runs for blocks of ``block`` threads merged by ``merge`` = (MX, MY):
    ``each`` lists them as (my, mx), y-major; with one copy (merge 1x1) the code keeps its
    names and ids."""

    def __init__(self, block: tuple[int, int], merge: tuple[int, int], group: int = 1
                 ) -> None:
        self.block, self.merge, self.group = block, merge, group
        self.each = list(itertools.product(range(merge[1]), range(merge[0])))
        self.merged = len(self.each) > 1

    def run(self, axis: str) -> int:
        """Adjacent outputs per run along ``axis``: the group where it divides the axis's
        merge factor, else 1 (block-cyclic copies)."""
        factor = self.merge[0 if axis == "x" else 1]
        return self.group if self.group > 1 and factor % self.group == 0 else 1

    def within(self, axis: str, m: int) -> sympy.Expr:
        """The position along ``axis`` ('x' or 'y') of copy ``m``'s output in the block's
        coverage: ``m*BX + tidx`` (``m*BY + tidy``), or in runs of ``group`` adjacent
        outputs ``(m/G)*BX*G + tidx*G + m%G``."""
        size = self.block[0] if axis == "x" else self.block[1]
        tid = SYM["tidx" if axis == "x" else "tidy"]
        g = self.run(axis)
        if g > 1:
            return (m // g) * size * g + tid * g + m % g
        return m * size + tid

    def ids(self, m_y: int, m_x: int) -> dict[str, c_ast.Node]:
        """idx and idy of copy (m_y, m_x), as C expressions."""
        out = {}
        for axis, m, gid, bid, size, factor in (("x", m_x, "idx", "bidx", self.block[0],
                                                 self.merge[0]),
                                                ("y", m_y, "idy", "bidy", self.block[1],
                                                 self.merge[1])):
            out[gid] = PredefId(gid) if factor == 1 else \
                from_sympy(SYM[bid] * size * factor + self.within(axis, m))
        return out

    def instantiate(self, p: GProcedure, m_y: int, m_x: int, pieces: list[list[c_ast.Node]],
                    guard: c_ast.Node | None, taken: set[str], iterator: str = ""
                    ) -> tuple[list[list[c_ast.Node]], str | None, list[c_ast.Node]]:
        """Copy (m_y, m_x) of ``pieces`` (lists of statements of kernel ``p``, already copied
        for it) and of the kernel's ``guard``: its ids substituted and its locals renamed
        (except ``iterator``, which the caller declares itself). Returns the pieces, the name
        of the copy's active flag and the flag's declaration (None and [] when unguarded)."""
        guard = copy.deepcopy(guard)
        suffix = f"_{m_y}_{m_x}" if self.merged else ""
        if self.merged:
            subst = self.ids(m_y, m_x)
            renames = local_names(p, iterator, suffix, taken)
            pieces = [[rewrite_copy(st, subst, renames) for st in piece] for piece in pieces]
            guard = rewrite_copy(guard, subst, renames) if guard is not None else None
        if guard is None:
            return pieces, None, []
        active = fresh(taken, f"active{suffix}")
        return pieces, active, statements(f"const int {active} = COND;", COND=guard)
