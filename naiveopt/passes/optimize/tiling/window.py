"""Neighbourhood windows: the stencil pass's kind of plan, and its code.

A :class:`WindowPlan` stages, for each array a stencil reads around every thread's own element
(found by the stencil pass's window analysis, stencil.py), the block's window of it: the rows
and columns of the block's outputs widened by the reads' least and greatest offsets. The
kernel loads every window row by row (a warp per row: coalesced loads, conflict-free stores),
waits at a barrier, and runs its guarded body with the reads served from the windows:

    __shared__ float s_A[CY + amax - amin][CX + bmax - bmin + pad];
    const int active = <guard>;
    for (each row r of the window, a warp per row) for (each column c, a lane per column)
        s_A[r][c] = (inside what the naive kernel reads) ? A[...] : 0;
    __syncthreads();
    if (active) { BODY, A(idy + i, idx + j) read as s_A[tidy + i - amin][tidx + j - bmin] }

Only elements the naive kernel itself reads are loaded: the guard's box shifted by the
offsets, inside the reads' bounds tests, and within the flat index range of the reads where
no read reaches both corners (stencil.py says why that is safe). Where the reads clamp their
coordinates into the array (``min(max(x + dx, 0), W - 1)``), the window holds at each
position the element at the clamped coordinate: the load applies the same clamp, and the
reads keep their unclamped offsets into the window. With thread merge each
thread runs one copy of the body per output (copies.py), so that a window serves more outputs.
A window sized for an offset span known only at run time (HALO_CAP) is used where the span
fits: ``if (span <= HALO_CAP) { staged } else { the original body }``, a uniform branch.

A register-blocked plan (``fused``) gives each thread runs of ``group`` adjacent outputs and
one loop nest for all of them (fusion.py); where the span is one runtime size alone (``K -
1``) it also gets a body per common span with that size a constant and the loops unrolled:

    if (K == 5) { taps unrolled } else if (K == 3) { ... } else { the fused nest }

inside the staged branch, after the barrier (the loads serve them all).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import sympy
from pycparser import c_ast

from ....analysis.clamps import Clamp
from ....analysis.manager import AnalysisManager
from ....analysis.shape import ShapeAnalysis
from ....analysis.symbols import SymbolAnalysis
from ....ir import GProcedure
from ....ir.build import fresh, from_sympy, shared_array, statements, sympy_text
from ....ir.elements import array_bytes, element
from ....ir.rewrite import assigned_names, map_nodes, walk
from ....ir.unroll import unroll
from ....targets import Target
from ...functional.canonicalize.locals import drop_unused
from ..banks import pad_and_degree, tile_pad
from .copies import ThreadCopies, when_active
from .fusion import fuse_copies
from .plan import SYM, MergedBlocks

#: The largest offset span (amax - amin) a window is sized for when it is only known at run
#: time; larger spans take the unstaged version of the kernel.
HALO_CAP = 16
AXES = ("y", "x")
THREAD = {"y": "idy", "x": "idx"}


@dataclass
class Read:
    """One staged access: its memory expression and its (row, column) offsets from the
    thread's own element (from nothing, on an axis that does not follow the threads)."""

    index: int
    offsets: tuple[sympy.Expr, sympy.Expr]
    low: tuple[sympy.Expr, sympy.Expr]      # least offsets over the loops
    high: tuple[sympy.Expr, sympy.Expr]     # greatest offsets over the loops
    fence: "Fence | None" = None            # the bounds test the read is under, if any
    clamps: tuple[Clamp | None, Clamp | None] = (None, None)    # of its row and column


#: Bounds (lo, hi) on a read's row and on its column (lo <= row < hi; None: no bound) from
#: the ``if`` it is under: ``if (yy >= 0 && yy < H && xx >= 0 && xx < W) ... A[yy][xx]``.
Fence = tuple[tuple["sympy.Expr | None", "sympy.Expr | None"],
              tuple["sympy.Expr | None", "sympy.Expr | None"]]


@dataclass
class Window:
    """The shared window of one array and the reads it serves."""

    array: str
    width: sympy.Expr                       # row pitch of the 2-D form (0 for a 1-D array)
    elem: str
    follows: tuple[bool, bool]              # (rows follow idy, columns follow idx)
    reads: list[Read] = field(default_factory=list)
    low: list[sympy.Expr] = field(default_factory=list)      # amin, bmin
    high: list[sympy.Expr] = field(default_factory=list)     # amax, bmax
    fence: Fence | None = None              # the bounds test of its conditional reads
    corners: bool = True                    # some read reaches both least (greatest) offsets
    # per axis the clamp its elements are loaded through (every read's value, stencil.py)
    clamps: tuple[Clamp | None, Clamp | None] = (None, None)

    def span(self, axis: int) -> sympy.Expr:
        return sympy.expand(self.high[axis] - self.low[axis])

    def capacity(self, axis: int) -> int:
        """The window's extra rows (columns) beyond the threads' own: the span, or HALO_CAP
        when the span is only known at run time."""
        span = self.span(axis)
        return int(span) if span.is_number else HALO_CAP

    def describe(self) -> str:
        axes = [f"{THREAD[a]} + [{lo}, {hi}]" if f else f"[{lo}, {hi}]"
                for a, f, lo, hi in zip(AXES, self.follows, self.low, self.high)]
        axes = [c.describe(text) if c is not None else text
                for c, text in zip(self.clamps, axes)]
        if self.width == 0:                 # a 1-D array: its index only
            return f"{self.array}[{axes[1]}]"
        return f"{self.array}({', '.join(axes)})"


@dataclass
class Box:
    """The guard as bounds on the thread ids: lo[axis] <= id < hi[axis] (None: unbounded),
    plus conditions that involve no thread (all must hold for any thread to be active)."""

    lo: dict[str, sympy.Expr]
    hi: dict[str, sympy.Expr]
    uniform: list[c_ast.Node]


@dataclass
class WindowPlan(MergedBlocks):
    """The windows a block stages, its shape and merge factors, and what the code generated
    for them must test: the guard's box and the bounds of the loops around the reads."""

    original: GProcedure                    # the analysed kernel before staging
    windows: list[Window]
    box: Box | None                         # None: the kernel has no guard
    block: tuple[int, int]
    merge: tuple[int, int]
    loops: list[tuple[sympy.Expr, sympy.Expr]]   # bounds of every loop around a staged read
    group: int = 1                          # a thread's outputs in runs of adjacent ones
    fused: bool = False                     # one loop nest for them (register blocking)
    # the runtime spans a fused plan gets unrolled bodies for (None: SPECIALIZED_SPANS);
    # choosing builds only the span of the sizes of interest, the winner all of them
    spans: tuple[int, ...] | None = None

    @property
    def register_blocked(self) -> bool:
        return self.fused

    def extent(self, w: Window, axis: int) -> tuple[int, int]:
        """(rows or columns of the threads' own elements, capacity beyond them)."""
        own = self.coverage[1 - axis] if w.follows[axis] else 1
        return own, w.capacity(axis)

    def elements_per_output(self) -> float:
        cx, cy = self.coverage
        total = 0
        for w in self.windows:
            rows, cols = (sum(self.extent(w, a)) for a in (0, 1))
            total += rows * cols
        return total / (cx * cy)


def window_dims(w: Window, plan: WindowPlan, target: Target) -> tuple[int, int]:
    """The window's shared array: rows x (columns + pad against the warp's read pattern)."""
    rows, cols = (sum(plan.extent(w, a)) for a in (0, 1))
    bx = plan.block[0]
    if not w.follows[1] or rows == 1:
        return rows, cols
    lanes = range(min(target.warp_size, plan.block[0] * plan.block[1]))
    run = ThreadCopies(plan.block, plan.merge, plan.group).run("x")
    reads = [((lane // bx) * ThreadCopies(plan.block, plan.merge, plan.group).run("y")
              if w.follows[0] else 0, lane % bx * run) for lane in lanes]
    if run % RUN_WORDS:
        return rows, cols + tile_pad(cols, [reads], target)
    # runs of adjacent outputs read as 128-bit vectors: rows must start 16-byte aligned
    aligned = -(-cols // RUN_WORDS) * RUN_WORDS
    return rows, aligned + pad_and_degree(aligned, [reads], target, step=RUN_WORDS)[0]


def windows_bytes(plan: WindowPlan, target: Target) -> int:
    """Shared memory the plan's windows take (elements sized by ir/elements.py)."""
    return sum(array_bytes(w.elem, window_dims(w, plan, target)) for w in plan.windows)


def generate_window(plan: WindowPlan, target: Target, am: AnalysisManager
                    ) -> tuple[GProcedure | None, str]:
    """The staged kernel for ``plan`` (a new GProcedure), or (None, why it cannot be built).
    Every statement of it is built or copied anew: the plan's original kernel, whose shape
    ``am`` analyses, is never modified."""
    original = plan.original
    shape, _ = am.get(original, ShapeAnalysis)
    p = copy.deepcopy(original)
    taken = p.names_taken()
    copies = ThreadCopies(plan.block, plan.merge, plan.group)
    names = [fresh(taken, f"s_{w.array}") for w in plan.windows]
    decls = [shared_array(n, w.elem, list(window_dims(w, plan, target)))
             for n, w in zip(names, plan.windows)]

    node_of = {id(original.memory_expressions[r.index].node): (w, n, r)
               for w, n in zip(plan.windows, names) for r in w.reads}
    prologue_all, staged_all, plain_all = [], [], []
    staged_copies, actives = [], []
    # the guard's conditions without threads, as the first copy names its locals (``k`` of
    # ``int k = blockIdx.z; if (... && k < nz - 1)``): the loads run where they hold
    uniform = list(plan.box.uniform) if plan.box is not None else []
    for m_y, m_x in copies.each:
        memo: dict = {}
        body = copy.deepcopy(shape.body, memo)
        reads = {id(memo[k]): _window_read(w, n, r, copies, m_x, m_y)
                 for k, (w, n, r) in node_of.items() if k in memo}
        staged = [map_nodes(st, lambda nd: reads.get(id(nd), nd)) for st in body]
        pieces = [copy.deepcopy(shape.prologue), staged, copy.deepcopy(shape.body),
                  copy.deepcopy(uniform)]
        pieces, active, flag = copies.instantiate(original, m_y, m_x, pieces, shape.guard,
                                                  taken)
        prologue, staged, plain, conds = pieces
        if (m_y, m_x) == copies.each[0]:
            uniform = conds
        prologue_all += prologue + flag
        staged_copies.append(staged)
        actives.append(active)
        if active:
            staged, plain = when_active(active, staged), when_active(active, plain)
        staged_all += staged
        plain_all += plain

    loads = [st for w, n in zip(plan.windows, names) for st in _load(w, n, plan, target, taken)]
    nonempty = _nonempty(plan, uniform)
    casts = _unsigned_casts(original, am)
    loads = [signed_view(st, casts) for st in loads]
    if nonempty is not None:
        nonempty = signed_view(nonempty, casts)
    if nonempty is not None:
        loads = [c_ast.If(nonempty, c_ast.Compound(loads), None)]
    if plan.fused:
        params = {q.name for q in original.params}
        staged_all, why = register_blocked(plan, staged_copies, actives, set(names), params,
                                           original, taken)
        if staged_all is None:
            return None, why
    staged_code = loads + statements("__syncthreads();") + staged_all
    fits = _fits(plan)
    if fits is None:
        code = staged_code
    else:
        code = [c_ast.If(fits, c_ast.Compound(staged_code), c_ast.Compound(plain_all))]
    p.body.block_items = decls + prologue_all + code
    # the staged reads no longer use the locals the naive index was built from (a clamp's
    # ``int xx = ...``): dropped, or nvcc warns of each copy's unused variable
    staged_locals = {n.name for n, _ in walk(c_ast.Compound(staged_all))
                     if isinstance(n, c_ast.Decl) and n.name}
    while drop_unused(p.body, staged_locals):
        pass
    p.launch_block = plan.block
    p.coarsen = plan.merge
    return p, ""


#: 4-byte words of one 128-bit shared read (a run of 4 adjacent outputs' inputs).
RUN_WORDS = 4
#: Offset spans (filter size - 1: 3, 5 and 7 taps, or radius 1, 2, 3) a register-blocked
#: window gets a body of its own for when its span is known only at run time.
SPECIALIZED_SPANS = (4, 2, 6)
#: The most iterations of a loop nest unrolled in a specialised body (7 x 7 taps).
UNROLL_LIMIT = 64


def register_blocked(plan: WindowPlan, copies: list[list[c_ast.Node]],
                     actives: list[str | None], shared: set[str], params: set[str],
                     original: GProcedure, taken: set[str]
                     ) -> tuple[list[c_ast.Node] | None, str]:
    """The thread's copies of the staged body as one loop nest (fusion.py), loops of constant
    trip count unrolled (ir/unroll.py); where a window's span is a runtime size ``s`` alone
    (``K - 1``), a body per common span behind a uniform test, ``if (K == 5) { unrolled }
    else if ... else { fused }``, so that the taps unroll and every input value a thread
    reads serves all the outputs it touches from a register (a sliding window)."""
    elements = {q.name: q.base_type for q in original.params if q.is_pointer}
    name, values = specializations(plan, original)
    bodies = []
    for value in values:                    # each from copies of the copies, before these
        body = [[_set(st, name, value) for st in c] for c in copy.deepcopy(copies)]
        fused, why = fuse_copies(body, actives, shared, params, elements, taken)
        if fused is not None:
            bodies.append((value, unroll(fused, UNROLL_LIMIT)[0]))
    generic, why = fuse_copies(copies, actives, shared, params, elements, taken)
    if generic is None:
        return None, f"its copies cannot share one loop nest: {why}"
    generic, _ = unroll(generic, UNROLL_LIMIT)
    code: c_ast.Node = c_ast.Compound(generic)
    for value, fused in reversed(bodies):
        test = c_ast.BinaryOp("==", c_ast.ID(name), c_ast.Constant("int", str(value)))
        code = c_ast.If(test, c_ast.Compound(fused), code)
    return (code.block_items if isinstance(code, c_ast.Compound) else [code]), ""


def specializations(plan: WindowPlan, original: GProcedure) -> tuple[str, list[int]]:
    """The runtime size the windows' spans depend on and its values at SPECIALIZED_SPANS
    (('', []) where the spans are constants, or depend on more than one name, or the name is
    not an integer parameter the kernel leaves unchanged)."""
    spans = [w.span(a) for w in plan.windows for a in (0, 1) if not w.span(a).is_number]
    symbols = set().union(*(s.free_symbols for s in spans)) if spans else set()
    if len(symbols) != 1:
        return "", []
    (symbol,) = symbols
    param = original.param(symbol.name)
    if param is None or param.is_pointer or param.base_type not in ("int", "unsigned int",
                                                                     "long", "size_t") or \
            symbol.name in assigned_names(original.body):
        return "", []
    values = []
    for span in SPECIALIZED_SPANS if plan.spans is None else plan.spans:
        roots = sympy.solve(sympy.Eq(spans[0], span), symbol)
        if len(roots) != 1 or not roots[0].is_integer or roots[0] < 0:
            continue
        value = int(roots[0])
        if value not in values and all(
                0 <= int(s.subs(symbol, value)) <= HALO_CAP for s in spans):
            values.append(value)
    return symbol.name, values


def _set(node: c_ast.Node, name: str, value: int) -> c_ast.Node:
    """``node`` with the size ``name`` read as the constant ``value``."""
    return map_nodes(node, lambda n: c_ast.Constant("int", str(value))
                     if isinstance(n, c_ast.ID) and n.name == name else n)


def _window_read(w: Window, name: str, r: Read, copies: ThreadCopies, m_x: int, m_y: int
                 ) -> c_ast.ArrayRef:
    """The shared-window element that replaces read ``r`` in thread-merge copy (m_y, m_x)."""
    own = (copies.within("y", m_y), copies.within("x", m_x))
    cells = [from_sympy((own[a] if w.follows[a] else 0) + r.offsets[a] - w.low[a])
             for a in (0, 1)]
    return c_ast.ArrayRef(c_ast.ArrayRef(c_ast.ID(name), cells[0]), cells[1])


def _load(w: Window, name: str, plan: WindowPlan, target: Target, taken: set[str]
          ) -> list[c_ast.Node]:
    """The window, row by row: each warp loads whole rows, lane by lane (coalesced loads,
    stores to consecutive words)."""
    bx, by = plan.block
    threads = bx * by
    lanes = min(target.warp_size, threads)
    r, c = fresh(taken, "r"), fresh(taken, "c")
    rs, cs = sympy.Symbol(r, integer=True), sympy.Symbol(c, integer=True)
    origin = (SYM["bidy"] * plan.coverage[1], SYM["bidx"] * plan.coverage[0])
    spans = []
    for a in (0, 1):
        own = plan.extent(w, a)[0]
        spans.append(sympy.expand(own + w.span(a)))
    coords = [sympy.expand((origin[a] if w.follows[a] else 0) + w.low[a] + (rs, cs)[a])
              for a in (0, 1)]
    conds = []
    box = plan.box
    for a, axis in enumerate(AXES):
        if not w.follows[a] or box is None:
            continue
        gid = THREAD[axis]
        if gid in box.lo:
            conds.append(f"({_c(coords[a])}) >= ({_c(box.lo[gid] + w.low[a])})")
        if gid in box.hi:
            conds.append(f"({_c(coords[a])}) < ({_c(box.hi[gid] + w.high[a])})")
    for a in (0, 1):
        lo, hi = w.fence[a] if w.fence is not None else (None, None)
        if lo is not None:
            conds.append(f"({_c(coords[a])}) >= ({_c(lo)})")
        if hi is not None:
            conds.append(f"({_c(coords[a])}) < ({_c(hi)})")
    index = _flat(w, coords)
    if not w.corners:
        least, most = _flat_range(w, plan, origin)
        conds += [f"({index}) >= {least}", f"({index}) <= {most}"]
    value = f"{w.array}[{index}]"
    if conds:
        value = f"({' && '.join(conds)}) ? {value} : 0"
    return statements(
        f"for (int {r} = (@tidy * {bx} + @tidx) / {lanes}; {r} < {_c(spans[0])}; "
        f"{r} += {threads // lanes}) "
        f"for (int {c} = (@tidy * {bx} + @tidx) % {lanes}; {c} < {_c(spans[1])}; "
        f"{c} += {lanes}) {name}[{r}][{c}] = {value};")


def _flat_range(w: Window, plan: WindowPlan, origin: tuple[sympy.Expr, sympy.Expr]
                ) -> tuple[str, str]:
    """C expressions of the least and greatest flat index the naive kernel reads through the
    window: each read reaches its own least (greatest) row and column offsets together (its
    row and column move with different loops), at the first (last) active thread, of the
    guard's box or, unguarded, of the block. A row-major array is contiguous, so every
    element between the two is inside it."""
    box = plan.box
    first, last = [], []
    for a, axis in enumerate(AXES):
        gid, cover = THREAD[axis], plan.coverage[1 - a]
        if not w.follows[a]:
            first.append(sympy.Integer(0))
            last.append(sympy.Integer(0))
            continue
        first.append(box.lo.get(gid, sympy.Integer(0)) if box is not None else origin[a])
        last.append(box.hi[gid] - 1 if box is not None and gid in box.hi
                    else origin[a] + cover - 1)
    least = [_flat(w, [first[a] + r.low[a] for a in (0, 1)]) for r in w.reads]
    most = [_flat(w, [last[a] + r.high[a] for a in (0, 1)]) for r in w.reads]

    def fold(fn: str, items: list[str]) -> str:
        out = items[0]
        for item in dict.fromkeys(items[1:]):
            out = f"{fn}({out}, {item})"
        return out

    return fold("min", list(dict.fromkeys(least))), fold("max", list(dict.fromkeys(most)))


def _flat(w: Window, coords: list[sympy.Expr]) -> str:
    """C text of the flat index of the element at (row, column) ``coords`` of the window's
    array, through the window's clamps."""
    if w.clamps == (None, None):
        return _c(coords[0] * w.width + coords[1])
    row, column = (_clamped(c, e) for c, e in zip(w.clamps, coords))
    return column if w.width == 0 else f"({row}) * ({_c(w.width)}) + {column}"


def _clamped(clamp: Clamp | None, expr: sympy.Expr) -> str:
    """C text of ``expr`` through ``clamp``, as min(max(v, lo), hi), the bounds as written
    (a side folded where both are numbers)."""
    expr = sympy.sympify(expr)
    text = _c(expr)
    for side, fold in (("lo", max), ("hi", min)):
        bound = getattr(clamp, side) if clamp is not None else None
        if bound is None:
            continue
        if expr.is_number and bound.is_number:
            expr = sympy.Integer(fold(int(expr), int(bound)))
            text = _c(expr)
        else:
            expr = sympy.Symbol("__clamped")       # no longer a number
            text = f"{'max' if fold is max else 'min'}({text}, {_c(bound)})"
    return text


#: Macro text that is 64-bit (a type word or an ``l`` suffix).
_WIDE_TEXT = re.compile(r"\b(?:long|size_t|ulong|uint64_t)\b|\b\d[0-9a-fA-FxX]*[uU]?[lL]")


def _unsigned_casts(proc: GProcedure, am: AnalysisManager) -> dict[str, str]:
    """The uniform names the window's index text may hold whose type may be unsigned (scalar
    parameters, file-scope scalars, macros), each with the signed type to read it as: ``int``,
    or ``long`` for a 64-bit one."""
    module = am.module
    signed = am.get(proc, SymbolAnalysis).signed or frozenset()
    types = {p.name: p.base_type for p in proc.params if not p.is_pointer}
    types.update({g.name: g.base_type for g in module.globals
                  if not g.dims and g.name not in types})
    casts = {}
    for name, base_type in types.items():
        e = element(" ".join(w for w in base_type.split() if w not in ("const", "volatile")))
        if e is not None and e.kind == "unsigned":
            casts[name] = "long" if e.bytes == 8 else "int"
    for name, text in module.macros.items():
        if name not in signed and name not in casts:     # its text or a macro it names
            casts[name] = "long" if _WIDE_TEXT.search(text) else "int"
    return casts


def signed_view(node: c_ast.Node, casts: dict[str, str]) -> c_ast.Node:
    """``node`` (generated index arithmetic) computed in signed integers: each name of
    ``casts`` read through a cast to its signed type, and the operands of a ``min``/``max``
    that holds a 64-bit one cast to ``long``.

    Why: the window's arithmetic is the analyses' integer arithmetic, where a coordinate may be
    negative (a read above the first row) and a bound may be an unsigned parameter (``unsigned
    int height``). In C, ``y - 1 < height`` with y = 0 is then false, and OpenCL's ``min(int,
    uint)`` does not compile (CUDA's picks the unsigned one); the naive kernel compared such
    values in signed arithmetic (the clamps are read only from signed comparisons,
    ir/symbolic.py), and sizes fit ``int`` (a 64-bit one, ``long``)."""
    if not casts:
        return node

    def typed(tp: str, expr: c_ast.Node) -> c_ast.Cast:
        return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType([tp]))), expr)

    def visit(nd: c_ast.Node) -> c_ast.Node:
        if isinstance(nd, c_ast.ID) and nd.name in casts:
            return typed(casts[nd.name], nd)
        if isinstance(nd, c_ast.FuncCall) and isinstance(nd.name, c_ast.ID) and \
                nd.name.name in ("min", "max") and nd.args is not None:
            held = {casts[n.name] for arg in nd.args.exprs for n, _ in walk(arg)
                    if isinstance(n, c_ast.ID) and n.name in casts}
            if "long" in held:        # the others are int, as the ints around them
                nd.args.exprs = [typed("long", a) for a in nd.args.exprs]
        return nd

    return map_nodes(node, visit)


def _c(expr: sympy.Expr) -> str:
    """C text (with @ids) of an integer sympy expression, products kept factored."""
    return sympy_text(expr, expand=False)


def _nonempty(plan: WindowPlan, uniform: list[c_ast.Node]) -> c_ast.Node | None:
    """When any thread reads the windows: every loop around a staged read iterates, and the
    guard's box holds a thread, its conditions without threads (``uniform``, as the code
    names their locals) hold too (None: always)."""
    conds = [f"({_c(lo)}) < ({_c(hi)})" for lo, hi in plan.loops
             if not sympy.expand(hi - lo).is_positive]
    box = plan.box
    if box is not None:
        for gid, hi in box.hi.items():
            lo = box.lo.get(gid, sympy.Integer(0))
            if not sympy.expand(hi - lo).is_positive:
                conds.append(f"({_c(lo)}) < ({_c(hi)})")
    text = " && ".join(dict.fromkeys(conds))
    if not conds and not uniform:
        return None
    node = statements(f"__naiveopt_x = {text or '1'};")[0].rvalue
    for u in uniform:
        node = c_ast.BinaryOp("&&", node, copy.deepcopy(u))
    return node


def _fits(plan: WindowPlan) -> c_ast.Node | None:
    """The uniform test that runtime offset spans fit the windows (None: they always do)."""
    conds = [f"({_c(w.span(a))}) <= {HALO_CAP}" for w in plan.windows for a in (0, 1)
             if not w.span(a).is_number]
    if not conds:
        return None
    return statements(f"__naiveopt_x = {' && '.join(dict.fromkeys(conds))};")[0].rvalue
