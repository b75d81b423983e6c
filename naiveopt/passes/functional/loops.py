"""Loops (paper 002, functional pass (3)): stores the loop analysis (analysis/loops.py) in the
IR as GProcedure.loops and says which loops are canonical."""
from __future__ import annotations

from ...analysis.loops import LoopAnalysis
from ...analysis.manager import PreservedAnalyses
from ...ir import GProcedure
from ..manager import Pass, PassContext


class Loops(Pass):
    name = "loops"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        proc.loops = ctx.am.get(proc, LoopAnalysis)
        canonical = sum(1 for lp in proc.loops if lp.canonical)
        ctx.remark("analysis", self.name, proc,
                   f"{len(proc.loops)} loop(s), {canonical} canonical" + "".join(
                       f"; loop at depth {lp.depth} not canonical: {lp.why_not_canonical}"
                       for lp in proc.loops if not lp.canonical))
