"""The tiling engine shared by coalescing, thread-block merge and thread merge.

Those three passes decide *what* to do to a kernel's main loop; this module does it. A
:class:`TilingPlan` keeps the analysed kernel as it was before any staging, the loop to tile,
the accesses to stage through shared memory, the block shape, the tile width along the loop and
the thread-merge factors; :func:`generate` builds the kernel for a plan from scratch. Passes
refine the plan (loopy-style: transformations are functions of a kernel) and regenerate, so
their effects compose instead of rewriting each other's output.

An access is staged when it is one of four shapes relative to the loop iterator k (c, c' are
thread- and loop-invariant):

    row_x  A(idx + c, k + c')   the same for all threads in y   tile [BX*MX][T + pad]
    row_y  A(idy + c, k + c')   the same for all threads in x   tile [BY*MY][T + pad]
    col_x  A(k + c, idx + c')   the same for all threads in y   tile [T][BX*MX]
    col_y  A(k + c, idy + c')   the same for all threads in x   tile [T][BY*MY + pad]
    vec    A[k + c]             the same for all threads         tile [T]

Each k-tile is loaded by all threads of the block with consecutive threads on consecutive
addresses (coalesced), behind a barrier; the loop body then reads the tile. Thread merge makes
each thread compute MX x MY outputs: thread (tx, ty) of block (bx, by) takes the ids
``idx = bx*BX*MX + mx*BX + tx`` and ``idy = by*BY*MY + my*BY + ty`` for every (mx, my), so
neighbouring threads keep neighbouring addresses and the copies share staged values through
registers. Bounds guards are hoisted (shape.py) so that every thread reaches the barriers.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field

import sympy
from pycparser import c_ast

from ...ir import GLoop, GProcedure, MemoryExpression, PredefId
from ...ir.build import from_sympy, statements
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.symbolic import decompose, to_sympy
from ...targets import Target
from .banks import tile_pad
from .copies import local_names, rewrite_copy
from .shape import KernelShape, guarded, kernel_shape
from .staging import fresh, shared_array

SYM = {n: sympy.Symbol(n, integer=True) for n in ("idx", "idy", "tidx", "tidy", "bidx",
                                                   "bidy")}
THREAD_IDS = ("idx", "idy", "tidx", "tidy", "bidx", "bidy")
KINDS = ("row_x", "row_y", "col_x", "col_y")
VEC = "vec"


@dataclass
class Staging:
    """One shared tile and the accesses it serves."""

    array: str
    kind: str
    y: sympy.Expr
    x: sympy.Expr
    width: sympy.Expr
    elem_type: str
    accesses: list[int] = field(default_factory=list)   # indices into memory_expressions

    @property
    def thread_axis(self) -> str:
        return self.kind[-1]            # 'x' or 'y' ('c' for vec: no thread axis)

    def describe(self) -> str:
        if self.kind == VEC:
            return f"{self.array}[{self.x}]"
        return f"{self.array}({self.y}, {self.x})"


@dataclass
class TilingPlan:
    original: GProcedure          # the analysed kernel before staging (never modified)
    loop_index: int
    stagings: list[Staging]
    block: tuple[int, int]
    tile: int
    merge: tuple[int, int] = (1, 1)

    @property
    def coverage(self) -> tuple[int, int]:
        return self.block[0] * self.merge[0], self.block[1] * self.merge[1]


def classify(m: MemoryExpression, loop: GLoop, env) -> tuple[str | None, str]:
    """The staging kind of an access in ``loop``, or (None, why not)."""
    if m.loops != [loop.iterator]:
        return None, "not directly in the tiled loop"
    d = m.decomposition
    if d.resolved and not d.predefined and d.loop == {loop.iterator: 1}:
        return VEC, ""
    if m.two_d is None:
        return None, "no 2-D form"
    dy, dx = decompose(m.two_d[0], env), decompose(m.two_d[1], env)
    if not (dy.resolved and dx.resolved):
        return None, "unresolved index"
    k = loop.iterator
    for kind in KINDS:
        thread = "idx" if kind.endswith("x") else "idy"
        along_k, along_t = (dx, dy) if kind.startswith("row") else (dy, dx)
        if along_t.predefined == {thread: 1} and not along_t.loop and \
                not along_k.predefined and along_k.loop == {k: 1}:
            return kind, ""
    return None, f"not of the form A(id + c, {k} + c) or A({k} + c, id + c)"


def loop_obstacle(loop: GLoop, env) -> str:
    """Why ``loop`` cannot be tiled (empty if it can)."""
    if not loop.canonical or loop.step != 1 or loop.depth != 0:
        return "not a canonical top-level loop with step 1"
    if not isinstance(loop.node.init, c_ast.DeclList):
        return f"the loop does not declare its iterator {loop.iterator}"
    if any(isinstance(n, (c_ast.Break, c_ast.Return, c_ast.Goto))
           for n, _ in walk(loop.node.stmt)):
        return "the loop body has break/return"
    for bound in (loop.lower, loop.upper):
        value = to_sympy(bound, env)
        if any(s.name in env.loops or s.name in THREAD_IDS for s in value.free_symbols) or \
                not decompose(value, env).resolved:
            return "loop bounds differ between threads"
    return ""


def uses_raw_thread_ids(proc: GProcedure) -> bool:
    """Whether the kernel uses thread ids other than idx/idy (thread merge changes those)."""
    return any(isinstance(n, PredefId) and n.name not in ("idx", "idy")
               for n, _ in walk(proc.body))


# --------------------------------------------------------------------------- generation
def generate(plan: TilingPlan, target: Target) -> tuple[GProcedure | None, str]:
    """Build the kernel for ``plan`` (a new GProcedure), or (None, why it cannot)."""
    p = copy.deepcopy(plan.original)
    lp = p.loops[plan.loop_index]
    shape, why = kernel_shape(p)
    if shape is None or lp.node not in shape.body:
        return None, why or "the loop is not at the top level of the kernel or its guard"
    bx, by = plan.block
    mx, my = plan.merge
    cx, cy = plan.coverage
    tile = plan.tile
    taken = identifiers(p.func)
    k = lp.iterator
    k0, kk, e, r, c = (fresh(taken, n) for n in (f"{k}0", f"{k}{k}", "e", "r", "c"))
    copies = list(itertools.product(range(my), range(mx)))      # (my, mx), y-major
    merged = len(copies) > 1

    # ids of each copy, as C expressions
    def id_of(axis: str, m: int) -> c_ast.Node:
        b, t, size, cover = (("bidx", "tidx", bx, cx) if axis == "x"
                             else ("bidy", "tidy", by, cy))
        if cover == size:
            return PredefId("idx" if axis == "x" else "idy")
        return from_sympy(SYM[b] * cover + m * size + SYM[t])

    # tiles and their loads
    decls, loads, tile_names = [], [], []
    first = "@tidy * %d + @tidx" % bx if by > 1 else "@tidx"
    for s in plan.stagings:
        name = fresh(taken, f"s_{s.array}")
        tile_names.append(name)
        decls.append(shared_array(name, s.elem_type, list(tile_dims(s, plan, target))))
        loads += _loads(s, name, plan, shape, lp, (k0, r, c, e), first)

    # per-copy statements
    position = shape.body.index(lp.node)
    pre_all, body_all, post_all, prologue_all, actives = [], [], [], [], []
    for m_y, m_x in copies:
        suffix = f"_{m_y}_{m_x}" if merged else ""
        subst = {"idx": id_of("x", m_x), "idy": id_of("y", m_y)}
        memo: dict = {}
        body = copy.deepcopy(lp.node.stmt, memo)
        replace = {}
        for s, name in zip(plan.stagings, tile_names):
            read = _tile_read(s, name, plan, m_x, m_y, kk)
            for i in s.accesses:
                replace[id(memo[id(p.memory_expressions[i].node)])] = read
        body = map_nodes(body, lambda n: copy.deepcopy(replace[id(n)])
                         if id(n) in replace else n)
        pieces = [copy.deepcopy(shape.prologue), copy.deepcopy(shape.body[:position]), [body],
                  copy.deepcopy(shape.body[position + 1:])]
        guard = copy.deepcopy(shape.guard) if shape.guard is not None else None
        if merged:
            renames = local_names(p, k, suffix, taken)
            pieces = [[rewrite_copy(st, subst, renames) for st in piece] for piece in pieces]
            guard = rewrite_copy(guard, subst, renames) if guard is not None else None
        prologue, pre, (body,), post = pieces
        active = fresh(taken, f"active{suffix}") if guard is not None else None
        prologue_all += prologue
        if active:
            prologue_all += statements(f"const int {active} = COND;", COND=guard)
            pre, problem = guarded(pre, active)
            if problem:
                return None, f"cannot hoist the guard: {problem}"
            if post:
                post = [c_ast.If(c_ast.ID(active), c_ast.Compound(post), None)]
        pre_all += pre
        post_all += post
        actives.append(active)
        body_all.append(body)

    decl = lp.node.init.decls[0]
    iter_type = decl.type.type.names[0] if isinstance(decl.type, c_ast.TypeDecl) else "int"
    uses_k = any(k in identifiers(b) for b in body_all)
    iterator = f"{iter_type} {k} = {k0} + {kk};" if uses_k else ""
    if merged:
        # a copy whose body only touches registers and shared tiles may run for inactive
        # threads too (tiles are zero-filled outside the bounds); only its results are guarded
        inner_body = [c_ast.If(c_ast.ID(a), b, None) if a and _touches_memory(b, p) else b
                      for a, b in zip(actives, body_all)]
        inner = statements(f"for (int {kk} = 0; {kk} < {tile} && {k0} + {kk} < HI; {kk}++) "
                           f"{{ {iterator} BODY; }}", HI=copy.deepcopy(lp.upper),
                           BODY=c_ast.Compound(inner_body))
    else:
        inner = statements(f"for (int {kk} = 0; {kk} < {tile} && {k0} + {kk} < HI; {kk}++) "
                           f"{{ {iterator} BODY; }}", HI=copy.deepcopy(lp.upper),
                           BODY=body_all[0])
        if actives[0] and _touches_memory(body_all[0], p):
            inner = [c_ast.If(c_ast.ID(actives[0]), c_ast.Compound(inner), None)]
    staged = statements(
        f"for (int {k0} = LO; {k0} < HI; {k0} += {tile}) {{ LOADS; __syncthreads(); INNER; "
        f"__syncthreads(); }}", LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper),
        LOADS=c_ast.Compound(loads), INNER=c_ast.Compound(inner))
    p.body.block_items = decls + prologue_all + pre_all + staged + post_all
    p.launch_block = plan.block
    p.coarsen = plan.merge
    return p, ""


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


def tile_dims(s: Staging, plan: TilingPlan, target: Target) -> tuple[int, ...]:
    """The shared array's dimensions, rows padded against the warps' bank conflicts."""
    if s.kind == VEC:
        return (plan.tile,)
    cx, cy = plan.coverage
    cover = cx if s.thread_axis == "x" else cy
    rows, cols = (cover, plan.tile) if s.kind.startswith("row") else (plan.tile, cover)
    bx = plan.block[0]
    lanes = range(min(target.warp_size, plan.block[0] * plan.block[1]))
    within = [(lane % bx) if s.thread_axis == "x" else (lane // bx) for lane in lanes]
    reads = [(w, 0) for w in within] if s.kind.startswith("row") else [(0, w) for w in within]
    loads = [(e // cols, e % cols) for e in lanes]
    return rows, cols + tile_pad(cols, [loads, reads], target)


def _tile_read(s: Staging, name: str, plan: TilingPlan, m_x: int, m_y: int, kk: str
               ) -> c_ast.Node:
    bx, by = plan.block
    if s.kind == VEC:
        return c_ast.ArrayRef(c_ast.ID(name), c_ast.ID(kk))
    if s.thread_axis == "x":
        within = PredefId("tidx") if m_x == 0 else from_sympy(m_x * bx + SYM["tidx"])
    else:
        within = PredefId("tidy") if m_y == 0 else from_sympy(m_y * by + SYM["tidy"])
    row, col = (within, c_ast.ID(kk)) if s.kind.startswith("row") else (c_ast.ID(kk), within)
    return c_ast.ArrayRef(c_ast.ArrayRef(c_ast.ID(name), row), col)


def _loads(s: Staging, name: str, plan: TilingPlan, shape: KernelShape, lp: GLoop,
           names: tuple[str, str, str, str], first: str) -> list[c_ast.Node]:
    """The cooperative, coalesced load of one k-tile of ``s`` into ``name``: element e of
    the tile goes to thread e mod (threads per block), consecutive e on consecutive
    addresses."""
    k0, r, c, e = names
    threads = plan.block[0] * plan.block[1]
    if s.kind == VEC:
        k0sym, esym = sympy.Symbol(k0, integer=True), sympy.Symbol(e, integer=True)
        index = s.x.subs(sympy.Symbol(lp.iterator, integer=True), k0sym + esym)
        return statements(f"for (int {e} = {first}; {e} < {plan.tile}; {e} += {threads}) "
                          f"{name}[{e}] = ({k0} + {e} < HI) ? {s.array}[X] : 0;",
                          HI=copy.deepcopy(lp.upper), X=from_sympy(index))
    cx, cy = plan.coverage
    rows, cols = ((cx if s.thread_axis == "x" else cy), plan.tile) if s.kind.startswith(
        "row") else (plan.tile, cx if s.thread_axis == "x" else cy)
    thread = "idx" if s.thread_axis == "x" else "idy"
    block_id = SYM["bidx" if s.thread_axis == "x" else "bidy"]
    cover = cx if s.thread_axis == "x" else cy
    rsym, csym, k0sym = (sympy.Symbol(n, integer=True) for n in (r, c, k0))
    ksym = sympy.Symbol(lp.iterator, integer=True)
    along_t, along_k = (rsym, csym) if s.kind.startswith("row") else (csym, rsym)
    tid = block_id * cover + along_t
    y, x = s.y, s.x
    subs = {SYM[thread]: tid, ksym: k0sym + along_k}
    conds, holes = [f"{k0} + {along_k} < HI"], {"HI": copy.deepcopy(lp.upper)}
    if thread in shape.bounds:
        conds.append("TID < BOUND")
        holes.update(TID=from_sympy(tid), BOUND=copy.deepcopy(shape.bounds[thread]))
    holes.update(Y=from_sympy(y.subs(subs)), W=from_sympy(s.width), X=from_sympy(x.subs(subs)))
    return statements(
        f"for (int {e} = {first}; {e} < {rows * cols}; {e} += {plan.block[0] * plan.block[1]})"
        f" {{ int {r} = {e} / {cols}; int {c} = {e} % {cols}; "
        f"{name}[{r}][{c}] = ({' && '.join(conds)}) ? {s.array}[(Y) * W + X] : 0; }}", **holes)


def traffic(plan: TilingPlan) -> float:
    """Staged global loads per output per loop iteration (lower is more reuse): a tile of
    cover x T elements is loaded once per block per k-tile and serves cx*cy outputs."""
    cx, cy = plan.coverage
    return sum((cx if s.thread_axis == "x" else cy if s.thread_axis == "y" else 1)
               for s in plan.stagings) / (cx * cy)


def fits_unguarded(proc: GProcedure, plan: TilingPlan, guarded_kernel: bool) -> bool:
    """A kernel without a bounds guard must keep a launch that tiles its thread space exactly:
    the block's coverage must divide the naive block."""
    if guarded_kernel:
        return True
    from ...launch import default_block

    nx, ny = default_block(proc)
    cx, cy = plan.coverage
    return nx % cx == 0 and ny % cy == 0


def tiles_bytes(plan: TilingPlan, target: Target) -> int:
    """Shared memory the plan's tiles take (4-byte elements)."""
    total = 0
    for s in plan.stagings:
        elements = 1
        for dim in tile_dims(s, plan, target):
            elements *= dim
        total += elements * 4
    return total
