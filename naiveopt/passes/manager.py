"""The pass manager: runs passes in order, checks preconditions, collects remarks, dumps IR.

Modelled on LLVM's: each pass is a small unit with one entry point (:meth:`Pass.run`), a list of
passes it requires to have run before it, and optimization remarks (applied / missed /
analysis, as clang's -Rpass, -Rpass-missed and -Rpass-analysis) saying what it did or why not.
``dump_dir`` writes the IR after every pass, like -print-after-all.

Passes get the analyses of a kernel from the context's analysis manager (``ctx.am``,
analysis/manager.py). After a pass has run on a kernel the manager drops the analyses the run
did not preserve, as LLVM's new pass manager does with PreservedAnalyses.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.manager import AnalysisManager, PreservedAnalyses
from ..analysis.memory_expressions import store_in_ir
from ..ir import GModule, GProcedure
from .options import PipelineOptions


@dataclass
class Remark:
    """One optimization remark."""

    kind: str          # applied | missed | analysis
    pass_name: str
    kernel: str
    message: str

    def __str__(self) -> str:
        return f"{self.kernel}: remark [{self.pass_name}] {self.kind}: {self.message}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "pass": self.pass_name, "kernel": self.kernel,
                "message": self.message}


@dataclass
class PassContext:
    """What passes share: the options of the run, the remarks they emit and the analyses of
    the module's kernels."""

    module: GModule
    target: str                     # output dialect: cuda | opencl
    arch: str
    options: PipelineOptions = field(default_factory=PipelineOptions)
    remarks: list[Remark] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    applied: dict[str, list[str]] = field(default_factory=dict)   # kernel -> passes that fired
    # kernel -> canonicalization passes that rewrote it (functional passes: not listed among
    # the optimization passes an output names, yet a change verification must answer for)
    canonicalized: dict[str, list[str]] = field(default_factory=dict)
    am: AnalysisManager = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.am = AnalysisManager(self.module)

    def remark(self, kind: str, pass_name: str, proc: GProcedure | None, message: str,
               canonical: bool = False) -> None:
        """Record a remark; an ``applied`` one also records that the pass changed ``proc``
        (``canonical``: a canonicalization pass, kept apart from the optimization passes)."""
        self.remarks.append(Remark(kind, pass_name, proc.name if proc else "*", message))
        if kind == "applied" and proc is not None:
            fired = (self.canonicalized if canonical else self.applied).setdefault(proc.name, [])
            if pass_name not in fired:
                fired.append(pass_name)

    def changed(self, proc_name: str) -> bool:
        """Whether any pass, optimization or canonicalization, rewrote the kernel."""
        return bool(self.applied.get(proc_name) or self.canonicalized.get(proc_name))


class Pass:
    """Base class of all passes. Subclasses set ``name`` and implement :meth:`run`."""

    name: ClassVar[str] = "pass"
    requires: ClassVar[tuple[str, ...]] = ()
    #: the analyses a run keeps valid on the kernel it ran on, where ``run`` returns None
    preserves: ClassVar[PreservedAnalyses] = PreservedAnalyses.none()

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        """Transform or analyse one kernel in place; return the analyses of it that are still
        valid (PreservedAnalyses.all() when nothing changed; None: what ``preserves`` says)."""
        raise NotImplementedError

    def run_module(self, module: GModule, ctx: PassContext) -> None:
        """Run over a whole file; passes that also rewrite helper functions override this."""
        for proc in module.procedures:
            self.run_kernel(proc, ctx)

    def run_kernel(self, proc: GProcedure, ctx: PassContext) -> None:
        """Run on one kernel, then drop the analyses of it that the run did not preserve."""
        preserved = self.run(proc, ctx)
        ctx.am.invalidate(proc, self.preserves if preserved is None else preserved, self.name)


class OptimizationPass(Pass):
    """An optimization pass: it needs a target description for ``--arch``."""

    def run_module(self, module: GModule, ctx: PassContext) -> None:
        from ..targets import find_target

        if find_target(ctx.arch) is None:
            for proc in module.procedures:
                ctx.remark("missed", self.name, proc, f"no target description for "
                           f"'{ctx.arch}'")
            return
        from ..launch import untransformable

        for proc in module.procedures:
            why = untransformable(proc)
            if why:     # e.g. threadIdx.z with a block z > 1: left as it is, said so
                ctx.remark("missed", self.name, proc, why)
            else:
                self.run_kernel(proc, ctx)


class Disabled(Pass):
    """Stands in for an optimization pass switched off with ``--disable-pass``."""

    preserves = PreservedAnalyses.all()

    def __init__(self, name: str) -> None:
        self.name = name        # type: ignore[misc]  # the disabled pass's name, per instance

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        ctx.remark("missed", self.name, proc, "disabled (--disable-pass)")


class PassOrderError(RuntimeError):
    """A pass was scheduled before a pass it requires (a bug in the pipeline, not the input)."""


def run_passes(passes: list[Pass], ctx: PassContext, dump_dir: str | None = None) -> None:
    """Run ``passes`` over ``ctx.module`` in order.

    Dumps are numbered by the passes completed so far in this context, so running the
    pipeline in stages (analysis, then write-back) numbers them 00-input, 01-..., on."""
    first = len(ctx.completed) + 1
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
        if first == 1:
            _write(dump_dir, 0, "input", ctx.module)
    for number, p in enumerate(passes, start=first):
        missing = [r for r in p.requires if r not in ctx.completed]
        if missing:
            raise PassOrderError(f"pass {p.name} requires {', '.join(missing)} to run first")
        p.run_module(ctx.module, ctx)
        ctx.completed.append(p.name)
        if dump_dir:
            _write(dump_dir, number, p.name, ctx.module)


def _write(dump_dir: str, number: int, name: str, module: GModule) -> None:
    from ..ir.printer import dump_module

    base = os.path.basename(module.path).replace(".", "_")
    path = os.path.join(dump_dir, f"{base}.{number:02d}-{name}.ir")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dump_module(module))


def reanalyse(proc: GProcedure, ctx: PassContext) -> None:
    """A pass rewrote ``proc``'s tree: drop the analyses of the old tree and store the loops
    and memory expressions of the new one in the IR (quietly: the analysis passes' remarks
    are not repeated)."""
    ctx.am.tree_changed(proc)
    store_in_ir(proc, ctx.am)
