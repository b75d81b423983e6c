"""The work of one launch of a kernel, read from its code at given sizes: no trace, no run.

Choosing among variants (selection.py) needs an estimate of each at the sizes of interest,
dozens per kernel, in milliseconds each: the profiler's trace (profile/) runs the kernel on
PoCL and is far too slow for that. This reads the same quantities from the code:

- the launch: blocks and threads from the variant's launch geometry (launch.py) at the sizes;
- how often each access runs per thread: the product of the trip counts of its enclosing
  loops (bounds evaluated at the sizes; a bound that depends on a thread id, or an unknown
  name, at ``default``: the notes say which);
- global accesses: the 32-byte sectors one warp request touches, from the access's affine
  index (its coefficients of the thread ids along x and y, at the sizes) over the 32 lanes of
  a warp laid out in the block; the bytes between L1 and L2 are sectors x 32 over all warps
  (L1 hits are not modelled: what the tiling passes stage in shared memory is what L1 would
  otherwise have to catch);
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

import math
import re
from dataclasses import dataclass, field

import sympy
from pycparser import c_ast

from .. import launch
from ..analysis.loops import LoopAnalysis
from ..analysis.manager import AnalysisManager
from ..analysis.memory_expressions import MemoryExpressionAnalysis
from ..ir import GProcedure
from ..ir.cgen import to_c
from ..ir.rewrite import walk
from ..ir.elements import element_bytes
from ..targets import Target
from ..verify.expr import evaluate
from .model import Estimate, KernelWork, dram_bytes, estimate, loads_in_flight

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
    expressions = am.get(proc, MemoryExpressionAnalysis)
    notes: list[str] = []
    assumed: set[str] = set()
    # thread ids in a loop bound (a cooperative copy's 'r = tidy', a triangular 'j < idx'):
    # the middle of their range, the average thread's trip count
    middle: dict[str, int] = {}

    def value(text: str | None, fallback: int | None) -> int | None:
        """``text`` evaluated at the sizes; unknown names taken as ``default`` (and noted),
        except with no ``fallback``, where an unknown name gives None."""
        if text is None:
            return fallback
        names = {**middle, **sizes}
        for _ in range(8):
            try:
                return int(evaluate(text, names))
            except (ValueError, ZeroDivisionError) as exc:
                missing = _unknown_name(text, names)
                if missing is None or fallback is None:
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

    trips: dict[int, int] = {}          # id(loop node) -> trip count
    for lp in loops:
        trips[id(lp.node)] = _trips(lp, value, default)
    expr_of = {id(m.node): m for m in expressions}
    arrays = {p.name: p for p in proc.params if p.is_pointer}

    l2 = wavefronts = flops = instructions = 0.0
    global_reads: list[int] = []        # the vector width of each global read
    spans: dict[str, list[tuple[int, int]]] = {}    # byte ranges each array's accesses cover

    # reads the compiler keeps in a register: the same element read again in one iteration of
    # the innermost loop, which does not write that array (a merged thread's copies of
    # s_A[tidy][kk] are one load)
    written: dict[int, set[str]] = {
        id(lp.node): {m.array for m in lp.memory_expressions if m.is_write} for lp in loops}
    seen: set[tuple] = set()
    runs = _shared_runs(expressions, loops, written, arrays)

    uniform = {p.name for p in proc.params if not p.is_pointer} | set(sizes) | \
        set(module.macros)

    def visit(node: c_ast.Node, count: int, loop: int) -> None:
        nonlocal l2, wavefronts, flops, instructions
        if id(node) in trips:
            count *= trips[id(node)]
            loop = id(node)
            instructions += warps * count * 2       # the step, the compare and branch
        m = expr_of.get(id(node))
        if m is not None and not m.is_write and m.array not in written.get(loop, ()):
            key = (loop, m.array, sympy.srepr(m.index), m.vector_width)
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
            sx, sy = (_coefficient(m, ids, value) for ids in (_X_IDS, _Y_IDS))
            lanes = _lane_offsets(block, sx, sy)
            instructions += warps * count
            if m.space == "global" and sx is not None and sy is not None:
                sectors = len({(o * size // m.vector_width + b) // 32
                               for o in lanes for b in (0, size - 1)})
                l2 += warps * count * sectors * 32
                if m.is_read:
                    global_reads.append(m.vector_width)
                # the span of element indices, in bytes (a vector access's index counts
                # elements too: its width is not a factor)
                lo, hi = _interval(m, extents, trips, loops, value)
                elem = size // width
                spans.setdefault(m.array, []).append((lo * elem, hi * elem))
            elif m.space == "global":
                l2 += warps * count * 32 * size
                if m.is_read:       # a load in flight all the same, however it falls
                    global_reads.append(m.vector_width)
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
    res = proc.resources
    work = KernelWork(
        blocks=blocks, threads_per_block=threads_per_block,
        dram_bytes=dram_bytes(touched, l2, target) if touched else l2, l2_bytes=l2,
        shared_wavefronts=wavefronts, flops=flops, instructions=instructions,
        registers=res.registers if res is not None else None,
        shared_bytes=res.shared_bytes if res is not None else 0,
        loads_in_flight=loads_in_flight(len(global_reads)),
        # a warp's float4 load moves four rows' bytes: four times a float row in flight
        bytes_per_request=128.0 * (sum(global_reads) / len(global_reads) if global_reads
                                   else 1))
    if assumed:
        notes.append(f"{', '.join(sorted(assumed))} taken as {default}")
    return StaticWork(work, notes)


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


def _coefficient(m, ids: tuple[str, ...], value) -> int | None:
    """The access's index step between neighbouring threads along one axis (in elements), or
    None where it is not a number at the sizes."""
    total = 0
    for name in ids:
        coeff = m.decomposition.predefined.get(name)
        if coeff is None:
            continue
        if not m.decomposition.resolved:
            return None
        c = value(sympy.sstr(coeff), None) if coeff.free_symbols else int(coeff)
        if c is None:
            return None
        total += c
    return total


def _lane_offsets(block: tuple[int, ...], sx: int | None, sy: int | None) -> list[int]:
    """The element offsets of a warp's 32 lanes: lanes fill x first, then y."""
    sx, sy = sx or 0, sy or 0
    bx = max(1, block[0])
    return [(lane % bx) * sx + (lane // bx) * sy for lane in range(32)]


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
