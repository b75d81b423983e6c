"""Removing partition camping (paper 002, pass (5) and Fig. 9; Ruetsch & Micikevicius 2009).

Global memory is interleaved over ``partitions`` channels in ``partition_bytes`` chunks
(targets.py). Blocks are started in linear block-id order, so the blocks that run together are
consecutive ones. When the address an access touches moves between consecutive blocks by a
large power-of-two stride — MV's ``A[idx*W + k]`` (one matrix row per thread, ``BX*W*4`` bytes
per block) or a transpose's ``out[idx*H + idy]`` — every block of a wave queues on the same
channel while the others idle. The pass models this: for each global access it computes the
address each block of the first wave touches (a wave is one block per multiprocessor, the
fewest blocks that run together) and counts the channels hit; an access camps when it hits
fewer than half of the channels the wave could use. Sizes are taken at 4096, the
library's and the paper's default problem size (powers of two are where camping happens; the
remark says for which sizes the stride is a multiple of the interleave period).

Two remedies, both permutations of the work, so every output is still computed exactly once:

(b) **Loop rotation** (Fig. 9), when the camping access is walked by a loop: block b starts
    the loop at iteration ``(b*K) mod n`` and wraps around, K iterations being one partition
    width, so consecutive blocks start on consecutive channels::

        const int j0_n = (HI - LO + S - 1) / S;               // trip count (<= 0: none)
        const int j0_first = j0_n > 0 ? bid % j0_n * K % j0_n : 0;
        for (int j0_t = j0_first; j0_t < j0_first + j0_n; j0_t++) {
            const int j0 = LO + j0_t % j0_n * S;              // every iteration once
            BODY
        }

    The start is the same for all threads of a block, so barriers in the body stay aligned.
    Legal only when the iterations are independent apart from associative accumulation: the
    body writes only variables declared inside it and accumulates into outer registers with
    ``+=``/``-=`` (never reading them otherwise), writes no memory, calls only math built-ins,
    and has no break/return. For a loop the tiling engine staged (shared tiles, barriers) the
    check is made on the loop before staging: the engine rewrites every tile element in each
    iteration, so the tiles carry nothing between iterations. Reordering a floating-point sum
    is a reassociation: results agree within float32 tolerance, not bit for bit;
    ``--fp-strict`` keeps a floating-point sum's order (no rotation).

(a) **Diagonal block order** (Ruetsch & Micikevicius), for 2-D grids when the camping access
    moves with ``bidx``: with bid = bidx + gridDim.x*bidy the launch order,

        bidy' = bid % gridDim.y,   bidx' = (bid / gridDim.y + bidy') % gridDim.x,

    which is the classic ``bidy' = bidx, bidx' = (bidx + bidy) % gridDim.x`` on a square grid
    and works on any grid: bid -> (bid / gridDim.y, bid % gridDim.y) is a bijection onto the
    grid, and adding bidy' modulo gridDim.x is a bijection for each bidy'. Every block id is
    taken exactly once and idx/idy are recomputed from the new ids, so the bounds guards of a
    partial grid still mask exactly the same threads.

The pass runs last: it works on the final IR and leaves indices that other passes could no
longer analyse. ``options={"partition_camping": "force"}`` applies a legal remedy whatever the
target and the model say (for testing on targets without camping).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import sympy
from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...analysis.symbols import SymbolAnalysis
from ...ir import GLoop, GProcedure, MemoryExpression, PredefId
from ...ir.build import expression, fresh, statements
from ...ir.cgen import to_c
from ...ir.elements import WORD_BYTES, element_bytes
from ...ir.rewrite import map_nodes, walk
from ...ir.symbolic import to_sympy
from ...ir.typenames import integer_type
from ...launch import evaluate, geometry, uses_y, variables
from ...targets import Target, get_target
from ..functional.builtins import OPENCL_TO_CUDA_IDS, PURE_CALLS, call_name
from ..manager import OptimizationPass, PassContext, reanalyse
from .shape import contains_barrier
from .tiling import TilingAnalysis

#: Problem size the camping model evaluates strides at (the library's default size).
MODEL_SIZE = 4096
RAW_BLOCK_IDS = set(OPENCL_TO_CUDA_IDS) | {"blockIdx", "get_global_id", "get_global_offset",
                                           "get_group_id"}


@dataclass
class Access:
    """A global access whose address moves between blocks: strides per block in bytes."""

    m: MemoryExpression
    stride_x: sympy.Expr          # bytes between blocks (bidx, by) and (bidx + 1, by)
    stride_y: sympy.Expr
    elem: int


@dataclass
class Wave:
    """The first wave of blocks at the model size: their (bx, by), the grid and the target."""

    blocks: list[tuple[int, int]]
    grid: tuple[int, int]
    target: Target

    def channels(self, addresses: list[int]) -> int:
        t = self.target
        return len({(a // t.partition_bytes) % t.partitions for a in addresses})

    @property
    def size(self) -> int:
        return len(self.blocks)


class PartitionCamping(OptimizationPass):
    name = "partition-camping"
    reassociates = True
    requires = ("memory-expressions",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        target = get_target(ctx.arch)
        force = ctx.options.partition_camping == "force"
        if not target.has_partition_camping and not force:
            ctx.remark("missed", self.name, proc, f"{target.name}: addresses are hashed "
                       "across partitions; no partition camping")
            return PreservedAnalyses.all()
        accesses = block_strided(proc, ctx)
        if not accesses:
            ctx.remark("missed", self.name, proc, "no block-strided global access (no access "
                       "moves between blocks)")
            return PreservedAnalyses.all()
        wave = first_wave(proc, target)
        before = {id(a): wave.channels(_addresses(a, wave)) for a in accesses}
        camping = [a for a in accesses if before[id(a)] * 2 < min(wave.size, target.partitions)]
        if not camping and not force:
            spread = "; ".join(dict.fromkeys(f"{_describe(a)}: {before[id(a)]}"
                                             for a in accesses))
            ctx.remark("missed", self.name, proc, f"no partition camping: a wave of "
                       f"{wave.size} blocks hits enough of {target.partitions} channels "
                       f"({spread})")
            return PreservedAnalyses.all()
        chosen = camping or accesses
        why = self._rotate(proc, ctx, chosen, wave, before, force)
        if why is None:
            return None         # rotated
        why_diag = self._diagonal(proc, ctx, chosen, wave, before, force)
        if why_diag is None:
            return None         # blocks reordered
        worst = ", ".join(dict.fromkeys(f"{_describe(a)} hits {before[id(a)]} of "
                                        f"{target.partitions} channels" for a in chosen))
        ctx.remark("missed", self.name, proc, f"{worst} in a wave of {wave.size} blocks; "
                   f"loop rotation: {why}; diagonal block order: {why_diag}")
        return PreservedAnalyses.all()

    # ---------------------------------------------------------------- (b) loop rotation
    def _rotate(self, proc: GProcedure, ctx: PassContext, chosen: list[Access], wave: Wave,
                before: dict, force: bool) -> str | None:
        """Rotate the loop that walks a camping access; None when done, else why not."""
        reasons = []
        for a in chosen:
            for loop in proc.loops:
                if loop.iterator is None or loop.iterator not in a.m.loops or \
                        not a.m.decomposition.loop.get(loop.iterator):
                    continue
                why = rotation_obstacle(proc, ctx, loop)
                if why:
                    reasons.append(f"{loop.iterator}: {why}")
                    continue
                k = _rotation_step(a, loop, wave.target)
                after = wave.channels(_addresses(a, wave, (loop, k, proc, ctx)))
                if after <= before[id(a)] and not force:
                    reasons.append(f"{loop.iterator}: rotating does not spread the blocks")
                    continue
                accumulators = _accumulators(loop.node.stmt)
                integer = {n.name for n, _ in walk(proc.body)
                           if isinstance(n, c_ast.Decl) and integer_type(n.type)}
                floating = sorted(set(accumulators) - integer)
                if floating and ctx.options.fp_strict:
                    reasons.append(f"{loop.iterator}: --fp-strict: the sums of "
                                   f"{', '.join(floating)} keep their order")
                    continue
                _rewrite_rotation(proc, loop, k)
                reanalyse(proc, ctx)
                acc = (f"; reorders the accumulation into {', '.join(sorted(accumulators))} "
                       "(floating-point reassociation: results agree within float32 "
                       "tolerance, not bit for bit)") if accumulators else ""
                ctx.remark("applied", self.name, proc,
                           f"{_describe(a)}: a wave of {wave.size} blocks hit "
                           f"{before[id(a)]} of {wave.target.partitions} channels "
                           f"({_stride_text(a, wave.target)}); each block starts the loop over "
                           f"{loop.iterator} {k} iteration(s) ({wave.target.partition_bytes} B)"
                           f" per block further on and wraps around (paper 002 Fig. 9): "
                           f"{after} channels{acc}")
                return None
        return "; ".join(dict.fromkeys(reasons)) or "the access is not walked by a loop"

    # ---------------------------------------------------------- (a) diagonal block order
    def _diagonal(self, proc: GProcedure, ctx: PassContext, chosen: list[Access], wave: Wave,
                  before: dict, force: bool) -> str | None:
        """Remap the block ids diagonally; None when done, else why not."""
        if not uses_y(proc):
            return "1-D grid"
        why = _raw_block_ids(proc, ctx)
        if why:
            return why
        diagonal = Wave([_diagonal_id(bx + wave.grid[0] * by, wave.grid)
                         for bx, by in wave.blocks], wave.grid, wave.target)
        after = {id(a): diagonal.channels(_addresses(a, diagonal)) for a in chosen}
        if not force and not any(after[id(a)] > before[id(a)] for a in chosen):
            return "the diagonal order does not spread the blocks"
        _rewrite_diagonal(proc)
        reanalyse(proc, ctx)
        moved = "; ".join(dict.fromkeys(
            f"{_describe(a)} ({_stride_text(a, wave.target)}): {before[id(a)]} -> "
            f"{after[id(a)]} channels" for a in chosen))
        ctx.remark("applied", self.name, proc, f"diagonal block order (Ruetsch & "
                   f"Micikevicius; general form for non-square grids): a wave of "
                   f"{wave.size} blocks of a {wave.grid[0]}x{wave.grid[1]} grid at size "
                   f"{MODEL_SIZE}: {moved} of {wave.target.partitions}")
        return None


# ------------------------------------------------------------------------------ the model
def block_strided(proc: GProcedure, ctx: PassContext) -> list[Access]:
    """Global accesses whose address moves between neighbouring blocks in x or y."""
    bx, by = geometry(proc).block[:2]
    out = []
    for m in proc.memory_expressions:
        if m.space != "global":
            continue
        d = m.decomposition
        elem = _elem_bytes(proc, m.array)
        sx = (d.coefficient("bidx") + d.coefficient("idx") * bx) * elem
        sy = (d.coefficient("bidy") + d.coefficient("idy") * by) * elem
        if sx.has(sympy.Function) or sy.has(sympy.Function) or (sx == 0 and sy == 0):
            continue
        out.append(Access(m, sympy.expand(sx), sympy.expand(sy), elem))
    return out


def first_wave(proc: GProcedure, target: Target) -> Wave:
    """The first blocks in launch order (x fastest) at the model size: one per
    multiprocessor, the fewest that run together."""
    g = geometry(proc)
    grid = tuple(max(1, _at_model_size(tree)) for tree in g.grid_trees[:2])
    count = min(target.multiprocessors, grid[0] * grid[1])
    return Wave([(b % grid[0], b // grid[0]) for b in range(count)], grid, target)


def _at_model_size(tree) -> int:
    """A grid extent (launch.py's tree) with every size at MODEL_SIZE."""
    if tree is None:
        return MODEL_SIZE
    try:
        return evaluate(tree, {name: MODEL_SIZE for name in variables(tree)})
    except ValueError:
        return MODEL_SIZE


def _value(expr: sympy.Expr) -> int:
    return int(expr.subs({s: MODEL_SIZE for s in expr.free_symbols}))


def _addresses(a: Access, wave: Wave, rotation: tuple | None = None) -> list[int]:
    """Byte offset each block of the wave touches first (thread 0, first loop iteration),
    optionally with ``rotation`` = (loop, K, proc, ctx) applied."""
    sx, sy = _value(a.stride_x), _value(a.stride_y)
    out = []
    for b, (bx, by) in enumerate(wave.blocks):
        address = bx * sx + by * sy
        if rotation is not None:
            loop, k, proc, ctx = rotation
            n = _trip_count(proc, ctx, loop)
            if n > 0:
                step = _value(a.m.decomposition.loop[loop.iterator]) * loop.step * a.elem
                out.append(address + (bx + wave.grid[0] * by) * k % n * step)
                continue
        out.append(address)
    return out


def _trip_count(proc: GProcedure, ctx: PassContext, loop: GLoop) -> int:
    env = ctx.am.get(proc, SymbolAnalysis).env()
    lo, hi = to_sympy(loop.lower, env), to_sympy(loop.upper, env)
    if (hi - lo).has(sympy.Function):
        return 0
    return -(-_value(hi - lo) // loop.step)


def _rotation_step(a: Access, loop: GLoop, target: Target) -> int:
    """Iterations per block of rotation: one partition width of the access's walk."""
    walk_bytes = abs(_value(a.m.decomposition.loop[loop.iterator])) * loop.step * a.elem
    return max(1, target.partition_bytes // max(1, walk_bytes))


def _stride_text(a: Access, target: Target) -> str:
    """The block strides, and for a stride ``c*N`` the sizes N that make it a multiple of the
    interleave period (every block then starts on the same channel)."""
    parts = []
    for axis, stride in (("x", a.stride_x), ("y", a.stride_y)):
        if stride == 0:
            continue
        text = f"{stride} B per block in {axis}"
        coeff, rest = stride.as_coeff_Mul()
        if isinstance(rest, sympy.Symbol) and coeff.is_Integer:
            period = target.partition_bytes * target.partitions
            step = period // math.gcd(int(coeff), period)
            text += f", one channel for all blocks when {rest} is a multiple of {step}"
        parts.append(text)
    return "; ".join(parts)


def _describe(a: Access) -> str:
    return f"{a.m.array} ({a.m.kind})"


def _elem_bytes(proc: GProcedure, array: str) -> int:
    p = proc.param(array)
    return element_bytes(p.base_type) if p is not None else WORD_BYTES


def _diagonal_id(bid: int, grid: tuple[int, int]) -> tuple[int, int]:
    """Ruetsch & Micikevicius's diagonal block order for a linear block id."""
    gx, gy = grid
    by = bid % gy
    return (bid // gy + by) % gx, by


# ------------------------------------------------------------------- loop rotation: legality
def rotation_obstacle(proc: GProcedure, ctx: PassContext, loop: GLoop) -> str:
    """Why ``loop`` cannot be rotated (empty when it can)."""
    node = loop.node
    if not loop.canonical or not isinstance(node, c_ast.For):
        return "not a canonical loop"
    if not (isinstance(node.init, c_ast.DeclList) and isinstance(node.init.decls[0].type,
                                                                c_ast.TypeDecl) and
            node.init.decls[0].type.type.names == ["int"]):
        return "the loop does not declare an int iterator"
    if not (isinstance(node.cond, c_ast.BinaryOp) and node.cond.op in ("<", "<=", ">", ">=")):
        return "the condition is not an ordered comparison"
    env = ctx.am.get(proc, SymbolAnalysis).env()
    for bound in (loop.lower, loop.upper):
        value = to_sympy(bound, env)
        if any(s.name in ("idx", "idy", "tidx", "tidy", "bidx", "bidy")
               for s in value.free_symbols):
            return "loop bounds differ between threads"
        if value.has(sympy.Function):
            return f"the loop bound {to_c(bound)} is not an affine expression of sizes"
    if not contains_barrier(node.stmt):
        return _independence_obstacle(node.stmt, loop.iterator, set())
    plan = ctx.am.get(proc, TilingAnalysis)
    if plan is None or loop.depth != 0 or loop.step != plan.tile:
        return "the loop has barriers but is not the loop naiveopt staged"
    if plan.stages > 1:
        return (f"its tiles are copied {plan.stages - 1} iteration(s) ahead (an asynchronous "
                "pipeline): a rotated loop would wait for copies never issued")
    why = _independence_obstacle(node.stmt, loop.iterator, _shared_arrays(proc))
    if why:
        return f"{why} (tiles prefetched for the next iteration)" if plan.prefetch else why
    original = plan.original.loops[plan.loop_index]
    return _independence_obstacle(original.node.stmt, original.iterator, set())


def _shared_arrays(proc: GProcedure) -> set[str]:
    """The kernel's __shared__ arrays. In a loop the tiling engine staged they are the tiles,
    which every iteration rewrites in full before reading (behind a barrier), so they carry
    nothing from one iteration to the next."""
    return {n.name for n, _ in walk(proc.body) if isinstance(n, c_ast.Decl) and
            "__shared__" in (n.storage or [])}


def _independence_obstacle(body: c_ast.Node, iterator: str, tiles: set[str]) -> str:
    """Why iterations of a loop with this body are not independent up to accumulation;
    writes to ``tiles`` (staged shared tiles) and barriers are allowed with them."""
    inside = {n.name for n, _ in walk(body) if isinstance(n, c_ast.Decl) and n.name}
    accumulators = _accumulators(body)
    allowed_calls = PURE_CALLS | ({"__syncthreads"} if tiles else set())
    for n, _ in walk(body):
        if isinstance(n, (c_ast.Break, c_ast.Return, c_ast.Goto)):
            return "the body has break/return"
        name = call_name(n)
        if isinstance(n, c_ast.FuncCall) and name not in allowed_calls:
            return f"the body calls {name or 'a function'}"
        target = _written(n)
        if target is None:
            continue
        if isinstance(target, c_ast.ID):
            if target.name == iterator:
                return f"the body assigns the iterator {iterator}"
            if target.name in inside or target.name in accumulators:
                continue
            return f"the body assigns {target.name}, declared outside the loop"
        base = target
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        if isinstance(base, c_ast.ID) and (base.name in inside or base.name in tiles):
            continue
        written = base.name if isinstance(base, c_ast.ID) else "memory"
        return f"the body writes {written}, which another iteration may read"
    for name in accumulators:
        uses = sum(1 for n, _ in walk(body) if isinstance(n, c_ast.ID) and n.name == name)
        if uses != accumulators[name]:
            return f"the body reads the accumulator {name}"
    return ""


def _written(n: c_ast.Node) -> c_ast.Node | None:
    if isinstance(n, c_ast.Assignment):
        return n.lvalue
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
        return n.expr
    return None


def _accumulators(body: c_ast.Node | None) -> dict[str, int]:
    """Outer scalars the body only accumulates into (``s += e``, ``s -= e``, ``s++``):
    name -> number of such updates."""
    if body is None:
        return {}
    inside = {n.name for n, _ in walk(body) if isinstance(n, c_ast.Decl) and n.name}
    counts: dict[str, int] = {}
    for n, _ in walk(body):
        target = _written(n)
        if not isinstance(target, c_ast.ID) or target.name in inside:
            continue
        if isinstance(n, c_ast.Assignment) and n.op not in ("+=", "-="):
            counts[target.name] = -1_000_000          # a plain write: not an accumulator
            continue
        counts[target.name] = counts.get(target.name, 0) + 1
    return {k: v for k, v in counts.items() if v > 0}


# ----------------------------------------------------------------------------- rewriting
def _block_id(proc: GProcedure) -> str:
    return "(@bidy * @gridDimX + @bidx)" if uses_y(proc) else "@bidx"


def _rewrite_rotation(proc: GProcedure, loop: GLoop, k: int) -> None:
    """Replace ``for (int it = LO; it < HI; it += S) BODY`` by its rotated form."""
    node, it, step = loop.node, loop.iterator, loop.step
    taken = proc.names_taken()
    n, first, t = (fresh(taken, f"{it}_{s}") for s in ("n", "first", "t"))
    scaled = f" * {step}" if step != 1 else ""
    zero = isinstance(loop.lower, c_ast.Constant) and loop.lower.value == "0"
    span = "HI" if zero else "HI - LO"
    trips = f"({span} + {step - 1}) / {step}" if step != 1 else span
    start = "" if zero else "LO + "
    body = node.stmt if isinstance(node.stmt, c_ast.Compound) else c_ast.Compound([node.stmt])
    new = statements(
        f"{{ const int {n} = {trips};"
        f"  const int {first} = {n} > 0 ? {_block_id(proc)} % {n} * {k} % {n} : 0;"
        f"  for (int {t} = {first}; {t} < {first} + {n}; {t}++) {{"
        f"    const int {it} = {start}{t} % {n}{scaled}; BODY; }} }}",
        HI=copy.deepcopy(loop.upper), LO=copy.deepcopy(loop.lower), BODY=body)[0]
    _replace(proc.body, node, new)


def _rewrite_diagonal(proc: GProcedure) -> None:
    """Remap block ids diagonally and recompute idx/idy from them."""
    taken = proc.names_taken()
    bid, bx, by = (fresh(taken, s) for s in ("bid_linear", "bidx_diag", "bidy_diag"))
    ids = {"bidx": c_ast.ID(bx), "bidy": c_ast.ID(by),
           "idx": expression(f"{bx} * @blockDimX + @tidx"),
           "idy": expression(f"{by} * @blockDimY + @tidy")}

    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, PredefId) and n.name in ids:
            return copy.deepcopy(ids[n.name])
        return n

    map_nodes(proc.body, fn)
    # the passes index by the remapped block ids: as wide as the block ids they replace
    itype = proc.index_type("bidx", "bidy")
    header = statements(f"const {itype} {bid} = @bidx + @gridDimX * @bidy;"
                        f"const {itype} {by} = {bid} % @gridDimY;"
                        f"const {itype} {bx} = ({bid} / @gridDimY + {by}) % @gridDimX;")
    proc.body.block_items = header + list(proc.body.block_items or [])


def _raw_block_ids(proc: GProcedure, ctx: PassContext) -> str:
    """Why the block ids cannot be remapped: a block or global id naiveopt did not lift into a
    predefined id (in the kernel or a helper) would keep the old order."""
    for tree in [proc.body] + list(ctx.module.helpers):
        for n, _ in walk(tree):
            if isinstance(n, c_ast.ID) and n.name in RAW_BLOCK_IDS:
                return f"the kernel or a helper uses {n.name} directly"
    return ""


def _replace(tree: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> None:
    map_nodes(tree, lambda n: new if n is old else n)


__all__ = ["PartitionCamping", "rotation_obstacle", "block_strided", "first_wave"]
