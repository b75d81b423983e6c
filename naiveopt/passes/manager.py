"""The pass manager: runs passes in order, checks preconditions, collects remarks, dumps IR.

Modelled on LLVM's: each pass is a small unit with one entry point (:meth:`Pass.run`), a list of
passes it requires to have run before it, and optimization remarks (applied / missed /
analysis, as clang's -Rpass, -Rpass-missed and -Rpass-analysis) saying what it did or why not.
``dump_dir`` writes the IR after every pass, like -print-after-all.

Passes get the analyses of a kernel from the context's analysis manager (``ctx.am``,
analysis/manager.py). After a pass has run on a kernel the manager drops the analyses the run
did not preserve, as LLVM's new pass manager does with PreservedAnalyses.

An exception inside a pass (other than a NaiveoptError, which is the input's fault and is
reported as such) is a bug in naiveopt, never the user's: the manager catches it, puts the
kernel back as it was before that pass (its remarks from the failed run dropped with it), records
an :class:`InternalError` that the CLI prints as ``file: kernel: warning: pass P failed
internally (please report): ...`` and the JSON and summary count, and goes on with the next pass.
The output is then the kernel as the earlier passes left it, still verified. Tests set
``NAIVEOPT_INTERNAL_ERRORS=raise`` (tests/conftest.py) so that none relies on this net.
"""
from __future__ import annotations

import copy
import os
import traceback
from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.manager import AnalysisManager, PreservedAnalyses
from ..analysis.memory_expressions import store_in_ir
from ..errors import NaiveoptError
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
class InternalError:
    """A pass that raised on a kernel: kept out of the output, reported, counted."""

    pass_name: str
    kernel: str
    message: str        # the exception, one line
    where: str = ""     # the innermost naiveopt frame, file:line, for the report

    def warning(self, filename: str) -> str:
        """The CLI's warning line."""
        at = f" [{self.where}]" if self.where else ""
        return (f"{filename}: {self.kernel}: warning: pass {self.pass_name} failed internally "
                f"(please report): {self.message}{at}")

    def to_json(self) -> dict:
        return {"pass": self.pass_name, "kernel": self.kernel, "message": self.message,
                "where": self.where}


#: Set to ``raise`` (the test suite does) to let a pass's exception propagate.
INTERNAL_ERRORS_ENV = "NAIVEOPT_INTERNAL_ERRORS"


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
    internal_errors: list[InternalError] = field(default_factory=list)
    # kernel -> canonicalization passes that rewrote it (functional passes: not listed among
    # the optimization passes an output names, yet a change verification must answer for)
    canonicalized: dict[str, list[str]] = field(default_factory=dict)
    # the problem sizes performance is estimated at (cost model), and where they come from:
    # metadata's default set, -D, the file's macros ({} / '' where nothing gives them)
    sizes: dict[str, int] = field(default_factory=dict)
    sizes_from: str = ""
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
        """Run on one kernel, then drop the analyses of it that the run did not preserve.
        Where the run raises (a bug), the kernel is put back as it was (module docstring)."""
        with guarded(self.name, [proc], ctx):
            preserved = self.run(proc, ctx)
            ctx.am.invalidate(proc, self.preserves if preserved is None else preserved,
                              self.name)


class OptimizationPass(Pass):
    """An optimization pass: it needs a target description for ``--arch``.

    ``lane_safe``: whether the pass may run on a kernel whose outputs are each computed by a
    group of threads (GProcedure.lanes > 1, split-reduction). Passes that remap threads to
    outputs (tiling, merges, vector widths, block-id remapping) assume one output per thread
    and leave such a kernel alone, with a remark."""

    lane_safe: ClassVar[bool] = False
    #: whether the pass may reorder floating-point arithmetic (sums, factors): results agree
    #: within tolerance, not bit for bit; ``--fp-strict`` keeps the order
    reassociates: ClassVar[bool] = False

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
            if not why and proc.lanes > 1 and not self.lane_safe:
                why = (f"each output is computed by {proc.lanes} threads (split-reduction): "
                       "this pass maps one output to one thread")
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
        if type(p).run_module in (Pass.run_module, OptimizationPass.run_module):
            p.run_module(ctx.module, ctx)        # guarded kernel by kernel (run_kernel)
        else:
            with guarded(p.name, list(ctx.module.procedures), ctx):
                p.run_module(ctx.module, ctx)
        ctx.completed.append(p.name)
        if dump_dir:
            _write(dump_dir, number, p.name, ctx.module)


#: GProcedure fields that are analyses' results stored in the IR (store_in_ir).
_DERIVED = ("loops", "memory_expressions")


class guarded:
    """Context manager: run a pass over ``procs`` so that an exception other than a
    NaiveoptError puts each of them back as it was (the same object, its state restored, so
    that the module and any caller holding it see the old kernel), drops the remarks and
    'applied' entries the failed run made, and records an InternalError instead of raising.
    Nested use (run_passes around run_kernel) records the error once, at the innermost."""

    def __init__(self, pass_name: str, procs: list[GProcedure], ctx: PassContext) -> None:
        self.pass_name, self.procs, self.ctx = pass_name, procs, ctx

    def __enter__(self) -> None:
        if os.environ.get(INTERNAL_ERRORS_ENV) == "raise":
            self.saved = None
            return
        # the tree and the facts recorded about it copied together, so that they still agree;
        # not the loops and memory expressions the IR stores (thousands of objects in an
        # unrolled kernel, most of a snapshot's time): a restore computes them again
        self.saved = [copy.deepcopy(({k: v for k, v in p.__dict__.items() if k not in _DERIVED},
                                     self.ctx.am.recorded_facts(p)))
                      for p in self.procs]
        self.derived = [bool(p.loops or p.memory_expressions) for p in self.procs]
        self.remarks = len(self.ctx.remarks)
        self.applied = copy.deepcopy(self.ctx.applied)
        self.canonicalized = copy.deepcopy(self.ctx.canonicalized)

    def __exit__(self, kind, error, tb) -> bool:
        if error is None or self.saved is None or not isinstance(error, Exception) \
                or isinstance(error, NaiveoptError):
            return False
        for proc, (state, facts), derived in zip(self.procs, self.saved, self.derived):
            proc.__dict__.clear()
            proc.__dict__.update(state)
            proc.loops, proc.memory_expressions = [], []
            self.ctx.am.restore(proc, facts)
            if derived:
                store_in_ir(proc, self.ctx.am)
        del self.ctx.remarks[self.remarks:]
        self.ctx.applied.clear()
        self.ctx.applied.update(self.applied)
        self.ctx.canonicalized.clear()
        self.ctx.canonicalized.update(self.canonicalized)
        kernels = ", ".join(p.name for p in self.procs) or "*"
        message = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        frames = [f for f in traceback.extract_tb(tb) if f"{os.sep}naiveopt{os.sep}" in f.filename]
        where = (f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}"
                 if frames else "")
        self.ctx.internal_errors.append(InternalError(self.pass_name, kernels, message, where))
        return True


def _write(dump_dir: str, number: int, name: str, module: GModule) -> None:
    from ..ir.printer import dump_module

    base = os.path.basename(module.path).replace(".", "_")
    path = os.path.join(dump_dir, f"{base}.{number:02d}-{name}.ir")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dump_module(module))


def adopt(proc: GProcedure, new: GProcedure, ctx: PassContext) -> None:
    """Make ``proc`` the kernel a pass built as a transformed copy ``new`` (the variant it
    chose): take over its tree and launch facts, and redo the analyses on it. The kernel
    object stays the one the module and the analysis manager know."""
    proc.func = new.func
    proc.launch_block = new.launch_block
    proc.coarsen = new.coarsen
    proc.lanes = new.lanes
    proc.launch_multiple = new.launch_multiple
    proc.resources = new.resources
    # sizes a bounds guard added as parameters (tiling/bounds_guard.py)
    proc.params += [new.param(n) for n in new.size_param_names.values()
                    if proc.param(n) is None]
    proc.size_params = list(new.size_params)
    reanalyse(proc, ctx)


def reanalyse(proc: GProcedure, ctx: PassContext) -> None:
    """A pass rewrote ``proc``'s tree: drop the analyses of the old tree and store the loops
    and memory expressions of the new one in the IR (quietly: the analysis passes' remarks
    are not repeated)."""
    ctx.am.tree_changed(proc)
    store_in_ir(proc, ctx.am)
