"""What each identifier of a kernel stands for in its index expressions (ir/symbolic.py).

Scalar parameters the kernel never assigns, macro constants and read-only file-scope scalars
are uniform (the same for every thread); canonical loop iterators are loop symbols; locals
assigned once are followed to their value (``int row = idx; ... A[row*W + i]``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pycparser import c_ast

from ..ir import GProcedure
from ..ir.rewrite import assigned_names, walk
from ..ir.symbolic import SymbolEnv
from .loops import LoopAnalysis
from .manager import Analysis, AnalysisManager


@dataclass(frozen=True)
class Symbols:
    """The symbols of a kernel, as cached. A SymbolEnv numbers the opaque values it meets as
    it goes, so each use takes its own from :meth:`env`: a shared one would name the same
    value differently depending on who used it before."""

    uniforms: frozenset[str]
    loops: frozenset[str]
    aliases: Mapping[str, c_ast.Node]

    def env(self) -> SymbolEnv:
        return SymbolEnv(set(self.uniforms), set(self.loops), dict(self.aliases))


class SymbolAnalysis(Analysis[Symbols]):
    """The :class:`Symbols` of a kernel."""

    requires = (LoopAnalysis,)

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> Symbols:
        module = am.module
        counts = assigned_names(proc.body)
        uniforms = {p.name for p in proc.params if not p.is_pointer and not counts.get(p.name)}
        uniforms |= set(module.macros)
        uniforms |= {g.name for g in module.globals if not g.dims}   # read-only scalars
        loops = {lp.iterator for lp in am.get(proc, LoopAnalysis)
                 if lp.canonical and lp.iterator}
        aliases = {}
        for node, _ in walk(proc.body):
            if isinstance(node, c_ast.Decl) and node.init is not None and \
                    counts.get(node.name) == 1 and node.name not in loops:
                aliases[node.name] = node.init
        return Symbols(frozenset(uniforms), frozenset(loops), aliases)
