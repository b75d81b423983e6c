"""Neighbourhood staging for stencils (convolutions, 2-D filters): each block loads the
window of an array its threads read around their own element once, into shared memory.

A naive convolution reads ``A(idy + i, idx + j)`` for every (i, j) of a K x K filter: each
input element is read by K*K threads, and every warp request is misaligned by j. Neither
coalescing nor thread-block merge applies (the access is already unit-stride in x and is not
a row or column of a tiled loop). Here a block covering CX x CY outputs loads the window

    rows  [by0 + amin, by0 + CY - 1 + amax]     (amin..amax: the row offsets i can add)
    cols  [bx0 + bmin, bx0 + CX - 1 + bmax]

row by row (a warp per row: coalesced loads and conflict-free stores), waits at a barrier,
and runs the kernel's body with the reads served from the window. Reads the same for every
thread whose index only moves with the loops (the filter ``F(i, j)``) get a window too, of
the offsets alone. With thread merge (CX, CY larger than the block) each thread computes
several outputs, as in a tiled loop, so that one window serves more outputs. Register-blocked
variants go further: a thread's outputs are runs of adjacent ones (4 or 8 along x or y), its
copies of the body share one loop nest (tiling/fusion.py) and, for the common filter sizes,
a body of their own with the taps unrolled (``if (K == 5) ...``, tiling/window.py), so that
every input value and tap a thread reads from the window serves all the outputs it touches
from a register: conv's 5x5 taps for 4x4 outputs issue 14 128-bit and 2 scalar shared loads
for 400 FFMA (tests/test_register_blocking.py), where the plain copies issue more than one
shared load per FFMA. The cost model (selection.py) chooses among all variants, and the chosen
one must be estimated faster than the kernel as written (selection.beats_as_written): with
an L1 as large as today's, a 3x3 filter's taps mostly hit in L1 already, and staging them
buys a barrier and fewer loads in flight (on an H100, staged 3x3 filters ran 4-19% slower
than as written: bench/results/NVIDIA-H100-80GB-HBM3-2026-11-23.md). ``--merge`` and
``--register-tile`` force a variant, as written or not, and ``--cost-model unlimited`` stages
wherever staging is legal.

This module is the window analysis: which reads are staged, the windows they need and the
guard's box of active threads. The plan it builds is one kind of the staging engine's, which
generates the code (tiling/window.py) with the copies thread merge makes of a tiled loop.

Window sizes follow from the loop bounds. When an extent depends on a runtime size (a filter
of K x K, K a parameter), the window is sized for offsets spanning up to HALO_CAP and the
kernel is versioned: ``if (K - 1 <= 16) { staged } else { the original body }`` (a uniform
branch, so the barrier is reached by all threads or none).

Which elements a block loads, and why that is safe: the guard must bound the thread ids by a
box (``lo <= idy < hi`` per axis, uniform bounds), every loop around a staged read must have
uniform bounds and no break/continue, and the read must run unconditionally in the guarded
body, so the naive kernel reads the corners ``(ylo + amin, xlo + bmin)`` and ``(yhi - 1 +
amax, xhi - 1 + bmax)`` (some read realises both minima at once and some both maxima; loops
non-empty). A row-major array is contiguous, so every element of the window between those
corners is inside the array; elements outside the guard's box (shifted by the offsets) are
not loaded (zero-filled) and no active thread reads them. Where no single read reaches both
corners (a 5-point cross), each read still reaches its own, and loads are also limited to the
flat index range between the least and the greatest of them. As with coalescing, the staged
array must not be written by the kernel, and pointer arguments are assumed not to alias.

A read may also sit under a bounds test of its own row and column (image filters that skip
neighbours outside the image: ``if (yy >= 0 && yy < H && xx >= 0 && xx < W) ... A[yy][xx]``,
a :data:`Fence`). The window is then loaded inside that fence too. That is safe when the
read's offsets are one interval of consecutive integers per axis (constant, or one loop with
step +-1): the threads' ids and the offsets then reach every row and column of the fenced
window, so the naive kernel reads its corners. Unconditional reads of the same array must be
provably inside the fence for every active thread (the centre pixel ``A[y][x]`` with
``0 <= y < H``).

A read may instead clamp its row or column at the border (``min(max(x + dx, 0), W - 1)``,
one-sided, swapped, OpenCL's ``clamp``, Sobel's ``x > 0 ? x - 1 : 0``; analysis/clamps.py).
It is staged at its unclamped offsets, and the window is loaded through the same clamp: see
:func:`_clamped` for why every read then finds what it reads in the naive kernel and every
load stays inside the array.

A 3-D grid's plane index ``blockIdx.z`` is the same for all threads of a block: a block stages
the window of its own plane (the rows ``blockIdx.z * ny + idy + ...`` of the array seen as
``nz*ny x nx``), and a read of another plane is a window of its own (:func:`_plane`).
"""
from __future__ import annotations

import copy
import dataclasses
import itertools

import sympy
from pycparser import c_ast

from ...analysis.clamps import Clamp, clamped_index
from ...analysis.guards import ThreadIdAliases
from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis, is_pure
from ...analysis.symbols import SymbolAnalysis
from ...ir import GProcedure, MemoryExpression, PredefId
from ...ir.rewrite import walk
from ...ir.symbolic import BLOCK_Z, SymbolEnv, Unresolved, decompose, recover_2d, to_sympy
from ...launch import default_block, uses_y
from ...targets import Target, get_target, occupancy
from ..manager import OptimizationPass, PassContext, adopt
from ..functional.nvcc import measure
from .selection import Variant, beats_as_written, choose
from .shape import contains_barrier, enclosing_loop
from .tiling.bounds_guard import guard_obstacle, guard_remark, with_bounds_guard
from .tiling.window import SPECIALIZED_SPANS
from .tiling import (AXES, HALO_CAP, SYM, THREAD, Box, Fence, Read, TilingAnalysis, Window,
                     WindowPlan, generate, uses_raw_thread_ids, windows_bytes)

SCALARS = {"float", "int", "unsigned int"}      # 4-byte words: the bank model's unit


class Stencil(OptimizationPass):
    name = "stencil"
    requires = ("memory-expressions", "nvcc")

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        why = self._obstacle(proc, ctx)
        if why:
            ctx.remark("missed", self.name, proc, why)
            return PreservedAnalyses.all()
        symbols = ctx.am.get(proc, SymbolAnalysis)
        env = symbols.env()
        shape, _ = ctx.am.get(proc, ShapeAnalysis)
        box = None
        if shape.guard is not None:
            box, why = guard_box(shape.guard, ctx.am.get(proc, ThreadIdAliases), env)
            if box is None:
                ctx.remark("missed", self.name, proc, f"the guard is not a box of thread-id "
                           f"bounds: {why}")
                return PreservedAnalyses.all()
        windows, loops = self._windows(proc, ctx, env, symbols.env(clamps=True, planes=True),
                                       shape.body, box)
        if not windows:
            ctx.remark("missed", self.name, proc, "no read-only global array is read around "
                       "each thread's own element or by all threads alike in loops")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        guarded = self._guarded(proc, ctx) if shape.guard is None else None
        variants = self._variants(proc, ctx, windows, box, loops, target, guarded)
        if not variants:
            return PreservedAnalyses.all()
        best = choose(ctx, proc, self.name, variants)
        if best is None or best.proc is None:
            ctx.remark("missed", self.name, proc, "no window variant fits the target")
            return PreservedAnalyses.all()
        forced = ctx.options.merge or ctx.options.register_tile or \
            ctx.options.cost_model == "unlimited"
        if not forced and not beats_as_written(ctx, proc, self.name, best):
            return PreservedAnalyses.all()
        if best.plan.register_blocked and best.plan.spans is not None:
            # chosen with the body for the sizes of interest only: now with all of them
            full = dataclasses.replace(best.plan, spans=None)
            built, why = generate(full, target, ctx.am)
            if built is not None:
                res, _ = (measure(ctx.module, built, ctx.arch) if target.vendor == "nvidia"
                          else (None, ""))
                built.resources = res or best.proc.resources
                best.proc, best.plan = built, full
                if res is not None:         # the remark says the output's own figures
                    best.registers, best.shared_bytes = res.registers, res.shared_bytes
                    best.occupancy, best.limiter = occupancy(
                        target, best.block[0] * best.block[1], res.registers, res.shared_bytes)
        adopt(proc, best.proc, ctx)
        plan: WindowPlan = best.plan
        if guarded is not None and plan.original is guarded[0]:
            ctx.remark("applied", self.name, proc, guard_remark(
                plan.original, f"its blocks now cover {plan.coverage[0]}x{plan.coverage[1]} "
                "outputs"))
        runtime = list(dict.fromkeys(f"{w.span(a)} <= {HALO_CAP}" for w in windows
                                     for a in (0, 1) if not w.span(a).is_number))
        ctx.remark("applied", self.name, proc, "staged in shared memory once per block: "
                   + ", ".join(f"{w.describe()} -> s_{w.array}" for w in windows)
                   + f"; each thread computes {plan.merge[0]}x{plan.merge[1]} outputs"
                   + (f" in one loop nest, register-blocked in runs of {plan.group} adjacent "
                      "ones (taps unrolled for spans "
                      f"{', '.join(map(str, sorted(SPECIALIZED_SPANS)))})"
                      if plan.register_blocked else "") + ", "
                   f"{plan.elements_per_output():.2f} window elements per output; "
                   + best.describe()
                   + (f"; staged only when {', '.join(runtime)} (else the unstaged body)"
                      if runtime else ""))

    def _obstacle(self, proc: GProcedure, ctx: PassContext) -> str:
        if ctx.options.memory == "texture":
            return "not applied with texture memory (reads go through the texture cache)"
        if ctx.am.get(proc, TilingAnalysis) is not None:
            return "the kernel's loop is already staged (coalesce / thread-block merge)"
        if contains_barrier(proc.body):
            return "kernel already has barriers"
        if uses_raw_thread_ids(proc):
            return "the kernel uses tidx/tidy/bidx/bidy or the block size directly, whose " \
                "meaning a new block shape would change"
        shape, why = ctx.am.get(proc, ShapeAnalysis)
        if shape is None:
            return f"cannot stage: {why}"
        if any(isinstance(n, (c_ast.Return, c_ast.Goto)) for st in shape.body
               for n, _ in walk(st)):
            return "the guarded body returns early"
        return ""

    def _guarded(self, proc: GProcedure, ctx: PassContext
                 ) -> tuple[GProcedure, list[Window], Box, list] | None:
        """The unguarded kernel as a copy given the bounds guard it lacks
        (tiling/bounds_guard.py), with its windows and the guard's box, for the block and
        merge shapes whose cover overhangs the thread space; None where no guard can be
        added or the copy stages nothing."""
        if guard_obstacle(proc, ctx.module):
            return None
        alt = with_bounds_guard(proc, ctx)
        shape, _ = ctx.am.get(alt, ShapeAnalysis)
        if shape is None or shape.guard is None:
            return None
        symbols = ctx.am.get(alt, SymbolAnalysis)
        box, _ = guard_box(shape.guard, ctx.am.get(alt, ThreadIdAliases), symbols.env())
        if box is None:
            return None
        windows, loops = self._windows(alt, ctx, symbols.env(),
                                       symbols.env(clamps=True, planes=True), shape.body, box,
                                       quiet=True)
        return (alt, windows, box, loops) if windows else None

    def _windows(self, proc: GProcedure, ctx: PassContext, env: SymbolEnv,
                 window_env: SymbolEnv, body: list[c_ast.Node], box: Box | None,
                 quiet: bool = False
                 ) -> tuple[list[Window], list[tuple[sympy.Expr, sympy.Expr]]]:
        written = {m.array for m in proc.memory_expressions if m.is_write}
        parents = {id(n): p for st in body for n, p in walk(st)}
        inside = {id(n) for st in body for n, _ in walk(st)}
        windows: dict[tuple, Window] = {}
        loops: dict[str, tuple[sympy.Expr, sympy.Expr]] = {}
        for i, m in enumerate(proc.memory_expressions):
            if m.space != "global" or not m.is_read or m.is_write or id(m.node) not in inside:
                continue
            param = proc.param(m.array)
            if m.array in written or param is None or param.base_type not in SCALARS:
                continue
            read, key, why = _read(proc, m, i, env, window_env, parents, loops)
            if read is None:
                if why and not quiet:
                    ctx.remark("analysis", self.name, proc, f"{m.describe()}: not staged: "
                               f"{why}")
                continue
            w = windows.setdefault(key, Window(m.array, key[1], param.base_type, key[2]))
            w.reads.append(read)
        kept = []
        for w in windows.values():
            why = _bound(w) or _fenced(w, box) or _clamped(w, box)
            if not why and any(w.follows) and not _around(w):
                why = "each element is read by one thread of a row or column only (no reuse)"
            if why:
                if not quiet:
                    ctx.remark("analysis", self.name, proc, f"{w.array}: not staged: {why}")
                continue
            kept.append(w)
        if not any(_around(w) for w in kept):
            return [], []       # only thread-invariant windows: nothing around the threads
        return kept, list(loops.values())

    def _variants(self, proc: GProcedure, ctx: PassContext, windows: list[Window],
                  box: Box | None, loops, target: Target,
                  guarded: tuple[GProcedure, list[Window], Box, list] | None = None
                  ) -> list[Variant]:
        two_d = uses_y(proc)
        naive = default_block(proc)
        candidates = target.candidates
        blocks = candidates.stencil_blocks_2d if two_d else candidates.stencil_blocks_1d
        merges = candidates.stencil_merges_2d if two_d else candidates.stencil_merges_1d
        forced = ctx.options.merge
        if forced:
            merges = [tuple(forced)]
        shapes = [(block, merge, 1) for block, merge in itertools.product(blocks, merges)]
        register = candidates.stencil_register_2d if two_d else candidates.stencil_register_1d
        forced_tile = ctx.options.register_tile
        if forced_tile:
            mx, my = forced_tile
            shapes = [(block, (mx, my), mx if mx > 1 else my)
                      for block in dict.fromkeys(b for b, _ in register)]
        elif not forced:
            shapes += [(block, (mx, my), g) for block, (mx, my, g) in register]
        original = copy.deepcopy(proc)
        variants, refused = [], []
        for block, merge, group in shapes:
            fused = group > 1 or bool(forced_tile)
            plan = WindowPlan(original, windows, box, block, merge, loops, group, fused,
                              _spans_of_interest(windows, ctx.sizes) if fused else None)
            why = _launch_obstacle(plan, naive)
            if why and guarded is not None:     # on the copy given a bounds guard
                alt, alt_windows, alt_box, alt_loops = guarded
                plan = WindowPlan(alt, alt_windows, alt_box, block, merge, alt_loops, group,
                                  fused, _spans_of_interest(alt_windows, ctx.sizes)
                                  if fused else None)
                why = _launch_obstacle(plan, naive)
            if why:
                refused.append(why)
                continue
            shared = windows_bytes(plan, target)
            label = f"block {block[0]}x{block[1]} merge {merge[0]}x{merge[1]}" + (
                f" register-blocked in runs of {group}" if fused else "")
            variants.append(Variant(label, block, (-plan.elements_per_output(), fused,
                                                   -(block[0] * block[1])),
                                    plan=plan, shared_bytes=shared))
        if refused:
            ctx.remark("missed", self.name, proc, f"{len(refused)} of {len(shapes)} block "
                       f"and merge shapes not tried, e.g. {refused[0]}")
        return variants


def _spans_of_interest(windows: list[Window], sizes: dict[str, int]) -> tuple[int, ...]:
    """The runtime span of the windows at the sizes of interest where it is one a
    register-blocked body is specialised for (conv's K = 5: (4,)), else none."""
    for w in windows:
        for a in (0, 1):
            span = w.span(a)
            if span.is_number or not {s.name for s in span.free_symbols} <= set(sizes):
                continue
            value = span.subs({sympy.Symbol(n, integer=True): v for n, v in sizes.items()})
            value = value.subs({s: sizes[s.name] for s in value.free_symbols})
            if value.is_number and int(value) in SPECIALIZED_SPANS:
                return (int(value),)
            return ()
    return ()


def _read(proc: GProcedure, m: MemoryExpression, index: int, env: SymbolEnv,
          window_env: SymbolEnv, parents: dict[int, c_ast.Node], loops: dict
          ) -> tuple[Read | None, tuple, str]:
    """The staged form of a read, its window key, or (None, (), why not). A read whose row
    or column is clamped (analysis/clamps.py) is staged at its unclamped offsets, with its
    clamps (see :func:`_clamped`)."""
    clamps = (None, None)
    if m.two_d is not None:
        forms, width = m.two_d, m.width
    else:
        forms, width = (sympy.Integer(0), m.index), sympy.Integer(0)
    if not m.decomposition.resolved and isinstance(m.node, c_ast.ArrayRef):
        flat = to_sympy(m.node.subscript, window_env.scoped(set(m.loops)))
        clamped, why = clamped_index(flat, window_env)
        if why:
            return None, (), why
        if clamped is not None:
            forms, width, clamps = clamped.forms, clamped.width, clamped.clamps
        elif not flat.has(Unresolved):          # a 3-D grid's plane (blockIdx.z)
            two_d = recover_2d(flat, window_env)
            forms, width = two_d if two_d is not None else (
                (sympy.Integer(0), flat), sympy.Integer(0))
    follows, offsets = [], []
    for axis, expr in zip(AXES, forms):
        d = decompose(expr, env)
        if not d.resolved:
            return None, (), "unresolved index"
        if d.predefined and d.predefined != {THREAD[axis]: 1}:
            return None, (), ""     # not around the thread's own element: other passes' case
        follows.append(bool(d.predefined))
        offsets.append(sympy.expand(expr - SYM[THREAD[axis]]) if d.predefined
                       else sympy.expand(expr))
        for it, coeff in d.loop.items():
            if not coeff.is_integer or not coeff.is_number:
                return None, (), f"the coefficient of {it} is not a constant"
    if not any(follows) and not m.loops:
        return None, (), ""
    iters = [decompose(o, env).loop for o in offsets]
    if set(iters[0]) & set(iters[1]):
        return None, (), "one loop moves both the row and the column"
    conditions, why = _conditions(m.node, parents)
    if why:
        return None, (), why
    fence = None
    if conditions and clamps != (None, None):
        return None, (), "it is read clamped under a bounds test"
    if conditions:
        fence, why = _fence(conditions, forms, env)
        if fence is None:
            return None, (), why
        for it, coeff in [*iters[0].items(), *iters[1].items()]:
            if abs(coeff) != 1:
                return None, (), f"it is read under a bounds test with {it} scaled by {coeff}"
        if any(len(d) > 1 for d in iters):
            return None, (), "it is read under a bounds test with two loops on one axis"
    bounds = {}
    for it in m.loops:
        lp = enclosing_loop(proc, m, it)
        if lp is None or not lp.canonical or lp.step != 1:
            return None, (), f"the loop over {it} is not canonical with step 1"
        lo, hi = to_sympy(lp.lower, env), to_sympy(lp.upper, env)
        for b in (lo, hi):
            d = decompose(b, env)
            if not d.resolved or d.predefined or d.loop:
                return None, (), f"the bounds of the loop over {it} differ between threads " \
                    "or iterations"
        if any(isinstance(n, (c_ast.Break, c_ast.Continue)) for n, _ in walk(lp.node.stmt)):
            return None, (), f"the loop over {it} has break/continue"
        bounds[it] = (lo, hi)
        loops[id(lp.node)] = (lo, hi)
    low, high = [], []
    for o in offsets:
        d = decompose(o, env)
        lo_sum, hi_sum = d.constant, d.constant
        for it, c in d.loop.items():
            if it not in bounds:     # a loop the access is not inside (a clamp's local, say)
                return None, (), f"the offset depends on '{it}', not a loop around the read"
            lo, hi = bounds[it]
            a, b = c * lo, c * (hi - 1)
            lo_sum, hi_sum = lo_sum + (a if c > 0 else b), hi_sum + (b if c > 0 else a)
        low.append(sympy.expand(lo_sum))
        high.append(sympy.expand(hi_sum))
    # a read of another plane of a 3-D grid (its offset holds blockIdx.z and more than a
    # number besides the block's own plane) is a window of its own
    key = (m.array, width, tuple(follows), tuple(_plane(o, env) for o in offsets))
    return Read(index, tuple(offsets), tuple(low), tuple(high), fence, clamps), key, ""


def _plane(offset: sympy.Expr, env: SymbolEnv) -> sympy.Expr:
    """The symbolic part of an offset's constant term where it holds blockIdx.z (the plane's
    base, e.g. ``ny*blockIdx.z - ny``); 0 for an offset without it (every 2-D stencil)."""
    if not offset.has(sympy.Symbol(BLOCK_Z, integer=True)):
        return sympy.Integer(0)
    constant = decompose(offset, env).constant
    return sympy.expand(constant - constant.as_coeff_Add()[0])


def _conditions(node: c_ast.Node, parents: dict[int, c_ast.Node]
                ) -> tuple[list[c_ast.Node], str]:
    """The conditions of the ``if`` statements the access is under (it runs every time its
    enclosing loops iterate and they hold), or ([], why it may be skipped otherwise)."""
    conds = []
    child, n = node, parents.get(id(node))
    while n is not None:
        if isinstance(n, c_ast.If) and child is not n.cond:
            if child is not n.iftrue:
                return [], "it is read in an else branch"
            conds.append(n.cond)
        elif isinstance(n, (c_ast.TernaryOp, c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            return [], "it is read under a condition"
        elif isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||") and child is n.right:
            return [], "it is read under a condition"
        elif isinstance(n, c_ast.For) and child is not n.stmt:
            return [], "it is read in a loop header"
        child, n = n, parents.get(id(n))
    return conds, ""


def _fence(conditions: list[c_ast.Node], forms: tuple[sympy.Expr, sympy.Expr],
           env: SymbolEnv) -> tuple[Fence | None, str]:
    """The conditions as bounds on the read's own row and column, or (None, why not): every
    conjunct must compare the row or column index with a bound the same for all threads."""
    why = "it is read under a condition that is not a bounds test of its row and column"
    atoms: list[c_ast.Node] = []

    def split(node: c_ast.Node) -> None:
        if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
            split(node.left)
            split(node.right)
        else:
            atoms.append(node)

    for cond in conditions:
        split(cond)
    bounds: list[list] = [[None, None], [None, None]]
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    for atom in atoms:
        if not isinstance(atom, c_ast.BinaryOp) or atom.op not in flip or not is_pure(atom):
            return None, why
        for left, right, op in ((atom.left, atom.right, atom.op),
                                (atom.right, atom.left, flip[atom.op])):
            axis = next((a for a in (0, 1) if forms[a] != 0 and
                         sympy.expand(to_sympy(left, env) - forms[a]) == 0), None)
            bound = to_sympy(right, env)
            d = decompose(bound, env)
            if axis is None or not d.resolved or d.predefined or d.loop:
                continue
            side, value = {"<": (1, bound), "<=": (1, bound + 1), ">": (0, bound + 1),
                           ">=": (0, bound)}[op]
            if bounds[axis][side] is not None:
                return None, f"{why} (two bounds on one side)"
            bounds[axis][side] = sympy.expand(value)
            break
        else:
            return None, why
    return (tuple(bounds[0]), tuple(bounds[1])), ""


def _fenced(w: Window, box: Box | None) -> str:
    """Set the window's fence from its conditional reads; why it cannot ('' if it can).

    Loading the window's elements inside the fence is safe when one box of offsets, an
    interval of consecutive integers per axis (checked in _read), serves every conditional
    read: the naive kernel then reads the corners of the fenced window (see the module
    docstring). Unconditional reads of the window must lie inside the fence for every active
    thread (so that they are loaded), and inside the conditional reads' offsets."""
    fenced = [r for r in w.reads if r.fence is not None]
    if not fenced:
        return ""
    first = fenced[0]

    def same(a, b) -> bool:
        return (a is None and b is None) or (a is not None and b is not None and
                                             sympy.expand(a - b) == 0)

    for r in fenced[1:]:
        if not all(same(x, y) for fx, fy in zip(r.fence, first.fence) for x, y in zip(fx, fy)):
            return "its reads are under different bounds tests"
    for r in fenced:
        if not all(same(r.low[a], w.low[a]) and same(r.high[a], w.high[a]) for a in (0, 1)):
            return "its conditional reads do not all span the window's offsets"
    for r in w.reads:
        if r.fence is not None:
            continue
        for a, axis in enumerate(AXES):
            lo, hi = first.fence[a]
            gid = THREAD[axis]
            if w.follows[a]:
                if (lo is not None or hi is not None) and (box is None or gid not in box.hi):
                    return "an unconditional read cannot be shown inside its bounds test"
                least = box.lo.get(gid, sympy.Integer(0)) + r.low[a] if box else r.low[a]
                most = box.hi[gid] - 1 + r.high[a] if hi is not None else None
            else:
                least, most = r.low[a], r.high[a]
            if (lo is not None and not sympy.expand(least - lo).is_nonnegative) or \
                    (hi is not None and not sympy.expand(hi - 1 - most).is_nonnegative):
                return "an unconditional read cannot be shown inside its bounds test"
    w.fence = first.fence
    return ""


def _clamped(w: Window, box: Box | None) -> str:
    """Set the window's clamps from its reads'; why they cannot be set ('' if they are).

    The window then holds at position (r, c) the element at the clamped coordinates
    (f_y(y0 + r + amin), f_x(x0 + c + bmin)) of the unclamped ones, f(v) = min(max(v, lo),
    hi), and a read at offset (i, j) of thread (y, x) finds there A[f_y(y + i)][f_x(x + j)],
    what it reads in the naive kernel, when its own clamp equals f on every value it clamps.
    A clamp's bounds are the same for all threads, so f is monotone: the loaded elements lie
    between those the naive kernel reads at the window's corners (or at the least and greatest
    flat index, window.py), inside the array, whatever the bounds are.

    So every read of the window must equal f over the coordinates it reads (its offsets at the
    active threads): reads clamped to other bounds are not staged; a read not clamped on a
    side (Sobel's ``x`` beside ``max(x - 1, 0)`` and ``min(x + 1, W - 1)``) must be provably
    inside the bound there, from the guard's box and its offsets; ``max(v, lo)`` without the
    upper side, and ``max(min(v, hi), lo)``, also need lo <= hi."""
    clamps: list[Clamp | None] = []
    for a, axis in enumerate(AXES):
        used = [r.clamps[a] for r in w.reads if r.clamps[a] is not None]
        if not used:
            clamps.append(None)
            continue
        if any(r.fence is not None for r in w.reads):
            return "its reads are clamped and under bounds tests"
        bounds = []
        for side in ("lo", "hi"):
            values = list(dict.fromkeys(sympy.expand(getattr(c, side)) for c in used
                                        if getattr(c, side) is not None))
            if len(values) > 1:
                return f"its reads clamp the {AXES_NAME[axis]} to different bounds " \
                    f"({', '.join(map(str, values))})"
            bounds.append(values[0] if values else None)
        lo, hi = bounds
        for r in w.reads:
            c = r.clamps[a] or Clamp(None, None)
            least, most = _extremes(w, r, a, box)
            need = []
            if lo is not None and c.lo is None:
                need.append(("lowest", least, lo, least))
            if hi is not None and c.hi is None:
                need.append(("highest", most, most, hi))
            if lo is not None and hi is not None and (c.max_outside or
                                                      (c.lo is not None and c.hi is None)):
                need.append(("clamp", None, lo, hi))
            for what, value, small, large in need:
                if value is None and what != "clamp" or not _le(small, large, w, a, box):
                    where = f"{THREAD[axis]} + " if w.follows[a] else ""
                    subject = (f"its bounds {lo} <= {hi}" if what == "clamp" else
                               f"the {what} {AXES_NAME[axis]} {where}[{r.low[a]}, "
                               f"{r.high[a]}] it reads unclamped")
                    return f"a read of it is clamped differently on the {AXES_NAME[axis]} " \
                        f"than {Clamp(lo, hi).describe('v')} and {subject} cannot be shown " \
                        f"to hold there"
        clamps.append(Clamp(lo, hi))
    w.clamps = tuple(clamps)
    return ""


AXES_NAME = {"y": "row", "x": "column"}


def _extremes(w: Window, r: Read, a: int, box: Box | None
              ) -> tuple[sympy.Expr, sympy.Expr | None]:
    """The least and greatest unclamped coordinate read ``r`` reads on axis ``a`` over the
    active threads (greatest None where the guard does not bound the thread id)."""
    if not w.follows[a]:
        return r.low[a], r.high[a]
    gid = THREAD[AXES[a]]
    least = (box.lo.get(gid, sympy.Integer(0)) if box is not None else 0) + r.low[a]
    most = box.hi[gid] - 1 + r.high[a] if box is not None and gid in box.hi else None
    return sympy.expand(least), None if most is None else sympy.expand(most)


def _le(small: sympy.Expr, large: sympy.Expr, w: Window, a: int, box: Box | None) -> bool:
    """Whether small <= large provably, where some thread is active (the window is only read
    then): directly, or as large - small >= hi - 1 - lo >= 0 for the guard's bounds lo <= id
    < hi on the axis."""
    diff = sympy.expand(large - small)
    if diff.is_nonnegative:
        return True
    gid = THREAD[AXES[a]]
    if not w.follows[a] or box is None or gid not in box.hi:
        return False
    span = box.hi[gid] - 1 - box.lo.get(gid, sympy.Integer(0))
    return bool(sympy.expand(diff - span).is_nonnegative)


def _bound(w: Window) -> str:
    """Set the window's least and greatest offsets; why they cannot be set ('' if they are).
    Whether some read reaches both least offsets at once, and some both greatest (the
    corners the naive kernel reads, see the module docstring), sets ``corners``; a window
    without them (a 5-point cross) is loaded within the flat index range its reads span."""
    for axis in (0, 1):
        for pick, out in ((lambda r: r.low[axis], w.low), (lambda r: r.high[axis], w.high)):
            values = [pick(r) for r in w.reads]
            best = values[0]
            for v in values[1:]:
                diff = sympy.expand(v - best)
                if not diff.is_number:
                    return "the offsets of its reads cannot be ordered"
                if diff != 0 and bool(diff < 0) == (out is w.low):
                    best = v
            out.append(best)
    w.corners = any(all(sympy.expand(r.low[a] - w.low[a]) == 0 for a in (0, 1))
                    for r in w.reads) and \
        any(all(sympy.expand(r.high[a] - w.high[a]) == 0 for a in (0, 1)) for r in w.reads)
    return ""


def _around(w: Window) -> bool:
    """Whether the window spans more than the threads' own elements along a thread axis
    (neighbouring threads read each other's elements)."""
    return any(f and w.span(a) != 0 for a, f in enumerate(w.follows))


def _launch_obstacle(plan: WindowPlan, naive: tuple[int, int]) -> str:
    """An axis the guard does not bound relies on the launch covering the thread space
    exactly: there the coverage must divide the naive block."""
    for axis, cover, size in (("x", plan.coverage[0], naive[0]),
                              ("y", plan.coverage[1], naive[1])):
        bounded = plan.box is not None and THREAD[axis] in plan.box.hi
        if not bounded and size % cover:
            return f"covering {cover} threads in {axis} does not tile the naive block " \
                f"{naive[0]}x{naive[1]} and the kernel has no bound on {THREAD[axis]}"
    return ""


def guard_box(cond: c_ast.Node, aliases: dict[str, str], env: SymbolEnv
              ) -> tuple[Box | None, str]:
    """The guard as a :class:`Box`, or (None, why not)."""
    box = Box({}, {}, [])
    atoms: list[tuple[c_ast.Node, bool]] = []

    def split(node: c_ast.Node, negated: bool) -> bool:
        if isinstance(node, c_ast.UnaryOp) and node.op == "!":
            return split(node.expr, not negated)
        if isinstance(node, c_ast.BinaryOp) and node.op == ("||" if negated else "&&"):
            return split(node.left, negated) and split(node.right, negated)
        atoms.append((node, negated))
        return True

    split(cond, False)
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    negate = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
    for node, negated in atoms:
        ids = {n.name for n, _ in walk(node) if isinstance(n, PredefId)} | {
            aliases[n.name] for n, _ in walk(node)
            if isinstance(n, c_ast.ID) and n.name in aliases}
        if not ids:
            if not is_pure(node):
                return None, "a condition reads memory"
            box.uniform.append(c_ast.UnaryOp("!", node) if negated else node)
            continue
        if not isinstance(node, c_ast.BinaryOp) or node.op not in flip:
            return None, "a condition is not a comparison of a thread id with a bound"
        op = negate[node.op] if negated else node.op
        left, right = node.left, node.right
        gid = _id_of(left, aliases)
        if gid is None:
            gid, op, left, right = _id_of(right, aliases), flip[op], right, left
        if gid not in ("idx", "idy"):
            return None, "a condition is not a comparison of a thread id with a bound"
        bound = to_sympy(right, env)
        d = decompose(bound, env)
        if not d.resolved or d.predefined or d.loop:
            return None, f"the bound on {gid} is not the same for all threads"
        table, value = (box.hi, bound) if op == "<" else (box.hi, bound + 1) if op == "<=" \
            else (box.lo, bound + 1) if op == ">" else (box.lo, bound)
        if gid in table:
            return None, f"two bounds on the same side of {gid}"
        table[gid] = sympy.expand(value)
    for gid in box.lo:
        if gid not in box.hi:
            return None, f"{gid} has a lower bound but no upper bound"
    return box, ""


def _id_of(node: c_ast.Node, aliases: dict[str, str]) -> str | None:
    if isinstance(node, PredefId):
        return node.name
    if isinstance(node, c_ast.ID):
        return aliases.get(node.name)
    return None


# --------------------------------------------------------------------------- generation
