"""Loop-invariant factors taken out of reductions (paper 002 leaves them in; nvcc cannot
take them out without fast-math, since it reassociates floating-point arithmetic).

PolyBench's gemm and syrk multiply every term of their reduction by ``alpha``:

    for (int k = 0; k < nk; k++)
        acc += alpha * a[i * nk + k] * b[k * nj + j];      // FMUL + FFMA per iteration

Summing the products and multiplying once gives the same value up to rounding:

    float acc_alpha = 0;
    for (int k = 0; k < nk; k++)
        acc_alpha += a[i * nk + k] * b[k * nj + j];        // FFMA per iteration
    acc += alpha * acc_alpha;

which halves the hot loop's floating-point instructions of a matrix product and leaves it the
pure FMA loop the merging passes and nvcc schedule best. It is a reassociation: the result
differs in the last bits, as any reordering of a float sum does (verification compares with
its tolerance), and an empty sum adds ``alpha * 0`` (a non-finite ``alpha`` then gives NaN
where the loop left ``acc`` alone). ``--fp-strict`` keeps the user's order.

Preconditions, each checked, else a remark says which failed: the accumulator is a local
float or double variable (register promotion makes one of an element accumulated in global
memory, and runs first); inside the loop it is only ever updated as ``acc += F * ...`` or
``acc = acc + F * ...`` with the same factor ``F``, a name the loop does not assign, and read
nowhere else. The outermost loop for which this holds is the one taken out of.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ...analysis.manager import PreservedAnalyses
from ...ir import GLoop, GProcedure
from ...ir.build import fresh, statements
from ...ir.rewrite import assigned_names, identifiers, increment, walk
from ...ir.typenames import scalar_locals
from ..manager import OptimizationPass, PassContext, reanalyse
from .register_promotion import _ensure_block, _parent_block

_FLOATING = ("float", "double")


class InvariantFactors(OptimizationPass):
    name = "invariant-factors"
    reassociates = True
    lane_safe = True
    requires = ("loops",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if ctx.options.fp_strict:
            ctx.remark("missed", self.name, proc, "--fp-strict: floating-point sums keep "
                       "their order")
            return PreservedAnalyses.all()
        types = scalar_locals(proc.body, _FLOATING)
        done = False
        changed = True
        while changed:          # one accumulator at a time, then the loops are redone
            changed = False
            for loop in sorted((lp for lp in proc.loops if lp.canonical),
                               key=lambda lp: lp.depth):
                for acc, factor in _candidates(loop, types):
                    total = self._hoist(proc, loop, acc, factor, types[acc])
                    ctx.remark("applied", self.name, proc, f"{acc}: factor {factor} taken "
                               f"out of loop {loop.iterator} ({acc} += {factor} * {total}, "
                               "one multiply per output instead of one per iteration; a "
                               "floating-point reassociation, --fp-strict keeps the order)")
                    changed = done = True
                    break
                if changed:
                    break
            if changed:
                reanalyse(proc, ctx)
        if not done:
            ctx.remark("missed", self.name, proc, "no reduction multiplies every term by the "
                       "same loop-invariant factor")
        return None if done else PreservedAnalyses.all()

    @staticmethod
    def _hoist(proc: GProcedure, loop: GLoop, acc: str, factor: str, ctype: str) -> str:
        total = fresh(proc.names_taken(), f"{acc}_{factor}")
        for node, _ in list(walk(loop.node)):
            if isinstance(node, c_ast.Assignment) and _target(node) == acc:
                term = increment(node, acc)
                node.op, node.lvalue = "+=", c_ast.ID(total)
                node.rvalue = _without(term, factor)
        _ensure_block(proc, loop.node)
        block = _parent_block(proc, loop.node)
        position = next(i for i, s in enumerate(block.block_items) if s is loop.node)
        zero = "0.0f" if ctype == "float" else "0.0"
        before = statements(f"{ctype} {total} = {zero};")
        after = statements(f"{acc} += {factor} * {total};")
        block.block_items[position:position + 1] = before + [loop.node] + after
        return total


def _target(node: c_ast.Assignment) -> str | None:
    return node.lvalue.name if isinstance(node.lvalue, c_ast.ID) else None


def _factors(node: c_ast.Node) -> list[c_ast.Node]:
    """The operands of a product chain ``a * b * c`` (one operand when it is no product)."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


def _without(term: c_ast.Node, factor: str) -> c_ast.Node:
    """The product ``term`` with one operand ``factor`` left out."""
    operands = _factors(term)
    drop = next(i for i, o in enumerate(operands) if isinstance(o, c_ast.ID) and
                o.name == factor)
    rest = [copy.deepcopy(o) for i, o in enumerate(operands) if i != drop]
    product = rest[0]
    for o in rest[1:]:
        product = c_ast.BinaryOp("*", product, o)
    return product


def _candidates(loop: GLoop, types: dict[str, str]) -> list[tuple[str, str]]:
    """(accumulator, factor) pairs the loop can have a factor taken out of."""
    assigned = set(assigned_names(loop.node)) | ({loop.iterator} if loop.iterator else set())
    updates: dict[str, list[c_ast.Assignment]] = {}
    for node, _ in walk(loop.node):
        if isinstance(node, c_ast.Assignment) and _target(node) in types:
            updates.setdefault(_target(node), []).append(node)
    declared = {n.name for n, _ in walk(loop.node) if isinstance(n, c_ast.Decl)}
    found = []
    for acc, nodes in updates.items():
        if acc in declared:
            continue                    # a loop-local accumulator: nothing to take out of
        terms = [increment(n, acc) for n in nodes]
        if any(t is None or acc in identifiers(t) for t in terms):
            continue
        # the accumulator is read nowhere but as its own updates' target
        reads = sum(1 for n, _ in walk(loop.node) if isinstance(n, c_ast.ID) and n.name == acc)
        if reads != len(nodes) + sum(1 for n in nodes if n.op == "="):
            continue
        common = None
        for t in terms:
            names = {o.name for o in _factors(t) if isinstance(o, c_ast.ID)}
            if len(_factors(t)) < 2:
                names = set()
            common = names if common is None else common & names
        factors = sorted((common or set()) - assigned - declared - {acc})
        if factors:
            found.append((acc, factors[0]))
    return found
