"""Optimizing many kernel files at once: in parallel, in a stable order, past failures.

Optimizing and verifying a file is CPU-bound Python (and libclang), so files run in a pool of
worker processes (``--jobs``, default the usable cores). pebble's ProcessPool is used rather
than ``concurrent.futures`` because a worker that dies (a libclang segfault, the OOM killer)
fails only the file it was working on and is replaced, and because the pool can be stopped
at once on Ctrl-C. A single input runs in this process (no pool to start).

Workers only compute; this process writes every output, atomically (a temporary file and a
rename), after checking that it is not an input. So neither a crashing worker nor Ctrl-C can
leave a partial file: workers ignore SIGINT, the parent stops the pool (terminating the workers)
and re-raises, and the outputs already written are complete.

Messages (status lines, ``--explain`` remarks, errors) are printed in input order whatever the
number of jobs: a file's lines wait until every earlier file is done. The progress bar (tqdm,
on stderr) is drawn only when stderr is a terminal or when ``progress=True``, so logs and
captured output stay line-oriented.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from concurrent.futures import as_completed
from dataclasses import dataclass, field

from .api import optimize
from . import workers as spawned
from .errors import NaiveoptError
from .verify.infer import facts_line
from .files import located, read_source, write_atomically
from .passes.options import PipelineOptions


@dataclass(frozen=True)
class Settings:
    """How every file of a batch is optimized (the command line's options; picklable)."""

    target: str | None = None
    arch: str = "sm_90"
    opt: bool = True
    verify: bool = True
    defines: dict[str, str] = field(default_factory=dict)
    metadata: str | None = None
    dump_ir: str | None = None
    options: PipelineOptions = field(default_factory=PipelineOptions)
    explain: bool = False
    profile: bool = False
    require_verified: bool = False     # a kernel written unverified fails its file
    launcher: bool = True              # CUDA outputs carry NAME_launch host functions


@dataclass
class Outcome:
    """What became of one input file. ``result`` is OptimizeResult.to_json() (with remarks);
    ``error`` is set when the file failed (then nothing was written for it)."""

    path: str
    output: str | None
    source: str | None = None
    code: str | None = None
    result: dict | None = None
    launch: dict | None = None
    header: str = ""                  # OpenCL: the work-size header, written as OUTPUT.h
    explain: list[str] = field(default_factory=list)
    # one per kernel written unverified, one per pass that failed internally on a kernel
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def status(self) -> str:
        """'verified', 'unverified' when some kernel was written without a check, or the
        verification statuses of its kernels."""
        kernels = self.result["kernels"] if self.result else []
        if kernels and all(k["verified"] for k in kernels):
            return "verified"
        if any(k.get("unverified") for k in kernels):
            return "unverified"
        return ", ".join(sorted({k["verification"]["status"] for k in kernels})) or "-"

    def entry(self) -> dict:
        """This file's entry in the ``--json`` summary (the code only when not written)."""
        if self.error is not None:
            return {"input": self.path, "output": None, "error": self.error}
        entry = {k: v for k, v in self.result.items() if k != "remarks"}
        entry["output"] = self.output
        if not self.output:
            entry["code"] = self.code
        return entry


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def process_file(path: str, output: str | None, settings: Settings) -> Outcome:
    """Optimize, verify and (with ``settings.profile``) profile one file; write nothing.

    Runs in a worker. Bad input and failed verification come back as ``Outcome.error`` in the
    usual ``file:line:col: error:`` form; a bug in naiveopt as an internal error, so that one
    file cannot stop the batch."""
    outcome = Outcome(path, output)
    try:
        outcome.source = read_source(path)
        sidecar = os.path.basename(output) + ".json" if output else None
        result = optimize(outcome.source, filename=path, target=settings.target,
                          arch=settings.arch, opt=settings.opt, verify=settings.verify,
                          defines=settings.defines, metadata=settings.metadata,
                          dump_ir=settings.dump_ir, sidecar_name=sidecar,
                          options=settings.options, launcher=settings.launcher)
        if settings.explain:     # an unverified kernel gets its warning line instead
            outcome.explain = [f"{path}: {remark}" for remark in result.remarks] + [
                f"{path}: {k.name}: verification {k.verification.status}: "
                f"{k.verification.detail}" for k in result.kernels if k.unverified is None] + [
                f"{path}: {k.name}: verification facts: {facts_line(k.verification.facts)}"
                for k in result.kernels if k.verification.facts]
        if result.failed:
            bad = next(k for k in result.kernels if k.verification.status == "failed")
            raise NaiveoptError(f"kernel '{bad.name}' failed verification: "
                                f"{bad.verification.detail}; no output written", path)
        if settings.require_verified and (result.unverified or result.left_as_written):
            outcome.error = "\n".join(
                [f"{path}:{line}:{column}: error: {why} (--require-verified: no output "
                 "written)" for why, line, column in result.left_as_written] +
                [f"{path}: {name}: error: not verified: {reason} (--require-verified: no "
                 "output written)" for name, reason in result.unverified.items()])
            return outcome
        outcome.warnings = result.left_as_written_messages() + \
            result.internal_error_messages() + result.unverified_messages()
        outcome.code, outcome.launch = result.code, result.launch_json()
        outcome.header = result.work_sizes_header
        outcome.result = result.to_json()
        if settings.profile:
            _attach_profile(outcome, settings)
    except NaiveoptError as exc:
        outcome.error = located(exc, path)
    except Exception as exc:  # noqa: BLE001 - a bug in naiveopt must not kill a batch
        outcome.error = f"{path}: internal error: {type(exc).__name__}: {exc} (please report)"
    return outcome


def _attach_profile(outcome: Outcome, settings: Settings) -> None:
    """Global sectors of the naive kernel and of the output, from `naiveopt profile`'s address
    traces at the metadata's 'profile' sizes, as ``sectors`` of each kernel entry, and the cost
    model's estimated times of both launches on ``--arch`` as ``estimate``. A file that
    cannot be profiled (no sizes, say) keeps its output and gets ``profile_error``."""
    from .profile import profile_file

    runs = {}
    try:
        for opt in (False, True):
            runs[opt] = profile_file(outcome.source, outcome.path, arch=settings.arch,
                                     opt=opt and settings.opt, defines=settings.defines,
                                     metadata=settings.metadata, options=settings.options)
    except NaiveoptError as exc:
        outcome.result["profile_error"] = str(exc)
        return
    kernels = {k["name"]: k for k in outcome.result["kernels"]}
    for naive, optimized in zip(runs[False], runs[True]):
        kernels[naive.kernel]["sectors"] = {
            "naive": round(naive.totals.global_sectors),
            "optimized": round(optimized.totals.global_sectors),
            "compulsory": round(optimized.totals.compulsory_sectors),
            "sizes": naive.sizes, "from": "naiveopt profile (address trace on PoCL)"}
        ne, oe = naive.totals.extra.get("estimate"), optimized.totals.extra.get("estimate")
        if ne and oe:
            kernels[naive.kernel]["estimate"] = {
                "naive": ne, "optimized": oe, "sizes": naive.sizes, "arch": settings.arch,
                "from": "naiveopt's cost model on the profile's trace (naiveopt/cost/)"}


def write_outputs(outcome: Outcome) -> None:
    """Write an outcome's code and launch sidecar, never over an input; a failure to write
    turns the outcome into an error."""
    if outcome.error is not None or not outcome.output:
        return
    try:
        if os.path.exists(outcome.output) and os.path.samefile(outcome.output, outcome.path):
            raise NaiveoptError("refusing to overwrite the input file", outcome.output)
        write_atomically(outcome.output, outcome.code)
        write_atomically(outcome.output + ".json", json.dumps(outcome.launch, indent=2) + "\n")
        if outcome.header:
            write_atomically(outcome.output + ".h", outcome.header)
    except NaiveoptError as exc:
        outcome.error = located(exc, outcome.path)


def _died(path: str, exc: BaseException) -> str:
    """The error of a file whose worker process died or raised outside process_file."""
    from pebble import ProcessExpired

    if isinstance(exc, ProcessExpired) and exc.exitcode is not None and exc.exitcode < 0:
        cause = f"the worker process was killed by {signal.Signals(-exc.exitcode).name}"
    elif isinstance(exc, ProcessExpired):
        cause = f"the worker process exited with status {exc.exitcode}"
    else:
        cause = f"{type(exc).__name__}: {exc}"
    return f"{path}: internal error: {cause} (please report)"


class _Reporter:
    """Prints each file's messages in input order, and drives the progress bar."""

    def __init__(self, outcomes: list[Outcome | None], status_lines: bool,
                 progress: bool | None) -> None:
        from tqdm import tqdm

        self.outcomes = outcomes
        self.status_lines = status_lines
        self.next = 0
        show = sys.stderr.isatty() if progress is None else progress
        self.bar = tqdm(total=len(outcomes), file=sys.stderr, disable=not show,
                        unit="file", dynamic_ncols=True, leave=False)

    def done(self, index: int, outcome: Outcome) -> None:
        self.outcomes[index] = outcome
        self.bar.set_postfix_str(os.path.basename(outcome.path), refresh=False)
        self.bar.update()
        while self.next < len(self.outcomes) and self.outcomes[self.next] is not None:
            self._print(self.next, self.outcomes[self.next])
            self.next += 1

    def _print(self, index: int, outcome: Outcome) -> None:
        lines = outcome.explain + outcome.warnings
        if outcome.error is not None:
            lines.append(outcome.error)
        elif self.status_lines:
            lines.append(f"[{index + 1}/{len(self.outcomes)}] {outcome.path} -> "
                         f"{outcome.output}: {outcome.status}")
        for line in lines:
            self.bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


def run(files: list[tuple[str, str | None]], settings: Settings, *, jobs: int | None = None,
        progress: bool | None = None, status_lines: bool = True) -> list[Outcome]:
    """Optimize ``files`` (input path, output path or None) and write their outputs.

    Returns one Outcome per file, in input order. ``status_lines`` prints a line per file
    done (``[3/42] in -> out: verified``); errors and ``--explain`` remarks are always
    printed. KeyboardInterrupt stops the workers and propagates."""
    outcomes: list[Outcome | None] = [None] * len(files)
    reporter = _Reporter(outcomes, status_lines, progress)
    try:
        if len(files) == 1:
            outcome = process_file(*files[0], settings)
            write_outputs(outcome)
            reporter.done(0, outcome)
        else:
            _run_pool(files, settings, min(jobs or default_jobs(), len(files)), reporter)
    finally:
        reporter.close()
    return outcomes


def _run_pool(files: list[tuple[str, str | None]], settings: Settings, workers: int,
              reporter: _Reporter) -> None:
    from pebble import ProcessPool

    # pebble's workers ignore SIGINT (so do the verification workers they start), and on
    # SIGTERM from a stopping pool they run multiprocessing's exit cleanup, which ends their
    # verification workers too
    pool = ProcessPool(max_workers=workers, context=spawned.context())
    try:
        futures = {pool.schedule(process_file, args=(path, output, settings)): i
                   for i, (path, output) in enumerate(files)}
        for future in as_completed(futures):
            index = futures[future]
            try:
                outcome = future.result()
            except Exception as exc:  # noqa: BLE001 - the worker died: fail this file only
                path, output = files[index]
                outcome = Outcome(path, output, error=_died(path, exc))
            write_outputs(outcome)
            reporter.done(index, outcome)
    except BaseException:
        pool.stop()
        pool.join()
        raise
    pool.close()
    pool.join()
