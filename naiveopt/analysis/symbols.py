"""What each identifier of a kernel stands for in its index expressions (ir/symbolic.py).

Scalar parameters the kernel never assigns, macro constants and read-only file-scope scalars
are uniform (the same for every thread); canonical loop iterators are loop symbols; locals
assigned once are followed to their value (``int row = idx; ... A[row*W + i]``). The names of
signed integer type are kept too, for the analyses that model ``min``/``max`` clamps of
coordinates (:meth:`Symbols.env` with ``clamps=True``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pycparser import c_ast

from ..ir import GProcedure
from ..ir.rewrite import assigned_names, walk
from ..ir.symbolic import SymbolEnv, signed_type, signed_words
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
    signed: frozenset[str] | None = None    # None: min/max are not the built-ins

    def env(self, clamps: bool = False, planes: bool = False) -> SymbolEnv:
        """A fresh SymbolEnv; ``clamps``: one that reads integer min/max of signed
        operands as IntMin/IntMax (ir/symbolic.py) instead of opaque values; ``planes``: one
        that reads blockIdx.z as a symbol, uniform in a block (SymbolEnv.planes)."""
        return SymbolEnv(set(self.uniforms), set(self.loops), dict(self.aliases),
                         set(self.signed) if clamps and self.signed is not None else None,
                         planes)


#: A macro whose text may be unsigned (a ``u`` suffix, a cast, ``sizeof``).
_UNSIGNED_TEXT = re.compile(r"\b\d[0-9a-fA-FxX]*[uU]|\b(?:unsigned|size_t|uint|ulong|ushort|"
                            r"uchar|sizeof)\b")
_NAME = re.compile(r"\b[A-Za-z_]\w*")


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
        return Symbols(frozenset(uniforms), frozenset(loops), aliases, _signed(proc, module))


def _signed(proc: GProcedure, module) -> frozenset[str] | None:
    """The names of signed integer type: scalar parameters, locals and loop iterators (every
    declaration of the name), read-only file-scope scalars and macros whose text cannot be
    unsigned; None where a helper function of the file is named min or max."""
    if any(h.decl.name in ("min", "max") for h in module.helpers):
        return None
    kinds: dict[str, bool] = {}
    for p in proc.params:
        if not p.is_pointer:
            kinds[p.name] = signed_words(p.base_type.split())
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.name:
            kinds[node.name] = kinds.get(node.name, True) and signed_type(node.type)
    for g in module.globals:
        if not g.dims and g.name not in kinds:
            kinds[g.name] = signed_words(g.base_type.split())
    macros: dict[str, bool] = {}

    def signed_macro(name: str) -> bool:       # its text, and the macros it names, signed
        if name not in macros:
            macros[name] = False                # a cycle is not signed
            text = module.macros[name]
            macros[name] = not _UNSIGNED_TEXT.search(text) and all(
                n in module.macros and signed_macro(n) for n in _NAME.findall(text))
        return macros[name]

    for name in module.macros:
        if name not in kinds:
            kinds[name] = signed_macro(name)
    return frozenset(n for n, ok in kinds.items() if ok)

