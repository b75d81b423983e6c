"""The work of one launch of a kernel, read from its code at given sizes: no trace, no run.

Choosing among variants (selection.py) needs an estimate of each at the sizes of interest,
dozens per kernel, in milliseconds each: the profiler's trace (profile/) runs the kernel on
PoCL and is far too slow for that. This reads the same quantities from the code:

- the launch: blocks and threads from the variant's launch geometry (launch.py) at the sizes;
- how often each access runs per thread: the product of the trip counts of its enclosing
  loops (bounds evaluated at the sizes; a bound that depends on a thread id, or an unknown
  name, at ``default``: the notes say which);
- global accesses: the 32-byte sectors and 128-byte lines one warp request touches, from the
  access's affine index (its coefficients of the thread ids along x and y, at the sizes) over
  the 32 lanes of a warp laid out in the block; each line is an L1 wavefront; the bytes
  between L1 and L2 are the sectors the requests miss in L1: a block's reads fetch the
  distinct sectors they touch over the loops whose reuse L1 can hold (:class:`_L1Reuse`:
  a naive stencil's taps, a row read along a loop), the rest of the requests' sectors go to
  L2 as they are, and so do stores (L1 is write-through);
- shared-memory accesses: wavefronts per warp request, from the banks of the 32 lanes' words
  (a broadcast is one; a stride of 2 words two), and at least one per 128 bytes moved; reads
  of one shared array in one loop iteration at 4 adjacent 4-byte words, the first aligned for
  every thread (a register-tiled thread's run of outputs), are one 128-bit request, as nvcc
  emits them (LDS.128);
- DRAM: the distinct bytes each global array spans (the range of its indices over the thread
  space and the loops), through the L2 capacity model (model.dram_bytes);
- FP32 work: an update ``acc += a * b`` counts as one FMA (two operations), other arithmetic
  assignments one operation per operator; instructions: the accesses, the FP32 instructions
  and two per loop iteration.

Guards are ignored (every thread runs every access: edge blocks are a small share at sizes of
interest) and so is the order of accesses. Of an ``if``/``else`` only one branch counts where
the other is not run at the sizes: a version test on the sizes alone (its branch at the
sizes), and a test of being inside bounds (``4 * x + 3 < W && y < H``, ``k0 + 8 <= K``), whose
``else`` is the edge path (a vector access's scalar fallback, a partial last tile) that only
threads or iterations at the border take. The estimate ranks variants of one kernel; it is
not a simulator.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

import sympy
from pycparser import c_ast

from .. import launch
from ..analysis.clamps import clamped_index
from ..analysis.loops import LoopAnalysis
from ..analysis.manager import AnalysisManager
from ..analysis.memory_expressions import MemoryExpressionAnalysis
from ..analysis.symbols import SymbolAnalysis
from ..ir import GProcedure
from ..ir.cgen import to_c
from ..ir.rewrite import walk
from ..ir.elements import element_bytes
from ..ir.symbolic import decompose, to_sympy
from ..targets import Target, resident_blocks
from ..verify.expr import evaluate
from .model import (MAX_LOADS_IN_FLIGHT, Estimate, KernelWork, dram_bytes, estimate,
                    loads_in_flight)

#: The size an unknown problem dimension (or a thread-dependent loop bound) is taken at.
DEFAULT_SIZE = 4096
_X_IDS = ("idx", "tidx")
_Y_IDS = ("idy", "tidy")


@dataclass
class StaticWork:
    """A kernel's launch as :class:`KernelWork`, with what had to be assumed."""

    work: KernelWork
    notes: list[str] = field(default_factory=list)

    def estimate(self, target: Target) -> Estimate:
        return estimate(self.work, target)


def static_work(proc: GProcedure, module, target: Target, sizes: dict[str, int],
                default: int = DEFAULT_SIZE) -> StaticWork:
    """The work of ``proc`` (a kernel of ``module``) launched at ``sizes`` (module
    docstring)."""
    am = AnalysisManager(module)
    loops = am.get(proc, LoopAnalysis)
    uniform = {p.name for p in proc.params if not p.is_pointer} | set(sizes) | \
        set(module.macros)
    iterators = {lp.iterator for lp in loops if lp.iterator}
    interior = _Interior(am.get(proc, SymbolAnalysis).env(clamps=True), uniform | iterators)
    expressions = [interior(m) for m in am.get(proc, MemoryExpressionAnalysis)]
    opaque = frozenset(interior.opaque)
    notes: list[str] = []
    assumed: set[str] = set()
    # thread ids in a loop bound (a cooperative copy's 'r = tidy', a triangular 'j < idx'):
    # the middle of their range, the average thread's trip count; and the launch's dimensions
    middle: dict[str, int] = {}

    def value(text: str | None, fallback: int | None, assume: bool | None = None
              ) -> int | None:
        """``text`` evaluated at the sizes; unknown names taken as ``default`` (and noted),
        except where ``assume`` is false (by default: with no ``fallback``), where an unknown
        name gives ``fallback``."""
        if text is None:
            return fallback
        if assume is None:
            assume = fallback is not None
        names = {**middle, **sizes}
        for _ in range(8):
            try:
                return int(evaluate(text, names))
            except (ValueError, ZeroDivisionError) as exc:
                missing = _unknown_name(text, names)
                if missing is None or not assume:
                    return fallback
                names[missing] = default
                assumed.add(missing)
        return fallback

    geo = launch.geometry(proc)
    block = geo.block
    grid = []
    covers = [b * c for b, c in zip(geo.block, geo.coarsen)]
    for tree, cover in zip(geo.grid_trees, covers):
        if tree is None:        # a thread space that is not integer arithmetic (a call)
            grid.append(max(1, -(-default // cover)))
            notes.append("a thread space that is not integer arithmetic taken as "
                         f"{default} threads")
            continue
        try:
            grid.append(max(1, launch.evaluate(tree, {**{n: default for n in
                                                         launch.variables(tree)}, **sizes})))
        except (ValueError, ZeroDivisionError):
            grid.append(1)
        assumed |= launch.variables(tree) - set(sizes)
    blocks = math.prod(grid)
    threads_per_block = block[0] * block[1] * block[2]
    warps = blocks * -(-threads_per_block // target.warp_size)
    extents = {"idx": grid[0] * block[0], "idy": grid[1] * block[1], "tidx": block[0],
               "tidy": block[1], "bidx": grid[0], "bidy": grid[1]}
    middle.update({name: extent // 2 for name, extent in extents.items()})
    # the launch's own dimensions, as an index may name them (a width 'gridDim.x*blockDim.x')
    middle.update({"blockDimX": block[0], "blockDimY": block[1], "gridDimX": grid[0],
                   "gridDimY": grid[1]})

    trips: dict[int, int] = {}          # id(loop node) -> trip count
    for lp in loops:
        trips[id(lp.node)] = _trips(lp, value, default)
    expr_of = {id(m.node): m for m in expressions}
    arrays = {p.name: p for p in proc.params if p.is_pointer}

    l2 = wavefronts = l1_lines = flops = instructions = 0.0
    cached = 0.0        # of l2, the bytes of reads the L1 model placed
    # each global read's bytes a warp request moves from L2 (its sectors), and the weight of
    # those in the launch's traffic (the bytes it fetches from L2)
    global_reads: list[tuple[float, float]] = []
    copies = _unrolled(loops, trips, set(module.macros))
    load_copies = 0                     # global read instructions once nvcc unrolled
    spans: dict[str, list[tuple[int, int]]] = {}    # byte ranges each array's accesses cover

    # reads the compiler keeps in a register: the same element read again in one iteration of
    # the innermost loop, which does not write that array (a merged thread's copies of
    # s_A[tidy][kk] are one load)
    written: dict[int, set[str]] = {
        id(lp.node): {m.array for m in lp.memory_expressions if m.is_write} for lp in loops}
    seen: set[tuple] = set()
    runs = _shared_runs(expressions, loops, written, arrays)

    # loops whose iterator starts at a thread id (a staged copy's 'c = tidx; c < 34; c += 32')
    cooperative = {id(lp.node): lp for lp in loops if lp.iterator and lp.lower is not None
                   and _THREAD_WORDS & set(re.findall(r"\w+", to_c(lp.lower)))}
    innermost: dict[int, object] = {}       # id(access node) -> its innermost loop
    for lp in loops:
        for m in lp.memory_expressions:
            if id(m.node) not in innermost or lp.depth > innermost[id(m.node)].depth:
                innermost[id(m.node)] = lp

    def lanes_of(m, sx: int | None, sy: int | None) -> list[int]:
        """The element offsets of a warp's lanes for access ``m`` (:func:`_lane_offsets`),
        or, where its index has no thread id but an iterator of a cooperative loop (the
        lanes take consecutive values of it, as the loops our passes write do), that
        iterator's coefficient apart: a staged copy's row, not a broadcast."""
        if sx == 0 and sy == 0:
            step = cooperative_step(m)
            if step:
                return [lane * step for lane in range(32)]
        return _lane_offsets(block, sx, sy)

    def cooperative_step(m) -> int | None:
        """The coefficient of the innermost cooperative loop's iterator in ``m``'s index;
        None where it is in no such loop or the coefficient is not a number."""
        lp = innermost.get(id(m.node))
        while lp is not None:
            if id(lp.node) in cooperative:
                coeff = m.decomposition.loop.get(lp.iterator)
                if coeff is not None:
                    return value(sympy.sstr(coeff), None, assume=True) if \
                        coeff.free_symbols else int(coeff)
            lp = lp.parent
        return None

    l1 = _L1Reuse(proc, expressions, loops, trips, block, blocks, arrays, target, value,
                  opaque, lanes_of)

    def visit(node: c_ast.Node, count: int, loop: int) -> None:
        nonlocal l2, wavefronts, l1_lines, flops, instructions, cached, load_copies
        if id(node) in trips:
            count *= trips[id(node)]
            loop = id(node)
            instructions += warps * count * 2       # the step, the compare and branch
        m = expr_of.get(id(node))
        if m is not None and not m.is_write and m.array not in written.get(loop, ()):
            key = (loop, m.array, _index_key(m), m.vector_width)
            if key in seen:
                m = None
            seen.add(key)
        width = m.vector_width if m is not None else 1
        if m is not None and id(m.node) in runs:
            width = runs[id(m.node)]
            if not width:          # served by its run's vector read
                m = None
        if m is not None:
            param = arrays.get(m.array)
            size = (element_bytes(param.base_type) if param else 4) * width
            sx, sy = (_coefficient(m, ids, value, opaque) for ids in (_X_IDS, _Y_IDS))
            lanes = lanes_of(m, sx, sy)
            instructions += warps * count
            if m.space == "global" and sx is not None and sy is not None:
                # placed by the index's constant (a tap one column off crosses a sector)
                starts = _lane_starts(l1.offset(m), size, m.vector_width, lanes)
                pieces = [(0, size)]
                if m.vector_width > 1 and l1.offset(m) % m.vector_width and \
                        target.vendor == "nvidia":
                    # off its vector alignment for every thread (a tap one column off):
                    # NVIDIA has no unaligned vector access; the helper's scalar path runs,
                    # one request per element
                    elem = size // m.vector_width
                    pieces = [(k * elem, elem) for k in range(m.vector_width)]
                    instructions += warps * count * (m.vector_width - 1)
                line = target.l1_wavefront_bytes
                sectors = 0
                for at, n in pieces:
                    sectors += _pieces(starts, at, n, SECTOR)
                    l1_lines += warps * count * _pieces(starts, at, n, line)
                requested = warps * count * sectors * 32
                # reads through L1: a block fetches what its warps share (the rows of a
                # stencil's taps, a row read along a loop) once while it stays cached
                fetched = l1.bytes(m) if m.is_read else None
                l2 += requested if fetched is None else fetched
                if fetched is not None:
                    cached += fetched
                if m.is_read:
                    global_reads.append((sectors * 32.0, requested if fetched is None
                                         else fetched or l1.rows_apart(m, sy)))
                    load_copies += copies.get(loop, 1)
                # the span of element indices, in bytes (a vector access's index counts
                # elements too: its width is not a factor)
                lo, hi = _interval(m, extents, trips, loops, value)
                elem = size // width
                spans.setdefault(m.array, []).append((lo * elem, hi * elem))
            elif m.space == "global":
                l2 += warps * count * 32 * size
                # as its L2 bytes: the warp's bytes, as if contiguous
                l1_lines += warps * count * max(1, 32 * size // target.l1_wavefront_bytes)
                if m.is_read:       # a load in flight all the same, however it falls
                    global_reads.append((32.0 * size, warps * count * 32.0 * size))
                    load_copies += copies.get(loop, 1)
            elif m.space == "shared":
                wavefronts += warps * count * _wavefronts(lanes, size, width)
        if isinstance(node, c_ast.Assignment) and node.op in ("+=", "-=", "=", "*="):
            ops = _operators(node.rvalue)
            if node.op in ("+=", "-="):
                fma = _has_product(node.rvalue)
                flops += warps * 32 * count * (ops + 1)
                instructions += warps * count * (ops + (0 if fma else 1))
            elif ops:
                flops += warps * 32 * count * ops
                instructions += warps * count * ops
        if isinstance(node, c_ast.If):
            taken = _uniform_branch(node, sizes)
            if taken is not None:             # a version test on the sizes: its branch
                if taken.__class__ is not _Nothing:
                    visit(taken, count, loop)
                return
            if node.iffalse is not None and _inside_test(node.cond, uniform):
                # in bounds / edge: a vector path and its scalar fallback, a full tile and
                # the partial last one; the edge runs for the few threads or iterations at
                # the border, as the naive kernel's guard masks a few
                visit(node.cond, count, loop)
                visit(node.iftrue, count, loop)
                return
        if isinstance(node, c_ast.For):       # the step is no FP32 work (counted above)
            for child in (node.cond, node.stmt):
                if child is not None:
                    visit(child, count, loop)
            return
        for _, child in node.children():
            visit(child, count, loop)

    visit(proc.func.body, 1, 0)
    touched = float(sum(_covered(ranges) for ranges in spans.values()))
    # DRAM: every touched byte once; what blocks fetch again of each other's data (a
    # stencil's halo, a row every block reads) hits L2 while the blocks running together
    # touch less than it holds (l1.wave_bytes), the share beyond it misses; the rest of the
    # traffic (reads L1 does not place, stores) through the capacity model
    placed = min(cached, touched)           # the touched bytes those reads account for
    wave = l1.wave_bytes()
    again = (cached - placed) * max(0.0, 1.0 - target.l2_bytes / wave) if wave else 0.0
    rest = touched - placed
    # the capacity model's misses (over all the bytes touched) on what the rest moves
    # beyond what it touches
    misses = (dram_bytes(touched, touched + max(0.0, l2 - cached - rest), target) - touched)
    dram = touched + again + misses if touched else l2
    res = proc.resources
    serial = _serial_loop(proc, loops, trips, value, opaque)
    work = KernelWork(
        blocks=blocks, threads_per_block=threads_per_block,
        dram_bytes=dram, l2_bytes=l2,
        shared_wavefronts=wavefronts, l1_wavefronts=l1_lines, flops=flops,
        instructions=instructions,
        registers=res.registers if res is not None else None,
        shared_bytes=res.shared_bytes if res is not None else 0,
        loads_in_flight=serial[0] if serial else loads_in_flight(load_copies),
        serial_iterations=serial[1] if serial else 0.0,
        phased=_has_barrier(proc.func.body) and any(
            m.space == "global" and m.is_read and cooperative_step(m) is not None
            for m in expressions),
        bytes_per_request=_request_bytes(global_reads))
    if assumed:
        notes.append(f"{', '.join(sorted(assumed))} taken as {default}")
    return StaticWork(work, notes)


def _has_barrier(node: c_ast.Node) -> bool:
    """Whether the code holds a block barrier (``__syncthreads()``, OpenCL's ``barrier``)."""
    return any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
               n.name.name in ("__syncthreads", "barrier") for n, _ in walk(node))


def _request_bytes(reads: list[tuple[float, float]]) -> float:
    """The bytes a warp's load in flight moves from memory, on average over the global reads
    (``reads``: each one's request bytes and the bytes it fetches from L2): its sectors (a
    row of floats 128, a float4 row 512, a warp reading 32 rows apart 32 sectors, 1 KB), or
    nothing for a read whose sectors another fetched (the second of two taps one element
    apart, the copies of a merged thread's read): L1 serves it. 128 where none reads, a
    sector where every read's bytes are another's."""
    if not reads:
        return 128.0
    # a sector where the model places every byte read as fetched by another: a load waits
    # for one all the same
    total = sum(b for b, fetched in reads if fetched)
    return total / len(reads) if total else float(SECTOR)


RUN = 4      # 4-byte words per 128-bit shared load


class _Nothing(c_ast.Node):
    """The missing else branch of a version test that does not hold."""

    __slots__ = ()
    attr_names = ()

    def children(self):
        return ()


def _uniform_branch(node: c_ast.If, sizes: dict[str, int]) -> c_ast.Node | None:
    """The branch an ``if`` on the sizes alone takes at ``sizes`` (a version test: ``K == 5``,
    ``K - 1 <= 16``; a _Nothing for a missing else), or None where the condition names
    anything else (a guard, a flag: every branch is counted)."""
    text = to_c(node.cond)
    words = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text))
    if not words or not words <= set(sizes):
        return None
    try:
        holds = _holds(node.cond, sizes)
    except (ValueError, ZeroDivisionError):
        return None
    branch = node.iftrue if holds else node.iffalse
    return branch if branch is not None else _Nothing()


def _inside_test(cond: c_ast.Node, uniform: set[str]) -> bool:
    """Whether a condition is a conjunction of tests of being inside bounds: each compares a
    varying side (thread ids, locals) with a uniform one (sizes, literals: ``uniform`` names
    the sizes) the way a bounds guard does, ``x + 3 < W``, ``y >= 0``, ``k0 + 8 <= K`` (not
    ``x < 0`` nor ``x >= W``, which pick the edge). Nearly every thread passes one."""
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        return _inside_test(cond.left, uniform) and _inside_test(cond.right, uniform)
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in flip):
        return False

    def fixed(side: c_ast.Node) -> bool:
        return all(isinstance(n, c_ast.Constant) or (isinstance(n, c_ast.ID) and
                                                     n.name in uniform) or
                   isinstance(n, (c_ast.BinaryOp, c_ast.UnaryOp, c_ast.Cast, c_ast.Typename,
                                  c_ast.TypeDecl, c_ast.IdentifierType))
                   for n, _ in walk(side))

    left, right, op = cond.left, cond.right, cond.op
    if fixed(left) and not fixed(right):
        left, right, op = right, left, flip[op]
    if fixed(left) or not fixed(right):
        return False
    try:
        low = int(evaluate(to_c(right), {})) <= 0      # a literal bound: 0, -1
    except (ValueError, ZeroDivisionError):
        low = False
    return (op in ("<", "<=")) != low


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _holds(node: c_ast.Node, sizes: dict[str, int]) -> bool:
    """Whether a condition of comparisons and logic holds at ``sizes`` (ValueError where it
    is something else)."""
    if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        left = _holds(node.left, sizes)
        if node.op == "&&":
            return left and _holds(node.right, sizes)
        return left or _holds(node.right, sizes)
    if isinstance(node, c_ast.UnaryOp) and node.op == "!":
        return not _holds(node.expr, sizes)
    if isinstance(node, c_ast.BinaryOp) and node.op in _COMPARE:
        return _COMPARE[node.op](evaluate(to_c(node.left), sizes),
                                 evaluate(to_c(node.right), sizes))
    return bool(evaluate(to_c(node), sizes))


def _shared_runs(expressions, loops, written: dict[int, set[str]], arrays: dict
                 ) -> dict[int, int]:
    """Shared reads nvcc merges into 128-bit loads: id(node) -> 4 for the first read of a
    run, 0 for the three it absorbs. A run is 4 reads of one (4-byte, not written) shared
    array in the same innermost loop (or outside loops) whose indices differ only in their
    constant, by 0..3 from a constant that is a multiple of 4, the rest of the index a multiple
    of 4 for every thread and iteration (every coefficient is, of integer terms), so the first
    word is 16-byte aligned."""
    loop_of = {}
    for lp in loops:
        for m in lp.memory_expressions:
            loop_of[id(m.node)] = id(lp.node)
    groups: dict[tuple, dict[int, object]] = {}
    for m in expressions:
        if m.space != "shared" or m.is_write or m.vector_width != 1 or m.array in arrays:
            continue
        loop = loop_of.get(id(m.node), 0)       # 0: outside loops (an unrolled body)
        if m.array in written.get(loop, ()):
            continue
        const, rest = sympy.sympify(m.index).as_coeff_Add()
        terms = rest.as_coefficients_dict() if rest != 0 else {}
        # every other term a multiple of 4 (its factor an integer: a thread id, an
        # iterator, a pipeline's stage variable, which the analysis leaves unresolved)
        if not const.is_Integer or not all(c.is_Integer and c % RUN == 0
                                           for c in terms.values()):
            continue
        groups.setdefault((loop, m.array, sympy.srepr(rest)), {}).setdefault(int(const),
                                                                            m.node)
    runs: dict[int, int] = {}
    for offsets in groups.values():
        for start in sorted(o for o in offsets if o % RUN == 0):
            if all(start + i in offsets for i in range(RUN)):
                runs[id(offsets[start])] = RUN
                for i in range(1, RUN):
                    runs[id(offsets[start + i])] = 0
    return runs


def _unknown_name(text: str, names: dict) -> str | None:
    """The first identifier of ``text`` that ``names`` lacks (why evaluate failed)."""
    for word in re.findall(r"(?<![\w.])[A-Za-z_]\w*", text):
        if word not in names:
            return word
    return None


def _trips(lp, value, default: int) -> int:
    """The loop's trip count at the sizes: from its bounds, or, for a loop bounded by a
    conjunction (a tile loop's ``kk < 32 && k0 + kk < K``), from its ``it < E`` terms whose E
    is known (the smallest)."""
    step = abs(lp.step or 1)
    if lp.canonical and lp.lower is not None and lp.upper is not None:
        return max(0, -(-(value(to_c(lp.upper), default) - value(to_c(lp.lower), 0)) // step))
    node = lp.node
    iterator = lp.iterator
    if isinstance(node, c_ast.For) and not iterator and node.init is None:
        # a peeled tile loop continuing an iterator declared before it:
        # 'for (; k0 + 8 <= K; k0 += 8)' (its start is taken as 0)
        nxt = node.next
        if isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and \
                isinstance(nxt.lvalue, c_ast.ID) and isinstance(nxt.rvalue, c_ast.Constant):
            iterator, step = nxt.lvalue.name, max(1, abs(int(nxt.rvalue.value)))
    if not (isinstance(node, c_ast.For) and iterator):
        return default
    bounds = _upper_bounds(node.cond, iterator)
    known = [b for b in (value(to_c(bound), None) for bound in bounds) if b is not None]
    if not known and len(bounds) == 1:
        # one bound of unknown sizes (a peeled 'k0 + 8 <= m'): at the default, as a
        # canonical loop's; a conjunction's known terms bound it better
        known = [value(to_c(bounds[0]), default)]
    lower = value(to_c(lp.lower), 0) if lp.lower is not None else 0
    return max(0, -(-(min(known) - lower) // step)) if known else default


def _upper_bounds(cond: c_ast.Node | None, it: str) -> list[c_ast.Node]:
    """The E of each ``it < E`` (``it <= E`` as E + 1, ``it + c < E`` as E - c)
    conjunct of a loop condition."""
    if isinstance(cond, c_ast.BinaryOp) and cond.op == "&&":
        return _upper_bounds(cond.left, it) + _upper_bounds(cond.right, it)
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and \
            isinstance(cond.left, c_ast.BinaryOp) and cond.left.op == "+" and \
            isinstance(cond.left.left, c_ast.ID) and cond.left.left.name == it:
        bound = c_ast.BinaryOp("-", cond.right, cond.left.right)
        return _upper_bounds(c_ast.BinaryOp(cond.op, cond.left.left, bound), it)
    if isinstance(cond, c_ast.BinaryOp) and isinstance(cond.left, c_ast.ID) and \
            cond.left.name == it:
        if cond.op == "<":
            return [cond.right]
        if cond.op == "<=":
            return [c_ast.BinaryOp("+", cond.right, c_ast.Constant("int", "1"))]
    return []


def _coefficient(m, ids: tuple[str, ...], value, opaque: frozenset[int] = frozenset()
                 ) -> int | None:
    """The access's index step between neighbouring threads along one axis (in elements), or
    None where it is not a number at the sizes, or where the index is opaque and differs
    between threads (``opaque``: :class:`_Interior`; an opaque index of loop iterators alone
    is the same for every thread)."""
    if id(m.node) in opaque:
        return None
    total = 0
    for name in ids:
        coeff = m.decomposition.predefined.get(name)
        if coeff is None:
            continue
        if not m.decomposition.resolved:
            return None
        # a row width not given (no metadata): at the default, as a trip count's bound
        c = value(sympy.sstr(coeff), None, assume=True) if coeff.free_symbols else \
            int(coeff)
        if c is None:
            return None
        total += c
    return total


def _lane_offsets(block: tuple[int, ...], sx: int | None, sy: int | None) -> list[int]:
    """The element offsets of a warp's 32 lanes: lanes fill x first, then y."""
    sx, sy = sx or 0, sy or 0
    bx = max(1, block[0])
    return [(lane % bx) * sx + (lane // bx) * sy for lane in range(32)]


class _Interior:
    """A read whose row or column is clamped into the array (an image filter reading past
    the border: analysis/clamps.py) as the threads inside the image make it, at its
    unclamped coordinates: an affine read the model places, where the clamped index is
    opaque (and would be counted as a full warp's bytes). The border threads it misjudges
    are few. The reads it leaves opaque whose index names something that differs between
    threads (a thread id, a local: a gather ``A[I[i]]``) it collects in ``opaque``: their
    lanes' addresses are unknown, where an opaque index of loop iterators alone is one
    address for the warp."""

    def __init__(self, env, uniform: set[str]):
        self.env, self.uniform = env, uniform
        # the reads left opaque whose index names what differs between threads (a thread
        # id, a local): where the lanes fall is not known
        self.opaque: set[int] = set()

    def __call__(self, m):
        if m.decomposition.resolved or m.space != "global" or \
                not isinstance(m.node, c_ast.ArrayRef):
            return m
        env = self.env.scoped(set(m.loops))
        clamped, _ = clamped_index(to_sympy(m.node.subscript, env), self.env)
        if clamped is not None:
            row, column = clamped.forms
            index = row * clamped.width + column
            d = decompose(index, env)
            if d.resolved:
                return dataclasses.replace(m, index=index, decomposition=d)
        names = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*", to_c(m.node.subscript)))
        if names - self.uniform - set(m.loops):
            self.opaque.add(id(m.node))
        return m


def _index_key(m) -> str:
    """What tells two accesses' indices apart: the symbolic index, or the index as written
    where the analysis left parts unresolved (its placeholders for two different clamps
    print alike)."""
    return sympy.srepr(m.index) if m.decomposition.resolved else to_c(m.node)


def _lane_starts(offset: int, size: int, width: int, lanes: list[int]) -> list[int]:
    """The byte addresses a warp's lanes access, relative to the array: ``lanes`` (element
    offsets, :func:`_lane_offsets`) shifted by the index's constant ``offset``; ``size`` bytes
    an access of ``width`` elements (a vector index counts elements, not vectors)."""
    return [(offset + o) * size // width for o in lanes]


def _pieces(starts: list[int], at: int, n: int, unit: int) -> int:
    """The distinct ``unit``-byte pieces (sectors, L1 lines) that accesses of ``n`` bytes at
    ``starts`` (each shifted by ``at``) touch."""
    return len({(o + at + b) // unit for o in starts for b in (0, n - 1)})


def _wavefronts(lanes: list[int], size: int, width: int) -> int:
    """Shared-memory wavefronts of one warp request of ``size`` bytes per lane (``width``
    elements): the most distinct 4-byte words any bank must serve, and at least one per 128
    bytes moved."""
    element_words = max(1, size // max(1, width) // 4)
    lane_words = max(1, size // 4)
    banks: dict[int, set[int]] = {}
    for o in lanes:
        first = o * element_words
        for w in range(first, first + lane_words):
            banks.setdefault(w % 32, set()).add(w)
    distinct = sum(len(words) for words in banks.values())
    return max(max(len(words) for words in banks.values()), -(-distinct * 4 // 128))


def _interval(m, extents: dict[str, int], trips: dict[int, int], loops, value
              ) -> tuple[int, int]:
    """The elements ``[lo, hi)`` an access's index ranges over: its constant part plus its
    affine terms over the thread space and its loops (a bounding range). The constant part
    places it: the three planes ``rgb[k*H*W + y*W + x]`` of one array are three ranges."""
    d = m.decomposition
    lo = hi = value(sympy.sstr(d.constant), 0) if d.constant.free_symbols else \
        int(d.constant) if d.constant.is_Integer else 0
    loop_trips = {lp.iterator: trips[id(lp.node)] for lp in loops if lp.iterator}
    for terms, counts in ((d.predefined, extents), (d.loop, loop_trips)):
        for name, coeff in terms.items():
            c = value(sympy.sstr(coeff), 0) if coeff.free_symbols else int(coeff)
            reach = c * max(0, counts.get(name, 1) - 1)
            lo, hi = lo + min(0, reach), hi + max(0, reach)
    return lo, hi + 1


def _covered(ranges: list[tuple[int, int]]) -> int:
    """The bytes a union of ``[lo, hi)`` ranges covers."""
    total, end = 0, None
    for lo, hi in sorted(ranges):
        if end is None or lo >= end:
            total += hi - lo
            end = hi
        elif hi > end:
            total += hi - end
            end = hi
    return total


def _operators(node: c_ast.Node) -> int:
    """Arithmetic operators of an expression, array subscripts left out."""
    if isinstance(node, c_ast.ArrayRef):
        return 0
    n = 1 if isinstance(node, c_ast.BinaryOp) and node.op in "+-*/" else 0
    return n + sum(_operators(child) for _, child in node.children())


def _has_product(node: c_ast.Node) -> bool:
    if isinstance(node, c_ast.ArrayRef):
        return False
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        return True
    return any(_has_product(child) for _, child in node.children())


class _L1Reuse:
    """What a block's reads fetch from L2 through its SM's L1: the distinct sectors they touch
    (:func:`_footprint`) over the block's threads and the loops whose reuse L1 catches.

    A loop's reuse is caught when the data one of its iterations touches (every global read
    inside it, over the block's threads and the loops inside it), times the blocks resident on
    an SM, fits in half the SM's L1 (what shared memory leaves of it; half, for the lines
    conflicts and other data evict): then a sector read again in a later iteration is still
    there. Loops are taken from the innermost outwards, up to the first that does not fit;
    the loops outside it fetch again on every iteration. A naive convolution's taps (rows
    reused by the block's next rows of threads, columns by the next taps) and a matrix
    product's row of A read along k are fetched once per block; a naive mv's rows once per
    sector, not once per element. Reads whose index is not affine at the sizes are left to
    the caller (no reuse)."""

    def __init__(self, proc, expressions, loops, trips, block, blocks, arrays, target, value,
                 opaque: frozenset[int], lanes_of):
        self.trips, self.block, self.blocks, self.value = trips, block, blocks, value
        self.opaque, self.lanes_of = opaque, lanes_of
        self.arrays = arrays
        res = proc.resources
        resident = resident_blocks(target, block[0] * block[1] * block[2],
                                   res.registers if res is not None else None,
                                   res.shared_bytes if res is not None else 0, blocks)
        shared = (res.shared_bytes if res is not None else 0) * resident \
            if target.l1_with_shared else 0
        self.budget = max(0, target.l1_bytes - shared) / 2 / resident
        self.concurrent = resident * target.multiprocessors
        self.chain: dict[int, list] = {}        # id(node) -> enclosing loops, inner first
        innermost: dict[int, object] = {}
        for lp in loops:
            for m in lp.memory_expressions:
                cur = innermost.get(id(m.node))
                if cur is None or lp.depth > cur.depth:
                    innermost[id(m.node)] = lp
        reads = [m for m in expressions if m.space == "global" and m.is_read]
        # reads of one array in the same loops whose indices differ only in a constant (a
        # written-out 3x3 filter's nine taps) share their sectors: the first of a group
        # fetches the union of their footprints, the others nothing
        self.group: dict[int, list] = {}
        self.leader: dict[int, object] = {}     # a group's other reads -> its first
        groups: dict[tuple, list] = {}
        for m in reads:
            chain, lp = [], innermost.get(id(m.node))
            while lp is not None:
                chain.append(lp)
                lp = lp.parent
            self.chain[id(m.node)] = chain
            d = m.decomposition
            key = (m.array, m.vector_width, tuple(id(lp.node) for lp in chain),
                   sympy.srepr(sympy.expand(m.index - d.constant)))
            groups.setdefault(key, []).append(m)
        for members in groups.values():
            self.group[id(members[0].node)] = members
            for m in members[1:]:
                self.group[id(m.node)] = []
                self.leader[id(m.node)] = members[0]
        # the bytes one iteration of each loop touches, over the block
        self.working: dict[int, float] = {}
        for m in reads:
            chain = self.chain[id(m.node)]
            if not self.group[id(m.node)]:
                continue
            for level, lp in enumerate(chain):
                sectors = self._sectors(m, chain[:level])
                if sectors is None:
                    # not affine (an iterator of a loop bounded by a conjunction): at most
                    # the sectors its warps request in those iterations
                    sectors = self._requested(m)
                    for inner in chain[:level]:
                        sectors *= self.trips.get(id(inner.node), 1)
                self.working[id(lp.node)] = self.working.get(id(lp.node), 0.0) + \
                    sectors * SECTOR

    def wave_bytes(self) -> float:
        """The bytes the blocks running together touch at once: per block, each read's
        data of one iteration of its outermost loop (its whole footprint where it is in
        no loop), times the blocks resident on all SMs."""
        per_block = 0.0
        for node, members in self.group.items():
            if not members:
                continue
            chain = self.chain[node]
            if chain:
                per_block = max(per_block, self.working.get(id(chain[-1].node), 0.0))
            else:
                sectors = self._sectors(members[0], [])
                per_block += (sectors if sectors is not None else
                              self._requested(members[0])) * SECTOR
        return per_block * min(self.blocks, self.concurrent)

    def bytes(self, m) -> float | None:
        """The bytes read ``m`` fetches from L2 over the launch, or None where not known."""
        chain = self.chain.get(id(m.node))
        if chain is None:
            return None
        if not self.group[id(m.node)]:
            return 0.0          # its group's first read fetched its sectors
        caught = 0
        while caught < len(chain) and \
                self.working.get(id(chain[caught].node), math.inf) <= self.budget:
            caught += 1
        sectors = self._sectors(m, chain[:caught])
        if sectors is None:
            return None
        for lp in chain[caught:]:
            sectors *= self.trips.get(id(lp.node), 1)
        # no more than the group's requests
        requested = sum(self._requested(g) for g in self.group[id(m.node)])
        for lp in chain:
            requested *= self.trips.get(id(lp.node), 1)
        return float(self.blocks * min(sectors, requested) * SECTOR)

    def _requested(self, m) -> int:
        """The sectors the block's warps request in one execution of ``m``."""
        sx = _coefficient(m, _X_IDS, self.value, self.opaque)
        sy = _coefficient(m, _Y_IDS, self.value, self.opaque)
        warps = -(-self.block[0] * self.block[1] * self.block[2] // 32)
        if sx is None or sy is None:
            return warps * 32
        param = self.arrays.get(m.array)
        size = (element_bytes(param.base_type) if param else 4) * m.vector_width
        starts = _lane_starts(self.offset(m), size, m.vector_width,
                              self.lanes_of(m, sx, sy))
        return warps * _pieces(starts, 0, size, SECTOR)

    def _sectors(self, m, loops) -> int | None:
        """Distinct sectors ``m`` touches over one block's threads and ``loops``."""
        d = m.decomposition
        if not d.resolved:
            return None
        param = self.arrays.get(m.array)
        elem = element_bytes(param.base_type) if param else 4
        sx = _coefficient(m, _X_IDS, self.value, self.opaque)
        sy = _coefficient(m, _Y_IDS, self.value, self.opaque)
        if sx is None or sy is None:
            return None
        terms = [(sx * elem, self.block[0]), (sy * elem, self.block[1])]
        for lp in loops:
            coeff = d.loop.get(lp.iterator) if lp.iterator else None
            if coeff is None:
                continue
            c = self.value(sympy.sstr(coeff), None, assume=True) if coeff.free_symbols \
                else int(coeff)
            if c is None:
                return None
            step, trips = abs(lp.step or 1), self.trips.get(id(lp.node), 1)
            if _THREAD_WORDS & set(re.findall(r"\w+", to_c(lp.lower) if lp.lower else "")):
                # a cooperative loop from a thread id ('r = tidy; r < R; r += 8'): the
                # block's threads cover every step between
                step, trips = 1, trips * step
            terms.append((c * step * elem, trips))
        offsets = sorted({self._constant(g) for g in self.group[id(m.node)] or [m]})
        const = offsets[0]
        # the group's offsets: rows of the largest row stride the index has, and columns
        rows_stride = max((abs(s) // elem for s, n in terms if n > 1 and abs(s) >= SECTOR),
                          default=0)
        if len(offsets) > 1:
            rows = sorted({round(o / rows_stride) if rows_stride else 0 for o in offsets})
            cols = [o - (round(o / rows_stride) * rows_stride if rows_stride else 0)
                    for o in offsets]
            terms.append((elem, max(cols) - min(cols) + 1))
            # rows within reach of each other are one band (a filter's), far ones
            # (another plane) repeat the footprint
            reach = 1 + sum(abs(s) // (rows_stride * elem) * (n - 1) for s, n in terms
                            if rows_stride and abs(s) % (rows_stride * elem) == 0)
            bands, start, last = 1, rows[0], rows[0]
            span = 0
            for r in rows[1:]:
                if r - last > reach:
                    bands += 1
                    span = max(span, last - start)
                    start = r
                last = r
            span = max(span, last - start)
            if span:
                terms.append((rows_stride * elem, span + 1))
            const = min(cols)
        else:
            bands = 1
        # whether every run starts on a sector: its offset, the block's start and the row
        # strides all multiples of a sector
        starts = [const * elem, sx * elem * self.block[0], sy * elem * self.block[1]]
        aligned = all(x % SECTOR == 0 for x in starts) and \
            all(s % SECTOR == 0 for s, _ in terms if abs(s) >= SECTOR)
        return bands * _footprint(terms, elem * m.vector_width, aligned)

    def rows_apart(self, m, sy: int | None) -> bool:
        """Whether a read whose sectors its group's first read fetched reads rows no other
        warp of the block reads in that iteration (a transpose's rows 8 apart in a 32x8
        block, not a filter's row above): its lines then come from memory with its own
        request, which the block's footprint, counted once, does not tell."""
        first = self.leader.get(id(m.node))
        if first is None or not sy:
            return False
        return abs(self.offset(m) - self.offset(first)) >= abs(sy) * self.block[1]

    def offset(self, m) -> int:
        """The constant part of ``m``'s index, in elements (0 where not a number)."""
        return self._constant(m) if m.decomposition.resolved else 0

    def _constant(self, m) -> int:
        c = m.decomposition.constant
        return self.value(sympy.sstr(c), 0) if c.free_symbols else \
            int(c) if c.is_Integer else 0


SECTOR = 32
_THREAD_WORDS = {*_X_IDS, *_Y_IDS, "idz", "tidz"}


def _footprint(terms: list[tuple[int, int]], elem: int, aligned: bool) -> int:
    """The distinct sectors an index ``sum(stride_i * t_i)``, ``0 <= t_i < n_i`` (strides in
    bytes, ``terms`` = [(stride_i, n_i)]), touches with accesses of ``elem`` bytes: terms
    whose stride is within the run built so far extend it (a row and its taps' columns), the
    others repeat it as rows (rows of one stride merge where they overlap: a block's rows and
    a filter's). A run costs its sectors, one more where it does not start on one."""
    run = elem
    rows: list[list[int]] = []
    for s, n in sorted((abs(s), n) for s, n in terms if s and n > 1):
        if not rows and s <= max(run, SECTOR):
            run += s * (n - 1)
        elif rows and s % rows[-1][0] == 0 and s <= rows[-1][0] * rows[-1][1]:
            rows[-1][1] += s // rows[-1][0] * (n - 1)
        else:
            rows.append([s, n])
    total = 1 if run <= elem and elem <= SECTOR else -(-run // SECTOR) + (0 if aligned else 1)
    for _, n in rows:
        total *= n
    return total


#: The most iterations of a loop with constant bounds that nvcc unrolls in full by default
#: (a filter's tap loop); a longer one (a 32-wide tile loop) counts as a loop.
UNROLLED_TRIPS = 16


def _unrolled(loops, trips: dict[int, int], macros: set[str]) -> dict[int, int]:
    """For each loop (the id of its node), the copies nvcc's full unrolling makes of a load
    directly inside it: the product of the trip counts of the loop and of the loops around it
    whose bounds are constants (literals, the file's macros) and which run at most
    UNROLLED_TRIPS times, from the loop outwards up to the first that is not such a loop. The
    copies are independent loads a warp keeps in flight together: a 3x3 filter written as
    ``dy``/``dx`` loops has nine, as the same filter with its taps written out does."""
    def fixed(lp) -> bool:
        if not (lp.canonical and lp.step and lp.lower is not None and lp.upper is not None):
            return False
        # (as printed: thread ids are PredefId nodes until lowered)
        names = {w for bound in (lp.lower, lp.upper)
                 for w in re.findall(r"(?<![\w.])[A-Za-z_]\w*", to_c(bound))}
        return names <= macros and 0 < trips.get(id(lp.node), 0) <= UNROLLED_TRIPS

    out: dict[int, int] = {}
    for lp in loops:
        n, up = 1, lp
        while up is not None and fixed(up):
            n *= trips[id(up.node)]
            up = up.parent
        out[id(lp.node)] = n
    return out


def _serial_loop(proc, loops, trips: dict[int, int], value, opaque: frozenset[int]
                 ) -> tuple[float, float] | None:
    """Where the kernel's hot loop (the innermost loop that runs the most iterations and
    reads global memory) also stores to global memory in every iteration and the pointers
    may alias (not all ``__restrict__``), the loads a warp keeps in flight and the waits per
    thread: the compiler cannot move a later load above that store, so only one iteration's
    loads overlap, and each store waits for its element's round trip (a naive ``y[j] +=
    A[i][j] * x[i]`` loads y[j] back in the next iteration): the loop's iterations times the
    arrays it stores to (gesummv's two sums wait twice an iteration). The loads are its
    distinct reads of arrays it does not write that differ between threads (a read all
    threads share hits in L1). None where the hot loop is not such a loop."""
    pointers = [p for p in proc.params if p.is_pointer]
    if pointers and all(p.restrict for p in pointers):
        return None
    parents = {id(lp.parent.node) for lp in loops if lp.parent is not None}
    best, hot = -1, None
    for lp in loops:
        if id(lp.node) in parents or not any(m.space == "global" and m.is_read
                                             for m in lp.memory_expressions):
            continue
        n, up = 1, lp
        while up is not None:
            n *= trips.get(id(up.node), 1)
            up = up.parent
        if n > best:
            best, hot = n, lp
    if hot is None:
        return None
    body = hot.memory_expressions
    written = {m.array for m in body if m.is_write and m.space == "global"}
    if not written:
        return None
    varying = set()
    for m in body:
        if m.space != "global" or not m.is_read or m.array in written:
            continue
        sx = _coefficient(m, _X_IDS, value, opaque)
        sy = _coefficient(m, _Y_IDS, value, opaque)
        if sx == 0 and sy == 0:
            continue
        varying.add((m.array, _index_key(m)))
    return float(min(MAX_LOADS_IN_FLIGHT, max(1, len(varying)))), float(best * len(written))
