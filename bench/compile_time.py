"""How long naiveopt takes to optimize each library kernel, verification off, on a cold cache.

Choosing variants by their resources needs compiled code for each (the NVCC pass), and that
used to dominate compile time: one nvcc run costs 0.5-0.9 s, most of it start-up. For each
file this benchmark times

- ``in-process cold``: :func:`naiveopt.api.optimize` with ``verify=False`` in a process that
  has already imported naiveopt (a batch worker, the Python API), on an empty resource cache
  (a fresh XDG_CACHE_HOME) and with the symbolic memo cleared: the compiler's own cost;
- ``in-process warm``: the same call again, the cache filled;
- ``command cold``: the whole command ``naiveopt FILE --no-verify`` in a fresh process on an
  empty cache, the way a user runs it once: about 1 s more, the imports (sympy alone 0.6 s).

and counts the nvcc runs of the cold in-process call (nvcc is used only where NVRTC rejects
the source). The goal of issue 17 item 4: a median at or below 1 s per library kernel with
``--no-verify`` on a cold cache.

    python bench/compile_time.py kernels/naive --out bench/results/compile-time.md
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path


def _command(path: Path, target: str, cache: str) -> float:
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    with tempfile.TemporaryDirectory() as out:
        suffix = ".cl" if target == "opencl" else ".cu"
        cmd = [sys.executable, "-m", "naiveopt", str(path), "--no-verify", "--target", target,
               "-o", os.path.join(out, path.stem + suffix)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{path}: naiveopt failed:\n{proc.stderr}")
    return wall


def _in_process(path: Path, target: str, cache: str, cold: bool) -> tuple[float, int]:
    """Seconds of one optimize() call and the nvcc runs it made."""
    from naiveopt.api import optimize
    from naiveopt.ir import symbolic
    from naiveopt.passes.functional import nvcc

    os.environ["XDG_CACHE_HOME"] = cache
    if cold:
        symbolic._MEMO.clear()
    runs = []
    real = nvcc._with_nvcc
    nvcc._with_nvcc = lambda source, arch: runs.append(1) or real(source, arch)
    try:
        start = time.perf_counter()
        optimize(path.read_text(encoding="utf-8"), filename=str(path), target=target,
                 verify=False)
        return time.perf_counter() - start, len(runs)
    finally:
        nvcc._with_nvcc = real


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="a folder of kernels (kernels/naive)")
    ap.add_argument("--target", default="cuda", choices=("cuda", "opencl"))
    ap.add_argument("--out", help="write the markdown table here (and the figures as .json)")
    ap.add_argument("--only", nargs="*", help="file stems to time (default: all .cu files)")
    args = ap.parse_args(argv)
    files = sorted(Path(args.dir).glob("*.cu"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
    rows = []
    saved = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        _in_process(files[0], args.target, tempfile.mkdtemp(dir=tmp), True)   # imports
        for k, path in enumerate(files):
            cache = tempfile.mkdtemp(dir=tmp)
            cold, runs = _in_process(path, args.target, cache, True)
            warm, _ = _in_process(path, args.target, cache, False)
            command = _command(path, args.target, tempfile.mkdtemp(dir=tmp))
            rows.append({"file": path.name, "cold_s": round(cold, 3), "warm_s": round(warm, 3),
                         "command_cold_s": round(command, 3), "nvcc_runs": runs})
            print(f"[{k + 1}/{len(files)}] {path.name}: cold {cold:.2f} s ({runs} nvcc runs), "
                  f"warm {warm:.2f} s, command {command:.2f} s", file=sys.stderr)
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved
    medians = {key: statistics.median(r[key] for r in rows)
               for key in ("cold_s", "warm_s", "command_cold_s")}
    worst = max(rows, key=lambda r: r["cold_s"])
    lines = [f"# Compile time per library kernel (--no-verify, --target {args.target})", "",
             f"Date {date.today()}, host {platform.node()} ({os.cpu_count()} cores). Command: "
             f"`python bench/compile_time.py {args.dir} --target {args.target}`. Seconds of "
             "wall time; in-process: `naiveopt.api.optimize(..., verify=False)` after the "
             "imports, cold (empty resource cache) and warm (again, cache filled); command: "
             "`naiveopt FILE --no-verify` in a fresh process on an empty cache.", "",
             "| file | in-process cold | nvcc runs | in-process warm | command cold |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['file']} | {r['cold_s']:.2f} | {r['nvcc_runs']} | {r['warm_s']:.2f} | "
              f"{r['command_cold_s']:.2f} |" for r in rows]
    lines += ["", f"Medians: in-process cold {medians['cold_s']:.2f} s, warm "
              f"{medians['warm_s']:.2f} s; command cold {medians['command_cold_s']:.2f} s. "
              f"Slowest cold: {worst['file']} ({worst['cold_s']:.2f} s)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        Path(args.out).with_suffix(".json").write_text(json.dumps(
            {"target": args.target, "date": str(date.today()), "host": platform.node(),
             "cores": os.cpu_count(), "medians": medians, "files": rows}, indent=1) + "\n",
            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
