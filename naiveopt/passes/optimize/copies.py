"""Per-thread copies of kernel code, for transformations that make one thread do the work of
several (thread merge, vectorization across threads): each copy gets its own local names and
its own values of the merged thread ids."""
from __future__ import annotations

import copy

from pycparser import c_ast

from ...ir import GProcedure, PredefId
from ...ir.build import fresh
from ...ir.rewrite import map_nodes, walk


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
