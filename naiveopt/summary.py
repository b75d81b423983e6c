"""Print a before/after table from the ``--json`` summary of a batch run.

    python -m naiveopt.summary out/summary.json
"""
from __future__ import annotations

import json
import sys


def table(summary: dict) -> str:
    """One row per kernel: file, kernel, target, passes, registers, verification."""
    rows = [("input", "kernel", "target", "passes", "regs", "verification")]
    for entry in summary["files"]:
        if "error" in entry:
            rows.append((entry["input"], "-", "-", "-", "-", "ERROR: " + entry["error"][:60]))
            continue
        for k in entry["kernels"]:
            regs = str(k["resources"]["registers"]) if k["resources"] else "-"
            rows.append((entry["input"], k["name"], entry["target"],
                         ", ".join(k["passes"]) or "-", regs, k["verification"]["status"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    kernels = [r for r in rows[1:] if r[1] != "-"]
    passed = sum(1 for r in kernels if r[-1] == "passed")
    lines.append(f"\n{passed}/{len(kernels)} kernels verified, "
                 f"{summary.get('failed', 0)} file(s) failed")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as fh:
        print(table(json.load(fh)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
