"""Running fuzz cases through naiveopt, classifying the outcomes, and reducing failures.

A case's outcome is one of:

- ``passed``: every kernel was optimized and verified against its input;
- ``miscompile``: a kernel failed verification (the output computes something else), or the
  output breaks a contract: its header's unverified lines, its host code's launches, or, for
  a CUDA output on an NVIDIA arch, a kernel NVRTC/nvcc does not compile;
- ``crash``: naiveopt raised something other than its located NaiveoptError (a traceback), or
  a pass failed internally and the pass manager kept the kernel as it was (its warning lines);
- ``rejected``: naiveopt refused the input with a located error (a generator gap, not a bug;
  an OpenCL build failure during verification is a ``crash``: what naiveopt wrote does not
  build);
- ``skipped``: verification could not run (e.g. the naive kernel itself failed).

The first two are bugs. A failing case is reduced (statements and lines dropped while it keeps
failing the same way) and written out as a reproducer: a lit test of tests/lit that fails while
the bug is there.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..api import optimize
from ..errors import NaiveoptError
from ..passes.options import MEMORIES
from ..passes.pipeline import canonicalization_pass_names, optimization_pass_names
from .generate import UNREADABLE_KERNEL, Case, generate_case

BUGS = ("miscompile", "crash")


@dataclass
class Outcome:
    kind: str                    # passed | miscompile | crash | rejected | skipped
    detail: str = ""
    applied: tuple[str, ...] = ()
    remarks: tuple[str, ...] = ()

    @property
    def is_bug(self) -> bool:
        return self.kind in BUGS


def cases(seed: int, count: int, start: int = 0) -> Iterator[Case]:
    """The campaign's cases; pass names and memories are read from naiveopt at run time so
    passes added later are fuzzed too."""
    names = optimization_pass_names()
    for index in range(start, start + count):
        yield generate_case(seed, index, names, MEMORIES)


def run_case(case: Case, source: str | None = None) -> Outcome:
    """Optimize and verify ``case`` (or ``source`` with the case's options)."""
    # A path in a directory that does not exist: no metadata file can be picked up beside it.
    path = os.path.join(tempfile.gettempdir(), "naiveopt-fuzz-nonexistent", case.filename)
    try:
        result = optimize(case.source if source is None else source, filename=path,
                          target=case.target, arch=case.arch, options=case.options,
                          defines=case.defines)
    except NaiveoptError as exc:
        if "OpenCL build failed" in str(exc):
            # the front end accepted the input, so the OpenCL naiveopt wrote (the output, or
            # the naive CUDA kernel's translation) does not build: naiveopt's bug
            return Outcome("crash", str(exc))
        return Outcome("rejected", str(exc))
    except Exception:  # noqa: BLE001 - any other exception is the bug being looked for
        return Outcome("crash", traceback.format_exc())
    applied = tuple(sorted({p for k in result.kernels for p in k.passes}))
    remarks = tuple(str(r) for r in result.remarks)
    if result.internal_errors:     # the pass manager's safety net caught a pass's bug
        return Outcome("crash", "\n".join(result.internal_error_messages()), applied, remarks)
    broken = unverified_contract(result) or host_launch_contract(result) or \
        cuda_compiles(result, case) or unread_kernel_carried(result, case)
    if broken:
        return Outcome("miscompile", broken, applied, remarks)
    failed = [k for k in result.kernels if k.verification.status == "failed"]
    if failed:
        return Outcome("miscompile", "; ".join(f"{k.name}: {k.verification.detail}"
                                               for k in failed), applied, remarks)
    skipped = [k for k in result.kernels if k.verification.status != "passed"]
    if skipped:
        return Outcome("skipped", "; ".join(f"{k.name}: {k.verification.detail}"
                                            for k in skipped), applied, remarks)
    return Outcome("passed", "", applied, remarks)


def cuda_compiles(result, case: Case) -> str:
    """What NVRTC or nvcc said about the kernels' CUDA form ('' when it compiled, or when the
    case is not a CUDA output for an NVIDIA arch): the resource query compiles each kernel,
    and a CUDA output that does not compile is naiveopt's bug (the front end accepted it)."""
    if case.target != "cuda" or not case.arch.startswith("sm_"):
        return ""
    failed = [r for r in result.remarks if r.pass_name == "nvcc" and
              ("NVRTC failed:" in r.message or "nvcc failed:" in r.message)]
    return f"the CUDA output does not compile: {failed[0].message}" if failed else ""


def unread_kernel_carried(result, case: Case) -> str:
    """What is wrong with how the output treats the kernel naiveopt does not read
    (generate.unreadable_variant; '' when nothing): it must be reported, written as it is
    into an output of the input's dialect and left out of any other, and the output that
    carries it must build (PoCL for OpenCL; nvcc for CUDA, where it is installed)."""
    if UNREADABLE_KERNEL not in case.source:
        return ""
    if not any(UNREADABLE_KERNEL in why for why, _, _ in result.left_as_written):
        return f"kernel '{UNREADABLE_KERNEL}' was not reported as left as written"
    carried = f"void {UNREADABLE_KERNEL}(" in result.code
    if carried != (case.target == case.dialect):
        return (f"kernel '{UNREADABLE_KERNEL}' is {'' if carried else 'not '}in the "
                f"{case.target} output of a {case.dialect} input")
    if not carried:
        return ""
    if case.target == "opencl":
        import pyopencl as cl

        try:
            context = cl.Context(cl.get_platforms()[0].get_devices())
            cl.Program(context, result.code).build()
        except cl.Error as exc:
            return f"the OpenCL output with a kernel as written does not build: {exc}"
        return ""
    if shutil.which("nvcc") is None:
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.cu")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(result.code)
        # the samples' helper_math.h is the user's: an empty stand-in, so that the output's
        # own definitions of the operators it needs (#ifndef HELPER_MATH_H) are compiled
        with open(os.path.join(tmp, "helper_math.h"), "w", encoding="utf-8") as fh:
            fh.write("")
        done = subprocess.run(["nvcc", f"-arch={case.arch if case.arch.startswith('sm_') else 'sm_90'}", "-c", "-I", tmp, "-o",
                               os.path.join(tmp, "out.o"), path],
                              capture_output=True, text=True, timeout=300)
    if done.returncode:
        return f"the CUDA output with a kernel as written does not compile: {done.stderr}"
    return ""


def unverified_contract(result) -> str:
    """What is wrong with how ``result`` reports its unverified kernels ('' when nothing): a
    kernel written without a check must say why in the output's header, one line, and a
    checked one must not claim otherwise."""
    lines = []
    for line in result.code.splitlines():      # the leading comment block
        if not line.startswith("//"):
            break
        if line.startswith("//   unverified: "):
            lines.append(line)
    want = [f"//   unverified: {k.unverified}" for k in result.kernels if k.unverified]
    if lines != want:
        return f"the header's unverified lines {lines} do not match the kernels' {want}"
    return ""


def host_launch_contract(result) -> str:
    """What is wrong with the host code of a CUDA output ('' when nothing): a kernel whose
    launch changed (a launch contract, or outputs merged into its threads) must not be
    launched the naive way anywhere in it, and one whose launch did not change must keep
    its launches as written; a kernel whose address the host takes stays naive."""
    head = re.search(r"^// Host code of .*$", result.code, re.M)
    if result.target != "cuda" or head is None:
        return ""
    host = result.code[head.start():]
    for k in result.kernels:
        # a launch contract traps any other launch (launcher.launch_check); a kernel's own
        # __launch_bounds__, kept as written, is none
        changed = f"not the launch this output needs: call {k.name}_launch\n" in result.code \
            or any(c != 1 for c in k.geometry.coarsen)
        stale = re.search(rf"\b{k.name}<<<", host)
        if changed and stale:
            return f"{k.name}: the output's launch changed, yet the host code launches it the naive way"
        if not changed and f"{k.name}_launch_from(" in host:
            return f"{k.name}: a launch rewritten though the kernel's launch did not change"
        if re.search(rf"\(void \*\){k.name}\b", host) and k.passes:
            return f"{k.name}: optimized ({', '.join(k.passes)}) though the host takes its address"
    return ""


def _signature(outcome: Outcome) -> tuple[str, str]:
    """What a reduced case must keep: the outcome kind and, for a crash, the exception line."""
    if outcome.kind == "crash":
        return outcome.kind, outcome.detail.strip().splitlines()[-1].split(":")[0]
    return outcome.kind, ""


def reduce(case: Case, outcome: Outcome | None,
           still_fails: Callable[[str], bool] | None = None) -> str:
    """A smaller source that fails the same way as ``outcome`` (or for which ``still_fails``
    holds): greedy removal of brace-balanced blocks and single lines (pragma lines are kept),
    repeated until nothing more can go."""
    if still_fails is None:
        want = _signature(outcome)

        def still_fails(text: str) -> bool:
            return _signature(run_case(case, text)) == want
    lines = case.source.splitlines()
    changed = True
    while changed:
        changed = False
        i = 0
        while i < len(lines):
            end = _block_end(lines, i)
            if lines[i].lstrip().startswith("#pragma") or end is None:
                i += 1
                continue
            candidate = lines[:i] + lines[end + 1:]
            if still_fails("\n".join(candidate) + "\n"):
                lines = candidate
                changed = True
            else:
                i += 1
    return "\n".join(lines) + "\n"


def _block_end(lines: list[str], start: int) -> int | None:
    """The last line of the statement (or function) starting at ``start``: the line itself,
    or through its matching closing brace (on this line or a later one; a body may open on the
    next line), or the next statement for a brace-less ``if``/``for`` header."""
    depth = 0
    for i in range(start, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth < 0:
            return None if i == start else i - 1
        if depth == 0:
            if i + 1 < len(lines) and lines[i + 1].strip() == "{":
                continue
            header = re.match(r"\s*(if|for)\b.*\)\s*$", lines[i])
            if header and i == start and i + 1 < len(lines):
                return _block_end(lines, i + 1)
            return i
    return None


def reproducer(case: Case, source: str, outcome: Outcome) -> str:
    """A self-contained reproducer: a lit test (tests/lit) that runs naiveopt with the case's
    options and fails while the bug is there, with the outcome as a comment. Its kernels must
    verify (``--require-verified``: with the pragma's sizes, or with those naiveopt infers
    where the case has none). Once fixed, the file goes to tests/lit/fuzz/ with a header saying
    what was wrong and CHECK lines for the remarks that show the fix."""
    detail = outcome.detail.strip().splitlines()
    ext = "cu" if case.target == "cuda" else "cl"
    kernels = re.findall(r"(?:__global__|__kernel)\s+void\s+(\w+)", source)
    head = [f"// naiveopt fuzz reproducer (seed {case.seed}, case {case.index}): "
            f"{outcome.kind}: {detail[-1] if detail else ''}",
            f"// RUN: %naiveopt %s {case.arguments()} --require-verified --explain "
            f"-o %t.{ext} 2>&1 | FileCheck %s"]
    checks = [f"// CHECK: {name}: verification passed" for name in kernels]
    return "\n".join(head) + "\n" + source + "\n" + "\n".join(checks) + "\n"


@dataclass
class Report:
    """The counts of a campaign and its failing cases."""

    counts: Counter
    applied: Counter
    failures: list[tuple[Case, Outcome]]
    canonicalized: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        total = sum(self.counts.values())
        kinds = ", ".join(f"{k} {self.counts[k]}" for k in
                          ("passed", "miscompile", "crash", "rejected", "skipped"))
        fired = ", ".join(f"{p} {n}" for p, n in self.applied.most_common()) or "none"
        canon = ", ".join(f"{p} {n}" for p, n in self.canonicalized.most_common()) or "none"
        return f"{total} cases: {kinds}\npasses applied (cases): {fired}\n" \
               f"canonicalizations applied (cases): {canon}"


def canonicalizations(outcome: Outcome) -> set[str]:
    """The canonicalization passes that rewrote a kernel of the case (from its remarks)."""
    names = set(canonicalization_pass_names())
    return {m.group(1) for r in outcome.remarks
            if (m := re.search(r"remark \[([a-z-]+)\] applied:", r)) and m.group(1) in names}


def campaign(seed: int, count: int, start: int = 0,
             progress: Callable[[Case, Outcome], None] | None = None) -> Report:
    """Run ``count`` cases of the campaign seeded ``seed``."""
    report = Report(Counter(), Counter(), [])
    for case in cases(seed, count, start):
        outcome = run_case(case)
        report.counts[outcome.kind] += 1
        report.applied.update(outcome.applied)
        report.canonicalized.update(canonicalizations(outcome))
        if outcome.is_bug:
            report.failures.append((case, outcome))
        if progress:
            progress(case, outcome)
    return report
