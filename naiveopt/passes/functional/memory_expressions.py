"""Memory expressions (paper 002, functional pass (4)): stores the memory-expression analysis
(analysis/memory_expressions.py) in the IR as GProcedure.memory_expressions and says how each
access decomposes."""
from __future__ import annotations

from ...analysis.manager import PreservedAnalyses
from ...analysis.memory_expressions import store_in_ir
from ...ir import GProcedure
from ..manager import Pass, PassContext


class MemoryExpressions(Pass):
    name = "memory-expressions"
    requires = ("predefined", "loops")
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        store_in_ir(proc, ctx.am)
        file_data = {g.name for g in ctx.module.globals if g.dims}
        for m in proc.memory_expressions:
            ctx.remark("analysis", self.name, proc,
                       f"{m.describe()}: {m.space} {m.kind}; {m.decomposition}")
        for name in sorted({m.array for m in proc.memory_expressions if m.array in file_data}):
            ctx.remark("analysis", self.name, proc,
                       f"{name}: file-scope read-only data (constant memory): its reads "
                       "stay as written (no pass stages, vectorizes or textures them)")
