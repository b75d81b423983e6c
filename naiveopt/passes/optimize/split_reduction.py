"""Split each output's reduction loop over a group of threads (grid-level parallelism).

A kernel of the mv family computes one output per thread with a loop over the reduction
dimension. At H = 4096 rows in blocks of 256 threads that is 16 blocks, on a GPU of 132 SMs:
most SMs idle, and the few warps that run keep too few loads in flight to cover the DRAM
latency, whatever the coalescing passes do to their accesses. This pass gives each output a
group of ``G`` threads (lanes) that share its loop, then sums their partial results in shared
memory:

    const int lane = tidx % G;  const int row = bidx * (B / G) + tidx / G;   // "row" layout
    ...
    float p = 0;
    if (active) for (int j = lo + lane; j < hi; j += G) p += A[row * W + j] * B[j];
    s[tidx] = p;  __syncthreads();
    if (lane < G/2) s[tidx] += s[tidx + G/2];  __syncthreads();  ...   // log2(G) steps
    if (active && lane == 0) { acc += s[tidx]; <the statements after the loop> }

The lanes of a group are adjacent threads where the loop's reads are contiguous along the loop
(``A[row * W + j]``: a warp reads 32 / G rows, G consecutive elements each), and ``B / G``
threads apart ("column" layout: ``lane = tidx / P, out = bidx * P + tidx % P``) where they
are contiguous along the outputs (``A[j * W + col]``, tmv's column walk: a warp reads P
consecutive columns of each of its rows). The launch has G times the threads: blocks of B
cover B / G outputs (GProcedure.lanes; the launch's grid says so).

Which layout, G and B, and whether to split at all, is the cost model's call
(cost/reduction.py): at the sizes of interest (metadata's default set, -D, the file's
macros) the split must be estimated at least ``1 / GAIN`` times faster than the unsplit
kernel with coalesced reads. The number of outputs must be known there (whether the launch
fills the GPU is the question, so it is not guessed); a trip count nothing gives is estimated
at cost.reduction.ESTIMATE_SIZE, which the remark says. No kernel name enters the choice.

The partial sums are added in a tree instead of in order: a floating-point reassociation, as
any parallel sum (verification compares with its tolerance); ``--fp-strict`` keeps the order
and this pass then declines for floating-point sums (integer sums are exact either way).

Preconditions, each checked, else a remark says which failed: the kernel is 1-D (x ids only,
read as the global id), its loop is the only one and stands at the top level of the bounds
guard (analysis/shape.py), with a step that is a positive constant and a ``<``/``<=`` bound;
inside the loop every variable declared outside it is an accumulator updated only as
``acc += E``, ``acc -= E`` or ``acc = acc +/- E`` (E not reading an accumulator) and read
nowhere else; the loop writes no memory, calls nothing but math functions, and neither breaks
nor returns; the statements before it write memory only idempotently (``tmp[i] = 0.0f``:
every lane of a group runs them); the iterator is not read after the loop; an unguarded
kernel's naive block is a multiple of the outputs per block (its thread space is).
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis, is_pure
from ...cost.reduction import ESTIMATE_SIZE, Read, ReductionKernel, estimate_launch
from ...ir import GLoop, GProcedure, PredefId
from ...ir.build import expression, fresh, shared_array, statements
from ...ir.cgen import to_c
from ...ir.elements import element_bytes
from ...ir.rewrite import map_nodes, walk
from ...ir.typenames import scalar_locals
from ...launch import default_block, evaluate, parse, takes_naive_launch, variables
from ...targets import get_target
from ..functional.builtins import pure
from ..functional.nvcc import measure
from ..manager import OptimizationPass, PassContext, reanalyse
from .shape import contains_barrier, guarded

#: Lanes per output and threads per block the variants try.
LANES = (4, 8, 16, 32)
BLOCKS = (128, 256)
#: The split must be estimated this much faster than the unsplit kernel: the model's own
#: error is about this large, and a split that wins by less is not worth its reduction.
GAIN = 0.8
_INTEGER = ("int", "unsigned", "unsigned int", "long", "unsigned long", "long long",
            "unsigned long long", "short", "unsigned short", "size_t")
_FLOATING = ("float", "double")
_BUILTIN_STRUCTS = ("threadIdx", "blockIdx", "blockDim", "gridDim")


@dataclass
class Layout:
    """A variant: ``lanes`` threads per output, ``block`` threads per block, the lanes of a
    group adjacent ("row") or ``block / lanes`` apart ("column")."""

    style: str
    lanes: int
    block: int

    @property
    def outputs(self) -> int:
        return self.block // self.lanes

    def describe(self) -> str:
        return (f"{self.lanes} lanes per output ({self.style} layout), blocks of "
                f"{self.block} threads ({self.outputs} outputs each)")


@dataclass
class Plan:
    """What the checks found: the loop, the accumulators and their types."""

    loop: GLoop
    prologue: list[c_ast.Node]
    guard: c_ast.Node | None
    before: list[c_ast.Node]
    after: list[c_ast.Node]
    accumulators: dict[str, str]          # name -> C type


class SplitReduction(OptimizationPass):
    name = "split-reduction"
    reassociates = True
    lane_safe = True
    requires = ("loops", "memory-expressions")

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        plan, why = self._plan(proc, ctx)
        if plan is None:
            ctx.remark("missed", self.name, proc, why)
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        kernel, assumed = self._work(proc, plan, ctx)
        if kernel is None:
            space = proc.pragma.global_dim[0] or "the thread space"
            ctx.remark("missed", self.name, proc, f"how many outputs there are ({space}) is "
                       "not known at compile time: the cost model decides at the sizes of "
                       "interest (give them with -D or metadata's default sizes)")
            return PreservedAnalyses.all()
        naive_block = default_block(proc)[0]
        unguarded = ctx.am.get(proc, ShapeAnalysis)[0].guard is None
        base = estimate_launch(kernel, target, naive_block)
        sizes = f"{kernel.outputs} outputs of {kernel.trips} iterations"
        if assumed:
            sizes += f" ({', '.join(assumed)} assumed {ESTIMATE_SIZE}: give -D or metadata)"
        elif ctx.sizes_from:
            sizes += f" (from {ctx.sizes_from})"
        best, best_est = None, None
        layouts = [layout for layout in self._layouts(proc, plan)
                   if not (unguarded and naive_block % layout.outputs)]
        # an OpenCL output on the naive work-group would run on a stale naive launch
        # (launch.takes_naive_launch): another block where there is one
        kept = [layout for layout in layouts if not takes_naive_launch(
            proc, ctx.target, (layout.block,))]
        left_out = f"; work-groups of the naive {naive_block} left out (OpenCL would run " \
            "the output on a stale naive launch)" if kept and len(kept) < len(layouts) else ""
        layouts = kept or layouts
        for layout in layouts:
            est = estimate_launch(kernel, target, layout.block, layout.lanes,
                                  self._segments(proc, plan, layout, kernel),
                                  layout.block * 4 * len(plan.accumulators))
            # ties (several layouts at the same bound) go to the most slack on the others
            if best_est is None or _key(est) < _key(best_est):
                best, best_est = layout, est
        if best is None:
            ctx.remark("missed", self.name, proc, "no layout's outputs per block divide the "
                       f"unguarded kernel's naive block of {naive_block}")
            return PreservedAnalyses.all()
        verdict = (f"{sizes}: unsplit {base.describe()}; best split {best.describe()}: "
                   f"{best_est.describe()}{left_out}")
        if best_est.seconds > GAIN * base.seconds:
            ctx.remark("missed", self.name, proc, f"the split is not estimated at least "
                       f"{1 / GAIN:.2f}x faster: {verdict}")
            return PreservedAnalyses.all()
        self._rewrite(proc, plan, best)
        reanalyse(proc, ctx)
        res, _ = measure(ctx.module, proc, ctx.arch) if target.vendor == "nvidia" else (None, "")
        if res is not None:
            proc.resources = res
        regs = f"; {res.registers} registers" if res is not None else ""
        ctx.remark("applied", self.name, proc, f"the loop over {plan.loop.iterator} split "
                   f"over {best.lanes} threads per output, partial sums added in shared "
                   f"memory ({', '.join(plan.accumulators)}; a floating-point reassociation "
                   f"where they are floating, --fp-strict keeps the order){regs}: "
                   f"{base.seconds / best_est.seconds:.1f}x estimated: {verdict}")
        return None

    # ------------------------------------------------------------------ preconditions
    def _plan(self, proc: GProcedure, ctx: PassContext) -> tuple[Plan | None, str]:
        if contains_barrier(proc.body):
            return None, "the kernel has barriers"
        for node, _ in walk(proc.body):
            if isinstance(node, PredefId) and node.name != "idx":
                return None, (f"the kernel reads {node.name}: only kernels indexed by the "
                              "global x id are split")
            if isinstance(node, c_ast.StructRef) and isinstance(node.name, c_ast.ID) and \
                    node.name.name in _BUILTIN_STRUCTS:
                return None, f"the kernel reads {node.name.name}.{to_c(node.field)}"
        gy = proc.pragma.global_dim[1]
        if gy not in (None, "1") or proc.pragma.global_dim_z not in (None, "1"):
            return None, "the kernel's thread space is not 1-D"
        if proc.coarsen != (1, 1) or proc.launch_block is not None:
            return None, "an earlier pass fixed the kernel's launch"
        shape, why = ctx.am.get(proc, ShapeAnalysis)
        if shape is None:
            return None, why
        loops = [lp for lp in proc.loops]
        tops = [lp for lp in loops if lp.node in shape.body]
        if len(tops) != 1:
            return None, ("no loop at the top level of the kernel's guard" if not tops else
                          "more than one loop at the top level of the kernel's guard")
        loop = tops[0]
        if not loop.canonical:
            return None, f"loop {loop.iterator} is not canonical: {loop.why_not_canonical}"
        if any(lp is not loop and not _inside(lp.node, loop.node) for lp in loops):
            return None, "the kernel has loops besides the reduction loop"
        if not loop.step or loop.step <= 0:
            return None, f"loop {loop.iterator} does not count up by a constant"
        cond = loop.node.cond
        if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and
                isinstance(cond.left, c_ast.ID) and cond.left.name == loop.iterator):
            return None, f"loop {loop.iterator}'s condition is not '{loop.iterator} < bound'"
        if not isinstance(loop.node.next, (c_ast.UnaryOp, c_ast.Assignment)):
            return None, f"loop {loop.iterator}'s increment is not a single update"
        position = shape.body.index(loop.node)
        before, after = shape.body[:position], shape.body[position + 1:]
        declared_in_loop = {n.name for n, _ in walk(loop.node) if isinstance(n, c_ast.Decl)}
        if loop.iterator not in declared_in_loop:
            return None, f"iterator {loop.iterator} is declared outside its loop"
        if any(isinstance(n, c_ast.ID) and n.name == loop.iterator
               for s in after for n, _ in walk(s)):
            return None, f"iterator {loop.iterator} is read after the loop"
        types = scalar_locals(proc.body, _FLOATING + _INTEGER)
        accumulators, why = _accumulators(loop, types, declared_in_loop)
        if not accumulators:
            return None, why
        floating = [a for a, t in accumulators.items() if t in _FLOATING]
        if floating and ctx.options.fp_strict:
            return None, (f"--fp-strict: the sums of {', '.join(floating)} keep their order")
        why = _writes_idempotently(before)
        if why:
            return None, why
        return Plan(loop, shape.prologue, shape.guard, before, after, accumulators), ""

    # ------------------------------------------------------------------ the cost model's input
    def _work(self, proc: GProcedure, plan: Plan, ctx: PassContext
              ) -> tuple[ReductionKernel | None, list[str]]:
        """The kernel's work at the sizes of interest, and the names whose size was assumed;
        (None, ...) where the number of outputs is not known: whether the launch fills the
        GPU is the whole question, so it is not guessed."""
        assumed: list[str] = []
        extent = proc.pragma.extents[0]
        outputs = extent if extent else _value(proc.pragma.global_dim[0], ctx.sizes, assumed)
        if assumed:
            return None, assumed
        loop = plan.loop
        low = _value(to_c(loop.lower), ctx.sizes, assumed) if loop.lower is not None else 0
        high = _value(to_c(loop.upper), ctx.sizes, assumed) if loop.upper is not None else \
            ESTIMATE_SIZE
        trips = max(1, -(-(high - low) // loop.step))
        reads = []
        for m in loop.memory_expressions:
            if m.space != "global" or not m.is_read:
                continue
            param = proc.param(m.array)
            size = element_bytes(param.base_type) if param else 4
            per_output = not m.decomposition.resolved or \
                m.decomposition.coefficient("idx") != 0
            reads.append(Read(size or 4, per_output))
        writes = sum(1 for s in plan.after for n, _ in walk(s)
                     if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ArrayRef))
        return ReductionKernel(max(1, outputs), trips, reads, 4 * max(1, writes),
                               2 * len(plan.accumulators)), sorted(set(assumed))

    def _layouts(self, proc: GProcedure, plan: Plan) -> list[Layout]:
        return [Layout(style, lanes, block) for style in ("row", "column")
                for block in BLOCKS for lanes in LANES if lanes < block]

    def _segments(self, proc: GProcedure, plan: Plan, layout: Layout,
                  kernel: ReductionKernel) -> float:
        """The consecutive bytes the per-output reads move per group of threads, the
        smallest over them (a read contiguous along neither the loop nor the outputs moves
        one element)."""
        smallest = 128.0
        it = plan.loop.iterator
        for m in plan.loop.memory_expressions:
            if m.space != "global" or not m.is_read:
                continue
            d = m.decomposition
            if d.resolved and d.coefficient("idx") == 0:
                continue                        # shared by all outputs
            param = proc.param(m.array)
            size = (element_bytes(param.base_type) if param else 4) or 4
            if not d.resolved:
                run = 1
            elif layout.style == "row":
                run = layout.lanes if d.coefficient(it) == 1 else 1
            else:
                run = layout.outputs if d.coefficient("idx") == 1 else 1
            smallest = min(smallest, float(min(32, run) * size))
        return smallest

    # ------------------------------------------------------------------ the rewrite
    def _rewrite(self, proc: GProcedure, plan: Plan, layout: Layout) -> None:
        taken = proc.names_taken()
        lane, out, active, lead = (fresh(taken, n) for n in ("lane", "out", "active", "lead"))
        g, p = layout.lanes, layout.outputs
        # the global id is the output's index now
        map_nodes(proc.body, lambda n: c_ast.ID(out)
                  if isinstance(n, PredefId) and n.name == "idx" else n)
        loop = plan.loop.node
        step = plan.loop.step
        # the loop: each lane starts at its own offset and steps over the group
        _offset_start(loop, plan.loop.iterator, f"{lane} * {step}" if step != 1 else lane)
        loop.next = expression(f"{plan.loop.iterator} += {g * step}")
        partials = {a: fresh(taken, f"p_{a}") for a in plan.accumulators}
        shared = {a: fresh(taken, f"s_{a}") for a in plan.accumulators}
        for node, _ in walk(loop):
            if isinstance(node, c_ast.ID) and node.name in partials:
                node.name = partials[node.name]
        # the output's index replaces the global id: as wide as it (id-width)
        itype = proc.index_type("bidx")
        if layout.style == "row":
            ids = (f"const int {lane} = @tidx % {g};\n"
                   f"const {itype} {out} = @bidx * {p} + @tidx / {g};")
            stride = 1
        else:
            ids = (f"const int {lane} = @tidx / {p};\n"
                   f"const {itype} {out} = @bidx * {p} + @tidx % {p};")
            stride = p
        head = statements(ids) + [shared_array(shared[a], t, [layout.block])
                                  for a, t in plan.accumulators.items()]
        guard = plan.guard if plan.guard is not None else c_ast.Constant("int", "1")
        flag = statements(f"const int {active} = GUARD;", GUARD=guard)
        before, why = guarded(plan.before, active)
        if why:
            raise ValueError(why)       # _plan checked what guarded() needs
        partial_decls = statements("\n".join(f"{t} {partials[a]} = 0;"
                                             for a, t in plan.accumulators.items()))
        run = statements(f"if ({active}) {{ LOOP; }}", LOOP=loop)
        lines = [f"{shared[a]}[@tidx] = {partials[a]};" for a in plan.accumulators]
        lines.append("__syncthreads();")
        offset = g // 2
        while offset:
            adds = " ".join(f"{shared[a]}[@tidx] += {shared[a]}[@tidx + {offset * stride}];"
                            for a in plan.accumulators)
            lines.append(f"if ({lane} < {offset}) {{ {adds} }}")
            if offset > 1:
                lines.append("__syncthreads();")
            offset //= 2
        lines.append(f"const int {lead} = {active} && {lane} == 0;")
        combine = statements("\n".join(f"{a} += {shared[a]}[@tidx];"
                                       for a in plan.accumulators))
        after, why = guarded(combine + plan.after, lead)
        if why:
            raise ValueError(why)
        proc.func.body.block_items = (head + plan.prologue + flag + before + partial_decls +
                                      run + statements("\n".join(lines)) + after)
        proc.launch_block = (layout.block, 1)
        proc.lanes = g


# ---------------------------------------------------------------------- helpers
def _key(est) -> tuple[float, ...]:
    return tuple(sorted(est.times.values(), reverse=True))


def _inside(node: c_ast.Node, outer: c_ast.Node) -> bool:
    return any(n is node for n, _ in walk(outer))


def _accumulators(loop: GLoop, types: dict[str, str], declared: set[str]
                  ) -> tuple[dict[str, str], str]:
    """The loop's accumulators (name -> type), or ({}, why the loop is no reduction)."""
    updates: dict[str, list[c_ast.Assignment]] = {}
    for node, _ in walk(loop.node.stmt):
        if isinstance(node, (c_ast.Break, c_ast.Return, c_ast.Goto)):
            return {}, f"loop {loop.iterator} leaves early (break, return or goto)"
        if isinstance(node, c_ast.FuncCall) and not pure(node):
            return {}, f"loop {loop.iterator} calls {to_c(node.name)}"
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            if not (isinstance(node.expr, c_ast.ID) and node.expr.name in declared):
                return {}, f"loop {loop.iterator} increments {to_c(node.expr)}"
        if isinstance(node, c_ast.Assignment):
            if not isinstance(node.lvalue, c_ast.ID):
                return {}, f"loop {loop.iterator} writes memory ({to_c(node.lvalue)})"
            name = node.lvalue.name
            if name in declared:
                continue
            if name not in types:
                return {}, f"loop {loop.iterator} assigns {name}, which is no scalar local"
            updates.setdefault(name, []).append(node)
    if not updates:
        return {}, f"loop {loop.iterator} accumulates nothing in a local"
    for acc, nodes in updates.items():
        if any(_term(node, acc) is None for node in nodes):
            return {}, (f"{acc} is assigned in loop {loop.iterator} other than as "
                        f"{acc} += E or {acc} -= E")
    found = {}
    for acc, nodes in updates.items():
        for node in nodes:
            if set(updates) & _names(_term(node, acc)):
                return {}, f"an update of {acc} reads an accumulator"
        reads = sum(1 for n, _ in walk(loop.node.stmt) if isinstance(n, c_ast.ID) and
                    n.name == acc)
        if reads != len(nodes) + sum(1 for n in nodes if n.op == "="):
            return {}, f"{acc} is read in loop {loop.iterator} other than by its updates"
        found[acc] = types[acc]
    used = _names(loop.node.cond) | _names(loop.node.next) | _names(loop.node.init)
    if used & set(found):
        return {}, f"loop {loop.iterator}'s bounds read an accumulator"
    return found, ""


def _term(node: c_ast.Assignment, acc: str) -> c_ast.Node | None:
    """What an update adds or subtracts: ``acc += E``, ``acc -= E``, ``acc = acc + E``,
    ``acc = E + acc``, ``acc = acc - E``; else None."""
    if node.op in ("+=", "-="):
        return node.rvalue
    value = node.rvalue
    if node.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op in ("+", "-"):
        if isinstance(value.left, c_ast.ID) and value.left.name == acc:
            return value.right
        if value.op == "+" and isinstance(value.right, c_ast.ID) and value.right.name == acc:
            return value.left
    return None


def _names(node: c_ast.Node | None) -> set[str]:
    return {n.name for n, _ in walk(node) if isinstance(n, c_ast.ID)} if node else set()


def _writes_idempotently(stmts: list[c_ast.Node]) -> str:
    """'' when every memory write of ``stmts`` stores a value that reads no memory (so that
    the lanes of a group, which all run them, store the same), else why not."""
    for stmt in stmts:
        for node, _ in walk(stmt):
            if isinstance(node, c_ast.FuncCall) and not pure(node):
                return f"a call to {to_c(node.name)} before the loop (every lane would make it)"
            if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--") and \
                    not isinstance(node.expr, c_ast.ID):
                return f"{to_c(node)} before the loop (every lane would make it)"
            if isinstance(node, c_ast.Assignment) and not isinstance(node.lvalue, c_ast.ID):
                if node.op != "=" or not is_pure(node.rvalue):
                    return (f"{to_c(node)} before the loop: every lane of a group would make "
                            "this write")
    return ""


def _offset_start(loop: c_ast.For, iterator: str, offset: str) -> None:
    """``for (int j = LO; ...)`` becomes ``for (int j = LO + offset; ...)``."""
    init = loop.init
    decls = init.decls if isinstance(init, c_ast.DeclList) else []
    for d in decls:
        if d.name == iterator and d.init is not None:
            zero = isinstance(d.init, c_ast.Constant) and d.init.value == "0"
            d.init = expression(offset) if zero else \
                expression(f"(LO) + {offset}", LO=d.init)
            return
    raise ValueError(f"loop {iterator} has no initial value to offset")


def _value(text: str | None, sizes: dict[str, int], assumed: list[str]) -> int:
    """``text`` (C arithmetic on sizes) at ``sizes``; a name they lack is ESTIMATE_SIZE
    (listed in ``assumed``); text that is not such arithmetic is ESTIMATE_SIZE too."""
    tree = parse(text) if text else None
    if tree is None:
        assumed.append(text or "a size")
        return ESTIMATE_SIZE
    values = dict(sizes)
    for name in variables(tree):
        if name not in values:
            values[name] = ESTIMATE_SIZE
            assumed.append(name)
    try:
        return int(evaluate(tree, values))
    except (ValueError, ZeroDivisionError):
        return ESTIMATE_SIZE


