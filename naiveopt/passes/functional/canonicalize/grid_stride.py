"""Grid-stride loops: ``for (int i = idx; i < n; i += blockDim.x * gridDim.x) body`` runs on
any launch, each thread taking every (total threads)-th element. Launched with n threads or
more, every thread takes one element at most: the loop is then ``int i = idx; if (i < n)
body``, the form (one output element per thread, a bounds guard) the optimization passes work
on, with thread space n.

That is the kernel's meaning only where it does not depend on the launch beyond the loop:

- the thread ids (and locals holding them, the stride among them) are read in the loop's
  header and nowhere else, so no thread does other work by its id (``partial[tid] = s``);
- the body carries nothing from one iteration to the next (it assigns only its own locals:
  no per-thread sum), and neither leaves the loop early nor synchronises;
- nothing but pure declarations comes before the loop and nothing after it;
- no pragma or metadata fixed another thread space (a launch of fewer threads than n is then
  the user's, and each thread must keep its share of elements).

Otherwise the loop is left as written and the pass says why; where the ids serve the loop
alone, the thread space is still n (the thread-space pass reads it: any launch is correct).

The rewritten kernel is correct only on a launch of n threads or more, and the user's launch
is often a fixed grid (``<<<32, 256>>>`` over a million elements). Where no optimization pass
changed the launch, :class:`RestoreGridStride` writes the loop back around the (possibly
transformed) body, so the output runs on any launch as the input did; where that form is
gone, it fixes the kernel's block, so the output's launcher gives its launch, the host code's
launches call it, and a stale launch traps instead of computing part of the elements.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from ....analysis.guards import id_aliases, is_id
from ....analysis.manager import PreservedAnalyses
from ....analysis.shape import is_pure, is_pure_decl
from ....ir import GProcedure, PredefId
from ....ir.cgen import to_c
from ....ir.rewrite import assigned_names, increment, walk
from ...manager import Pass, PassContext
from .base import CanonicalizationPass
from .locals import declarations, drop_unused, has_loop_jump, references


@dataclass
class GridStride:
    """A top-level grid-stride loop over the x thread space."""

    loop: c_ast.For
    position: int                # its index in the kernel body
    iterator: str
    start: c_ast.Node            # the global id (or a local holding it)
    stride: c_ast.Node
    bound: c_ast.Node
    why_not_sole_user: str       # '' where the loop's header alone reads the thread ids
    helpers: frozenset[str]      # locals holding the id or the stride that the header reads


class GridStrideLoops(CanonicalizationPass):
    name = "grid-stride"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        gs, why = find_grid_stride(proc)
        if gs is None:
            return False
        header = f"grid-stride loop over {gs.iterator} < {to_c(gs.bound)} (step " \
                 f"{to_c(gs.stride)})"
        why = gs.why_not_sole_user or _obstacle(proc, gs)
        if why:
            self.missed(proc, ctx, f"{header} kept: {why}")
            return False
        loop = gs.loop
        if isinstance(loop.init, c_ast.DeclList):
            first: c_ast.Node = loop.init.decls[0]
        else:
            first = loop.init
        guard = c_ast.If(loop.cond, loop.stmt, None, loop.coord)
        proc.body.block_items[gs.position:gs.position + 1] = [first, guard]
        if proc.pragma.global_dim == (None, None):
            proc.pragma.global_dim = (to_c(gs.bound), "1")
            proc.pragma.global_dim_source = "grid-stride"
        dropped = drop_unused(proc.body, set(gs.helpers))
        proc.grid_stride = (gs.iterator, to_c(loop.cond))
        self.applied(proc, ctx, f"{header} made one element per thread (if ({to_c(loop.cond)})"
                     f"): thread space ({to_c(gs.bound)}, 1)" + (
                         f"; {', '.join(dropped)} no longer read: declaration removed"
                         if dropped else ""))
        return True


def find_grid_stride(proc: GProcedure) -> tuple[GridStride | None, str]:
    """The kernel's top-level grid-stride loop over x, or (None, '')."""
    items = proc.body.block_items or []
    aliases = id_aliases(proc)
    counts = assigned_names(proc.body)
    strides = {n.name for n, _ in walk(proc.body) if isinstance(n, c_ast.Decl) and
               n.init is not None and counts.get(n.name) == 1 and _is_stride(n.init, set())}
    for position, stmt in enumerate(items):
        if not isinstance(stmt, c_ast.For):
            continue
        it, start = _init(stmt.init)
        if it is None or not (is_id(start, "idx") or (isinstance(start, c_ast.ID) and
                                                       aliases.get(start.name) == "idx")):
            continue
        bound = _bound(stmt.cond, it)
        stride = increment(stmt.next, it)
        if bound is None or stride is None or not _is_stride(stride, strides):
            continue
        helpers = frozenset(n.name for part in (start, stride) for n, _ in walk(part)
                            if isinstance(n, c_ast.ID))
        gs = GridStride(stmt, position, it, start, stride, bound, "", helpers)
        gs.why_not_sole_user = _other_id_uses(proc, gs)
        return gs, ""
    return None, ""


def _init(init: c_ast.Node | None) -> tuple[str | None, c_ast.Node | None]:
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init:
        return init.decls[0].name, init.decls[0].init
    if isinstance(init, c_ast.Assignment) and init.op == "=" and \
            isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name, init.rvalue
    return None, None


def _bound(cond: c_ast.Node | None, it: str) -> c_ast.Node | None:
    if not isinstance(cond, c_ast.BinaryOp):
        return None
    if cond.op == "<" and isinstance(cond.left, c_ast.ID) and cond.left.name == it:
        return cond.right
    if cond.op == ">" and isinstance(cond.right, c_ast.ID) and cond.right.name == it:
        return cond.left
    return None


def _is_stride(node: c_ast.Node, strides: set[str]) -> bool:
    """blockDim.x * gridDim.x in either order (through casts), or a local defined once as
    that."""
    while isinstance(node, c_ast.Cast):
        node = node.expr
    if isinstance(node, c_ast.ID):
        return node.name in strides
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "*"):
        return False
    return any(is_id(a, "blockDimX") and is_id(b, "gridDimX")
               for a, b in ((node.left, node.right), (node.right, node.left)))


def _other_id_uses(proc: GProcedure, gs: GridStride) -> str:
    """Why the thread ids matter outside the loop's header ('' where they do not)."""
    allowed: set[int] = set()
    for part in (gs.start, gs.stride):
        allowed |= {id(n) for n, _ in walk(part)}
    decls = declarations(proc.body)
    for name in gs.helpers:
        for d in decls.get(name, []):
            if d.init is not None:
                allowed |= {id(n) for n, _ in walk(d.init)}
    for n, _ in walk(proc.body):
        if isinstance(n, PredefId) and id(n) not in allowed:
            return f"the kernel reads the thread id {n.name} outside the loop's header (its " \
                   "work depends on the launch)"
    for name in gs.helpers:
        if any(id(r) not in allowed for r in references(proc.body, name)):
            return f"the kernel reads {name} outside the loop's header (its work depends on " \
                   "the launch)"
    return ""


def _obstacle(proc: GProcedure, gs: GridStride) -> str:
    """Why the loop may not become one element per thread ('' where it may)."""
    space = proc.pragma.global_dim
    if space != (None, None) and (space[0] != to_c(gs.bound) or space[1] not in (None, "1")):
        return f"the {proc.pragma.global_dim_source or 'given'} thread space ({space[0]}, " \
               f"{space[1]}) is not the loop's bound: each thread keeps its share of elements"
    items = proc.body.block_items or []
    if gs.position != len(items) - 1:
        return "statements follow the loop"
    for stmt in items[:gs.position]:
        if not (is_pure_decl(stmt) or (isinstance(stmt, c_ast.Assignment) and
                                       stmt.op == "=" and isinstance(stmt.lvalue, c_ast.ID)
                                       and is_pure(stmt.rvalue))):
            return "a statement before the loop is more than a pure declaration"
    body = gs.loop.stmt
    if has_loop_jump(body, c_ast.Break) or has_loop_jump(body, c_ast.Continue) or any(
            isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)) for n, _ in walk(body)):
        return "the body leaves the loop early (break, continue, return or goto)"
    if any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
           n.name.name in ("__syncthreads", "__threadfence") for n, _ in walk(body)):
        return "the body synchronises"
    own = set(declarations(body))
    carried = sorted(set(assigned_names(body)) - own)
    if carried:
        return f"the body carries {', '.join(carried)} from one iteration to the next"
    if not is_pure(gs.bound):
        return "the bound reads memory"
    if isinstance(gs.loop.init, c_ast.DeclList) and any(
            isinstance(s, c_ast.Decl) and s.name == gs.iterator for s in items):
        return f"the kernel declares another {gs.iterator} where the loop's would go"
    if isinstance(gs.loop.init, c_ast.Assignment):
        outside = [r for r in references(proc.body, gs.iterator)
                   if not any(r is n for n, _ in walk(gs.loop))]
        if outside:
            return f"{gs.iterator} is used outside the loop"
    return ""


class RestoreGridStride(Pass):
    """After the optimization passes: a kernel whose grid-stride loop became one element per
    thread, and whose launch no pass changed, gets its loop back (module docstring)."""

    name = "restore-grid-stride"

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses:
        from ....launch import launch_changed

        if proc.grid_stride is None:
            return PreservedAnalyses.all()
        iterator, cond = proc.grid_stride
        if launch_changed(proc):
            if proc.launch_block is None:
                # merged outputs on the naive block: fixed, so that the launch check traps
                # a stale fixed grid (which would leave elements out) as for any new block
                self._fix_block(proc, ctx, f"the loop over {iterator} is one element per "
                                "thread, and a pass merged outputs into its threads")
            return PreservedAnalyses.all()
        items = proc.body.block_items or []
        at = next((k for k in range(len(items) - 1)
                   if _sets(items[k], iterator) and isinstance(items[k + 1], c_ast.If)
                   and items[k + 1].iffalse is None and
                   _split_guard(items[k + 1].cond, cond) is not None), None)
        if at is None or at + 2 != len(items):
            self._fix_block(proc, ctx, f"the loop over {iterator} stays one element per "
                            "thread (its form changed)")
            return PreservedAnalyses.all()
        first, guard = items[at], items[at + 1]
        test, rest = _split_guard(guard.cond, cond)
        body = guard.iftrue if rest is None else c_ast.Compound([c_ast.If(rest, guard.iftrue,
                                                                          None)])
        init = c_ast.DeclList([first]) if isinstance(first, c_ast.Decl) else first
        step = c_ast.Assignment("+=", c_ast.ID(iterator), c_ast.BinaryOp(
            "*", PredefId("blockDimX"), PredefId("gridDimX")))
        items[at:at + 2] = [c_ast.For(init, test, step, body, guard.coord)]
        ctx.am.tree_changed(proc)
        ctx.remark("analysis", self.name, proc, f"written back as the grid-stride loop over "
                   f"{iterator} (no pass changed the launch): the output runs on any launch, "
                   "as the input did")
        return PreservedAnalyses.none()


    def _fix_block(self, proc: GProcedure, ctx: PassContext, why: str) -> None:
        """Fix the naive block as the output's: its launcher then gives the grid of n threads,
        the host code's launches call it, and a stale launch (a fixed grid, as grid-stride
        kernels are launched) traps."""
        from ....launch import default_block

        proc.launch_block = default_block(proc)
        ctx.remark("analysis", self.name, proc, f"{why}: its block is fixed at "
                   f"{proc.launch_block[0]}x{proc.launch_block[1]}, so that its launcher gives "
                   "the grid and a stale launch (a fixed grid, as grid-stride kernels are "
                   "launched) traps")


def _sets(stmt: c_ast.Node, name: str) -> bool:
    return (isinstance(stmt, c_ast.Decl) and stmt.name == name and stmt.init is not None) or \
        (isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and
         isinstance(stmt.lvalue, c_ast.ID) and stmt.lvalue.name == name)


def _split_guard(cond: c_ast.Node, loop_cond: str
                 ) -> tuple[c_ast.Node, c_ast.Node | None] | None:
    """The guard ``cond`` as (the loop's condition, what else it tests or None), where the
    loop's is the guard or its first conjunct (merge-guards joined a test of the body's to
    it); None otherwise."""
    if to_c(cond) == loop_cond:
        return cond, None
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        head = _split_guard(cond.left, loop_cond)
        if head is not None:
            test, rest = head
            return test, cond.right if rest is None else c_ast.BinaryOp("&&", rest,
                                                                          cond.right)
    return None
