"""The analysis manager: analyses of a kernel computed on request, cached, and dropped when a
pass changes the kernel (LLVM's new pass manager: AnalysisManager and PreservedAnalyses).

An analysis is a class whose ``compute(proc, am)`` derives its result from the kernel and from
the analyses it names in ``requires`` (got through ``am``). ``am.get(proc, A)`` computes A once
per kernel and returns the cached result until it is dropped. Two things drop results:

* the pass manager (passes/manager.py), after each pass has run on a kernel: every result the
  pass does not preserve (its run returns a :class:`PreservedAnalyses`, or its class declares
  one), and with it every result computed from a dropped one;
* a pass that rewrites a kernel's tree in the middle of its run (:meth:`tree_changed`, which
  passes.manager.reanalyse calls), so that what it asks for afterwards is of the new tree.

A *recorded* analysis is a fact that a pass states about the code it generated (the plan a
staged loop was built from) rather than one the tree shows: :meth:`record` stores it, ``get``
returns it (None where none is recorded), and it lasts until a pass that changed the kernel
does not preserve it. The manager remembers which pass that was (:meth:`dropped_by`), so that a
later pass can say why the fact is gone.

Results are cached per GProcedure object, held weakly: the transformed copies that passes build
and throw away take their entries with them. Every user of a kernel shares its cached results,
so users read them and never modify them (the memory-expression analysis filling the loops'
``memory_expressions`` is the one documented exception).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from ..ir import GModule, GProcedure

T = TypeVar("T")


class Analysis(Generic[T]):
    """One analysis of a kernel. Subclasses implement :meth:`compute` (or set ``recorded``)."""

    #: the analyses ``compute`` gets through the manager: dropping one drops this one too
    requires: ClassVar[tuple[type["Analysis"], ...]] = ()
    #: a fact passes record (:meth:`AnalysisManager.record`) instead of one computed
    recorded: ClassVar[bool] = False

    @classmethod
    def compute(cls, proc: GProcedure, am: "AnalysisManager") -> T:
        raise NotImplementedError(f"{cls.__name__} has no compute")


@dataclass(frozen=True)
class PreservedAnalyses:
    """What a pass run leaves valid on the kernel it ran on."""

    kept: frozenset[type[Analysis]] = frozenset()
    everything: bool = False

    @classmethod
    def all(cls) -> "PreservedAnalyses":
        """The run changed nothing the analyses see."""
        return cls(everything=True)

    @classmethod
    def none(cls) -> "PreservedAnalyses":
        return cls()

    def preserve(self, *analyses: type[Analysis]) -> "PreservedAnalyses":
        return PreservedAnalyses(self.kept | frozenset(analyses), self.everything)

    def preserves(self, analysis: type[Analysis]) -> bool:
        return self.everything or analysis in self.kept


@dataclass
class _Kernel:
    """The cache of one kernel."""

    ref: weakref.ref
    results: dict[type[Analysis], object] = field(default_factory=dict)
    dropped: dict[type[Analysis], str] = field(default_factory=dict)   # recorded -> by pass


class AnalysisManager:
    """The cached analyses of the kernels of one module."""

    def __init__(self, module: GModule) -> None:
        self.module = module           # file-scope facts analyses read (macros, globals)
        self._kernels: dict[int, _Kernel] = {}
        self._computing: list[type[Analysis]] = []

    def get(self, proc: GProcedure, analysis: type[Analysis[T]]) -> T:
        """``analysis`` of ``proc``: cached, else computed (a recorded one: None)."""
        if self._computing and analysis not in self._computing[-1].requires:
            raise AssertionError(f"{self._computing[-1].__name__} gets {analysis.__name__} "
                                 "without naming it in its requires")
        kernel = self._kernel(proc)
        if analysis in kernel.results:
            return kernel.results[analysis]          # type: ignore[return-value]
        if analysis.recorded:
            return None                              # type: ignore[return-value]
        self._computing.append(analysis)
        try:
            result = analysis.compute(proc, self)
        finally:
            self._computing.pop()
        kernel.results[analysis] = result
        return result

    def record(self, proc: GProcedure, analysis: type[Analysis[T]], result: T) -> None:
        """State the recorded fact ``analysis`` of ``proc`` (a pass's generated code)."""
        if not analysis.recorded:
            raise ValueError(f"{analysis.__name__} is computed, not recorded")
        kernel = self._kernel(proc)
        kernel.results[analysis] = result
        kernel.dropped.pop(analysis, None)

    def invalidate(self, proc: GProcedure, preserved: PreservedAnalyses | None = None,
                   by: str = "") -> None:
        """Drop the results of ``proc`` that ``preserved`` (default: none) does not keep, and
        those computed from them; ``by`` names the pass, for :meth:`dropped_by`."""
        kernel = self._kernels.get(id(proc))
        if kernel is None or kernel.ref() is not proc:
            return
        preserved = preserved or PreservedAnalyses.none()
        dropped = {a for a in kernel.results if not preserved.preserves(a)}
        grew = True
        while grew:                # results computed from a dropped one are stale too
            more = {a for a in kernel.results if a not in dropped and
                    any(r in dropped for r in a.requires)}
            dropped |= more
            grew = bool(more)
        for analysis in dropped:
            del kernel.results[analysis]
            if analysis.recorded and by:
                kernel.dropped[analysis] = by

    def recorded_facts(self, proc: GProcedure) -> tuple[dict, dict]:
        """``proc``'s recorded facts and which pass dropped which (for :meth:`restore`)."""
        kernel = self._kernels.get(id(proc))
        if kernel is None or kernel.ref() is not proc:
            return {}, {}
        return ({a: r for a, r in kernel.results.items() if a.recorded}, dict(kernel.dropped))

    def restore(self, proc: GProcedure, facts: tuple[dict, dict]) -> None:
        """``proc``'s tree was put back as it was (a pass failed internally): drop everything
        computed and put back the recorded facts as :meth:`recorded_facts` gave them."""
        kernel = self._kernel(proc)
        kernel.results, kernel.dropped = dict(facts[0]), dict(facts[1])

    def tree_changed(self, proc: GProcedure) -> None:
        """A pass rewrote ``proc``'s tree in the middle of its run: drop what was computed from
        the old tree. Recorded facts stay; whether they still hold the pass says when it ends,
        by what it preserves."""
        kernel = self._kernels.get(id(proc))
        if kernel is not None and kernel.ref() is proc:
            facts = frozenset(a for a in kernel.results if a.recorded)
            self.invalidate(proc, PreservedAnalyses(facts))

    def dropped_by(self, proc: GProcedure, analysis: type[Analysis]) -> str:
        """The pass that last dropped ``proc``'s recorded ``analysis`` ('' if none did, or
        the fact was recorded again since)."""
        kernel = self._kernels.get(id(proc))
        if kernel is None or kernel.ref() is not proc:
            return ""
        return kernel.dropped.get(analysis, "")

    def _kernel(self, proc: GProcedure) -> _Kernel:
        key = id(proc)
        kernel = self._kernels.get(key)
        if kernel is None or kernel.ref() is not proc:
            kernels = self._kernels

            def forget(ref: weakref.ref, key: int = key) -> None:
                if key in kernels and kernels[key].ref is ref:
                    del kernels[key]

            kernel = _Kernel(weakref.ref(proc, forget))
            kernels[key] = kernel
        return kernel
