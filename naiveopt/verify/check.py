"""Check an output kernel against its naive input (and the NumPy reference) on random data."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..launch import LaunchGeometry
from . import opencl
from .expr import evaluate
from .spec import ArgSpec, FileSpec, KernelSpec, size_sets

RTOL = 1e-4


def _numpy_only_import(name: str, *args, **kwargs):
    """numpy's C code imports lazily through the caller's builtins; allow numpy alone."""
    if name.split(".")[0] != "numpy":
        raise ImportError(f"a NumPy reference may not import {name}")
    return __import__(name, *args, **kwargs)


#: Built-ins a NumPy reference expression may use (no I/O, no imports but numpy's own).
_SAFE_BUILTINS = {f.__name__: f for f in (abs, min, max, range, len, bool, int, float, sum,
                                          tuple, list, zip, slice, enumerate)}
_SAFE_BUILTINS["__import__"] = _numpy_only_import
REF_RTOL = 1e-3


@dataclass
class Verification:
    """The outcome for one kernel: passed, failed or skipped, and what was compared."""

    status: str
    detail: str = ""
    checks: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"status": self.status, "detail": self.detail, "checks": self.checks}


@dataclass
class Program:
    """An OpenCL program to run: its source, build options and how to launch each kernel;
    ``layouts`` binds the arguments of kernels that read images (ir/textures.param_layout)."""

    source: str
    options: list[str]
    geometry: dict[str, LaunchGeometry]
    layouts: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


def verify_kernel(spec: FileSpec, kernel: KernelSpec, naive: Program, output: Program,
                  defines: dict[str, str], macros: dict[str, str] | None = None,
                  seed: int = 1234) -> Verification:
    """Compare ``output`` with ``naive`` (and the reference) at every size set of ``spec``.

    ``defines`` are the command line's -D values (sizes); ``macros`` those of them that are
    preprocessor macros for this file (passed to the OpenCL compiler)."""
    sets = size_sets(spec, defines)
    if not sets:
        return Verification("skipped", "problem sizes unknown: give metadata, -D NAME=VALUE "
                            "or '#pragma naiveopt sizes(...)'")
    missing = [a.name for a in kernel.args if a.role in ("in", "out", "inout") and not a.shape]
    if missing:
        return Verification("skipped", "shape of " + ", ".join(missing) + " unknown: add "
                            "'#pragma naiveopt array(NAME, dims...)'")
    if not any(a.role in ("out", "inout") for a in kernel.args):
        return Verification("skipped", "the kernel writes no global array: nothing to compare")
    if kernel.threads is None:
        return Verification("skipped", "thread space unknown: add '#pragma naiveopt "
                            "threads(X, Y)' (threads(X, Y, Z) where the kernel reads z ids) "
                            "or a bounds guard")
    checks = []
    for set_name, sizes in sets.items():
        try:
            failure, check = _check_sizes(kernel, sizes, naive, output, macros or {}, seed)
        except ValueError as exc:
            return Verification("skipped", f"cannot check: {exc}")
        except opencl.KernelCrash as exc:
            return Verification("failed", f"{set_name} sizes {sizes}: {exc}", checks)
        checks.append(f"{set_name} {check}")
        if failure:
            return Verification("failed", f"{set_name} sizes {sizes}: {failure}", checks)
    return Verification("passed", "; ".join(checks), checks)


#: Verification runs at bounded sizes: at most this many array elements (1 GiB of float32 in
#: all) and work-items per size set, every size an int32 (larger sets are not checked).
MAX_ELEMENTS = 1 << 28


def _check_bounds(kernel: KernelSpec, sizes: dict[str, int]) -> None:
    """Raise ValueError when ``sizes`` are too large to verify at (a hostile or mistaken
    pragma must not exhaust the machine's memory)."""
    for name, value in sizes.items():
        if not -2**31 <= value < 2**31:
            raise ValueError(f"size {name}={value} does not fit in an int")
    elements = sum(int(np.prod([int(evaluate(d, sizes)) for d in a.shape]))
                   for a in kernel.args if a.shape)
    threads = int(np.prod([int(evaluate(t, sizes)) for t in kernel.threads]))
    for what, count in (("array elements", elements), ("threads", threads)):
        if count > MAX_ELEMENTS:
            raise ValueError(f"{count} {what} at these sizes (verification runs at most "
                             f"{MAX_ELEMENTS}): verify at smaller sizes")


def _check_sizes(kernel: KernelSpec, sizes: dict[str, int], naive: Program, output: Program,
                 macros: dict[str, str], seed: int) -> tuple[str, str]:
    _check_bounds(kernel, sizes)
    rng = np.random.default_rng(seed)
    args = [make_arg(a, sizes, rng) for a in kernel.args]
    options = [f"-D{name}={sizes[name]}" for name in kernel.defines if name in sizes]
    options += [f"-D{k}={v}" for k, v in macros.items() if k not in kernel.defines]
    try:
        expected = _launch(naive, kernel, sizes, args, options)
    except opencl.KernelCrash as exc:
        raise ValueError(f"the naive kernel itself fails at these sizes: {exc}") from exc
    note = ""
    try:
        got = _launch(output, kernel, sizes, args, options)
    except opencl.KernelCrash as exc:
        if "crashed the OpenCL runtime" not in str(exc):
            raise
        # PoCL 3.0 occasionally dies in a long-lived worker (seen once in ~10^4 runs, never
        # reproduced on the same kernel); a fresh worker reruns the same inputs once, and a
        # second crash fails the check as before
        got = _launch(output, kernel, sizes, args, options)
        note = " (the OpenCL runtime crashed once; the rerun in a fresh worker passed)"
    arrays = [a for a in kernel.args if a.role in ("in", "out", "inout")]
    for spec_arg, want, have in zip(arrays, expected, got):
        if spec_arg.role == "in":
            continue
        bad = first_mismatch(want, have)
        if bad is not None:
            return (f"{spec_arg.name}[{bad}] = {have.flat[bad]!r}, naive kernel gives "
                    f"{want.flat[bad]!r}", "")
    ref_failure = _against_reference(kernel, sizes, args, got)
    if ref_failure:
        return ref_failure, ""
    compared = [a.name for a in arrays if a.role != "in"]
    what = "naive kernel" + (" and NumPy reference" if kernel.reference else "")
    return "", f"{_fmt(sizes)}: {', '.join(compared)} match {what}{note}"


def first_mismatch(want: np.ndarray, have: np.ndarray) -> int | None:
    """The flat index of the first element of ``have`` that differs from ``want``, or None.

    Relative tolerance RTOL, with an absolute floor scaled by the largest finite expected
    value: an inf in ``want`` must not widen it to infinity (inf and NaN must match exactly)."""
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    close = np.isclose(have, want, rtol=RTOL, atol=RTOL * scale, equal_nan=True)
    return None if close.all() else int(np.argmax(~close))


def _fmt(sizes: dict[str, int]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in sizes.items()) + ")"


def make_arg(arg: ArgSpec, sizes: dict[str, int], rng: np.random.Generator):
    if arg.role == "size":
        return np.int32(evaluate(arg.value or arg.name, sizes))
    if arg.role == "scalar":
        value = evaluate(arg.value or "1", sizes)
        return np.float32(value) if arg.type == "float" else np.int32(value)
    dims = [int(evaluate(d, sizes)) for d in arg.shape]
    count = int(np.prod(dims)) if dims else 0
    if arg.type == "int":
        return rng.integers(-8, 9, size=count).astype(np.int32)
    if arg.init == "positive":
        return rng.uniform(0.5, 1.5, size=count).astype(np.float32)
    if arg.init == "lower_triangular":
        n = dims[0]
        m = np.tril(rng.uniform(-1, 1, size=(n, n)), -1) / n
        m += np.diag(rng.uniform(1, 2, size=n))
        return m.astype(np.float32).ravel()
    return rng.uniform(-1, 1, size=count).astype(np.float32)


def launch_sizes(geo: LaunchGeometry, sizes: dict[str, int]
                 ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The OpenCL (global, local) sizes of a launch at concrete problem sizes: the full 3-D
    NDRange, evaluated from the geometry's trees (launch.evaluate, as the sidecar gives
    them to a host), so a launch that dropped a dimension would be checked as such."""
    return geo.sizes(sizes)


def _launch(program: Program, kernel: KernelSpec, sizes: dict[str, int], args, options):
    global_size, local_size = launch_sizes(program.geometry[kernel.name], sizes)
    return opencl.run(program.source, kernel.name, program.options + options, args,
                      global_size, local_size, program.layouts.get(kernel.name))


def _against_reference(kernel: KernelSpec, sizes: dict[str, int], args, got) -> str:
    if not kernel.reference:
        return ""
    names: dict[str, object] = {"np": np, **sizes}
    arrays = [(a, v) for a, v in zip(kernel.args, args)]
    for a, v in arrays:
        if isinstance(v, np.ndarray):
            names[a.name] = v.astype(np.float64).reshape([int(evaluate(d, sizes))
                                                          for d in a.shape])
        else:
            names[a.name] = v.item()
    outs = {a.name: g for a, g in zip([a for a in kernel.args if isinstance(
        args[kernel.args.index(a)], np.ndarray)], got)}
    for name, expression in kernel.reference.items():
        if "__" in expression:
            return f"reference for {name} rejected: dunder names are not allowed"
        try:
            scope = {"__builtins__": _SAFE_BUILTINS, **names}
            want = np.asarray(eval(expression, scope),  # noqa: S307
                              dtype=np.float64).ravel()
        except Exception as exc:  # noqa: BLE001 - metadata error, reported as such
            return f"the NumPy reference for {name} raised {type(exc).__name__}: {exc}"
        have = outs[name].astype(np.float64)
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        if want.shape != have.shape or not np.allclose(have, want, rtol=REF_RTOL,
                                                       atol=REF_RTOL * scale):
            return f"{name} differs from the NumPy reference {expression!r}"
    return ""
