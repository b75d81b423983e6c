"""What every canonicalization pass shares: it runs on kernels after the predefined ids are in
the tree, says what it rewrote (an ``applied`` remark the context records apart from the
optimization passes), and keeps the analyses when it rewrote nothing."""
from __future__ import annotations

from ....analysis.manager import PreservedAnalyses
from ....ir import GProcedure
from ...manager import Pass, PassContext


class CanonicalizationPass(Pass):
    """A canonicalization pass: subclasses implement :meth:`rewrite`."""

    requires = ("predefined",)

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses:
        if self.rewrite(proc, ctx):
            return PreservedAnalyses.none()
        return PreservedAnalyses.all()

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        """Rewrite ``proc`` in place; return whether anything changed."""
        raise NotImplementedError

    def applied(self, proc: GProcedure, ctx: PassContext, message: str) -> None:
        ctx.remark("applied", self.name, proc, message, canonical=True)

    def missed(self, proc: GProcedure, ctx: PassContext, message: str) -> None:
        ctx.remark("missed", self.name, proc, message)
