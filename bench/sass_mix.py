"""The instruction mix of the compute-bound kernels' hot code, read from their SASS (no GPU).

Issue 18's static criterion: in the hot loop of mm's output at 4096^3 FFMA are at least 80%
of the instructions and the shared loads are 128-bit; the same for gemm and syrk. For each
kernel this optimizes the library file with its sizes set to 4096 (``-D``, so that the cost
model chooses for those sizes; verification off: the naive kernel would run for minutes on
PoCL at that size), compiles the output for the architecture and counts the opcodes of the
loop holding the most FFMA (naiveopt/cost/sass.py), for the naive input and the output.

For the convolutions (issue 18 item 3: at most 0.5 shared loads per FFMA) the hot code is
the straight-line bodies specialised for 3, 5 and 7 taps (``if (K == 5)``, taps unrolled),
counted together (nvcc shares code between them, so one alone has no clean boundary).

    python bench/sass_mix.py --out bench/results/sass-mix-sm_90.md
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from naiveopt.api import optimize  # noqa: E402
from naiveopt.cost.sass import cubin, disassemble, hot_loop_mix, unrolled_code  # noqa: E402

#: file, the sizes set to 4096
KERNELS = {
    "mm.cu": ("H", "W", "K"),
    "mm_macro.cu": ("HEIGHT_A", "WIDTH_A", "WIDTH_B"),
    "gemm.cu": ("NI", "NJ", "NK"),
    "syrk.cu": ("N", "M"),
}
#: convolutions: file, the image sizes set to 4096, the filter size (taps per side)
STENCILS = {
    "conv.cu": (("H", "W"), ("K", 5)),
    "conv_macro.cu": (("H", "W", "width"), ("ksize", 5)),
}


def _stencil_row(name: str, sizes: tuple[str, ...], taps: tuple[str, int], arch: str,
                 size: int) -> dict:
    path = ROOT / "kernels" / "naive" / name
    source = path.read_text()
    defines = {s: str(size) for s in sizes}
    defines[taps[0]] = str(taps[1])
    result = optimize(source, filename=str(path), arch=arch, verify=False, defines=defines)
    chosen = [r.message.split("; ")[1] for r in result.remarks
              if r.pass_name == "stencil" and r.kind == "applied"]
    (k,) = result.kernels
    outputs = k.geometry.coarsen[0] * k.geometry.coarsen[1]
    naive_loop, _ = hot_loop_mix(source, arch)
    code, why = cubin(result.code, arch)
    sass, why = disassemble(code) if code is not None else (None, why)
    body = unrolled_code(sass) if sass else None
    loads = sum(body.shared_loads().values()) if body else None
    return {
        "kernel": name, "sizes": defines, "chosen": chosen[0] if chosen else "not staged",
        "naive": naive_loop.describe() if naive_loop else "not compiled as written",
        "outputs_per_thread": outputs,
        "optimized": body.describe() if body else (why or "no unrolled body"),
        "ffma_share": body.ffma_share if body else None,
        "shared_loads_per_ffma": loads / body.ffma if body else None,
        "lds128_only": body.vector_shared_loads if body else False,
    }


def _row(name: str, sizes: tuple[str, ...], arch: str, size: int) -> dict:
    path = ROOT / "kernels" / "naive" / name
    source = path.read_text()
    defines = {s: str(size) for s in sizes}
    result = optimize(source, filename=str(path), arch=arch, verify=False, defines=defines)
    chosen = [r.message for r in result.remarks
              if r.pass_name == "thread-merge" and r.kind == "applied"]
    naive_loop, naive_why = hot_loop_mix(source, arch)
    loop, why = hot_loop_mix(result.code, arch)
    return {
        "kernel": name, "sizes": defines, "chosen": chosen[0] if chosen else "no thread merge",
        "tile_loads": _tile_loads(result),
        "naive": naive_loop.describe() if naive_loop else
        "not compiled as written (" + next((ln.split("error:")[-1].strip()[:60]
                                            for ln in naive_why.splitlines()
                                            if "error:" in ln), "no loop") + ")",
        "naive_ffma_share": naive_loop.ffma_share if naive_loop else None,
        "optimized": loop.describe() if loop else why,
        "ffma_share": loop.ffma_share if loop else None,
        "lds128_only": loop.vector_shared_loads if loop else False,
        "fmul": loop.opcodes.get("FMUL", 0) if loop else None,
    }


def _tile_loads(result) -> str:
    """How the tiles are loaded (async-pipeline's choice) and the model's estimate of each
    candidate: '2-stage cp.async pipeline 1234.5 us (chosen); ... 1300.0 us'."""
    parts = []
    for r in result.remarks:
        if r.pass_name != "async-pipeline" or r.kind != "analysis":
            continue
        m = re.match(r"(.+?)(?:: block [^:]*?)? (not chosen|chosen): estimated ([\d.]+ us)",
                     r.message)
        if m:
            parts.append(f"{m[1]} {m[3]}{' (chosen)' if m[2] == 'chosen' else ''}")
    if parts:
        return "; ".join(parts)
    missed = [r.message for r in result.remarks
              if r.pass_name == "async-pipeline" and r.kind == "missed"]
    return missed[0] if missed else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--out", help="write the table here (and its .json beside it)")
    args = ap.parse_args(argv)
    rows = []
    for name, sizes in KERNELS.items():
        rows.append(_row(name, sizes, args.arch, args.size))
        print(f"{name}: {rows[-1]['optimized']}", file=sys.stderr)
    stencils = []
    for name, (sizes, taps) in STENCILS.items():
        stencils.append(_stencil_row(name, sizes, taps, args.arch, args.size))
        print(f"{name}: {stencils[-1]['optimized']}", file=sys.stderr)
    lines = [f"# Hot-loop instruction mix, {args.arch} SASS, sizes {args.size} "
             f"({date.today().isoformat()})", "",
             "Command: `python bench/sass_mix.py --arch " + args.arch + "` (NVRTC or nvcc, "
             "nvdisasm; no GPU). Hot loop: the loop holding the most FFMA "
             "(naiveopt/cost/sass.py). Target (issue 18): FFMA >= 80%, shared loads 128-bit."
             " Tile loads: async-pipeline's candidates and the cost model's estimate of each.",
             "", "| kernel | naive hot loop | optimized hot loop | FFMA share | LDS.128 only |"
             " variant | tile loads (estimate) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        share = f"{r['ffma_share']:.1%}" if r["ffma_share"] is not None else "-"
        variant = r["chosen"].split(";")[0].replace("|", "/")
        lines.append(f"| {r['kernel']} | {r['naive']} | {r['optimized']} | {share} | "
                     f"{'yes' if r['lds128_only'] else 'no'} | {variant} | "
                     f"{r['tile_loads'].replace('|', '/')} |")
    lines += ["", "Convolutions, chosen at K = 5: the bodies specialised for 3, 5 and 7 taps "
              "(straight-line code outside loops, together). Target (issue 18): at most 0.5 "
              "shared loads per FFMA.", "",
              "| kernel | naive hot loop | optimized unrolled bodies | shared loads per FFMA | "
              "variant |", "|---|---|---|---|---|"]
    for r in stencils:
        per = f"{r['shared_loads_per_ffma']:.2f}" if r["shared_loads_per_ffma"] is not None \
            else "-"
        lines.append(f"| {r['kernel']} | {r['naive']} | {r['optimized']} | {per} | "
                     f"{r['chosen'].replace('|', '/')} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        Path(args.out).with_suffix(".json").write_text(
            json.dumps(rows + stencils, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
