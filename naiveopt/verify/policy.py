"""What verification declines to run, and what it makes of a difference no pass caused.

Verification runs the naive kernel and the output on the same random data and compares what
they write. Two kinds of kernel make that comparison meaningless, and are reported as not
verified, with the reason, instead of run:

- a kernel whose naive launch is unknown: its index names a block constant the predefined
  pass could not read as its block (GPragma.launch_unknown), and nothing (pragma, metadata,
  host launch) gives it; a guessed block could run it out of bounds or racing, and the
  difference would be blamed on the output;
- a kernel that uses the value an atomic returns (``int slot = atomicAdd(&count, 1);
  out[slot] = v;``): which thread gets which slot depends on the order the threads run in,
  so two correct runs write different arrays.

And a kernel no optimization pass changed whose output still differs from the naive run's
differs from itself: a data race, nondeterminism or data-dependent behaviour of its own, not a
miscompile; it is reported as not verified, saying so.
"""
from __future__ import annotations

from ..ir import GProcedure, atomics
from .check import Verification
from .spec import KernelSpec


def refusal(proc: GProcedure | None, kernel: KernelSpec) -> str:
    """Why ``proc`` (the analysed kernel) is not run for verification, or ''."""
    if proc is None:
        return ""
    if proc.pragma.launch_unknown and kernel.provenance.get("block", "default") == "default":
        return ("the block the naive kernel was written for is unknown ("
                f"{proc.pragma.launch_unknown}): give it with '#pragma naiveopt block(X, Y)' "
                "or metadata")
    used = atomics.value_used(proc.body)
    if used:
        return (f"the kernel uses the value {used[0]} returns: which thread gets which old "
                "value depends on the order the threads run in, so two correct runs differ")
    return ""


def unchanged_kernel(result: Verification) -> Verification:
    """A failed check of a kernel no pass changed, reported as the kernel's own difference."""
    if result.status != "failed":
        return result
    return Verification("skipped", "no optimization pass changed this kernel, yet two runs "
                        "differ (a data race, nondeterminism or data-dependent behaviour in the "
                        f"kernel?): {result.detail}", result.checks, result.facts)
