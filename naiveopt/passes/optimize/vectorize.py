"""Vectorization (paper 002, VectorizationPass): neighbouring scalar accesses become one
float4 (int4, float2...) access.

Two forms, both exact (same values, same floating-point evaluation order), and the vector
accesses the input wrote:

**As written**. OpenCL's ``vload4(i, p)`` and ``vstore4(v, i, p)``, and CUDA's
``reinterpret_cast<float4 *>(p)[i]``, reach the IR as their scalar accesses
(frontend/translate.py, frontend/vector_casts.py: ``make_float4(p[4*i], ..., p[4*i + 3])``
and four stores of ``v``'s components), which every analysis reads. Where such a group is
still whole here, it is one vector access again, on any target: the user chose it, and a
group of consecutive elements read in one expression (or stored in consecutive statements
from one vector value) is exact as one access on any alignment (below).

**Along a loop** (paper 002 Fig. 7). A thread that reads ``A[f + k]`` in a loop over k reads
consecutive elements in consecutive iterations. The loop is unrolled by V; each unrolled step
loads ``A[f + k .. f + k + V-1]`` once and its V copies of the body take one component each;
a scalar loop runs the remaining iterations::

    int kv = lo;
    for (; kv + V-1 < hi; kv += V) {
        float4 v_A = load4(&A[f + kv]);
        { const int k = kv;     BODY[A[f + k] -> v_A.x] }
        ...
        { const int k = kv + 3; BODY[A[f + k] -> v_A.w] }
    }
    for (int k = kv; k < hi; k++) BODY

**Across threads**. A kernel whose accesses move by one element between neighbouring threads
in x (``C[y*W + x] = A[y] * B[x]``) is merged so that each thread handles V neighbouring x:
``B[x..x+3]`` is one vector load, ``C[...]`` one vector store, and ``A[y]`` (the same for all
V) one scalar load instead of V. When any of the V outputs fails the bounds guard the thread
takes the scalar path: V guarded copies of the original code.

Legality: a vectorized read is of an array the kernel never writes, executed unconditionally
in every iteration (or by every lane), with an index that is affine with coefficient 1 and
uses only values fixed before the loop (the loads are hoisted to the top of the step). A loop
body that writes memory is left alone (hoisting a read above a write could change what it
reads if the host passes aliasing pointers). A vectorized write is the one statement writing an
array the kernel never reads, run unconditionally at the top level of every lane, after every
hoisted read. Vector accesses are exact on any alignment: OpenCL's vloadN/vstoreN need only
element alignment, and CUDA's helper tests the address and falls back to scalar accesses.

When it fires (``--vectorize auto``): always on AMD targets and with texture memory (paper 002:
vector types are what reach bandwidth there). On NVIDIA, global memory reaches full bandwidth
with 32-bit coalesced accesses (paper 002), so vectorization is used only where 128-bit
accesses cut instructions: a loop run that every thread reads 16-byte aligned whenever the
runtime sizes allow (thread-id coefficients and constant offsets multiples of V), where one
LDG.128 replaces four loads, unless every such run is one address for all threads (a
broadcast: strsm's ``L[i*N + k]``) and the cost model does not estimate the kernel bound by
instruction issue or L1 wavefronts, the only things it would save: nvcc unrolls the vector
loop half as far as the scalar one, which halves the other loads in flight (the H100 ran
strsm so vectorized 1.47x slower); a merge across threads where the V lanes share a load; and a
streaming kernel's merge across threads (no load shared) where the cost model estimates it
faster, on the naive block or on 32x8 threads (``Candidates.streaming_blocks``): a kernel
with few loads per thread keeps too few bytes in flight to reach the DRAM bandwidth, and a
float4 load moves four times a float's (the model's latency bound).
``--vectorize always`` applies every legal form on any target, ``--vectorize never`` none.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import sympy
from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import ShapeAnalysis, is_pure
from ...analysis.symbols import SymbolAnalysis
from ...cost.static import static_work
from ...ir import GLoop, GProcedure, MemoryExpression, PredefId
from ...ir.build import fresh, from_sympy, statements
from ...ir.elements import WORD_BYTES
from ...ir.rewrite import assigned_names, identifiers, map_nodes, replace_child, walk
from ...ir.vector import (VECTOR_ELEMENTS, VectorLoad, VectorStore, declare_vector, lane,
                          vector_type)
from ...ir.nodes import TexFetch
from ...ir.symbolic import decompose, to_sympy
from ...ir.textures import bind_textures, fetches
from ...launch import default_block
from ...targets import Target, get_target
from ..manager import OptimizationPass, Pass, PassContext, adopt, reanalyse
from .shape import contains_barrier
from .selection import Variant, choose, measure_refinement
from .tiling import (TilingAnalysis, local_names, rewrite_copy, uses_raw_thread_ids,
                     with_load_width)

IDX = sympy.Symbol("idx", integer=True)
_BRANCHES = (c_ast.If, c_ast.TernaryOp, c_ast.Switch, c_ast.For, c_ast.While, c_ast.DoWhile)


class Vectorize(OptimizationPass):
    name = "vectorize"
    requires = ("memory-expressions", "nvcc")
    # the tiling plan still describes the staged loop: vectorizing loops and threads leaves
    # its tiles as generated, and vector tile loads record their own plan
    preserves = PreservedAnalyses.none().preserve(TilingAnalysis)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        mode = ctx.options.vectorize
        if mode == "never":
            ctx.remark("missed", self.name, proc, "disabled (--vectorize never)")
            return PreservedAnalyses.all()
        target = get_target(ctx.arch)
        everywhere = mode == "always" or target.vendor == "amd" or \
            ctx.options.memory == "texture"
        fired = _restore_vectors(self.name, proc, ctx)
        fired = _vectorize_tile_loads(self.name, proc, ctx, target, everywhere) or fired
        fired = _vectorize_loops(self.name, proc, ctx, everywhere, target) or fired
        fired = _vectorize_threads(self.name, proc, ctx, everywhere, target) or fired
        if not fired:
            ctx.remark("missed", self.name, proc, "no access to vectorize (see the remarks "
                       "above)")
            return PreservedAnalyses.all()


# --------------------------------------------------------------------------- as written
class VectorsAsWritten(Pass):
    """Without optimization (``--no-opt``), the input's vector accesses as it wrote them:
    the front end reads ``vload4(i, x)`` and ``((float4 *)x)[i]`` as their elements, which a
    functional-only output would otherwise show, four scalar loads where the input had one.
    Vectorize does this first when it runs. A rewrite back to the input's form, not an
    optimization: the output's header still says functional only."""

    name = "vectors-as-written"
    requires = ("memory-expressions",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if not _restore_vectors(self.name, proc, ctx, canonical=True):
            return PreservedAnalyses.all()
        return None


def _restore_vectors(name: str, proc: GProcedure, ctx: PassContext,
                     canonical: bool = False) -> bool:
    """The input's vector loads and stores (module docstring: as written) as vector
    accesses again: ``make_float4(A[e], A[e + 1], A[e + 2], A[e + 3])`` of a global array of
    a type with vector forms, and ``A[e + k] = v.<k>`` for k = 0..W-1 in consecutive
    statements."""
    by_node = {id(m.node): m for m in proc.memory_expressions if m.space == "global"}

    def group(refs: list) -> MemoryExpression | None:
        ms = [by_node.get(id(r)) for r in refs]
        if None in ms or len({m.array for m in ms}) != 1 or \
                _elem(proc, ms[0]) not in VECTOR_ELEMENTS or len(ms) not in (2, 4) or \
                any(sympy.simplify(m.index - ms[0].index - k) != 0 for k, m in enumerate(ms)):
            return None
        return ms[0]

    done: list[str] = []

    def loads(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                node.name.name.startswith("make_") and node.args is not None and \
                all(isinstance(a, c_ast.ArrayRef) for a in node.args.exprs):
            first = group(node.args.exprs)
            width = len(node.args.exprs)
            if first is not None and first.is_read and not first.is_write and \
                    node.name.name == f"make_{vector_type(_elem(proc, first), width)}":
                done.append(f"load {first.array}[{first.index}..+{width - 1}]")
                return VectorLoad(node.args.exprs[0], width, _elem(proc, first))
        return node

    map_nodes(proc.body, loads)
    for block in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Compound)]:
        items, at = block.block_items or [], 0
        while at < len(items):
            run = _store_run(items, at, group)
            if run is None:
                at += 1
                continue
            width, first, value = run
            items[at:at + width] = [VectorStore(items[at].lvalue, value, width,
                                                _elem(proc, first))]
            done.append(f"store {first.array}[{first.index}..+{width - 1}]")
            at += 1
    if done:
        ctx.remark("applied", name, proc, f"{len(done)} vector access(es) as the input wrote "
                   "them (vloadN/vstoreN, vector pointer casts): " + "; ".join(done),
                   canonical=canonical)
        reanalyse(proc, ctx)
    return bool(done)


def _store_run(items: list, at: int, group) -> tuple[int, MemoryExpression, c_ast.ID] | None:
    """(width, first access, vector) where ``items[at:]`` begins with the stores of one
    vector's components to consecutive elements (``A[e] = v.x; A[e + 1] = v.y; ...``)."""
    for width in (4, 2):
        stmts = items[at:at + width]
        if len(stmts) < width or not all(
                isinstance(st, c_ast.Assignment) and st.op == "=" and
                isinstance(st.lvalue, c_ast.ArrayRef) and isinstance(st.rvalue, c_ast.StructRef)
                and st.rvalue.type == "." and isinstance(st.rvalue.name, c_ast.ID) and
                st.rvalue.field.name == "xyzw"[k] for k, st in enumerate(stmts)):
            continue
        # (an index that reads memory may read what a store before it wrote)
        if len({st.rvalue.name.name for st in stmts}) != 1 or any(
                isinstance(n, c_ast.ArrayRef)
                for st in stmts for n, _ in walk(st.lvalue.subscript)):
            continue
        first = group([st.lvalue for st in stmts])
        if first is not None and first.is_write:
            return width, first, c_ast.ID(stmts[0].rvalue.name.name)
    return None


# --------------------------------------------------------------------------- shared checks
def _lanes(elem: str | None, target: Target) -> int:
    """Elements of type ``elem`` per vector access of the target (0 when it has no vector
    form)."""
    size = VECTOR_ELEMENTS.get(elem) if elem else None
    return target.vector_bytes // size if size else 0


def _width(proc: GProcedure, array: str, target: Target) -> int:
    param = proc.param(array)
    return _lanes(param.base_type if param is not None else None, target)


def _written(proc: GProcedure) -> set[str]:
    return {m.array for m in proc.memory_expressions if m.is_write}


def _read(proc: GProcedure) -> set[str]:
    return {m.array for m in proc.memory_expressions if m.is_read}


def _unconditional(node: c_ast.Node, root: c_ast.Node, parents: dict[int, c_ast.Node]) -> bool:
    """Whether ``node`` runs whenever ``root`` (a statement containing it) runs: no branch or
    inner loop between them (for a loop ``root``, its body statement counts as between)."""
    n = parents.get(id(node))
    while n is not None and n is not root:
        if isinstance(n, _BRANCHES) or (isinstance(n, c_ast.BinaryOp) and
                                        n.op in ("&&", "||")):
            return False
        n = parents.get(id(n))
    return n is root


def _aligned_everywhere(index: sympy.Expr, width: int, uniforms: set[str]) -> bool:
    """Whether every thread's vector at ``index`` is 16-byte aligned whenever the runtime sizes
    (symbols in ``uniforms``) are multiples of ``width``: numeric coefficients of thread ids and
    iterators, and the constant offset, must be multiples of ``width``."""
    for term in sympy.Add.make_args(sympy.expand(index)):
        coeff, rest = term.as_coeff_Mul()
        if any(s.name in uniforms for s in rest.free_symbols):
            continue
        if not coeff.is_integer or coeff % width:
            return False
    return True


# --------------------------------------------------------------------------- tile loads
def _vectorize_tile_loads(name: str, proc: GProcedure, ctx: PassContext, target: Target,
                          everywhere: bool) -> bool:
    """Cooperative tile loads of a staged kernel read a vector of consecutive elements per
    thread (the target's widest access, ``vector_bytes`` of words: float4 on every target
    described today).

    The loads stay coalesced (a warp reads one contiguous run) with a quarter of the load
    instructions. Not on NVIDIA by default: its scalar cooperative loads already reach full
    bandwidth (paper 002), and a float4 unit keeps 4 more registers live per load. Kept only
    when the occupancy stays at the target's threshold."""
    plan = ctx.am.get(proc, TilingAnalysis)
    rewritten_by = ctx.am.dropped_by(proc, TilingAnalysis) if plan is None else ""
    if plan is None and not rewritten_by:
        return False
    # the elements a tile load vectorizes are words (ir/vector.VECTOR_ELEMENTS)
    lanes = target.vector_bytes // WORD_BYTES
    if not everywhere:
        ctx.remark("missed", name, proc, "tile loads: on NVIDIA the scalar cooperative loads "
                   "are coalesced already and reach full bandwidth (--vectorize always uses "
                   f"float{lanes} units)")
        return False
    if rewritten_by:
        ctx.remark("missed", name, proc, "tile loads: the kernel was rewritten after tiling "
                   f"({rewritten_by})")
        return False
    wider, why = with_load_width(plan, lanes)
    measured = None
    if wider is not None:
        measured, why = measure_refinement(ctx, wider, target)
    if measured is None:
        ctx.remark("missed", name, proc, f"tile loads: {why}")
        return False
    if not measured.keeps_occupancy(target):
        ctx.remark("missed", name, proc, f"tile loads: float{lanes} loads would leave "
                   f"{measured.facts} < {target.occupancy_target:.0%} (limited by "
                   f"{measured.limiter})")
        return False
    adopt(proc, measured.proc, ctx)
    ctx.am.record(proc, TilingAnalysis, wider)
    ctx.remark("applied", name, proc, f"tile loads: each thread loads {lanes} consecutive "
               "elements of a tile row with one vector load (scalar, zero-filled loads at the "
               f"edges); {measured.facts}")
    return True


# --------------------------------------------------------------------------- along a loop
def _vectorize_loops(name: str, proc: GProcedure, ctx: PassContext, everywhere: bool,
                     target: Target) -> bool:
    """Vectorize every eligible loop of ``proc``; whether any was."""
    done: set[int] = set()      # remainder loops (and loops already reported)
    fired = False
    bound = None                # the kernel's bound as estimated, once asked
    while True:
        # one analysis serves every loop outside those rewritten in this round: rewriting a
        # loop replaces its own subtree only, so the others' accesses are still the tree's
        # (a reanalysis per loop was quadratic: the 32 loop copies of a register-blocked
        # stencil's fallback took minutes)
        rewritten: set[int] = set()     # nodes of the loops rewritten in this round
        roots: set[int] = set()         # those loops themselves
        textures = False
        taken = proc.names_taken()
        parents = {id(n): p for n, p in walk(proc.body)}
        for lp in proc.loops:
            if id(lp.node) in done or id(lp.node) in rewritten:
                continue
            if roots and any(id(n) in roots for n, _ in walk(lp.node.stmt)):
                continue        # holds a rewritten loop: its accesses are next round's
            done.add(id(lp.node))
            groups, why = _loop_candidates(proc, ctx, lp, everywhere)
            if why:
                ctx.remark("missed", name, proc, f"loop over {lp.iterator or '?'}: {why}")
            if not groups:
                continue
            if not everywhere and all(g[0].broadcast for g in groups):
                if bound is None:
                    bound = static_work(proc, ctx.module, target, ctx.sizes).estimate(
                        target).bound
                if bound not in _BROADCAST_PAYS:
                    ctx.remark("missed", name, proc, f"loop over {lp.iterator}: " + ", ".join(
                        g[0].text for g in groups) + (" is" if len(groups) == 1 else " are") +
                        " the same for every thread, and the "
                        f"kernel estimated {bound}-bound: a vector load would only save "
                        "broadcast loads (one L1 wavefront each), and nvcc unrolls the vector "
                        "loop half as far, keeping half the other loads in flight (the H100 "
                        "ran strsm so vectorized at 0.68x)")
                    continue
            rewritten |= {id(n) for n, _ in walk(lp.node)}
            roots.add(id(lp.node))
            remainder = _unroll(proc, lp, groups, target, taken, parents[id(lp.node)])
            done.add(id(remainder))
            ctx.remark("applied", name, proc, f"loop over {lp.iterator}: " + ", ".join(
                f"{g[0].text} read as {vector_type(g[0].elem, _lanes(g[0].elem, target))}"
                for g in groups) + "; scalar loop for the remaining iterations")
            fired = True
            if any(g[0].texture for g in groups):
                textures = True
                break               # binding rewrites the whole tree
        if not rewritten:
            return fired
        if textures:
            bind_textures(proc, "cuda")
        reanalyse(proc, ctx)


def _elem(proc: GProcedure, m: MemoryExpression) -> str:
    return proc.param(m.array).base_type


def _loop_obstacle(lp: GLoop) -> str:
    if not lp.canonical or lp.step != 1:
        return "not a canonical loop with step 1"
    node = lp.node
    if not isinstance(node.init, c_ast.DeclList) or not isinstance(node.cond, c_ast.BinaryOp) \
            or node.cond.op not in ("<", "<=", ">", ">="):
        return "the loop does not declare its iterator or its condition is not a < bound"
    if any(isinstance(n, (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label))
           for n, _ in walk(node.stmt)):
        return "the body has break/continue/return"
    if contains_barrier(node.stmt):
        return "the body has a barrier"
    assigned = assigned_names(node.stmt)
    if not is_pure(lp.upper) or identifiers(lp.upper) & set(assigned):
        return "the bound changes inside the loop"
    return ""


@dataclass
class Access:
    """A read that a loop step loads as one vector: an ArrayRef, or a width-1 texture fetch."""

    array: str
    node: c_ast.Node
    elem: str
    text: str
    texture: bool = False
    broadcast: bool = False     # the same address for every thread (no thread id in it)


#: The thread ids whose terms make an index differ between the lanes of a warp.
_LANE_IDS = ("idx", "idy", "idz", "tidx", "tidy", "tidz")

#: Bounds where a loop of broadcast vector loads pays on NVIDIA: it cuts load instructions
#: and L1 wavefronts, nothing else.
_BROADCAST_PAYS = ("issue", "L1")


def _loop_candidates(proc: GProcedure, ctx: PassContext, lp: GLoop, everywhere: bool
                     ) -> tuple[list[list[Access]], str]:
    """The reads to vectorize in ``lp``, grouped by address; or ([], why none)."""
    why = _loop_obstacle(lp)
    if why:
        return [], ""        # the loops pass already said why the loop is not canonical
    body = {id(n) for n, _ in walk(lp.node.stmt)}
    inside = [m for m in proc.memory_expressions if id(m.node) in body]
    if not inside and not fetches(lp.node.stmt):
        return [], ""
    if any(m.is_write and m.space in ("global", "shared") for m in inside):
        return [], "the body writes memory (a hoisted read could see the write through " \
                   "aliasing pointers)"
    parents = {id(n): p for n, p in walk(lp.node)}
    body_names = set(assigned_names(lp.node.stmt)) | {
        n.name for n, _ in walk(lp.node.stmt) if isinstance(n, c_ast.Decl) and n.name}
    written, env = _written(proc), ctx.am.get(proc, SymbolAnalysis).env()
    uniforms = env.uniforms
    k = lp.iterator
    groups: dict[str, list[MemoryExpression]] = {}
    reasons = []
    target = get_target(ctx.arch)
    for m in inside:
        if m.space != "global" or m.vector_width > 1:
            continue
        width = _width(proc, m.array, target)
        d = m.decomposition
        lo = to_sympy(lp.lower, env)
        if m.array in written or not width:
            reasons.append(f"{m.describe()}: " + ("the kernel writes it" if width
                                                  else "no vector type"))
        elif not d.resolved or d.loop.get(k) != 1:
            reasons.append(f"{m.describe()}: not consecutive along {k}")
        elif not _unconditional(m.node, lp.node, parents):
            reasons.append(f"{m.describe()}: read conditionally or in an inner loop")
        elif identifiers(m.node.subscript) & (body_names - {k}):
            reasons.append(f"{m.describe()}: its index uses values computed in the loop")
        elif not everywhere and (not _aligned_everywhere(
                m.index.subs(sympy.Symbol(k, integer=True), lo), width, uniforms)):
            reasons.append(f"{m.describe()}: not {target.vector_bytes}-byte aligned for every "
                           "thread (on "
                           "NVIDIA, misaligned vectors would fall back to scalar loads)")
        else:
            groups.setdefault(f"{m.array}[{sympy.srepr(m.index)}]", []).append(
                Access(m.array, m.node, _elem(proc, m), m.describe(),
                       broadcast=not any(d.predefined.get(t) for t in _LANE_IDS)))
    for f in fetches(lp.node.stmt):
        index = to_sympy(f.index, env.scoped(_iterators(lp)))
        d = decompose(index, env)
        what = f"{f.array}[{index}] (texture)"
        if f.width != 1 or f.elem not in VECTOR_ELEMENTS:
            continue
        if not d.resolved or d.loop.get(k) != 1:
            reasons.append(f"{what}: not consecutive along {k}")
        elif not _unconditional(f, lp.node, parents):
            reasons.append(f"{what}: read conditionally or in an inner loop")
        elif identifiers(f.index) & (body_names - {k}):
            reasons.append(f"{what}: its index uses values computed in the loop")
        else:
            groups.setdefault(f"tex {f.array}[{sympy.srepr(index)}]", []).append(
                Access(f.array, f, f.elem, what, texture=True))
    return list(groups.values()), "; ".join(reasons)


def _iterators(lp: GLoop) -> set[str]:
    out = set()
    while lp is not None:
        if lp.canonical and lp.iterator:
            out.add(lp.iterator)
        lp = lp.parent
    return out


def _unroll(proc: GProcedure, lp: GLoop, groups: list[list[Access]], target: Target,
            taken: set[str], parent: c_ast.Node) -> c_ast.For:
    """Rewrite ``lp`` (a child of ``parent``; ``taken``: the kernel's names, which the new
    ones join) as vector steps plus a scalar remainder; returns the remainder loop.

    A texture of 4-element texels can only be read at element indices that are multiples of
    4; when a thread's first index is not, its vector steps are skipped (all iterations run
    in the scalar loop)."""
    node: c_ast.For = lp.node
    k = lp.iterator
    kv = fresh(taken, f"{k}v")
    decl = node.init.decls[0]
    itype = " ".join(decl.type.type.names) if isinstance(decl.type, c_ast.TypeDecl) else "int"
    width = min(_lanes(g[0].elem, target) for g in groups)
    loads, names, aligned = [], [], []
    for g in groups:
        vname = fresh(taken, f"v_{g[0].array}")
        names.append(vname)
        if g[0].texture:
            first = _renamed(copy.deepcopy(g[0].node.index), {k: kv})
            aligned.append(c_ast.BinaryOp("==", c_ast.BinaryOp("%", copy.deepcopy(first),
                                                               c_ast.Constant("int", str(width))),
                                          c_ast.Constant("int", "0")))
            value = TexFetch(g[0].array, c_ast.BinaryOp("/", first, c_ast.Constant(
                "int", str(width))), width, g[0].elem)
        else:
            value = VectorLoad(_renamed(copy.deepcopy(g[0].node), {k: kv}), width, g[0].elem)
        loads.append(declare_vector(vname, g[0].elem, width, value))
    lanes = []
    for i in range(width):
        memo: dict = {}
        body = copy.deepcopy(node.stmt, memo)
        replace = {id(memo[id(a.node)]): lane(c_ast.ID(vname), i)
                   for g, vname in zip(groups, names) for a in g}
        body = map_nodes(body, lambda n: replace.get(id(n), n))
        step = statements(f"const {itype} {k} = {kv} + {i};") if k in identifiers(body) else []
        lanes.append(c_ast.Compound(step + (body.block_items or [] if isinstance(
            body, c_ast.Compound) else [body])))
    start = statements(f"{itype} {kv} = LO;", LO=copy.deepcopy(lp.lower))
    condition = f"{kv} + {width - 1} < HI"
    if aligned:
        flag = fresh(taken, f"{kv}_aligned")
        every = aligned[0]
        for cond in aligned[1:]:
            every = c_ast.BinaryOp("&&", every, cond)
        start += statements(f"const int {flag} = ALIGNED;", ALIGNED=every)
        condition = f"{flag} && {condition}"
    main = statements(f"for (; {condition}; {kv} += {width}) {{ STEP; }}",
                      HI=copy.deepcopy(lp.upper), STEP=loads + lanes)[0]
    remainder = c_ast.For(c_ast.DeclList([c_ast.Decl(
        k, decl.quals, decl.align, decl.storage, decl.funcspec, copy.deepcopy(decl.type),
        c_ast.ID(kv), None)]), node.cond, node.next, node.stmt)
    replace_child(parent, node, c_ast.Compound(start + [main, remainder]))
    return remainder


def _renamed(node: c_ast.Node, names: dict[str, str]) -> c_ast.Node:
    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name in names:
            return c_ast.ID(names[n.name])
        return n

    return map_nodes(node, fn)


# --------------------------------------------------------------------------- across threads
def _vectorize_threads(name: str, proc: GProcedure, ctx: PassContext, everywhere: bool,
                       target: Target) -> bool:
    """Merge V neighbouring threads in x with vector accesses; whether it fired."""
    plan, why = _thread_plan(proc, ctx, everywhere)
    if plan is None:
        if why:
            ctx.remark("missed", name, proc, f"across threads: {why}")
        return False
    width, vector_reads, shared_reads, writes = plan
    parts = [f"{m.describe()} read as {vector_type(_elem(proc, m), width)}" for m in vector_reads]
    parts += [f"{m.describe()} written as {vector_type(_elem(proc, m), width)}" for m in writes]
    parts += [f"{m.describe()} read once for {width} outputs" for m in shared_reads]
    parts = list(dict.fromkeys(parts))        # an element read several times: one load
    block = ""
    if everywhere or shared_reads:
        _merge_lanes(proc, ctx, width, vector_reads, shared_reads, writes)
        proc.coarsen = (proc.coarsen[0] * width, proc.coarsen[1])
    else:
        best = _streaming_choice(name, proc, ctx, plan, target)
        if best is None:
            return False
        adopt(proc, best.proc, ctx)
        block = f"; {best.describe()}"
    ctx.remark("applied", name, proc, f"each thread computes {width} neighbouring outputs in x: "
               + ", ".join(parts) + f"; scalar path when an output is out of bounds{block}")
    reanalyse(proc, ctx)
    return True


def _streaming_choice(name: str, proc: GProcedure, ctx: PassContext, plan, target: Target
                      ) -> Variant | None:
    """A streaming kernel on NVIDIA (no load the merged lanes share): coalesced 32-bit
    accesses reach the DRAM bandwidth once enough are in flight, so the cost model decides.
    The kernel as it is competes with its vector form on the naive block and on 32x8 threads
    (a warp's 32 float4 accesses one 512-byte run of a row); the vector form has four times
    the bytes in flight per load (the model's latency bound) and fewer instructions. On a
    tie the kernel stays as it is. None (with a remark) where it does."""
    width, vector_reads, shared_reads, writes = plan
    vtype = vector_type(_elem(proc, (vector_reads + writes)[0]), width)
    naive = proc.launch_block or default_block(proc)
    variants = [Variant("scalar accesses as written", naive, (1,))]
    blocks = [naive] + [b for b in target.candidates.streaming_blocks
                        if b != naive and (b[1] == 1) == (naive[1] == 1)]
    for block in blocks:
        variants.append(Variant(f"{vtype} accesses, block {block[0]}x{block[1]}", block,
                                (0, block == naive)))
    index = {id(m): i for i, m in enumerate(proc.memory_expressions)}

    def build(v: Variant) -> GProcedure:
        if v is variants[0]:
            return proc
        p = copy.deepcopy(proc)

        def mine(ms):
            return [p.memory_expressions[index[id(m)]] for m in ms]

        _merge_lanes(p, ctx, width, mine(vector_reads), mine(shared_reads), mine(writes))
        p.coarsen = (p.coarsen[0] * width, p.coarsen[1])
        if v.block != naive:
            p.launch_block = v.block
        return p

    best = choose(ctx, proc, name, variants, build)
    if best is None or best is variants[0]:
        ctx.remark("missed", name, proc, "across threads: the cost model estimates no gain "
                   "from vector accesses (coalesced 32-bit accesses keep enough bytes in "
                   "flight), and no load would be shared by the merged outputs" if best
                   else "across threads: no variant fits the target")
        return None
    return best


def _thread_plan(proc: GProcedure, ctx: PassContext, everywhere: bool):
    """(width, vector reads, shared reads, vector writes), or (None, why not)."""
    if ctx.am.get(proc, TilingAnalysis) is not None or \
            any(m.space == "shared" for m in proc.memory_expressions):
        return None, ""       # staged kernels get vector tile loads instead
    if contains_barrier(proc.body) or uses_raw_thread_ids(proc):
        return None, "the kernel uses barriers or thread ids other than idx/idy"
    shape, why = ctx.am.get(proc, ShapeAnalysis)
    if shape is None or shape.guard is None:
        return None, why or "no bounds guard (the scalar path for partial vectors needs one)"
    if "idx" not in shape.bounds:
        # 'x + offset < width': the launch's x extent, not the guard, ends the naive threads;
        # the merged launch's last lanes past it would compute outputs the naive kernel does not
        return None, "the guard does not bound idx by a size (the launch's x extent ends " \
                     "the naive kernel's threads, which merged lanes would run past)"
    if not any(isinstance(n, PredefId) and n.name == "idx" for n, _ in walk(proc.body)):
        return None, "the kernel does not use idx"
    body = c_ast.Compound(shape.body)
    if any(isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)) for n, _ in walk(body)):
        return None, "the guarded code returns early"
    parents = {id(n): p for n, p in walk(body)}
    top = {id(n): i for i, st in enumerate(shape.body) for n, _ in walk(st)}
    written, read = _written(proc), _read(proc)
    declared = {n.name for n, _ in walk(body) if isinstance(n, c_ast.Decl) and n.name}
    mutable = declared | set(assigned_names(c_ast.Compound(shape.prologue + shape.body)))
    vector_reads, shared_reads, writes = [], [], []
    widths = set()
    first_write = min((top[id(m.node)] for m in proc.memory_expressions
                       if m.is_write and id(m.node) in top), default=len(shape.body))
    for m in proc.memory_expressions:
        if id(m.node) not in top:
            return None, f"{m.describe()} is outside the guarded code"
        d = m.decomposition
        if m.space != "global" or not d.resolved or m.loops or m.vector_width > 1:
            continue
        if not _unconditional(m.node, body, parents) or \
                not (set(map(str, m.index.free_symbols)) - {"idx", "idy"}).isdisjoint(mutable):
            continue
        coeff = d.predefined.get("idx", 0)
        width = _width(proc, m.array, get_target(ctx.arch))
        if m.is_read and m.array not in written and top[id(m.node)] <= first_write:
            if coeff == 1 and width:
                vector_reads.append(m)
                widths.add(width)
            elif coeff == 0:
                shared_reads.append(m)
        elif m.is_write and not m.is_read and m.array not in read and coeff == 1 and width:
            stmt = shape.body[top[id(m.node)]]
            if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and stmt.lvalue is m.node \
                    and sum(1 for w in proc.memory_expressions
                            if w.is_write and w.array == m.array) == 1:
                writes.append(m)
                widths.add(width)
    if not vector_reads and not shared_reads:
        return None, "no read moves by one element between neighbouring threads or is " \
                     "the same for them"
    if len(widths) != 1:
        return None, "arrays of different element sizes"
    # one load per distinct address
    shared_reads = list({sympy.srepr(m.index) + m.array: m for m in shared_reads}.values())
    return (widths.pop(), vector_reads, shared_reads, writes), ""


def _merge_lanes(proc: GProcedure, ctx: PassContext, width: int, vector_reads, shared_reads,
                 writes) -> None:
    shape, _ = ctx.am.get(proc, ShapeAnalysis)
    taken = proc.names_taken()
    idx_of = {i: from_sympy(width * IDX + i) for i in range(width)}

    def ref_at_lane0(m: MemoryExpression) -> c_ast.ArrayRef:
        return c_ast.ArrayRef(c_ast.ID(m.array), from_sympy(m.index.subs(IDX, width * IDX)))

    fast_pre, temps, vectors = [], {}, {}
    for m in vector_reads:
        # one load per address: reads of one element (theta[i] read three times) share it
        key = sympy.srepr(m.index) + m.array
        if key not in vectors:
            vectors[key] = fresh(taken, f"v_{m.array}")
            fast_pre.append(declare_vector(vectors[key], _elem(proc, m), width, VectorLoad(
                ref_at_lane0(m), width, _elem(proc, m))))
        temps[id(m.node)] = ("lane", vectors[key])
    by_address = {}
    for m in shared_reads:
        key = sympy.srepr(m.index) + m.array
        if key not in by_address:
            by_address[key] = fresh(taken, f"s_{m.array}")
            fast_pre += statements(f"{_elem(proc, m)} {by_address[key]} = X;",
                                   X=c_ast.ArrayRef(c_ast.ID(m.array), from_sympy(m.index)))
    for m in proc.memory_expressions:
        key = sympy.srepr(m.index) + m.array
        if key in by_address and m.is_read and not m.is_write and not m.loops:
            temps[id(m.node)] = ("scalar", by_address[key])
    stores, outs = [], {}
    for m in writes:
        oname = fresh(taken, f"o_{m.array}")
        outs[id(m.node)] = oname
        fast_pre.append(declare_vector(oname, _elem(proc, m), width, None))
        stores.append(VectorStore(ref_at_lane0(m), c_ast.ID(oname), width, _elem(proc, m)))

    lanes_pre, fast_lanes, slow_lanes, guards = [], [], [], []
    for i in range(width):
        renames = local_names(proc, "", f"_{i}", taken)
        subst = {"idx": idx_of[i]}
        memo: dict = {}
        pieces = copy.deepcopy([shape.prologue, shape.guard, shape.body], memo)
        plain = copy.deepcopy([shape.guard, shape.body])
        replace = {}
        for key, (kind, tname) in temps.items():
            if key in memo:
                replace[id(memo[key])] = lane(c_ast.ID(tname), i) if kind == "lane" \
                    else c_ast.ID(tname)
        prologue, guard, body = pieces
        body = [_store_lane(st, outs, memo, i) for st in body]
        body = [map_nodes(st, lambda n: replace.get(id(n), n)) for st in body]
        lanes_pre += [rewrite_copy(st, subst, renames) for st in prologue]
        guards.append(rewrite_copy(guard, subst, renames))
        fast_lanes.append(c_ast.Compound([rewrite_copy(st, subst, renames) for st in body]))
        slow_guard, slow_body = plain
        slow_lanes.append(c_ast.If(rewrite_copy(slow_guard, subst, renames), c_ast.Compound(
            [rewrite_copy(st, subst, renames) for st in slow_body]), None))
    every = guards[0]
    for g in guards[1:]:
        every = c_ast.BinaryOp("&&", every, g)
    proc.body.block_items = lanes_pre + [c_ast.If(every, c_ast.Compound(
        fast_pre + fast_lanes + stores), c_ast.Compound(slow_lanes))]


def _store_lane(stmt: c_ast.Node, outs: dict[int, str], memo: dict, i: int) -> c_ast.Node:
    """``C[...] = e`` (a vectorized write, copied) becomes ``o_C.<lane> = e``."""
    if isinstance(stmt, c_ast.Assignment):
        for key, oname in outs.items():
            if key in memo and memo[key] is stmt.lvalue:
                return c_ast.Assignment("=", lane(c_ast.ID(oname), i), stmt.rvalue)
    return stmt
