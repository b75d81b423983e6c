"""The ``naiveopt`` command: a thin layer over :func:`naiveopt.optimize`.

    naiveopt kernel.cu -o opt.cu                 # CUDA in, CUDA out
    naiveopt kernel.cu --target opencl -o opt.cl # OpenCL out
    naiveopt kernels/naive/ -o out/              # a directory (or several files) to a directory

Errors are printed as ``file:line:col: error: message`` and exit with status 1; a kernel that
fails verification leaves no output file. A kernel that cannot be verified is written with a
``file: kernel: warning: written unverified: reason`` line (and the reason in its header), or,
with ``--require-verified``, is an error. Outputs are written atomically and never over an
input.
"""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys

from . import __version__
from .api import TARGETS
from .passes.options import (COST_MODELS, MEMORIES, VECTORIZE_MODES, PipelineOptions,
                             parse_merge, parse_pipeline)
from .passes.pipeline import (canonicalization_pass_names, disableable_pass_names,
                              optimization_pass_names, optimization_passes)
from .errors import NaiveoptError
from .files import parse_defines, read_source, report_error, write_atomically
from .targets import get_target

KERNEL_EXTENSIONS = (".cu", ".cl")
TARGET_EXTENSION = {"cuda": ".cu", "opencl": ".cl"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="naiveopt", description="Optimize naive CUDA/OpenCL "
                                "kernels and verify the result against the input.")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="kernel files (.cu, .cl) or directories of them")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="output file (one input) or directory (several inputs or a "
                        "directory; for one input, an existing directory or a name ending "
                        "in '/', created if missing); without it a single result is printed "
                        "on stdout")
    p.add_argument("--target", choices=TARGETS, help="output dialect (default: the input's)")
    p.add_argument("--arch", default="sm_90", help="target architecture (default sm_90)")
    p.add_argument("--no-opt", action="store_true", help="functional passes only")
    p.add_argument("--passes", metavar="P1,P2,...", help="run exactly these optimization "
                   "passes, in this order, after the functional ones (default: the whole "
                   "pipeline: " + ",".join(optimization_pass_names()) + ")")
    p.add_argument("--register-tile", metavar="X:Y", help="force a register-tiled matrix "
                   "product: 16x16 threads of X x Y outputs each (multiples of 4, e.g. 8:8)")
    p.add_argument("--pipeline-stages", metavar="N", type=int, help="force the asynchronous "
                   "tile pipeline (cp.async, sm_80+) to N shared buffers per tile (2-4; 1: "
                   "none); default: the cost model chooses")
    p.add_argument("--merge", metavar="X:Y", help="force thread-merge factors: each thread "
                   "computes X outputs along x and Y along y (like the paper's -merge0=X:Y)")
    p.add_argument("--memory", choices=MEMORIES, default="global",
                   help="where read-only arrays are read from: global memory, or CUDA texture "
                        "objects / OpenCL images (default global)")
    p.add_argument("--vectorize", choices=VECTORIZE_MODES, default="auto",
                   help="auto: where it pays on the target (always on AMD and for texture "
                        "memory; on NVIDIA where 128-bit accesses cut instructions); always: "
                        "wherever legal; never (default auto)")
    p.add_argument("--cost-model", choices=COST_MODELS, default="default",
                   help="default: a pass whose gain depends on the caches (stencil staging) "
                        "applies only where the cost model estimates its output faster "
                        "than the kernel as written; unlimited: wherever it is legal (its "
                        "best variant), as GCC's -fvect-cost-model=unlimited")
    p.add_argument("--disable-pass", dest="disable", action="append", default=[],
                   metavar="PASS", choices=disableable_pass_names(),
                   help="switch an optimization pass off (repeatable): "
                        + ", ".join(optimization_pass_names()) + "; delinearize (a 1-D kernel over "
                        "a flattened matrix stays 1-D); or a canonicalization pass: "
                        + ", ".join(canonicalization_pass_names()))
    p.add_argument("--fp-strict", action="store_true",
                   help="keep the order of floating-point arithmetic: no pass reassociates "
                        "(invariant-factors declines, split-reduction for floating-point sums)")
    p.add_argument("--no-verify", action="store_true", help="skip verification on OpenCL "
                   "(outputs are written unverified, saying so)")
    p.add_argument("--no-launcher", action="store_true",
                   help="device code only (for NVRTC): no NAME_launch host functions, no "
                        "host code, no OpenCL work-size header")
    p.add_argument("--require-verified", action="store_true",
                   help="a kernel that cannot be verified (no sizes, an unknown shape...) is "
                        "an error: its file is not written (exit status 1)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="define a macro / problem size (repeatable)")
    p.add_argument("--metadata", metavar="TOML", help="kernel metadata (default: X.toml "
                   "beside X.cu)")
    p.add_argument("--explain", action="store_true",
                   help="print what each pass did or did not do, and why")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    p.add_argument("--dump-ir", metavar="DIR", help="write the IR after every pass into DIR")
    p.add_argument("-j", "--jobs", type=_positive, metavar="N",
                   help="files optimized in parallel (default: the number of cores)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    p.add_argument("--profile", action="store_true",
                   help="also profile every kernel, naive and optimized (global sectors from "
                        "address traces on PoCL at the metadata's 'profile' sizes)")
    p.add_argument("--bench-results", dest="bench_results", action="append", default=[],
                   metavar="JSON", help="show measurements from bench/run.py result files "
                   "(bench/results/*.json: sectors, GPU timings) for matching kernels")
    p.add_argument("--report", metavar="HTML", help="write a self-contained HTML report: "
                   "summary, remarks, before/after diff, plots")
    p.add_argument("--version", action="version", version=f"naiveopt {__version__}")
    return p


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return int(text)


def _options(args: argparse.Namespace) -> PipelineOptions:
    """Pass options from the command line, checked (unknown pass names included) before any
    file is read."""
    options = PipelineOptions(
        passes=None if args.passes is None else parse_pipeline(args.passes),
        disable=tuple(args.disable), memory=args.memory, vectorize=args.vectorize,
        merge=parse_merge(args.merge) if args.merge else None, fp_strict=args.fp_strict,
        register_tile=parse_merge(args.register_tile) if args.register_tile else None,
        pipeline_stages=args.pipeline_stages, cost_model=args.cost_model)
    optimization_passes(options)
    if args.no_opt and options.passes:
        raise NaiveoptError("--no-opt and --passes contradict each other")
    return options


def collect_inputs(inputs: list[str]) -> tuple[list[str], bool]:
    """Kernel files named or found in directories, and whether the output is a directory."""
    files: list[str] = []
    to_dir = len(inputs) > 1
    for item in inputs:
        if os.path.isdir(item):
            to_dir = True
            found = sorted(os.path.join(item, f) for f in os.listdir(item)
                           if f.endswith(KERNEL_EXTENSIONS))
            if not found:
                raise NaiveoptError(f"no .cu or .cl files in directory '{item}'", item)
            files.extend(found)
        elif os.path.exists(item):
            files.append(item)
        else:
            raise NaiveoptError("no such file or directory", item)
    return files, to_dir


def output_name(path: str, target: str | None) -> str:
    """The file name of an input's output in an output directory.

    The input's name is kept when the dialect does not change (mv.cu -> mv.cu); otherwise the
    target's extension is appended (mv.cu -> mv.cu.cl), so mv.cu and mv.cl never collide."""
    name = os.path.basename(path)
    ext = os.path.splitext(name)[1]
    wanted = TARGET_EXTENSION[target] if target else ext
    return name if wanted == ext else name + wanted


def _check_distinct_outputs(files: list[str], target: str | None) -> None:
    """Refuse a batch in which two inputs would write the same output file."""
    seen: dict[str, str] = {}
    for path in files:
        name = output_name(path, target)
        if name in seen:
            raise NaiveoptError(f"'{seen[name]}' and '{path}' would both be written to "
                                f"'{name}' in the output directory; optimize them separately")
        seen[name] = path


def profile_main(argv: list[str]) -> int:
    """``naiveopt profile KERNEL``: memory metrics from an address trace on PoCL."""
    from .profile import profile_file
    from .profile.report import compare_text, text

    p = argparse.ArgumentParser(prog="naiveopt profile", description="Profile the memory "
                                "behaviour of a kernel (naive by default) from its address "
                                "trace on the CPU OpenCL device.")
    p.add_argument("kernel", metavar="KERNEL")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--metadata", metavar="TOML")
    p.add_argument("--optimized", action="store_true", help="profile naiveopt's output")
    p.add_argument("--compare", action="store_true", help="naive and optimized side by side")
    p.add_argument("--max-blocks", type=int, default=8,
                   help="blocks that record their accesses (default 8); totals are scaled")
    p.add_argument("--memory", choices=MEMORIES, default="global",
                   help="memory of read-only arrays in the optimized kernel (texture reads "
                   "are not recorded: they are not global-memory sectors)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        defines = parse_defines(args.defines)
        source = read_source(args.kernel)
        variants = [False, True] if args.compare else [args.optimized]
        runs = {opt: profile_file(source, args.kernel, arch=args.arch, opt=opt,
                                  defines=defines, metadata=args.metadata,
                                  options={"memory": args.memory},
                                  max_blocks=args.max_blocks) for opt in variants}
    except NaiveoptError as exc:
        return report_error(exc, args.kernel)
    if args.json:
        if args.compare:
            doc = {"input": args.kernel, "arch": args.arch, "kernels": [
                {"kernel": n.kernel, "naive": n.to_json(), "optimized": o.to_json()}
                for n, o in zip(runs[False], runs[True])]}
        else:
            doc = {"input": args.kernel, "arch": args.arch,
                   "kernels": [k.to_json() for k in runs[args.optimized]]}
        print(json.dumps(doc, indent=2))
        return 0
    for opt in variants:
        for k in runs[opt]:
            print(text(k))
    if args.compare:
        for n, o in zip(runs[False], runs[True]):
            print(compare_text(n, o))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "profile":
        return profile_main(argv[1:])
    if argv and argv[0] == "bench":
        from .bench import bench_main

        return bench_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        defines = parse_defines(args.defines)
        options = _options(args)
        get_target(args.arch)
        if args.require_verified and args.no_verify:
            raise NaiveoptError("--require-verified and --no-verify contradict each other")
        files, several = collect_inputs(args.inputs)
        if several and not args.output:
            raise NaiveoptError("several inputs need -o DIRECTORY")
        into_dir = several or (args.output is not None and output_is_directory(args.output))
        if into_dir:
            _check_distinct_outputs(files, args.target)
            directory = args.output.rstrip("/") or "/"
            if os.path.exists(directory) and not os.path.isdir(directory):
                raise NaiveoptError(f"'{directory}' is not a directory")
            os.makedirs(args.output, exist_ok=True)
        jobs = [(path, os.path.join(args.output, output_name(path, args.target)) if into_dir
                 else args.output) for path in files]
        check_stdout_is_not_written(jobs, args.report)
    except NaiveoptError as exc:
        print(f"naiveopt: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"naiveopt: error: cannot create '{args.output}': {exc.strerror}", file=sys.stderr)
        return 1
    return _batch_main(args, jobs, several, defines, options)


def output_is_directory(output: str) -> bool:
    """Whether ``-o OUT`` for a single input names a directory to write into: an existing
    directory, or a name ending with a slash (created if missing)."""
    return output.endswith(("/", os.sep)) or os.path.isdir(output)


def check_stdout_is_not_written(jobs: list[tuple[str, str | None]], report: str | None
                                ) -> None:
    """Refuse, before any work, a stdout redirected into a file naiveopt writes.

    ``naiveopt k.cu -o k_opt.cu --json > k_opt.cu.json``: the shell creates the redirect's
    file before naiveopt starts, and the launch sidecar (``OUT.json``, a name the README and
    the output's header promise) would replace it, the JSON going to the replaced file. The
    sidecar names stay as documented; such a command is an error instead."""
    try:
        out = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):    # closed, or not a real file
        return
    if not stat.S_ISREG(out.st_mode):
        return
    written = [(p, f"the launch sidecar or header of '{o}'" if p != o else "an output file")
               for _, o in jobs if o for p in (o, o + ".json", o + ".h")]
    written += [(report, "the --report file")] if report else []
    for path, what in written:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            raise NaiveoptError(f"stdout is redirected into '{path}', {what}, which naiveopt "
                                "writes: redirect stdout to another file")


def _batch_main(args: argparse.Namespace, jobs: list[tuple[str, str | None]], several: bool,
                defines: dict[str, str], options: PipelineOptions) -> int:
    """Run the checked command line's files through naiveopt.batch, then print the JSON,
    the table or the code, and write the report."""
    from . import batch
    from .report import html_report
    from .report.measurements import load_measurements
    from .summary import table

    settings = batch.Settings(args.target, args.arch, not args.no_opt, not args.no_verify,
                              defines, args.metadata, args.dump_ir, options,
                              args.explain, args.profile, args.require_verified,
                              launcher=not args.no_launcher)
    files = [path for path, _ in jobs]
    try:
        measurements = load_measurements(args.bench_results, args.arch)
        if args.report and any(os.path.exists(args.report) and os.path.samefile(args.report, f)
                               for f in files):
            raise NaiveoptError("refusing to overwrite the input file", args.report)
        outcomes = batch.run(jobs, settings, jobs=args.jobs, progress=args.progress,
                             status_lines=several)
    except NaiveoptError as exc:
        print(f"naiveopt: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("naiveopt: interrupted (files already written are complete; no partial output)",
              file=sys.stderr)
        return 130
    summary = {"version": __version__, "files": [o.entry() for o in outcomes],
               "failed": sum(o.error is not None for o in outcomes),
               "internal_errors": sum(len((o.result or {}).get("internal_errors", []))
                                      for o in outcomes)}
    measurements.attach(summary)
    status = 1 if summary["failed"] else 0
    if args.report:
        try:
            write_atomically(args.report, html_report(summary, outcomes, args.arch))
        except NaiveoptError as exc:
            print(f"naiveopt: {exc}", file=sys.stderr)
            status = 1
    if args.json:
        print(json.dumps(summary, indent=2))
    elif several:
        print(table(summary))
    elif not args.output and not summary["failed"]:
        sys.stdout.write(outcomes[0].code)
    return status


if __name__ == "__main__":
    sys.exit(main())
