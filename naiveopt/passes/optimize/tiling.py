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

Two refinements change only how tiles are loaded:

- ``prefetch`` (the prefetch pass): each thread loads its share of tile 0 into registers
  before the k-tile loop; every iteration stores the registers into the shared tile, waits,
  issues the loads of the next tile into the registers (range-checked like the zero-filling
  loads, so past the last tile nothing is read) and computes while they are in flight. The
  share is N/NT units per thread (N tile units, NT threads), unrolled into a private array
  indexed by constants only, so that it lives in registers; the unrolled slots derive their
  tile row from the thread's first one by a constant offset, since ptxas hoists every
  slot's address arithmetic out of the loop and per-slot divisions cost registers. Registers
  rather than a second shared buffer: the staged kernels here are mostly limited by shared
  memory or registers already, and a second buffer doubles the shared footprint (MV's 33 KiB
  tile would halve the resident blocks) where registers cost only the N/NT values.
- ``load_width`` (the vectorize pass, via :func:`with_load_width`): a unit is ``load_width``
  consecutive elements along a tile row (the contiguous global dimension of every kind), read
  with one vector load (``VectorLoad``: LDG.128 / vload4) when the whole unit is in range and
  as zero-filled scalar loads otherwise, and stored as scalars into the padded tile. A row
  longer than one span of the banks is loaded in segment order (:func:`segment_units`) so
  that those stores do not conflict, and the pad is chosen for the store patterns too.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field, replace

import sympy
from pycparser import c_ast

from ...analysis.manager import Analysis
from ...analysis.shape import KernelShape, kernel_shape
from ...ir import GLoop, GProcedure, MemoryExpression, PredefId
from ...ir.build import (expression, fresh, from_sympy, private_array, shared_array,
                          statements)
from ...ir.elements import element_bytes
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.symbolic import decompose, to_sympy
from ...ir.vector import VECTOR_ELEMENTS, VectorLoad, declare_vector
from ...ir.vector import lane as vector_lane
from ...launch import relied_multiple, unguarded_obstacle
from ...targets import Target
from .banks import interleaved, pad_and_degree
from .copies import local_names, rewrite_copy
from .shape import guarded

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
    prefetch: bool = False        # register prefetching of the next k-tile
    load_width: int = 1           # elements per cooperative tile load (vector loads)

    @property
    def coverage(self) -> tuple[int, int]:
        return self.block[0] * self.merge[0], self.block[1] * self.merge[1]


class TilingAnalysis(Analysis[TilingPlan | None]):
    """The plan a kernel's staged loop was generated from. The pass that generates it records
    it (coalesce, thread-block merge, thread merge, prefetch, vector tile loads), and later
    passes refine the plan rather than the code. The tree does not say it again, so it lasts
    until a pass changes the kernel without preserving it (coalesce-writes would)."""

    recorded = True


def classify(m: MemoryExpression, loop: GLoop, env) -> tuple[str | None, str]:
    """The staging kind of an access in ``loop``, or (None, why not)."""
    # by identity too: sibling loops may share an iterator name (two 'for (int k ...)')
    if m.loops != [loop.iterator] or not any(x is m for x in loop.memory_expressions):
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


def staging_of(proc: GProcedure, m: MemoryExpression, kind: str) -> Staging:
    """A new Staging for the read ``m`` of ``kind`` (:func:`classify`): a 2-D access is staged
    by its ``(y, x)`` form; a 'vec' read (``A[k + c]``, the same for every thread, perhaps of a
    1-D array) as one row indexed by its flat index."""
    elem = proc.param(m.array).base_type
    if kind == VEC:
        return Staging(m.array, VEC, sympy.Integer(0), m.index, sympy.Integer(0), elem)
    return Staging(m.array, kind, m.two_d[0], m.two_d[1], m.width, elem)


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
    decls, loaders, tile_names = [], [], []
    first = "@tidy * %d + @tidx" % bx if by > 1 else "@tidx"
    for s in plan.stagings:
        name = fresh(taken, f"s_{s.array}")
        tile_names.append(name)
        decls.append(shared_array(name, s.elem_type, list(tile_dims(s, plan, target))))
        vector = fresh(taken, f"v_{s.array}") if unit_width(s, plan) > 1 else ""
        segment, interleave = load_order(s, plan, target)[:2] if s.kind != VEC else (0, None)
        loaders.append(_TileLoad(s, name, plan, shape, lp, (k0, r, c, e, vector), first,
                                 segment, interleave))

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
    head, first_tile = _staging_head(loaders, plan, taken, k0, lp)
    staged = first_tile + statements(
        f"for (int {k0} = LO; {k0} < HI; {k0} += {tile}) {{ HEAD; INNER; __syncthreads(); }}",
        LO=copy.deepcopy(lp.lower), HI=copy.deepcopy(lp.upper), HEAD=c_ast.Compound(head),
        INNER=c_ast.Compound(inner))
    p.body.block_items = decls + prologue_all + pre_all + staged + post_all
    p.launch_block = plan.block
    p.coarsen = plan.merge
    p.launch_multiple = relied_multiple(p, plan.coverage, shape.guard is not None)
    return p, ""


def _staging_head(loaders: list[_TileLoad], plan: TilingPlan, taken: set[str], k0: str,
                  lp: GLoop) -> tuple[list[c_ast.Node], list[c_ast.Node]]:
    """The statements that open each k-tile iteration (up to and including the barrier
    before the compute), and those that go before the k-tile loop.

    Without prefetching the tile is loaded and waited for. With it, the thread's share of
    tile 0 is loaded into registers before the loop; each iteration stores the registers
    into the shared tile, waits, and issues the loads of the next tile into the registers,
    which are in flight while the block computes on the shared tile. Past the last tile the
    range checks are false and nothing is read."""
    barrier = statements("__syncthreads();")
    if not plan.prefetch:
        return [st for ld in loaders for st in ld.loop()] + barrier, []
    registers = [fresh(taken, f"p_{ld.s.array}") for ld in loaders]
    decls = [private_array(reg, ld.s.elem_type, [ld.slots * ld.width])
             for ld, reg in zip(loaders, registers)]
    k0sym = sympy.Symbol(k0, integer=True)
    tile0 = statements(f"const int {k0} = LO;", LO=copy.deepcopy(lp.lower))
    for ld, reg in zip(loaders, registers):
        tile0 += ld.prefetch(reg, k0sym)
    head = [st for ld, reg in zip(loaders, registers) for st in ld.store(reg)] + barrier
    for ld, reg in zip(loaders, registers):
        head += ld.prefetch(reg, k0sym + plan.tile)
    return head, decls + [c_ast.Compound(tile0)]


def prefetch_registers(plan: TilingPlan) -> int:
    """Registers per thread that prefetching the plan's tiles holds."""
    threads = plan.block[0] * plan.block[1]
    total = 0
    for s in plan.stagings:
        rows, cols = tile_extent(s, plan)
        width = unit_width(s, plan)
        total += -(-rows * cols // width // threads) * width
    return total


def unit_width(s: Staging, plan: TilingPlan) -> int:
    """Elements per cooperative load of ``s``: the plan's load width where the element type
    has a vector form and the width divides a tile row (a vector never straddles rows)."""
    width = plan.load_width
    if width > 1 and s.elem_type in VECTOR_ELEMENTS and tile_extent(s, plan)[1] % width == 0:
        return width
    return 1


def segment_units(s: Staging, plan: TilingPlan, target: Target) -> int:
    """Units per row segment when a tile's vector units are loaded in segment order, else 0
    (row-major order).

    With ``width``-element units, the threads of a warp store lane i of their units ``width``
    words apart. In row-major order a tile row longer than one span of the banks (g = banks /
    width units) puts two threads of a warp on one bank whatever the pad. Segment order gives
    a warp g units (one bank span) in each of ``width`` consecutive rows instead, which a pad
    spreads over distinct banks; each row segment is still one contiguous run of global
    memory (g * width elements, 128 bytes of floats), so the loads stay coalesced."""
    width = unit_width(s, plan)
    rows, cols = tile_extent(s, plan)
    g = target.shared_banks // width
    per_row = cols // width
    if width == 1 or per_row <= g or per_row % g or rows % width:
        return 0
    return g


def unit_cell(u: int, s: Staging, plan: TilingPlan, segment: int,
              interleave: tuple[int, int] | None = None) -> tuple[int, int]:
    """Tile (row, column) of the first element of unit ``u`` (what :class:`_TileLoad` emits);
    ``interleave`` is (rows per warp, spacing) of an interleaved row order (load_order)."""
    width = unit_width(s, plan)
    per_row = tile_extent(s, plan)[1] // width
    if interleave:
        return interleaved(u // per_row, *interleave), u % per_row * width
    if not segment:
        return u // per_row, u % per_row * width
    spans = per_row // segment
    h, q = divmod(u, segment)
    return h // (width * spans) * width + h % width, (h // width % spans * segment + q) * width


def with_load_width(plan: TilingPlan, width: int) -> tuple[TilingPlan | None, str]:
    """``plan`` with its cooperative tile loads ``width`` elements wide (1, 2 or 4), or
    (None, why not) when no staging can take vector loads of that width.

    Regenerate with :func:`generate`. Every staging kind has its contiguous global dimension
    along the tile row, which is the dimension consecutive threads load; a staging whose
    element type has no vector form, or whose row is not a multiple of ``width``, keeps scalar
    loads."""
    if width not in (1, 2, 4):
        return None, f"load width {width} is not 1, 2 or 4"
    wider = replace(plan, load_width=width)
    if width > 1 and all(unit_width(s, wider) == 1 for s in plan.stagings):
        return None, "no staged tile has a vector element type and rows a multiple of " \
            f"{width}"
    return wider, ""


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


def tile_extent(s: Staging, plan: TilingPlan) -> tuple[int, int]:
    """(rows, columns) of a staging's tile before padding (a vec tile is one row)."""
    if s.kind == VEC:
        return 1, plan.tile
    cover = plan.coverage[0 if s.thread_axis == "x" else 1]
    return (cover, plan.tile) if s.kind.startswith("row") else (plan.tile, cover)


def load_order(s: Staging, plan: TilingPlan, target: Target
               ) -> tuple[int, tuple[int, int] | None, int]:
    """How a (non-vec) tile is loaded and padded: (segment units, interleave, pad).

    Vector units of rows longer than a bank span go in segment order (segment_units).
    Otherwise a warp whose units cover several short rows (rows of fewer units than lanes:
    gesummv's 256x16 tiles, two rows per warp) stores them at word offsets one pitch apart,
    and no pad keeps both those stores and the column reads of the loop conflict-free (the
    stores want a pitch of half the banks, the reads an odd one). Interleaving the rows
    (banks.interleaved) gives the warp rows ``spacing`` apart instead, each still one
    contiguous run of global memory, so the loads stay coalesced; the order and pad of least
    total conflict degree over the warp's stores and reads win, row-major on a tie. The
    first warp stands for all: every other warp's cells are its cells a whole number of
    rows further down (the same banks shifted by a constant)."""
    rows, cols = tile_extent(s, plan)
    bx = plan.block[0]
    lanes = range(min(target.warp_size, plan.block[0] * plan.block[1]))
    within = [(lane % bx) if s.thread_axis == "x" else (lane // bx) for lane in lanes]
    reads = [(w, 0) for w in within] if s.kind.startswith("row") else [(0, w) for w in within]
    width = unit_width(s, plan)
    segment = segment_units(s, plan, target)

    def pad_of(interleave):
        cells = [unit_cell(lane, s, plan, segment, interleave) for lane in lanes]
        loads = [[(row, col + i) for row, col in cells] for i in range(width)]
        return pad_and_degree(cols, loads + [reads], target)

    orders: list[tuple[int, int] | None] = [None]
    per_row = cols // width
    if not segment and len(lanes) % per_row == 0 and len(lanes) > per_row:
        per_warp = len(lanes) // per_row
        spacing = 2
        while per_warp * spacing <= rows:
            if rows % (per_warp * spacing) == 0:
                orders.append((per_warp, spacing))
            spacing *= 2
    best = min(((order, *pad_of(order)) for order in orders), key=lambda o: (o[2], o[1]))
    return segment, best[0], best[1]


def tile_dims(s: Staging, plan: TilingPlan, target: Target) -> tuple[int, ...]:
    """The shared array's dimensions, rows padded against the warps' bank conflicts."""
    if s.kind == VEC:
        return (plan.tile,)
    rows, cols = tile_extent(s, plan)
    return rows, cols + load_order(s, plan, target)[2]


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


class _TileLoad:
    """The cooperative, coalesced load of one staging's k-tile into its shared tile.

    The tile (``rows`` x ``cols``, a vec tile is one row) is cut into units of ``width``
    consecutive elements along a row. A tile row is contiguous in global memory for every kind
    (``c`` moves the address by one: the loop iterator for row kinds, the thread id for col
    kinds), so unit u, which goes to thread u mod NT, puts consecutive threads on consecutive
    addresses. Element (r, c) of the tile is in range when every ``(lhs, bound)`` condition
    holds, ``lhs < bound``; each ``lhs`` grows with c, so the last element of a unit being in
    range means the whole unit is."""

    def __init__(self, s: Staging, name: str, plan: TilingPlan, shape: KernelShape,
                 lp: GLoop, names: tuple[str, str, str, str, str], first: str,
                 segment: int, interleave: tuple[int, int] | None = None) -> None:
        self.s, self.name, self.first, self.names = s, name, first, names
        self.plan = plan
        self.segment = segment          # units per row segment (segment_units), 0: row-major
        self.interleave = interleave    # (rows per warp, spacing) of interleaved rows, or None
        self.rows, self.cols = tile_extent(s, plan)
        self.width = unit_width(s, plan)
        self.threads = plan.block[0] * plan.block[1]
        self.k0, self.r, self.c, self.e = (sympy.Symbol(n, integer=True) for n in names[:4])
        ksym = sympy.Symbol(lp.iterator, integer=True)
        hi = lp.upper
        if s.kind == VEC:                      # one row: column c is e * width
            self.conds = [(self.k0 + self.c, hi)]
            self.y, self.x = sympy.Integer(0), s.x.subs(ksym, self.k0 + self.c)
            return
        thread = "idx" if s.thread_axis == "x" else "idy"
        cover = plan.coverage[0 if s.thread_axis == "x" else 1]
        along_t, along_k = (self.r, self.c) if s.kind.startswith("row") else (self.c, self.r)
        tid = SYM["bidx" if s.thread_axis == "x" else "bidy"] * cover + along_t
        self.conds = [(self.k0 + along_k, hi)]
        if thread in shape.bounds:
            self.conds.append((tid, shape.bounds[thread]))
        subs = {SYM[thread]: tid, ksym: self.k0 + along_k}
        self.y, self.x = s.y.subs(subs), s.x.subs(subs)

    @property
    def units(self) -> int:
        return self.rows * self.cols // self.width

    @property
    def slots(self) -> int:
        """Units each thread loads per tile (the last slot may be empty for some threads)."""
        return -(-self.units // self.threads)

    def coordinates(self, slot: int | None = None) -> list[c_ast.Node]:
        """Declarations of the unit's tile row and column: from its number e, or for the
        thread's unit number ``slot`` from the thread's first unit when the threads cover
        whole rows (the slots then differ by a constant row offset, which keeps the unrolled
        address arithmetic of prefetching cheap)."""
        _, r, c, e, _ = self.names
        if self.s.kind == VEC:      # column e * width
            return [] if slot is None else statements(
                f"int {e} = {self.first}{f' + {slot * self.threads}' if slot else ''};")
        if self.interleave:
            return self._interleaved_coordinates(slot)
        w = self.width
        per_row = self.cols // w
        scale = f" * {w}" if w > 1 else ""
        unit = e
        offset = ""
        if slot is not None:            # rows of whole segment groups: a constant offset
            unit = self.first
            if slot and self.threads % (per_row * (w if self.segment else 1)):
                unit = f"{self.first} + {slot * self.threads}"
            elif slot:
                offset = f" + {slot * self.threads // per_row}"
        unit = f"({unit})" if " " in unit else unit
        if not self.segment:            # unit_cell, in C
            return statements(f"int {r} = {unit} / {per_row}{offset}; "
                              f"int {c} = {unit} % {per_row}{scale};")
        g, spans = self.segment, per_row // self.segment
        return statements(
            f"int {r} = {unit} / {g * w * spans} * {w} + {unit} / {g} % {w}{offset}; "
            f"int {c} = ({unit} / {g * w} % {spans} * {g} + {unit} % {g}){scale};")

    def _interleaved_coordinates(self, slot: int | None) -> list[c_ast.Node]:
        """:meth:`coordinates` of interleaved rows (banks.interleaved, in C). The thread's
        later slots are a constant number of rows below its first one where that holds for
        every thread (checked), else they are computed from the unit number."""
        _, r, c, e, _ = self.names
        w = self.width
        per_row = self.cols // w
        per_warp, spacing = self.interleave
        group = per_warp * spacing
        unit, offset = e, ""
        if slot is not None:
            unit = self.first
            rows = self._slot_rows(slot) if slot else 0
            if rows is None:
                unit = f"{self.first} + {slot * self.threads}"
            elif rows:
                offset = f" + {rows}"
        # a thread's first unit is below per_row * group when the threads cover one group
        first_group = unit == self.first and self.threads <= per_row * group
        unit = f"({unit})" if " " in unit else unit
        scale = f" * {w}" if w > 1 else ""
        base = f"{unit} / {per_row * group} * {group} + " if self.rows > group and \
            not first_group else ""
        within = "" if first_group else f" % {group}"
        return statements(
            f"int {r} = {base}{unit} / {per_row} % {per_warp} * {spacing} + "
            f"{unit} / {per_row}{within} / {per_warp}{offset}; "
            f"int {c} = {unit} % {per_row}{scale};")

    def _slot_rows(self, slot: int) -> int | None:
        """Rows between every thread's unit of ``slot`` and its first unit, when the same for
        all threads (and the columns equal), else None."""
        rows = None
        for t in range(self.threads):
            u = t + slot * self.threads
            if u >= self.units:
                break
            (r0, c0), (r1, c1) = (unit_cell(v, self.s, self.plan, 0, self.interleave)
                                  for v in (t, u))
            if c1 != c0 or rows not in (None, r1 - r0):
                return None
            rows = r1 - r0
        return rows

    def _lane(self, expr: sympy.Expr, lane: int, start: sympy.Expr) -> sympy.Expr:
        column = self.e * self.width if self.s.kind == VEC else self.c
        return expr.subs({self.c: column + lane, self.k0: start}, simultaneous=True)

    def in_range(self, lane: int, start: sympy.Expr) -> c_ast.Node:
        """Whether element ``lane`` of the unit is inside the arrays, for the k-tile at
        ``start``."""
        cond = None
        for lhs, bound in self.conds:
            atom = c_ast.BinaryOp("<", from_sympy(self._lane(lhs, lane, start)),
                                  copy.deepcopy(bound))
            cond = atom if cond is None else c_ast.BinaryOp("&&", cond, atom)
        return cond

    def global_ref(self, lane: int, start: sympy.Expr) -> c_ast.ArrayRef:
        x = from_sympy(self._lane(self.x, lane, start))
        if self.s.kind == VEC:
            return c_ast.ArrayRef(c_ast.ID(self.s.array), x)
        y = from_sympy(self._lane(self.y, lane, start))
        index = c_ast.BinaryOp("+", c_ast.BinaryOp("*", y, from_sympy(self.s.width)), x)
        return c_ast.ArrayRef(c_ast.ID(self.s.array), index)

    def cell(self, lane: int) -> c_ast.ArrayRef:
        """Element ``lane`` of the unit in the shared tile."""
        col = from_sympy(self._lane(self.c, lane, self.k0))
        if self.s.kind == VEC:
            return c_ast.ArrayRef(c_ast.ID(self.name), col)
        return c_ast.ArrayRef(c_ast.ArrayRef(c_ast.ID(self.name), c_ast.ID(self.names[1])),
                              col)

    def fetch(self, start: sympy.Expr, dests: list[c_ast.Node]) -> list[c_ast.Node]:
        """Statements reading the unit of the k-tile at ``start`` into ``dests`` (one per
        element); elements outside the arrays read as zero and touch no memory. A unit of
        several elements is one vector load when all of it is in range, else scalar loads."""
        scalar = [c_ast.Assignment("=", dest, c_ast.TernaryOp(
            self.in_range(i, start), self.global_ref(i, start), c_ast.Constant("int", "0")))
            for i, dest in enumerate(dests)]
        if self.width == 1:
            return scalar
        vector = self.names[4]
        load = VectorLoad(self.global_ref(0, start), self.width, self.s.elem_type)
        whole = [declare_vector(vector, self.s.elem_type, self.width, load)] + [
            c_ast.Assignment("=", dest, vector_lane(c_ast.ID(vector), i))
            for i, dest in enumerate(dests)]
        return [c_ast.If(self.in_range(self.width - 1, start), c_ast.Compound(whole),
                         c_ast.Compound(scalar))]

    def loop(self) -> list[c_ast.Node]:
        """The whole tile at k0, straight into shared memory."""
        _, _, _, e, _ = self.names
        body = self.coordinates() + self.fetch(self.k0, [self.cell(i)
                                                          for i in range(self.width)])
        return statements(f"for (int {e} = {self.first}; {e} < {self.units}; "
                          f"{e} += {self.threads}) {{ BODY; }}", BODY=c_ast.Compound(body))

    def _slot(self, j: int, body: list[c_ast.Node]) -> c_ast.Node:
        """``body`` for the thread's j-th unit (skipped where the tile has no such unit)."""
        inner = c_ast.Compound(self.coordinates(j) + body)
        if (j + 1) * self.threads <= self.units:
            return inner
        offset = f" + {j * self.threads}" if j else ""
        return c_ast.If(expression(f"{self.first}{offset} < {self.units}"), inner, None)

    def _register(self, register: str, j: int, element: int) -> c_ast.ArrayRef:
        return c_ast.ArrayRef(c_ast.ID(register),
                              c_ast.Constant("int", str(j * self.width + element)))

    def prefetch(self, register: str, start: sympy.Expr) -> list[c_ast.Node]:
        """The thread's share of the k-tile at ``start`` into its registers, unrolled."""
        return [self._slot(j, self.fetch(start, [self._register(register, j, i)
                                                 for i in range(self.width)]))
                for j in range(self.slots)]

    def store(self, register: str) -> list[c_ast.Node]:
        """The prefetched registers into the shared tile."""
        return [self._slot(j, [c_ast.Assignment("=", self.cell(i),
                                                self._register(register, j, i))
                               for i in range(self.width)])
                for j in range(self.slots)]


def traffic(plan: TilingPlan) -> float:
    """Staged global loads per output per loop iteration (lower is more reuse): a tile of
    cover x T elements is loaded once per block per k-tile and serves cx*cy outputs."""
    cx, cy = plan.coverage
    return sum((cx if s.thread_axis == "x" else cy if s.thread_axis == "y" else 1)
               for s in plan.stagings) / (cx * cy)


def fits_unguarded(proc: GProcedure, plan: TilingPlan, guarded_kernel: bool) -> bool:
    """A kernel without a bounds guard must keep a launch that tiles its thread space exactly:
    the block's coverage must divide the naive block or the thread space the compile fixes
    (launch.unguarded_obstacle says why not)."""
    return guarded_kernel or not unguarded_obstacle(proc, plan.coverage)


def tiles_bytes(plan: TilingPlan, target: Target) -> int:
    """Shared memory the plan's tiles take (elements sized by ir/elements.py)."""
    total = 0
    for s in plan.stagings:
        elements = 1
        for dim in tile_dims(s, plan, target):
            elements *= dim
        total += elements * element_bytes(s.elem_type)
    return total
