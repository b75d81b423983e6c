"""``naiveopt bench --prepare DIR``: everything a lent GPU needs to time a kernel library.

GPU time is rare here (a lent machine gives a session about 30 minutes, 10 per command) and
the GPU machines have no libclang, PoCL or islpy, so nothing of naiveopt runs there. This
module does all the compiler work on the CPU and writes a *bundle* that bench/gpu.py runs
with numpy and cupy alone:

- ``bundle.json``: one *case* per kernel and size set, with the launch geometry evaluated
  to numbers (grid and block of the naive and the optimized kernel), every argument as a
  recipe (dtype, shape, role, the fill its data gets, scalar values), the build options, the
  FLOP and byte counts, the cuBLAS calls that compute the same result, and per variant the
  source file and its sha256;
- ``src/``: the sources, each stored once under its hash: the naive CUDA file as the user
  wrote it, the optimized CUDA exactly as ``naiveopt`` writes it to ``-o`` (the kernel timed
  is the kernel shipped; the GPU never re-runs the optimizer), and both OpenCL translations,
  which the PoCL rehearsal of bench/gpu.py runs on the CPU with the same geometry and checks.

No data arrays travel (the GPU side draws them from one seeded generator per case), so a
bundle of the whole library is a few hundred kilobytes.

Size sets: the metadata's ``default`` (the paper's sizes) as ``paper``; ``large`` where the
paper's largest size is under 4096 (gemm's 512^3 is too small to fill an H100), scaled up
to 4096; and ``odd``, the paper's sizes made to miss every tile (``odd_size``), so that
partial tiles and guards are timed too. Any metadata set (``profile``, ``test``) can be
asked for by name: the Nsight Compute comparison uses ``profile``, CI uses ``test``.
"""
from __future__ import annotations

import ast
import datetime
import hashlib
import json
import os
from dataclasses import dataclass

import numpy as np

from . import __version__
from .analysis.shape import kernel_shape
from .api import compile_module, naive_program
from .emit import render
from .errors import NaiveoptError
from .frontend import parse_unit
from .frontend.clang_setup import PAPER_IDS
from .ir.elements import element, vector_element
from .launch import size_arguments
from .targets import get_target
from .verify.expr import evaluate
from .verify.spec import TRAFFIC, ArgSpec, KernelSpec, with_file_data

BUNDLE_VERSION = 1
DEFAULT_SETS = ("paper", "large", "odd")
#: Sizes from this value up are problem sizes that ``odd`` moves off every tile multiple;
#: smaller ones (filter widths, channel counts) stay as they are.
ODD_FROM = 256
#: ``large`` scales a paper set whose largest size is below this up to it.
LARGE = 4096
#: No array of a case may be larger (a 3-D kernel's ``large`` set would be 4096^3).
MAX_ARRAY_BYTES = 2 << 30


def odd_size(value: int) -> int:
    """A size that is a multiple of no tile: 4096 -> 4031 (= 29 * 139), 512 -> 447, odd and
    >= 31 below the paper's value, so every tile of up to 64 ends in a partial one."""
    if value < ODD_FROM:
        return value
    smaller = value - 65
    return smaller if smaller % 2 else smaller - 1


def size_set(spec_sizes: dict[str, dict[str, int]], name: str) -> dict[str, int] | None:
    """The sizes of bundle set ``name`` from a file's metadata sets (None: not applicable)."""
    paper = spec_sizes.get("default") or spec_sizes.get("test") or \
        next(iter(spec_sizes.values()), None)         # '#pragma naiveopt sizes(...)' files
    if name == "paper":
        return dict(paper) if paper else None
    if name == "odd":
        odd = {k: odd_size(v) for k, v in paper.items()} if paper else None
        return odd if odd != paper else None          # nothing large enough to move
    if name == "large":
        if not paper or max(paper.values()) >= LARGE:
            return None
        factor = LARGE // max(paper.values())
        large = {k: v * factor if v >= ODD_FROM else v for k, v in paper.items()}
        return large if large != paper else None
    sizes = spec_sizes.get(name)
    return dict(sizes) if sizes else None


@dataclass
class _Store:
    """Sources stored once under their hash in DIR/src/."""

    root: str

    def put(self, text: str, suffix: str) -> dict:
        digest = hashlib.sha256(text.encode()).hexdigest()
        path = f"src/{digest[:16]}{suffix}"
        full = os.path.join(self.root, path)
        if not os.path.exists(full):
            with open(full, "w") as fh:
                fh.write(text)
        return {"source": path, "sha256": digest}


def arg_recipe(arg: ArgSpec, kernel: KernelSpec, sizes: dict[str, int]) -> dict:
    """How the GPU side makes one argument, as verify/check.make_args makes it on the CPU:
    the same fills (floats uniform in [-1, 1] or metadata's init, signed integers in [-8, 8],
    unsigned ones in [0, 16], index arrays in range), drawn there from the case's generator."""
    elem, lanes = vector_element(arg.type)          # a float4 array: 4 floats an element
    elem = elem or element("float")
    out = {"name": arg.name, "role": arg.role, "dtype": np.dtype(elem.dtype).name}
    if arg.role in ("size", "scalar"):
        value = evaluate(arg.value or (arg.name if arg.role == "size" else "1"), sizes)
        out["value"] = int(value) if not elem.is_float else float(value)
        return out
    dims = [int(evaluate(d, sizes)) for d in arg.shape] + ([lanes] if lanes > 1 else [])
    out["shape"] = dims
    if arg.name in kernel.indices:
        fill = kernel.indices[arg.name]
        by_name = {a.name: a for a in kernel.args}
        extents = [int(np.prod([int(evaluate(d, sizes)) for d in by_name[t].shape]))
                   + (1 if inclusive else 0)
                   for t, inclusive in fill.bounds if t in by_name and by_name[t].shape]
        if extents:
            out["fill"] = {"kind": "index", "high": max(1, min(extents)),
                           "sorted": bool(fill.sorted)}
            return out
    if not elem.is_float:
        low, high = (0, 16) if elem.kind == "unsigned" else (-8, 8)
        out["fill"] = {"kind": "integers", "low": low, "high": high}
    elif arg.init == "positive":
        out["fill"] = {"kind": "uniform", "low": 0.5, "high": 1.5}
    elif arg.init == "lower_triangular":
        out["fill"] = {"kind": "lower_triangular"}
    else:
        out["fill"] = {"kind": "uniform", "low": -1.0, "high": 1.0}
    return out


def moved_bytes(args: list[dict]) -> int:
    """The fewest bytes the kernel must move through device memory: arrays it reads once,
    arrays it writes once, arrays it reads and writes (inout) twice."""
    return sum(TRAFFIC.get(a["role"], 1) * int(np.prod(a["shape"])) *
               np.dtype(a["dtype"]).itemsize for a in args if "shape" in a)


def _operand(node: ast.AST, shapes: dict[str, list[int]]) -> tuple[str, list[int], bool] | None:
    """``A`` or ``A.T`` of a known array: (name, shape, transposed)."""
    if isinstance(node, ast.Attribute) and node.attr == "T" and isinstance(node.value, ast.Name):
        inner = _operand(node.value, shapes)
        return (inner[0], inner[1], not inner[2]) if inner else None
    if isinstance(node, ast.Name) and node.id in shapes:
        return node.id, shapes[node.id], False
    return None


def cublas_calls(reference: dict[str, str], args: list[dict]) -> list[dict]:
    """The cuBLAS calls that compute a kernel's result, read off its NumPy reference: each
    ``X @ Y`` of two matrices is an SGEMM, of a matrix and a vector an SGEMV (``X.T`` a
    transposed one), ``np.outer(x, y)`` an SGER. Sizes are numbers (rows, columns, depth);
    an expression with none of these (a solve, a stencil) has no cuBLAS reference."""
    shapes = {a["name"]: a["shape"] for a in args if "shape" in a}
    calls: list[dict] = []
    for expression in reference.values():
        try:
            tree = ast.parse(expression, mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                left, right = _operand(node.left, shapes), _operand(node.right, shapes)
                if not left or not right:
                    continue
                (ln, ls, lt), (rn, rs, rt) = left, right
                if len(ls) == 2 and len(rs) == 2:
                    m, k = (ls[1], ls[0]) if lt else (ls[0], ls[1])
                    n = rs[0] if rt else rs[1]
                    calls.append({"call": "sgemm", "transa": "T" if lt else "N",
                                  "transb": "T" if rt else "N", "m": m, "n": n, "k": k,
                                  "what": ast.unparse(node)})
                elif len(ls) == 2 and len(rs) == 1:
                    calls.append({"call": "sgemv", "trans": "T" if lt else "N",
                                  "rows": ls[0], "cols": ls[1], "what": ast.unparse(node)})
                elif len(ls) == 1 and len(rs) == 2:      # x @ A == A.T @ x
                    calls.append({"call": "sgemv", "trans": "N" if rt else "T",
                                  "rows": rs[0], "cols": rs[1], "what": ast.unparse(node)})
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "outer" and len(node.args) == 2):
                x, y = (_operand(a, shapes) for a in node.args)
                if x and y and len(x[1]) == 1 and len(y[1]) == 1:
                    calls.append({"call": "sger", "m": x[1][0], "n": y[1][0],
                                  "what": ast.unparse(node)})
    unique = {c["what"]: c for c in calls}        # y = a @ x + ..., tmp = a @ x: one SGEMV
    return list(unique.values())


def _fit_unguarded(sizes: dict[str, int], geometries, guarded: bool) -> dict[str, int] | str:
    """Sizes an unguarded kernel can run at: one without a bounds guard computes garbage
    (or faults) unless its thread space is a multiple of its block (and of the coverage an
    optimized launch relies on, LaunchGeometry.multiple), so the ``odd`` sizes of its
    thread-space axes are rounded down to such a multiple (4031 -> 4016 for 16-thread
    blocks: still no multiple of a 64-wide tile). A string says why that is impossible."""
    if guarded:
        return sizes
    out = dict(sizes)
    for number, geo in enumerate(geometries):
        if number and not geo.multiple:
            # an output that relies on no multiple: its blocks tile the naive block, or it
            # was given a bounds guard (passes/optimize/tiling/bounds_guard.py)
            continue
        for axis, (space, block) in enumerate(zip(geo.thread_space, geo.block)):
            need = block * (geo.multiple[axis] if geo.multiple and axis < 2 else 1)
            if need == 1 or space == "1":
                continue
            if space not in out:
                return (f"no bounds guard, and its thread space {space!r} is no size this "
                        "set can round to a multiple of the block")
            out[space] = max(need, out[space] // need * need)
    return out


def _guarded(proc) -> bool:
    shape, _ = kernel_shape(proc)
    return shape is not None and shape.guard is not None


def _flops(kernel: KernelSpec, sizes: dict[str, int]) -> int | None:
    return int(evaluate(kernel.flops, sizes)) if kernel.flops else None


def _size_args(compiled, kernel: str, sizes: dict[str, int]) -> list[int]:
    """The values a variant's kernel takes after the naive kernel's arguments: the sizes a
    bounds guard added (GProcedure.size_params; launch.size_arguments)."""
    proc = next((p for p in compiled.module.procedures if p.name == kernel), None)
    return size_arguments(proc.size_params, sizes) if proc is not None else []


def prepare_file(path: str, store: _Store, sets: tuple[str, ...], arch: str,
                 ablate: bool = False) -> list[dict]:
    """The cases of one kernel file (one per kernel and size set). ``ablate`` adds, per
    optimization pass applied to a kernel, a variant compiled with that pass disabled
    (``without-PASS``), so the GPU measures what each pass buys."""
    with open(path) as fh:
        source = fh.read()
    base = os.path.basename(path)
    unit = parse_unit(path, source)
    opt = compile_module(unit, "cuda", arch, True)
    naive = compile_module(unit, "cuda", arch, False)
    spec = opt.spec
    if spec is None:
        raise NaiveoptError("benchmarking needs metadata or '#pragma naiveopt' sizes", path)
    # the optimized CUDA exactly as `naiveopt FILE -o OUT --no-launcher` writes it
    # (emit.render, no sidecar name: only the header's sidecar line differs; NVRTC compiles
    # device code, so no host launcher), and its OpenCL translation
    optimized_cuda = render(opt.module, "cuda", arch, opt.geometries, opt.ctx.applied, base,
                            None)
    optimized_cl = render(opt.opencl_module(), "opencl", arch, opt.geometries, {}, base, None)
    naive_cl = naive_program(unit, spec)
    # a naive file in the paper's style uses predefined ids (idx, tidx...) it never declares:
    # its build defines them, as naiveopt's front end does (frontend/clang_setup.PAPER_IDS)
    paper_ids = [f"-D{n}={PAPER_IDS[n]}" for n in sorted(naive.module.paper_ids)]
    sources = {("naive", "cuda"): store.put(source, ".cu"),
               ("optimized", "cuda"): store.put(optimized_cuda, ".cu"),
               ("naive", "opencl"): store.put(naive_cl.source, ".cl"),
               ("optimized", "opencl"): store.put(optimized_cl, ".cl")}
    ablations = {}
    if ablate:
        for name in sorted({n for applied in opt.ctx.applied.values() for n in applied}):
            c = compile_module(unit, "cuda", arch, True, options={"disable": [name]})
            ablations[name] = (c, store.put(render(c.module, "cuda", arch, c.geometries,
                                                   c.ctx.applied, base, None), ".cu"),
                               store.put(render(c.opencl_module(), "opencl", arch,
                                                c.geometries, {}, base, None), ".cl"))
    cases = []
    for set_name in sets:
        sizes = size_set(spec.sizes, set_name)
        if sizes is None:
            continue
        for proc in opt.module.procedures:
            kspec = with_file_data(spec.kernels[proc.name], opt.module, spec, {})
            case = {"id": f"{base[:-3]}:{proc.name}@{set_name}", "file": base,
                    "kernel": proc.name, "size_set": set_name, "sizes": sizes,
                    "passes": opt.ctx.applied.get(proc.name, [])}
            if set_name == "odd":
                fitted = _fit_unguarded(sizes, [naive.geometries[proc.name],
                                                opt.geometries[proc.name]],
                                        _guarded(next(p for p in naive.analysed.procedures
                                                      if p.name == proc.name)))
                if isinstance(fitted, str):
                    case["skip"] = fitted
                    cases.append(case)
                    continue
                case["sizes"] = fitted
            ksizes = case["sizes"]
            if proc.global_args:
                case["skip"] = (f"reads host-filled __constant__ data "
                                f"({', '.join(proc.global_args)}), which the kit does not "
                                "fill yet")
                cases.append(case)
                continue
            if any(a.role == "local" for a in kspec.args):
                case["skip"] = ("takes dynamic shared memory (sized by the launch), which "
                                "the kit does not allocate yet")
                cases.append(case)
                continue
            macros = unit.macros_among({k: str(v) for k, v in ksizes.items()})
            args = [arg_recipe(a, kspec, ksizes) for a in kspec.args]
            largest = max((int(np.prod(a["shape"])) * np.dtype(a["dtype"]).itemsize
                           for a in args if "shape" in a), default=0)
            if largest > MAX_ARRAY_BYTES:
                case["skip"] = (f"an array of {largest / 2**30:.1f} GiB at these sizes "
                                f"(the kit allocates at most {MAX_ARRAY_BYTES >> 30} GiB each)")
                cases.append(case)
                continue
            defines = [n for n in kspec.defines if n in ksizes]
            build = [f"-D{n}={ksizes[n]}" for n in defines]
            build += [f"-D{k}={v}" for k, v in macros.items() if k not in kspec.defines]
            variants = {}
            for label, compiled in (("naive", naive), ("optimized", opt)):
                geo = compiled.geometries[proc.name]
                global_size, block = geo.sizes(ksizes)
                grid = [g // b for g, b in zip(global_size, block)]
                variants[label] = {
                    "grid": grid, "block": list(block), "global_size": list(global_size),
                    "size_args": _size_args(compiled, proc.name, ksizes),
                    "cuda": {**sources[(label, "cuda")],
                             "options": build + (paper_ids if label == "naive" else [])},
                    "opencl": {**sources[(label, "opencl")],
                               "options": build + (naive_cl.options if label == "naive"
                                                   else [])}}
            for name in opt.ctx.applied.get(proc.name, []):
                c, cuda, opencl = ablations.get(name, (None, None, None))
                if c is None:
                    continue
                geo = c.geometries[proc.name]
                global_size, block = geo.sizes(ksizes)
                variants[f"without-{name}"] = {
                    "grid": [g // b for g, b in zip(global_size, block)],
                    "size_args": _size_args(c, proc.name, ksizes),
                    "block": list(block), "global_size": list(global_size),
                    "passes": c.ctx.applied.get(proc.name, []),
                    "cuda": {**cuda, "options": build}, "opencl": {**opencl, "options": build}}
            case.update({"args": args, "variants": variants,
                         "flops": _flops(kspec, ksizes), "bytes": moved_bytes(args),
                         "cublas": cublas_calls(kspec.reference, args)})
            cases.append(case)
    return cases


def prepare(kernels: list[str], out_dir: str, *, sets: tuple[str, ...] = DEFAULT_SETS,
            arch: str = "sm_90", progress=None, ablate: bool = False) -> dict:
    """Write the bundle for ``kernels`` (CUDA files with metadata) into ``out_dir``; returns
    the bundle document. ``progress(path)`` is called before each file."""
    os.makedirs(os.path.join(out_dir, "src"), exist_ok=True)
    store = _Store(out_dir)
    target = get_target(arch)
    cases, failures = [], []
    for path in kernels:
        if progress:
            progress(path)
        try:
            cases += prepare_file(path, store, sets, arch, ablate)
        except NaiveoptError as exc:
            failures.append({"file": os.path.basename(path),
                             "error": str(exc) if exc.file else f"{path}: error: {exc}"})
    doc = {"version": BUNDLE_VERSION, "naiveopt": __version__, "arch": arch,
           "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
               timespec="seconds"),
           "sets": list(sets), "ablate": ablate,
           "target": {"name": target.name, "description": target.description,
                      "fp32_lanes_per_sm": target.fp32_lanes_per_sm,
                      "multiprocessors": target.multiprocessors},
           "cases": cases, "failures": failures}
    tmp = os.path.join(out_dir, "bundle.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1)
    os.replace(tmp, os.path.join(out_dir, "bundle.json"))
    return doc
