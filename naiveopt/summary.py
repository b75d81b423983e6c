"""The summary table of a batch, from its ``--json`` summary (also what the HTML report shows).

    python -m naiveopt.summary out/summary.json

One row per kernel (one per failed file): the passes applied, whether it verified (or why it
was written unverified), and, where the kernel was profiled (``--profile``) or measured
(``--bench-results``), global sectors naive -> optimized, the cost model's estimated times
(naiveopt/cost/) and GPU speedups. The columns for measurements appear only when some kernel
has them, so a plain batch keeps a narrow table.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

ERROR_WIDTH = 70      # an error is cut to this in the table; stderr had it in full
UNVERIFIED_WIDTH = 50     # so is why a kernel was written unverified


@dataclass
class KernelRow:
    """One kernel of the batch (``kernel`` is None for a file that failed)."""

    input: str
    kernel: str | None
    target: str = "-"
    passes: list[str] = field(default_factory=list)
    registers: int | None = None
    verification: str = "-"
    detail: str = ""
    sectors: dict | None = None
    estimate: dict | None = None      # the cost model's naive and optimized estimates
    gpu: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def sector_ratio(self) -> float | None:
        """How many times fewer global sectors the output moves than the naive kernel."""
        if not self.sectors:
            return None
        return self.sectors["naive"] / max(1, self.sectors["optimized"])


def kernel_rows(summary: dict) -> list[KernelRow]:
    """The rows of the table, in the summary's (input) order."""
    rows = []
    for entry in summary["files"]:
        if "error" in entry:
            rows.append(KernelRow(entry["input"], None, verification="ERROR",
                                  error=entry["error"]))
            continue
        for k in entry["kernels"]:
            v = k["verification"]
            status = (f"unverified: {k['unverified'][:UNVERIFIED_WIDTH]}"
                      if k.get("unverified") else v["status"])
            rows.append(KernelRow(entry["input"], k["name"], entry["target"], k["passes"],
                                  (k["resources"] or {}).get("registers"), status,
                                  v["detail"], k.get("sectors"), k.get("estimate"),
                                  k.get("gpu", []),
                                  k.get("measurement_notes", [])))
    return rows


def sectors_text(row: KernelRow) -> str:
    if not row.sectors:
        return "-"
    return (f"{row.sectors['naive']:,.0f} -> {row.sectors['optimized']:,.0f} "
            f"({row.sector_ratio:.2f}x)")


def estimate_text(row: KernelRow) -> str:
    """'245.8 us latency -> 20.0 us DRAM (12.29x)': the cost model's time and bound of the
    naive launch and of the output's."""
    if not row.estimate:
        return "-"
    n, o = row.estimate["naive"], row.estimate["optimized"]
    ratio = n["seconds"] / o["seconds"] if o["seconds"] else float("inf")
    return (f"{n['seconds'] * 1e6:.1f} us {n['bound']} -> {o['seconds'] * 1e6:.1f} us "
            f"{o['bound']} ({ratio:.2f}x)")


def speedup_text(row: KernelRow) -> str:
    return ", ".join(f"{g['speedup']:.2f}x ({g['device']})" for g in row.gpu) or "-"


def table(summary: dict) -> str:
    """The plain-text table, and a line of totals."""
    rows = kernel_rows(summary)
    profiled = any(r.sectors for r in rows)
    timed = any(r.gpu for r in rows)
    header = ["input", "kernel", "target", "passes", "regs", "verification"]
    estimated = any(r.estimate for r in rows)
    header += ["global sectors naive -> opt"] * profiled + \
        ["estimated time naive -> opt"] * estimated + ["GPU speedup"] * timed
    cells = [header]
    for r in rows:
        if r.error is not None:
            line = [r.input, "-", "-", "-", "-", "ERROR: " + r.error[:ERROR_WIDTH]]
            cells.append(line + ["-"] * (profiled + estimated + timed))
            continue
        line = [r.input, r.kernel, r.target, ", ".join(r.passes) or "-",
                "-" if r.registers is None else str(r.registers), r.verification]
        cells.append(line + [sectors_text(r)] * profiled + [estimate_text(r)] * estimated +
                     [speedup_text(r)] * timed)
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    kernels = [r for r in rows if r.error is None]
    passed = sum(1 for r in kernels if r.verification == "passed")
    internal = summary.get("internal_errors", 0)
    unverified = sum(1 for r in kernels if r.verification.startswith("unverified"))
    lines.append(f"\n{passed}/{len(kernels)} kernels verified, "
                 + (f"{unverified} written unverified, " if unverified else "")
                 + (f"{internal} internal pass error(s) (please report), " if internal else "")
                 + f"{summary.get('failed', 0)} file(s) failed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as fh:
        print(table(json.load(fh)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
