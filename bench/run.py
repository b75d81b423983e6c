"""The kernel-library benchmark: what naiveopt's passes buy, measured.

    .venv/bin/python bench/run.py [--arch sm_90] [--kernels mv mm ...]

For every kernel of kernels/naive/ (the CUDA files; the OpenCL twins are the same kernels) it
profiles the naive kernel and naiveopt's output from their address traces on the CPU (PoCL,
the 'profile' size set of the metadata) and records global sectors naive vs optimized, the
optimized sectors against the compulsory ones (all of them, and those that reach L2: a block's
re-reads of a sector hit its SM's L1), shared-memory bank conflicts, occupancy, and
naiveopt's own optimize time. It checks the targets of the optimized library and says where a
kernel misses one. Results: bench/results/profile-<arch>.md and .json.

GPU timings are not taken here: the GPU machines cannot run naiveopt (no libclang, PoCL,
islpy). ``naiveopt bench --prepare bench/bundle`` prepares them on the CPU and bench/gpu.py
runs them on the GPU with numpy and cupy alone (README, "Measuring").
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import naiveopt  # noqa: E402
from naiveopt.errors import NaiveoptError  # noqa: E402
from naiveopt.profile import profile_file  # noqa: E402

KERNELS = os.path.join(ROOT, "kernels", "naive")
RESULTS = os.path.join(ROOT, "bench", "results")
MEMORY_BOUND = {"mv", "mv_macro", "tmv", "vv", "transpose", "transpose_macro", "atax", "bicg",
                "mvt", "gesummv"}
REUSE = {"mm", "mm_macro", "conv", "conv_macro"}


def target_check(stem: str, naive, opt) -> str:
    """'met', or which target of the optimized library the kernel misses."""
    notes = []
    n, o = naive.totals, opt.totals
    if stem in MEMORY_BOUND and o.l2_sectors > 1.25 * o.compulsory_sectors:
        notes.append(f"missed: {o.l2_sectors / o.compulsory_sectors:.2f}x compulsory in L2 "
                     "(target <= 1.25x)")
    if stem in REUSE and n.global_sectors < 16 * o.global_sectors:
        notes.append(f"missed: {n.global_sectors / max(1, o.global_sectors):.1f}x fewer "
                     "sectors than naive (target >= 16x)")
    if o.shared_bank_conflicts:
        notes.append(f"{o.shared_bank_conflicts:.0f} bank conflicts")
    if stem not in MEMORY_BOUND | REUSE and not notes:
        return "no target"
    return "; ".join(notes) or "met"


def profile_rows(arch: str, stems: list[str]) -> list[dict]:
    rows = []
    for stem in stems:
        path = os.path.join(KERNELS, stem + ".cu")
        with open(path) as fh:
            source = fh.read()
        start = time.perf_counter()
        naiveopt.optimize(source, filename=path, arch=arch, verify=False)
        optimize_s = time.perf_counter() - start
        naive = profile_file(source, path, arch=arch, opt=False)
        sampled = ""
        try:
            opt = profile_file(source, path, arch=arch, opt=True)
        except NaiveoptError as exc:
            # a few large blocks (register tiles) trace too many accesses: record one
            print(f"{stem}: {exc}; recording one block", file=sys.stderr)
            opt = profile_file(source, path, arch=arch, opt=True, max_blocks=1)
            sampled = " (optimized: 1 block traced)"
        for n, o in zip(naive, opt):
            rows.append({
                "kernel": stem if len(naive) == 1 else f"{stem}:{n.kernel}",
                "passes": o.passes, "sizes": n.sizes,
                "naive_sectors": n.totals.global_sectors,
                "optimized_sectors": o.totals.global_sectors,
                "ratio": n.totals.global_sectors / max(1, o.totals.global_sectors),
                "compulsory_sectors": o.totals.compulsory_sectors,
                "l2_sectors": o.totals.l2_sectors,
                "optimized_vs_compulsory": o.totals.global_sectors /
                max(1, o.totals.compulsory_sectors),
                "bank_conflicts": o.totals.shared_bank_conflicts,
                "naive_occupancy": n.totals.occupancy, "occupancy": o.totals.occupancy,
                "optimize_s": optimize_s, "target": target_check(stem, n, o) + sampled,
                # the cost model's estimates (naiveopt/cost/), memory bounds only
                "naive_estimate": n.totals.extra.get("estimate"),
                "estimate": o.totals.extra.get("estimate")})
            print(f"{rows[-1]['kernel']}: {rows[-1]['ratio']:.2f}x fewer sectors, "
                  f"{rows[-1]['optimized_vs_compulsory']:.2f}x compulsory, "
                  f"{rows[-1]['target']}", file=sys.stderr)
    return rows


def markdown(rows: list[dict], arch: str) -> str:
    def pct(x):
        return "-" if x is None else f"{x:.0%}"

    lines = [f"Memory behaviour on {arch} (address traces on PoCL, metadata 'profile' sizes; "
             "sectors are 32-byte global-memory sectors; 'in L2': each block's re-reads of a "
             "sector left to L1, the memory-bound targets' measure). Estimates: the cost "
             "model on the trace, memory bounds only, at the profile sizes. Register-tiled "
             "outputs (mm, mm_macro, gemm, syrk): a run of 4 adjacent shared reads counts as "
             "one 128-bit request, as nvcc issues it (bench/results/sass-mix-sm_90.md); the "
             "4 scalar stores of a vector tile unit count as 4 requests, which nvcc merges "
             "into STS.64/STS.128, so their store conflicts here are overstated.", "",
             "| kernel | passes | naive sectors | optimized sectors | naive/opt | opt/compulsory"
             " (in L2)"
             " | bank conflicts | occupancy naive -> opt | estimate naive -> opt (bound) "
             "| optimize time | target |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {', '.join(r['passes']) or '-'} | "
                     f"{r['naive_sectors']:,.0f} | {r['optimized_sectors']:,.0f} | "
                     f"{r['ratio']:.2f}x | {r['optimized_vs_compulsory']:.2f}x "
                     f"({r['l2_sectors'] / max(1, r['compulsory_sectors']):.2f}x) | "
                     f"{r['bank_conflicts']:.0f} | {pct(r['naive_occupancy'])} -> "
                     f"{pct(r['occupancy'])} | {_estimates(r)} | {r['optimize_s']:.1f} s | "
                     f"{r['target']} |")
    return "\n".join(lines) + "\n"


def _estimates(row: dict) -> str:
    """The cost model's times, naive -> optimized, and the optimized launch's bound."""
    n, o = row.get("naive_estimate"), row.get("estimate")
    if not n or not o:
        return "-"
    note = f", {o['note']}" if o.get("note") else ""
    return f"{n['seconds'] * 1e6:.1f} -> {o['seconds'] * 1e6:.1f} us ({o['bound']}{note})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--kernels", nargs="*", help="file stems (default: all of kernels/naive); "
                   "their rows replace those of the existing results, the others are kept")
    args = p.parse_args()
    stems = args.kernels or sorted(f[:-3] for f in os.listdir(KERNELS) if f.endswith(".cu"))
    os.makedirs(RESULTS, exist_ok=True)
    rows = profile_rows(args.arch, stems)
    base = os.path.join(RESULTS, f"profile-{args.arch}")
    command = " ".join(sys.argv)
    if args.kernels and os.path.exists(base + ".json"):
        # a partial run updates its kernels' rows and keeps the others (and says so)
        with open(base + ".json") as fh:
            old = json.load(fh)
        kept = [r for r in old["rows"] if r["kernel"].split(":")[0] not in stems]
        rows = sorted(kept + rows, key=lambda r: r["kernel"])
        command = f"{old['command']}; rows of {', '.join(stems)} from {command}"
    with open(base + ".json", "w") as fh:
        json.dump({"arch": args.arch, "command": command, "rows": rows}, fh, indent=2)
    with open(base + ".md", "w") as fh:
        fh.write(markdown(rows, args.arch))
    print(markdown(rows, args.arch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
