"""The plan of a staged loop, and the layout of its shared tiles.

A :class:`TilingPlan` keeps the analysed kernel as it was before any staging, the loop to tile,
the accesses to stage through shared memory, the block shape, the tile width along the loop and
the thread-merge factors. Coalescing, thread-block merge and thread merge build and refine
plans; prefetching and vector tile loads refine how the plan's tiles are loaded. The code is
generated from the plan (generation.py), never patched, so the passes' effects compose.

An access is staged when it is one of four shapes relative to the loop iterator k (c, c' are
thread- and loop-invariant):

    row_x  A(idx + c, k + c')   the same for all threads in y   tile [BX*MX][T + pad]
    row_y  A(idy + c, k + c')   the same for all threads in x   tile [BY*MY][T + pad]
    col_x  A(k + c, idx + c')   the same for all threads in y   tile [T][BX*MX]
    col_y  A(k + c, idy + c')   the same for all threads in x   tile [T][BY*MY + pad]
    vec    A[k + c]             the same for all threads         tile [T]

A tile row is contiguous in global memory for every kind, so the block loads it in units of
consecutive elements along a row (:func:`unit_cell` says where unit u goes); the order of the
units and the pad of the rows are chosen against shared-memory bank conflicts of both the
loads' stores and the loop's reads (:func:`load_order`, banks.py).

A register-tiled plan (``k_major``, with thread merge's ``group``: copies.py) stores the row
kinds' tiles transposed, ``[T][cover + pad]``, as they are loaded: the outputs of a thread's
run are then adjacent along a stored row for every staging, so the run's values are one
128-bit shared load (cuBLAS-class SGEMM stages A k-major for the same reason).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy
from pycparser import c_ast

from ....analysis.manager import Analysis
from ....ir import GLoop, GProcedure, MemoryExpression, PredefId
from ....ir.cgen import to_c
from ....ir.elements import array_bytes
from ....ir.rewrite import walk
from ....ir.symbolic import decompose, to_sympy
from ....ir.vector import VECTOR_ELEMENTS
from ....launch import unguarded_obstacle, uses_y
from ....targets import Target
from ..banks import interleaved, pad_and_degree

SYM = {n: sympy.Symbol(n, integer=True) for n in ("idx", "idy", "tidx", "tidy", "bidx",
                                                   "bidy")}
THREAD_IDS = ("idx", "idy", "tidx", "tidy", "bidx", "bidy")
KINDS = ("row_x", "row_y", "col_x", "col_y")
VEC = "vec"


class MergedBlocks:
    """What every kind of plan fixes: blocks of ``block`` threads (x, y), each thread
    computing ``merge`` outputs, in runs of ``group`` adjacent ones (thread merge: copies.py)."""

    block: tuple[int, int]
    merge: tuple[int, int]
    group: int = 1

    @property
    def coverage(self) -> tuple[int, int]:
        """The outputs a block covers along x and y."""
        return self.block[0] * self.merge[0], self.block[1] * self.merge[1]


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
class TilingPlan(MergedBlocks):
    """A staged loop: the loop, the tiles and the accesses they serve, the block shape, the
    tile width along the loop, the merge factors and how the tiles are loaded."""

    original: GProcedure          # the analysed kernel before staging (never modified)
    loop_index: int
    stagings: list[Staging]
    block: tuple[int, int]
    tile: int
    merge: tuple[int, int] = (1, 1)
    prefetch: bool = False        # register prefetching of the next k-tile
    load_width: int = 1           # elements per cooperative tile load (vector loads)
    group: int = 1                # a thread's copies in runs of adjacent outputs (copies.py)
    k_major: bool = False         # row kinds' tiles stored transposed, [T][cover + pad]
    peel: bool = False            # whole k-tiles peeled from the partial last one
    stages: int = 1               # shared buffers of an asynchronous pipeline (1: none)

    @property
    def register_tiled(self) -> bool:
        return self.group > 1 and self.k_major


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
        if any(s.name in env.loops or s.name in THREAD_IDS for s in value.free_symbols):
            return "loop bounds differ between threads"
        if not decompose(value, env).resolved:
            return f"the loop bound {to_c(bound)} is not an affine expression of sizes"
    return ""


def uses_raw_thread_ids(proc: GProcedure) -> bool:
    """Whether the kernel uses thread ids other than idx/idy (thread merge changes those)."""
    return any(isinstance(n, PredefId) and n.name not in ("idx", "idy")
               for n, _ in walk(proc.body))


def traffic(plan: TilingPlan) -> float:
    """Staged global loads per output per loop iteration (lower is more reuse): a tile of
    cover x T elements is loaded once per block per k-tile and serves cx*cy outputs."""
    cx, cy = plan.coverage
    return sum((cx if s.thread_axis == "x" else cy if s.thread_axis == "y" else 1)
               for s in plan.stagings) / (cx * cy)


def guards_thread_space(proc: GProcedure, shape) -> bool:
    """Whether the kernel's bounds guard bounds every axis of its thread space (idx, and idy
    where it is 2-D): only then may a launch overhang it, and only then do the tile loads
    know each row's bound (TileLoad). A guard that bounds another id, or an id through a
    local the guard analysis does not follow, leaves the kernel relying on an exact launch
    along that axis, as one without a guard does (a tile of rows past the last then read
    past the array: fuzz 1198 case 252)."""
    return shape is not None and shape.guard is not None and "idx" in shape.bounds and \
        ("idy" in shape.bounds or not uses_y(proc))


def fits_unguarded(proc: GProcedure, plan: TilingPlan, guarded_kernel: bool) -> bool:
    """A kernel without a bounds guard must keep a launch that tiles its thread space exactly:
    the block's coverage must divide the naive block or the thread space the compile fixes
    (launch.unguarded_obstacle says why not)."""
    return guarded_kernel or not unguarded_obstacle(proc, plan.coverage)


def transposed(s: Staging, plan: TilingPlan) -> bool:
    """Whether ``s``'s tile is stored transposed (k-major) from the order it is loaded in."""
    return plan.k_major and s.kind.startswith("row")


def tile_extent(s: Staging, plan: TilingPlan) -> tuple[int, int]:
    """(rows, columns) of a staging's tile as it is loaded, before padding (a vec tile is
    one row); a transposed tile is stored as (columns, rows)."""
    if s.kind == VEC:
        return 1, plan.tile
    cover = plan.coverage[0 if s.thread_axis == "x" else 1]
    return (cover, plan.tile) if s.kind.startswith("row") else (plan.tile, cover)


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
    """Tile (row, column) of the first element of unit ``u`` (what loads.TileLoad emits);
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
    run = plan.group if plan.group > 1 and plan.merge[
        0 if s.thread_axis == "x" else 1] % plan.group == 0 else 1
    within = [(lane % bx) * run if s.thread_axis == "x" else (lane // bx) * run
              for lane in lanes]
    reads = [(w, 0) for w in within] if s.kind.startswith("row") else [(0, w) for w in within]
    width = unit_width(s, plan)
    # a register-tiled plan reads runs of ``run`` words as one vector: rows stay aligned
    step = run if plan.register_tiled else 1
    if transposed(s, plan):
        # stored [col][row]: the loads' cells transposed, the reads along a stored row
        cells = [unit_cell(lane, s, plan, 0) for lane in lanes]
        stores = [[(col + i, row) for row, col in cells] for i in range(width)]
        pad = pad_and_degree(rows, stores + [[(0, w) for w in within]], target, step)[0]
        return 0, None, pad
    segment = segment_units(s, plan, target)

    def pad_of(interleave):
        cells = [unit_cell(lane, s, plan, segment, interleave) for lane in lanes]
        loads = [[(row, col + i) for row, col in cells] for i in range(width)]
        return pad_and_degree(cols, loads + [reads], target, step)

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
    if transposed(s, plan):
        return cols, rows + load_order(s, plan, target)[2]
    return rows, cols + load_order(s, plan, target)[2]


def tiles_bytes(plan: TilingPlan, target: Target) -> int:
    """Shared memory the plan's tiles take (elements sized by ir/elements.py), every stage
    of an asynchronous pipeline counted."""
    return plan.stages * sum(array_bytes(s.elem_type, tile_dims(s, plan, target))
                             for s in plan.stagings)


def prefetch_registers(plan: TilingPlan) -> int:
    """Registers per thread that prefetching the plan's tiles holds."""
    threads = plan.block[0] * plan.block[1]
    total = 0
    for s in plan.stagings:
        rows, cols = tile_extent(s, plan)
        width = unit_width(s, plan)
        total += -(-rows * cols // width // threads) * width
    return total


def with_load_width(plan: TilingPlan, width: int) -> tuple[TilingPlan | None, str]:
    """``plan`` with its cooperative tile loads ``width`` elements wide (1, 2 or 4), or
    (None, why not) when no staging can take vector loads of that width.

    Regenerate with :func:`generate`. Every staging kind has its contiguous global dimension
    along the tile row, which is the dimension consecutive threads load; a staging whose
    element type has no vector form, or whose row is not a multiple of ``width``, keeps scalar
    loads."""
    if width not in (1, 2, 4):
        return None, f"load width {width} is not 1, 2 or 4"
    if width > 1 and plan.stages > 1:
        return None, ("the tiles are loaded by asynchronous copies (cp.async) of one element "
                      "each, which hold no registers")
    wider = replace(plan, load_width=width)
    if width > 1 and all(unit_width(s, wider) == 1 for s in plan.stagings):
        return None, "no staged tile has a vector element type and rows a multiple of " \
            f"{width}"
    return wider, ""
