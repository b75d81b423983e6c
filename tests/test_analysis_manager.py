"""The analysis manager: results cached per kernel, dropped after a pass that does not preserve
them (and with them what was computed from them), kept where the pass preserves them."""
from __future__ import annotations

import copy

import pytest

from naiveopt.analysis.guards import ThreadIdAliases
from naiveopt.analysis.loops import LoopAnalysis
from naiveopt.analysis.manager import Analysis, PreservedAnalyses
from naiveopt.analysis.memory_expressions import MemoryExpressionAnalysis
from naiveopt.analysis.shape import ShapeAnalysis
from naiveopt.frontend import parse_module
from naiveopt.ir.cgen import to_c
from naiveopt.ir.rewrite import walk
from naiveopt.passes.manager import Pass, PassContext, run_passes
from naiveopt.passes.optimize.tiling import TilingAnalysis
from naiveopt.passes.pipeline import front_passes

SOURCE = """
__global__ void mv(const float *A, const float *B, float *C, int W, int H) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0;
        for (int j = 0; j < W; j++)
            sum += A[i * W + j] * B[j];
        C[i] = sum;
    }
}
"""


class Touch(Pass):
    """A pass that returns ``answer`` from every run (None: its class's ``preserves``)."""

    name = "touch"

    def __init__(self, answer: PreservedAnalyses | None) -> None:
        self.answer = answer

    def run(self, proc, ctx):
        return self.answer


def analysed():
    module = parse_module("mv.cu", SOURCE, {})
    ctx = PassContext(module, "cuda", "none")
    run_passes(front_passes(), ctx)
    return ctx, module.procedures[0]


def test_results_are_computed_once_per_kernel():
    ctx, proc = analysed()
    calls = []

    class Counted(Analysis[list]):
        @classmethod
        def compute(cls, proc, am):
            calls.append(proc.name)
            return []

    first = ctx.am.get(proc, Counted)
    assert ctx.am.get(proc, Counted) is first and calls == ["mv"]
    shape, why = ctx.am.get(proc, ShapeAnalysis)
    assert why == "" and shape.bounds.keys() == {"idx"}
    assert ctx.am.get(proc, ShapeAnalysis)[0] is shape


def test_functional_passes_store_the_cached_analyses():
    ctx, proc = analysed()      # nvcc ran after them and preserves everything
    assert ctx.am.get(proc, LoopAnalysis) is proc.loops
    assert ctx.am.get(proc, MemoryExpressionAnalysis) is proc.memory_expressions
    assert [len(lp.memory_expressions) for lp in proc.loops] == [2]


def test_a_pass_that_does_not_preserve_drops_the_results():
    ctx, proc = analysed()
    shape = ctx.am.get(proc, ShapeAnalysis)[0]
    run_passes([Touch(None)], ctx)           # Pass.preserves: none
    again = ctx.am.get(proc, ShapeAnalysis)[0]
    assert again is not shape and again.bounds.keys() == shape.bounds.keys()


def test_preserved_results_are_kept():
    ctx, proc = analysed()
    shape = ctx.am.get(proc, ShapeAnalysis)[0]
    run_passes([Touch(PreservedAnalyses.all())], ctx)
    assert ctx.am.get(proc, ShapeAnalysis)[0] is shape
    kept = PreservedAnalyses.none().preserve(ShapeAnalysis, ThreadIdAliases)
    run_passes([Touch(kept)], ctx)
    assert ctx.am.get(proc, ShapeAnalysis)[0] is shape
    assert ctx.am.get(proc, LoopAnalysis) is not proc.loops     # not preserved: recomputed


def test_dropping_an_analysis_drops_those_computed_from_it():
    ctx, proc = analysed()
    shape = ctx.am.get(proc, ShapeAnalysis)[0]
    run_passes([Touch(PreservedAnalyses.none().preserve(ShapeAnalysis))], ctx)
    assert ctx.am.get(proc, ShapeAnalysis)[0] is not shape   # its aliases were dropped


def test_recorded_facts_last_until_a_pass_drops_them_and_say_which():
    ctx, proc = analysed()
    plan = object()
    assert ctx.am.get(proc, TilingAnalysis) is None
    ctx.am.record(proc, TilingAnalysis, plan)
    ctx.am.tree_changed(proc)                # mid-pass rewrites keep recorded facts
    run_passes([Touch(PreservedAnalyses.none().preserve(TilingAnalysis))], ctx)
    assert ctx.am.get(proc, TilingAnalysis) is plan
    assert ctx.am.dropped_by(proc, TilingAnalysis) == ""
    run_passes([Touch(None)], ctx)
    assert ctx.am.get(proc, TilingAnalysis) is None
    assert ctx.am.dropped_by(proc, TilingAnalysis) == "touch"
    ctx.am.record(proc, TilingAnalysis, plan)
    assert ctx.am.dropped_by(proc, TilingAnalysis) == ""
    with pytest.raises(ValueError):
        ctx.am.record(proc, ShapeAnalysis, (None, ""))


def test_tree_changes_drop_computed_results():
    ctx, proc = analysed()
    loops = proc.loops
    proc.body.block_items = proc.body.block_items[:1]      # keep only 'int i = ...'
    ctx.am.tree_changed(proc)
    assert ctx.am.get(proc, LoopAnalysis) == []
    assert proc.loops is loops          # the IR keeps what reanalyse stores there


def test_copies_are_analysed_apart():
    ctx, proc = analysed()
    shape = ctx.am.get(proc, ShapeAnalysis)[0]
    twin = copy.deepcopy(proc)
    assert ctx.am.get(twin, ShapeAnalysis)[0] is not shape
    assert ctx.am.get(twin, ShapeAnalysis)[0].body[0] is twin.body.block_items[1].iftrue \
        .block_items[0]


def test_a_deep_copy_shares_expressions_and_keeps_references_into_its_tree():
    """ir/copying.py: c_ast nodes are copied slot by slot and sympy expressions shared, with
    copy's memo kept, so a memory expression copied together with its tree points into the
    copy (the pass manager's snapshots rely on it)."""
    ctx, proc = analysed()
    twin = copy.deepcopy(proc)
    assert len(twin.memory_expressions) == len(proc.memory_expressions) == 3
    for m, t in zip(proc.memory_expressions, twin.memory_expressions):
        assert t.index is m.index and t.decomposition.constant is m.decomposition.constant
        assert t.node is not m.node and t.node.coord is m.node.coord
    nodes = {id(n) for n, _ in walk(twin.body)}
    assert all(id(t.node) in nodes for t in twin.memory_expressions)
    assert not {id(n) for n, _ in walk(proc.body)} & nodes
    assert to_c(twin.func) == to_c(proc.func)
    twin.body.block_items.pop()
    assert to_c(twin.func) != to_c(proc.func)


def test_an_analysis_names_what_it_gets():
    ctx, proc = analysed()

    class Sneaky(Analysis[int]):
        @classmethod
        def compute(cls, proc, am):
            return len(am.get(proc, LoopAnalysis))

    with pytest.raises(AssertionError, match="requires"):
        ctx.am.get(proc, Sneaky)
