"""Register promotion of loop-invariant accesses (PPCG's register tiling; paper 003, sect. 4).

PolyBench-style naive kernels accumulate straight into global memory:

    tmp[i] = 0;
    for (int j = 0; j < n; j++)
        tmp[i] += A[i * n + j] * x[j];        // a load and a store of tmp[i] per iteration

The address of ``tmp[i]`` does not change in the loop, so the value can live in a register:
one load before the loop, one store after it. The pass does this for every such access.

Preconditions, each checked, else a remark says which failed: the access sits directly in the
loop body (not under a condition or in a nested loop); every access to that array in the loop
uses the same index; the index depends on the thread (each thread its own element) and on
nothing the loop changes; the kernel has no barriers (no other thread may read the element
during the loop). Other arrays are assumed not to alias it, as with ``__restrict__``. The load
and store are guarded by the loop's trip condition, so a loop that runs zero times touches
nothing, as before.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import is_pure
from ...ir import GLoop, GProcedure, MemoryExpression
from ...ir.build import fresh, statements
from ...ir.elements import element
from ...ir.rewrite import assigned_names, identifiers, map_nodes, walk
from ..manager import OptimizationPass, PassContext, reanalyse
from .shape import contains_barrier


class RegisterPromotion(OptimizationPass):
    name = "register-promotion"
    lane_safe = True
    requires = ("memory-expressions",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if contains_barrier(proc.body):
            ctx.remark("missed", self.name, proc, "kernel has barriers: other threads may "
                       "read promoted elements during the loop")
            return PreservedAnalyses.all()
        missed: dict[str, None] = {}
        promoted = False
        changed = True
        while changed:          # one promotion at a time, then the analyses are redone
            changed = False
            for loop in [lp for lp in proc.loops if lp.canonical]:
                for group in self._groups(proc, loop).values():
                    why = self._obstacle(proc, loop, group)
                    if why:
                        missed[f"{group[0].describe()} in loop {loop.iterator}: not "
                               f"promoted: {why}"] = None
                        continue
                    name = self._promote(proc, loop, group)
                    ctx.remark("applied", self.name, proc, f"{group[0].describe()}: the same "
                               f"element in every iteration of loop {loop.iterator}: kept in "
                               f"register {name} (one load before and one store after the "
                               "loop instead of an access per iteration)")
                    changed = promoted = True
                    break
                if changed:
                    break
            if changed:
                reanalyse(proc, ctx)
        for message in missed:
            ctx.remark("missed", self.name, proc, message)
        if not promoted and not missed:
            ctx.remark("missed", self.name, proc, "no loop accesses the same global element "
                       "in every iteration")
        return None if promoted else PreservedAnalyses.all()

    @staticmethod
    def _groups(proc: GProcedure, loop: GLoop) -> dict[str, list[MemoryExpression]]:
        """Global accesses in the loop whose index does not involve the loop's iterator."""
        groups: dict[str, list[MemoryExpression]] = {}
        candidates = set()
        for m in loop.memory_expressions:
            if m.space != "global":
                continue
            groups.setdefault(m.array, []).append(m)
            if m.decomposition.resolved and loop.iterator not in m.decomposition.loop and \
                    not set(m.decomposition.loop) & _inner_iterators(proc, loop):
                candidates.add(m.array)
        return {a: g for a, g in groups.items() if a in candidates}

    @staticmethod
    def _obstacle(proc: GProcedure, loop: GLoop, group: list[MemoryExpression]) -> str:
        first = group[0]
        param = proc.param(first.array)
        if param is not None and element(param.base_type) is None:
            # a float3 element (its components read): the register would be a vector
            return f"its elements are {param.base_type} vectors, not scalars"
        if any(m.index != first.index for m in group):
            return "the loop also accesses the array at another index"
        if not first.decomposition.predefined:
            return "every thread would share the element (the index has no thread id)"
        body = loop.node.stmt.block_items if isinstance(loop.node.stmt, c_ast.Compound) \
            else [loop.node.stmt]
        direct = {id(n) for stmt in body if not isinstance(stmt, (c_ast.If, c_ast.For,
                                                                 c_ast.While, c_ast.DoWhile))
                  for n, _ in walk(stmt)}
        if any(id(m.node) not in direct for m in group):
            return "an access is conditional or in a nested loop"
        declared = {n.name for n, _ in walk(loop.node.stmt) if isinstance(n, c_ast.Decl)}
        assigned = set(assigned_names(loop.node.stmt)) | {loop.iterator}
        used = identifiers(first.node.subscript)
        for bound in (loop.lower, loop.upper):
            used |= identifiers(bound)
            if not is_pure(bound):
                return "the loop bounds read memory"
        if used & (declared | assigned):
            return "the index or the bounds change in the loop"
        return ""

    @staticmethod
    def _promote(proc: GProcedure, loop: GLoop, group: list[MemoryExpression]) -> str:
        _ensure_block(proc, loop.node)
        first = group[0]
        reg = fresh(proc.names_taken(), f"r_{first.array}")
        elem = proc.param(first.array).base_type
        ids = {id(m.node) for m in group}
        map_nodes(loop.node.stmt, lambda n: c_ast.ID(reg) if id(n) in ids else n)
        block = _parent_block(proc, loop.node)
        holes = {"LO": copy.deepcopy(loop.lower), "HI": copy.deepcopy(loop.upper),
                 "ELEM": copy.deepcopy(first.node)}
        # the element is safe to touch even if the loop runs zero times when the block
        # already touches it unconditionally before the loop (tmp[i] = 0; for ...)
        trip = "" if _touched_before(proc, block, loop.node, first) else "if (LO < HI) "
        before = statements(f"{elem} {reg} = 0; {trip}{reg} = ELEM;", **holes)
        if not any(m.is_read for m in group):
            before = statements(f"{elem} {reg} = 0;")
        after = statements(f"{trip}ELEM = {reg};", **{k: copy.deepcopy(v) for k, v in
                                                     holes.items()}) \
            if any(m.is_write for m in group) else []
        position = next(i for i, s in enumerate(block.block_items) if s is loop.node)
        block.block_items[position:position + 1] = before + [loop.node] + after
        return reg


def _touched_before(proc: GProcedure, block: c_ast.Compound, loop_node: c_ast.Node,
                    m: MemoryExpression) -> bool:
    """Whether a statement of ``block`` before the loop accesses m's element unconditionally."""
    position = next(i for i, st in enumerate(block.block_items) if st is loop_node)
    direct = {id(n) for st in block.block_items[:position]
              if not isinstance(st, (c_ast.If, c_ast.For, c_ast.While, c_ast.DoWhile))
              for n, _ in walk(st)}
    return any(o.array == m.array and o.index == m.index and id(o.node) in direct
               for o in proc.memory_expressions)


def _inner_iterators(proc: GProcedure, loop: GLoop) -> set[str]:
    inner = {id(n) for n, _ in walk(loop.node.stmt)}
    return {lp.iterator for lp in proc.loops if id(lp.node) in inner and lp.iterator}


def _parent_block(proc: GProcedure, node: c_ast.Node) -> c_ast.Compound | None:
    for n, parent in walk(proc.body):
        if n is node:
            return parent if isinstance(parent, c_ast.Compound) else None
    return None


def _ensure_block(proc: GProcedure, node: c_ast.Node) -> None:
    """Make ``node`` a statement of a block: a loop that is the brace-less body of another
    statement (``for (h...) for (j...) ...``) is wrapped in braces."""
    for n, parent in walk(proc.body):
        if n is node and not isinstance(parent, c_ast.Compound):
            for slot in ("stmt", "iftrue", "iffalse"):
                if getattr(parent, slot, None) is node:
                    setattr(parent, slot, c_ast.Compound([node]))
                    return

