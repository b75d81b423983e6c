"""The kernel of a plan, generated from scratch: here that of a tiled loop.

The plan's loop over k becomes a loop over k-tiles of T iterations: the block loads the tiles
of every staging cooperatively (loads.py), waits at a barrier, runs the loop body T times with
the staged reads served from the tiles, and waits again before the next tile is loaded:

    for (int k0 = lo; k0 < hi; k0 += T) {
        <tile loads>; __syncthreads();
        for (int kk = 0; kk < T && k0 + kk < hi; kk++) { const int k = k0 + kk; BODY }
        __syncthreads();
    }

A register-tiled plan (``peel``) runs the whole k-tiles first, their loads checked against
the thread space only and their tile loop of exactly T iterations (which nvcc unrolls), and
then the partial last tile, if any, as above.

With thread merge each thread runs one copy of the code per output (copies.py); the copies
share the tiles and, through registers, the values they read from them. Every thread must
reach the barriers, so the kernel's bounds guard is hoisted (passes/optimize/shape.py): it
becomes a flag per copy, the statements around the loop run under it, and the loop body only
where it touches memory (a copy whose body only touches registers and tiles may run for
inactive threads too, since tiles are zero-filled outside the bounds).
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....analysis.manager import AnalysisManager
from ....analysis.shape import ShapeAnalysis
from ....ir import GProcedure, PredefId
from ....ir.build import fresh, from_sympy, shared_array, statements
from ....ir.rewrite import identifiers, map_nodes, walk
from ....launch import relied_multiple
from ....targets import Target
from ..shape import guarded
from .copies import ThreadCopies, when_active
from .loads import TileLoad, pipeline_loads, staged, tile_loads
from .plan import VEC, Staging, TilingPlan, load_order, tile_dims, transposed, unit_width
from .window import WindowPlan, generate_window


def generate(plan: TilingPlan | WindowPlan, target: Target, am: AnalysisManager
             ) -> tuple[GProcedure | None, str]:
    """Build the kernel for ``plan`` (a new GProcedure), or (None, why it cannot): a tiled
    loop here, a stencil's windows by window.py. Every statement of the new kernel is built or
    copied anew: the plan's original kernel, whose shape ``am`` analyses, is never modified."""
    if isinstance(plan, WindowPlan):
        return generate_window(plan, target, am)
    original = plan.original
    lp = original.loops[plan.loop_index]
    shape, why = am.get(original, ShapeAnalysis)
    if shape is None or lp.node not in shape.body:
        return None, why or "the loop is not at the top level of the kernel or its guard"
    p = copy.deepcopy(original)
    by = plan.block[1]
    tile = plan.tile
    taken = p.names_taken()
    k = lp.iterator
    k0, kk, e, r, c = (fresh(taken, n) for n in (f"{k}0", f"{k}{k}", "e", "r", "c"))
    copies = ThreadCopies(plan.block, plan.merge, plan.group)
    # declarations a for loop scopes (its own copy in each merged copy is no collision)
    init = {id(d) for f, _ in walk(original.body) if isinstance(f, c_ast.For) and f.init
            is not None for d, _ in walk(f.init)}
    if copies.merged and any(isinstance(n, c_ast.Decl) and n.name == k and id(n) not in init
                             for n, _ in walk(original.body)):
        # each copy renames its locals but not the shared iterator: a second variable of
        # that name (``int k = ...`` kept for its value after a loop) would be declared once
        # per copy in the same scope (fuzz seed 20271126 case 1953: redefinition of 'k')
        return None, (f"the tiled loop's iterator name '{k}' is declared again elsewhere in "
                      "the kernel: its merged copies would collide")

    # tiles and their loads
    decls, loaders, tile_names = [], [], []
    first = "@tidy * %d + @tidx" % plan.block[0] if by > 1 else "@tidx"
    buffers = [plan.stages] if plan.stages > 1 else []
    for s in plan.stagings:
        name = fresh(taken, f"s_{s.array}")
        tile_names.append(name)
        decls.append(shared_array(name, s.elem_type, buffers + list(tile_dims(s, plan,
                                                                              target))))
        vector = fresh(taken, f"v_{s.array}") if unit_width(s, plan) > 1 else ""
        segment, interleave = load_order(s, plan, target)[:2] if s.kind != VEC else (0, None)
        loaders.append(TileLoad(s, name, plan, shape, lp, (k0, r, c, e, vector), first,
                                segment, interleave))

    # an asynchronous pipeline's loads, and the stage the loop body reads
    pipeline = pipeline_loads(loaders, plan, taken, k0, lp) if plan.stages > 1 else None
    stage = c_ast.ID(pipeline[4]) if pipeline else None

    # per-copy statements
    position = shape.body.index(lp.node)
    pre_all, body_all, post_all, prologue_all, actives = [], [], [], [], []
    for m_y, m_x in copies.each:
        memo: dict = {}
        body = copy.deepcopy(lp.node.stmt, memo)
        replace = {}
        for s, name in zip(plan.stagings, tile_names):
            read = _tile_read(s, name, copies, m_x, m_y, kk, stage)
            if transposed(s, plan):
                read = _flipped(read)
            for i in s.accesses:
                replace[id(memo[id(original.memory_expressions[i].node)])] = read
        body = map_nodes(body, lambda n: copy.deepcopy(replace[id(n)])
                         if id(n) in replace else n)
        pieces = [copy.deepcopy(shape.prologue), copy.deepcopy(shape.body[:position]), [body],
                  copy.deepcopy(shape.body[position + 1:])]
        pieces, active, flag = copies.instantiate(original, m_y, m_x, pieces, shape.guard,
                                                  taken, k)
        prologue, pre, (body,), post = pieces
        prologue_all += prologue + flag
        if plan.register_tiled:
            pre, sunk = _sink_past(pre, body, p)
            post = sunk + post
        if active:
            pre, problem = guarded(pre, active)
            if problem:
                return None, f"cannot hoist the guard: {problem}"
            if post:
                post = when_active(active, post)
        elif any(isinstance(n, (c_ast.Return, c_ast.Break, c_ast.Goto))
                 for stmt in pre for n, _ in walk(stmt)):
            # no guard the shape recognizes (a statement it does not take for a prologue
            # comes first: a local table), yet a thread may leave before the staged loop,
            # whose barriers every thread of the block must reach
            return None, "a return before the staged loop, outside a bounds guard the " \
                "pass recognizes"
        pre_all += pre
        post_all += post
        actives.append(active)
        body_all.append(body)

    decl = lp.node.init.decls[0]
    iter_type = decl.type.type.names[0] if isinstance(decl.type, c_ast.TypeDecl) else "int"
    uses_k = any(k in identifiers(b) for b in body_all)
    iterator = f"{iter_type} {k} = {k0} + {kk};" if uses_k else ""
    def inner_loop(whole: bool) -> list[c_ast.Node]:
        """The loop over one k-tile: bounded by the loop's end, or (``whole``) a whole tile
        of T iterations, which nvcc unrolls."""
        bound = "" if whole else f" && {k0} + {kk} < HI"
        header = f"for (int {kk} = 0; {kk} < {tile}{bound}; {kk}++) {{ {iterator} BODY; }}"
        bodies = copy.deepcopy(body_all)
        if copies.merged:
            # a copy whose body only touches registers and shared tiles may run for inactive
            # threads too (tiles are zero-filled outside the bounds); only its results are
            # guarded
            inner_body = [c_ast.If(c_ast.ID(a), b, None) if a and _touches_memory(b, p) else b
                          for a, b in zip(actives, bodies)]
            inner = statements(header, HI=copy.deepcopy(lp.upper),
                               BODY=c_ast.Compound(inner_body))
            # nvcc leaves a whole tile of a large merged body rolled unless told
            return [c_ast.Pragma("unroll")] + inner if whole else inner
        inner = statements(header, HI=copy.deepcopy(lp.upper), BODY=bodies[0])
        if actives[0] and _touches_memory(bodies[0], p):
            inner = when_active(actives[0], inner)
        return inner

    inner = inner_loop(False)
    head, first_tile = tile_loads(loaders, plan, taken, k0, lp)
    if pipeline:
        before, head, tail, after, _ = pipeline
        if plan.peel:       # a whole k-tile unrolls; the copies are range-checked anyway
            inner = statements(f"if ({k0} + {tile} <= HI) {{ WHOLE; }} else {{ PART; }}",
                               HI=copy.deepcopy(lp.upper),
                               WHOLE=c_ast.Compound(inner_loop(True)),
                               PART=c_ast.Compound(inner))
        staged = before + statements(
            f"for (int {k0} = LO; {k0} < HI; {k0} += {tile}) {{ HEAD; INNER; TAIL; }}",
            LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper),
            HEAD=c_ast.Compound(head), INNER=c_ast.Compound(inner),
            TAIL=c_ast.Compound(tail)) + after
    elif plan.peel and not plan.prefetch:
        # whole k-tiles first (loads checked against the thread space only, the tile loop
        # unrolled), then the partial last one as before
        full_loaders = [TileLoad(ld.s, ld.name, plan, shape, lp, ld.names, first, ld.segment,
                                 ld.interleave, full=True) for ld in loaders]
        full_head, _ = tile_loads(full_loaders, plan, taken, k0, lp)
        staged = [c_ast.Compound(statements(
            f"int {k0} = LO; for (; {k0} + {tile} <= HI; {k0} += {tile}) "
            f"{{ HEAD; INNER; __syncthreads(); }} "
            f"if ({k0} < HI) {{ TAIL_HEAD; TAIL; __syncthreads(); }}",
            LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper),
            HEAD=c_ast.Compound(full_head), INNER=c_ast.Compound(inner_loop(True)),
            TAIL_HEAD=c_ast.Compound(head), TAIL=c_ast.Compound(inner)))]
    else:
        staged = first_tile + statements(
            f"for (int {k0} = LO; {k0} < HI; {k0} += {tile}) "
            "{ HEAD; INNER; __syncthreads(); }",
            LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper),
            HEAD=c_ast.Compound(head), INNER=c_ast.Compound(inner))
    p.body.block_items = decls + prologue_all + pre_all + staged + post_all
    p.launch_block = plan.block
    p.coarsen = plan.merge
    p.launch_multiple = relied_multiple(p, plan.coverage, shape.guard is not None)
    return p, ""


def _flipped(ref: c_ast.ArrayRef) -> c_ast.ArrayRef:
    """``t[a][b]`` as ``t[b][a]``: the read of a tile stored transposed (plan.transposed)."""
    return c_ast.ArrayRef(c_ast.ArrayRef(ref.name.name, ref.subscript), ref.name.subscript)


def _tile_read(s: Staging, name: str, copies: ThreadCopies, m_x: int, m_y: int, kk: str,
               stage: c_ast.Node | None = None) -> c_ast.Node:
    """The tile element that replaces a read of ``s`` in copy (m_y, m_x) at iteration kk
    (of a pipeline's tiles, in the buffer of ``stage``)."""
    tile = staged(name, stage)
    if s.kind == VEC:
        return c_ast.ArrayRef(tile, c_ast.ID(kk))
    axis = s.thread_axis
    m = m_x if axis == "x" else m_y
    within = from_sympy(copies.within(axis, m))
    row, col = (within, c_ast.ID(kk)) if s.kind.startswith("row") else (c_ast.ID(kk), within)
    return c_ast.ArrayRef(c_ast.ArrayRef(tile, row), col)


def _sink_past(pre: list[c_ast.Node], body: c_ast.Node, p: GProcedure
               ) -> tuple[list[c_ast.Node], list[c_ast.Node]]:
    """``pre`` split into the statements that stay before the staged loop and those that can
    run after it instead: a register-tiled thread holds 64 accumulators across the loop, and
    a value computed before it and used only after it (gemm's ``r_c = c[i][j] * beta``) is
    64 more live registers (188 instead of 124).

    A statement moves when it shares no name with the loop body (the tile loads name only
    parameters, thread ids and their own locals), touches no array the body touches, calls
    nothing, and no statement staying after it uses or redefines a name it mentions."""
    loop_names = identifiers(body)
    arrays = {q.name for q in p.params if q.is_pointer}
    loop_arrays = loop_names & arrays
    kept: list[c_ast.Node] = []
    sunk: list[c_ast.Node] = []
    later: set[str] = set()             # names of the statements staying after this one
    for stmt in reversed(pre):
        names = identifiers(stmt)
        movable = not (names & loop_names) and not (names & later) and \
            not (names & arrays & loop_arrays) and not any(
                isinstance(n, (c_ast.FuncCall, c_ast.Return, c_ast.Break, c_ast.Goto))
                for n, _ in walk(stmt))
        if movable:
            sunk.insert(0, stmt)
        else:
            kept.insert(0, stmt)
            later |= names
    return kept, sunk


def _touches_memory(body: c_ast.Node, p: GProcedure) -> bool:
    """Whether a loop body reads or writes global memory or calls a function."""
    arrays = {q.name for q in p.params if q.is_pointer}
    for n, _ in walk(body):
        if isinstance(n, c_ast.FuncCall):
            return True
        if isinstance(n, c_ast.ArrayRef):
            base = n
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if isinstance(base, c_ast.ID) and base.name in arrays:
                return True
    return False
