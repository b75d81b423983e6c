"""Turn bench/gpu.py's JSON lines into bench/results/<device>-<date>.json and .md.

    .venv/bin/python bench/merge.py RUN.jsonl [RUN2.jsonl ...] [--ncu NCU.jsonl ...]
                                    [--profile bench/results/profile-sm_90.json]

Lines of several runs are merged by case id: the first run's line is the result, a later
line of the same case is a repeat, whose difference says how far a figure can be trusted.
``--ncu`` adds the Nsight Compute lines (bench/gpu.py --ncu) and, with ``--profile`` (the
CPU profile bench/run.py writes: address traces on PoCL at the metadata's 'profile' sizes),
the agreement table of the two profilers at the same sizes. The JSON is what
``naiveopt --bench-results`` reads (naiveopt/report/measurements.py) and the markdown is
the table the README shows.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")


def read_lines(paths: list[str]) -> tuple[list[dict], list[dict]]:
    """(run headers, case lines) of every file, in order."""
    headers, cases = [], []
    for path in paths:
        with open(path) as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                (headers if rec.get("record") == "run" else cases).append(rec)
    return headers, cases


def merge_cases(cases: list[dict]) -> list[dict]:
    """One row per case id (its first line), with ``repeats`` from later lines; a line that
    is not a result (an error, a budget stop) is replaced by a later result of the case, and
    so is one at other sizes (a later bundle changed the case: its line is the current one)."""
    rows: dict[str, dict] = {}
    for c in cases:
        first = rows.get(c["id"])
        if first is None or (first.get("status") != "ok" and c.get("status") == "ok") or \
                (c.get("sizes") and first.get("sizes") and c["sizes"] != first["sizes"]):
            if first is not None:
                c = {**c, "earlier": [{k: first.get(k) for k in ("status", "phase", "error",
                                                                  "verification", "sizes")}]}
            rows[c["id"]] = dict(c)
        elif c.get("status") == "ok" and first.get("status") == "ok":
            first.setdefault("repeats", []).append(
                {"naive_ms": c["naive_ms"], "optimized_ms": c["optimized_ms"]})
            ablations = {k: v for k, v in c.items() if k.startswith("without-")}
            if ablations:      # an --ablate run: its variants, scaled to the row's optimized
                scale = first["optimized_ms"] / c["optimized_ms"]
                first.update({k: v * scale if k.endswith("_ms") else v
                              for k, v in ablations.items()
                              if k.endswith("_ms") and not k.endswith("spread_ms")})
                first["ablation_verification"] = c.get("ablation_verification", {})
    out = []
    for row in rows.values():
        row["file"] = row.get("file", "").rsplit(".", 1)[0]     # the stem, as report reads it
        if row.get("repeats"):
            spread = [abs(r["optimized_ms"] / row["optimized_ms"] - 1) for r in row["repeats"]]
            spread += [abs(r["naive_ms"] / row["naive_ms"] - 1) for r in row["repeats"]]
            row["repeat_difference"] = max(spread)
        out.append(row)
    return out


def _pct(x) -> str:
    return "-" if x is None else f"{x:.0%}"


def _num(x, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def timing_table(rows: list[dict]) -> list[str]:
    lines = ["| case | sizes | passes | GPU check | naive ms | optimized ms | speedup | "
             "optimized rate | of copy BW | of FP32 peak | cuBLAS ms | optimized / cuBLAS |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        sizes = ", ".join(f"{k}={v}" for k, v in r.get("sizes", {}).items())
        if r.get("status") != "ok":
            lines.append(f"| {r['id']} | {sizes} | | {r.get('status')}: "
                         f"{(r.get('error') or r.get('reason') or '')[:80]} | | | | | | | | |")
            continue
        compute = bool(r.get("flops")) and r["flops"] / max(1, r.get("bytes") or 1) > 4
        rate = (f"{r['optimized_gflops']:,.0f} GFLOP/s" if compute
                else f"{r.get('optimized_gbps', 0):,.0f} GB/s")
        lines.append(
            f"| {r['id']} | {sizes} | {', '.join(r.get('passes', [])) or '-'} | "
            f"{r['verification']} | {r['naive_ms']:.3f} | {r['optimized_ms']:.3f} | "
            f"{r['speedup']:.2f}x | {rate} | {_pct(r.get('optimized_of_copy_bw'))} | "
            f"{_pct(r.get('optimized_of_fp32_peak'))} | {_num(r.get('cublas_ms'))} | "
            f"{_num(r.get('optimized_vs_cublas'), '.2f')} |")
    return lines


def ablation_table(rows: list[dict]) -> list[str]:
    """What each pass buys on the GPU: the kernel's time with that pass disabled over its
    time with the whole pipeline (> 1: the pass helps), from ``--ablate`` bundles."""
    lines = []
    for r in rows:
        if r.get("status") != "ok":
            continue
        parts = [f"{k[len('without-'):-3]} {r[k] / r['optimized_ms']:.2f}"
                 + ("" if r.get("ablation_verification", {}).get(k[:-3]) == "passed"
                    else " (check failed)")
                 for k in r if k.startswith("without-") and k.endswith("_ms")
                 and not k.endswith("_spread_ms")]
        if parts:
            lines.append(f"| {r['id']} | {r['naive_ms'] / r['optimized_ms']:.2f}x | "
                         + ", ".join(parts) + " |")
    if not lines:
        return []
    return ["| case | speedup | time without PASS / time with all passes |",
            "| --- | ---: | --- |"] + lines


def agreement(ncu: list[dict], profile: dict | None) -> list[dict]:
    """Nsight Compute's counters next to naiveopt's CPU profile of the same kernel, variant
    and sizes: global sectors (loads + stores), shared bank conflicts, occupancy."""
    cpu = {}
    for row in (profile or {}).get("rows", []):
        cpu[row["kernel"]] = row
    out = []
    for n in ncu:
        stem = n["id"].split(":")[0]
        kernel = n["kernel"]
        prof = cpu.get(f"{stem}:{kernel}") or cpu.get(stem)
        sectors = (n.get("gld_sectors") or 0) + (n.get("gst_sectors") or 0)
        conflicts = (n.get("shared_ld_bank_conflicts") or 0) + \
            (n.get("shared_st_bank_conflicts") or 0)
        row = {"id": n["id"], "variant": n["variant"], "sizes": n.get("sizes"),
               "ncu_sectors": sectors, "ncu_bank_conflicts": conflicts,
               "ncu_achieved_occupancy": (n.get("achieved_occupancy_pct") or 0) / 100,
               "ncu_dram_bytes": (n.get("dram_read_bytes") or 0) +
               (n.get("dram_write_bytes") or 0), "ncu_duration_us":
               (n.get("duration_ns") or 0) / 1e3,
               "counters": {k: v for k, v in n.items() if k not in (
                   "id", "kernel", "variant", "grid", "block", "sizes", "ncu_kernel")}}
        if prof and prof.get("sizes") == n.get("sizes"):
            naive = n["variant"] == "naive"
            row["cpu_sectors"] = prof["naive_sectors" if naive else "optimized_sectors"]
            row["cpu_occupancy"] = prof["naive_occupancy" if naive else "occupancy"]
            row["cpu_bank_conflicts"] = None if naive else prof.get("bank_conflicts")
            row["sectors_cpu_over_ncu"] = row["cpu_sectors"] / sectors if sectors else None
        elif prof:
            row["note"] = f"CPU profile taken at {prof.get('sizes')}, not these sizes"
        out.append(row)
    return out


def agreement_table(rows: list[dict]) -> list[str]:
    lines = ["| case | variant | ncu sectors | CPU sectors | CPU / ncu | ncu bank conflicts | "
             "CPU bank conflicts | ncu achieved occupancy | CPU occupancy | DRAM bytes | "
             "ncu time us |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(
            f"| {r['id']} | {r['variant']} | {r['ncu_sectors']:,.0f} | "
            f"{_num(r.get('cpu_sectors'), ',.0f')} | {_num(r.get('sectors_cpu_over_ncu'), '.2f')}"
            f" | {r['ncu_bank_conflicts']:,.0f} | {_num(r.get('cpu_bank_conflicts'), ',.0f')} | "
            f"{_pct(r['ncu_achieved_occupancy'])} | {_pct(r.get('cpu_occupancy'))} | "
            f"{r['ncu_dram_bytes']:,.0f} | {r['ncu_duration_us']:.1f} |")
    return lines


def prediction_gaps(rows: list[dict], profile: dict | None) -> list[dict]:
    """What the CPU side predicted (naive / optimized global sectors, the figure passes and
    the bench table were judged by) against the speedup the GPU measured at paper sizes."""
    cpu = {r["kernel"]: r for r in (profile or {}).get("rows", [])}
    out = []
    for r in rows:
        if r.get("status") != "ok" or r.get("size_set") != "paper":
            continue
        prof = cpu.get(f"{r['file']}:{r['kernel']}") or cpu.get(r["file"])
        if not prof or not prof.get("ratio"):
            continue
        out.append({"id": r["id"], "cpu_sector_ratio": prof["ratio"],
                    "gpu_speedup": r["speedup"], "gap": prof["ratio"] / r["speedup"]})
    return sorted(out, key=lambda g: -max(g["gap"], 1 / g["gap"]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="results.jsonl files of bench/gpu.py")
    p.add_argument("--ncu", nargs="*", default=[], help="ncu.jsonl files of bench/gpu.py --ncu")
    p.add_argument("--profile", default=os.path.join(RESULTS, "profile-sm_90.json"),
                   help="the CPU profile to compare with (bench/run.py)")
    p.add_argument("--out", default=RESULTS)
    args = p.parse_args(argv)
    headers, cases = read_lines(args.runs)
    if not headers:
        print("no run header in the files given", file=sys.stderr)
        return 1
    head = headers[0]
    rows = merge_cases(cases)
    ncu = []
    for path in args.ncu:
        with open(path) as fh:
            ncu += [json.loads(line) for line in fh if line.strip()]
    profile = None
    if args.profile and os.path.exists(args.profile):
        with open(args.profile) as fh:
            profile = json.load(fh)
    agree = agreement(ncu, profile)
    gaps = prediction_gaps(rows, profile)
    date = head["date"][:10]
    slug = head["device"].replace(" ", "-")
    doc = {"device": head["device"], "date": date, "arch": head.get("arch"),
           "command": [h.get("command") for h in headers], "runs": headers,
           "results": rows, "ncu": agree, "prediction_gaps": gaps}
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"{slug}-{date}")
    with open(base + ".json", "w") as fh:
        json.dump(doc, fh, indent=1)
    ok = [r for r in rows if r.get("status") == "ok"]
    slower = [r for r in ok if r["speedup"] < 1]
    md = [f"# {head['device']}, {date}", "",
          f"naiveopt {head.get('naiveopt')} output for {head.get('arch')}, timed by "
          f"bench/gpu.py: CUDA {head.get('runtime')}, driver {head.get('driver')}, NVRTC "
          f"{head.get('nvrtc')}, cupy {head.get('cupy')}, CUPY_TF32={head.get('cupy_tf32')}; "
          f"{head.get('multiprocessors')} SMs, FP32 peak "
          f"{_num(head.get('fp32_peak_gflops'), ',.0f')} GFLOP/s at the maximum SM clock "
          f"({head.get('nvidia_smi', {}).get('clocks.max.sm')}). Each time is the median of "
          f"{head['timing']['replays']} replays of a CUDA graph of back-to-back launches "
          f"(>= {head['timing']['replay_ms']:.0f} ms each) after warm-up; 'of copy BW' is the "
          "optimized kernel's compulsory bytes per second over a device-to-device copy of "
          "as many bytes; 'GPU check' compares every array the optimized kernel writes with "
          "the naive kernel's on the GPU.", "",
          f"{len(ok)} cases timed, {sum(r['verification'] == 'passed' for r in ok)} passed "
          f"the GPU check, {len(slower)} slower than naive"
          + (f" ({', '.join(r['id'] for r in slower)})" if slower else "") + "."]
    diffs = [r["repeat_difference"] for r in rows if "repeat_difference" in r]
    if diffs:
        md.append(f"Repeated runs of {len(diffs)} cases differ by at most {max(diffs):.1%}.")
    md += ["", "## Timings", ""] + timing_table(rows)
    ablations = ablation_table(rows)
    if ablations:
        md += ["", "## What each pass buys", "",
               "Each applied pass disabled in turn (naiveopt bench --prepare --ablate); a "
               "figure above 1 means the kernel is slower without that pass.", ""] + ablations
    if agree:
        md += ["", "## Nsight Compute against naiveopt's CPU profile", "",
               "Global sectors are L1 sector requests of global loads and stores "
               "(l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st); occupancy is achieved "
               "(ncu) against theoretical (CPU).", ""] + agreement_table(agree)
    if gaps:
        md += ["", "## CPU prediction against GPU measurement", "",
               "The CPU profile's naive/optimized sector ratio (the figure the passes are "
               "judged by) against the speedup measured at the paper's sizes.", "",
               "| case | CPU sector ratio | GPU speedup | ratio / speedup |",
               "| --- | ---: | ---: | ---: |"]
        md += [f"| {g['id']} | {g['cpu_sector_ratio']:.2f}x | {g['gpu_speedup']:.2f}x | "
               f"{g['gap']:.2f} |" for g in gaps]
    with open(base + ".md", "w") as fh:
        fh.write("\n".join(md) + "\n")
    print(f"wrote {base}.json and .md: {len(rows)} cases, {len(agree)} ncu rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
