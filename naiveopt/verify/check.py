"""Check an output kernel against its naive input (and the NumPy reference) on random data.

The data follows each argument's element type (ir/elements.py); a check passes only when it
proves something: outputs mostly NaN/inf or unchanged on every input range tried, a device
without the kernel's float width, a runtime that refuses the job, or index data the naive
kernel itself cannot run on make it 'skipped' with the reason (docs/kernel-metadata.md,
"What a check must prove"), never 'passed'.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import NaiveoptError
from ..ir.elements import Element, element, vector_element
from ..launch import LaunchGeometry, size_arguments
from . import opencl
from .expr import evaluate
from .spec import ArgSpec, FileSpec, KernelSpec, size_sets

#: Relative tolerance of float32 outputs against the naive kernel's (and of each element type:
#: float64 keeps ~16 digits, so a transformation that keeps the arithmetic keeps 1e-10;
#: integers must match exactly).
RTOL = 1e-4
RTOLS = {"float16": 1e-2, "float32": RTOL, "float64": 1e-10}


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


@dataclass(frozen=True)
class Mismatch:
    """Where the output first differs: the array and flat element (None for a difference
    from the NumPy reference, which names no element of the naive run), said as ``text``."""

    text: str
    array: str | None = None
    element: int | None = None

    def __str__(self) -> str:
        return self.text


@dataclass
class Verification:
    """The outcome for one kernel: passed, failed or skipped, and what was compared."""

    status: str
    detail: str = ""
    checks: list[str] = field(default_factory=list)
    # what the check ran with and where each fact came from (verify/infer.facts)
    facts: dict = field(default_factory=dict)
    # a failure of the output itself: it wrote other values than the naive kernel, or crashed
    # where the naive kernel ran (not a naive kernel that differs from its NumPy reference)
    blames_output: bool = False

    def to_json(self) -> dict:
        out = {"status": self.status, "detail": self.detail, "checks": self.checks}
        if self.facts:
            out["facts"] = self.facts
        return out


@dataclass
class Program:
    """An OpenCL program to run: its source, build options and how to launch each kernel;
    ``layouts`` binds the arguments of kernels that read images (ir/textures.param_layout)."""

    source: str
    options: list[str]
    geometry: dict[str, LaunchGeometry]
    layouts: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    module: object = None          # the parsed GModule, where the caller has it
    # per kernel, the sizes it takes after the naive kernel's arguments (GProcedure.size_params)
    size_args: dict[str, list[str]] = field(default_factory=dict)


class Unverifiable(Exception):
    """The check cannot prove anything at these sizes (the reason is the message): the kernel
    is reported not verified, neither passed nor failed."""


#: Input ranges of float arrays verification tries, in order, when the naive kernel's output
#: proves nothing on the default data (metadata's init; uniform in [-1, 1]): positive values
#: keep logs and roots finite, small ones keep products and exponentials from overflowing.
RANGES = ((0.5, 1.5), (-0.1, 0.1), (1.0, 2.0))
#: At most this share of the elements the naive kernel writes may be NaN or inf. NaN compares
#: equal to NaN, so those elements check nothing; a kernel may legitimately produce some (a
#: log of a negative input on one path), but when most of the output is non-finite the
#: comparison rests on a minority of the elements and on none of the main path's arithmetic.
MAX_NONFINITE = 0.5


def verify_kernel(spec: FileSpec, kernel: KernelSpec, naive: Program, output: Program,
                  defines: dict[str, str], macros: dict[str, str] | None = None,
                  seed: int = 1234) -> Verification:
    """Compare ``output`` with ``naive`` (and the reference) at every size set of ``spec``.

    ``defines`` are the command line's -D values (sizes); ``macros`` those of them that are
    preprocessor macros for this file (passed to the OpenCL compiler)."""
    try:
        return _verify(spec, kernel, naive, output, defines, macros, seed)
    except NaiveoptError:
        raise                  # an OpenCL build failure: an error, as before (nothing written)
    except Exception as exc:  # noqa: BLE001 - never a pass, never blamed on the kernel
        return Verification("skipped", "verification could not run: internal error "
                            f"{type(exc).__name__}: {exc}")


def _verify(spec: FileSpec, kernel: KernelSpec, naive: Program, output: Program,
            defines: dict[str, str], macros: dict[str, str] | None, seed: int
            ) -> Verification:
    sets = size_sets(spec, defines)
    if not sets:
        return Verification("skipped", "problem sizes unknown: give metadata, -D NAME=VALUE "
                            "or '#pragma naiveopt sizes(...)'")
    missing = [a.name for a in kernel.args if a.role in ("in", "out", "inout") and not a.shape]
    unknown = [d.why for a in kernel.args for d in a.shape if getattr(d, "why", "")]
    if unknown:               # an inferred extent that cannot be computed (verify/extents.py)
        return Verification("skipped", f"array shape unknown: {unknown[0]}: add '#pragma "
                            "naiveopt array(NAME, dims...)'")
    if missing:
        return Verification("skipped", "shape of " + ", ".join(missing) + " unknown: add "
                            "'#pragma naiveopt array(NAME, dims...)'")
    if not any(a.role in ("out", "inout") for a in kernel.args):
        return Verification("skipped", "the kernel writes no global array: nothing to compare")
    if kernel.threads is None:
        return Verification("skipped", "thread space unknown: add '#pragma naiveopt "
                            "threads(X, Y)' (threads(X, Y, Z) where the kernel reads z ids) "
                            "or a bounds guard")
    checks, unproven = [], []
    for set_name, sizes in sets.items():
        full = {**_macro_sizes(naive, sizes), **sizes}
        beyond = _past_tables(kernel, full) or _outside_arrays(kernel, full)
        if beyond:
            return Verification("skipped", f"{set_name} sizes {sizes}: {beyond}", checks)
        try:
            failure, check, weak = _check_sizes(kernel, full, naive, output, macros or {},
                                                seed, sizes)
        except ValueError as exc:
            return Verification("skipped", f"cannot check: {exc}")
        except Unverifiable as exc:
            return Verification("skipped", f"{set_name} sizes {sizes}: {exc}", checks)
        except opencl.RuntimeRefused as exc:
            return Verification("skipped", f"{set_name} sizes {sizes}: verification could not "
                                f"run: the OpenCL runtime refused the kernel ({exc})", checks)
        except opencl.KernelCrash as exc:
            return Verification("failed", f"{set_name} sizes {sizes}: {exc}", checks,
                                blames_output=True)
        if failure:
            race = _naive_race(kernel, full, failure)
            if race:
                return Verification("skipped", f"{set_name} sizes {sizes}: {race}", checks)
            return Verification("failed", f"{set_name} sizes {sizes}: {failure}", checks,
                                blames_output=failure.array is not None)
        checks.append(f"{set_name} {check}" + (f" (proves nothing alone: {weak})"
                                               if weak else ""))
        if weak:
            unproven.append(f"{set_name} sizes {sizes}: {weak}")
    if len(unproven) == len(checks):
        # every set matched, but on outputs that check nothing: not a pass (a mismatch on
        # them would still have been a failure)
        return Verification("skipped", "; ".join(unproven), checks)
    return Verification("passed", "; ".join(checks), checks)


def _naive_race(kernel: KernelSpec, sizes: dict[str, int], failure: Mismatch) -> str:
    """Why a mismatch at ``sizes`` proves nothing ('' when it does): the element it was found
    at is one that two threads of the naive launch store to (an
    unguarded kernel whose extra threads write past a row's end, the pragma's thread space
    not a multiple of its block), so the naive kernel's own result depends on the order its
    threads run in."""
    extent = kernel.accesses.get(failure.array) if failure.array else None
    if extent is None or failure.element is None:
        return ""
    try:
        # the element that differs must be one two threads store to: a difference
        # elsewhere is the output's
        witness = extent.overlap(sizes, failure.element)
    except (ValueError, ArithmeticError):
        return ""
    if not witness:
        return ""
    return (f"the naive kernel races: {witness} at these sizes, so its result depends on the "
            "order its threads run in and the outputs cannot be compared (the first "
            f"difference: {failure}); give sizes at which no two threads store to one element "
            "(for a kernel without a bounds guard: a thread space that is a multiple of its "
            "block)")


def _past_tables(kernel: KernelSpec, sizes: dict[str, int]) -> str:
    """Why the naive kernel cannot run at ``sizes`` ('' when it can): it would access a
    table of fixed length past its end (``CT[i]`` with a file-scope ``CT[16]``, or a table
    the kernel declares, allows at most 16 threads; past it is other memory, or garbage that
    differs between runs), so these sizes are outside what the kernel allows."""
    for name, (extent, length) in kernel.limits.items():
        try:
            needed = extent(sizes)
        except ValueError:
            continue
        if needed > length:
            return (f"the naive kernel would access {name} up to element {needed - 1}, past its "
                    f"{length} elements: the sizes the kernel allows are not inferred; give "
                    "sizes (-D NAME=VALUE or '#pragma naiveopt sizes(...)')")
    return ""


def _outside_arrays(kernel: KernelSpec, sizes: dict[str, int]) -> str:
    """Why the naive kernel cannot run at ``sizes`` ('' when it can): one of its accesses
    certainly falls outside an array's elements there (an unguarded kernel whose thread
    space is wider than the rows a pragma gives, ``A[N - 1 - i]`` with i past N). Running it
    would read or write memory that is not the array's: garbage at best, a crashed runtime
    at worst, and either the naive or the optimized run could be the one hit."""
    for arg in kernel.args:
        extent = kernel.accesses.get(arg.name)
        if extent is None or not arg.shape or arg.role not in ("in", "out", "inout"):
            continue
        try:
            elements = math.prod(int(evaluate(d, sizes)) for d in arg.shape)
            found = extent.outside(sizes, elements)
        except (ValueError, ZeroDivisionError, TypeError):
            continue
        if found:
            return (f"the naive kernel {found}, outside {arg.name}'s {elements} elements, at "
                    "these sizes: give sizes at which it stays inside its arrays (-D "
                    "NAME=VALUE or '#pragma naiveopt sizes(...)', and threads(...) where it "
                    "has no bounds guard)")
    return ""


def _macro_sizes(naive: Program, sizes: dict[str, int]) -> dict[str, int]:
    """The integer values of the file's macros that the kernels use, where a thread space or
    shape names them (PolyBench's guard ``i < _PB_NI`` with ``#define NI 37``): they hold at
    every size set that does not name them."""
    out = {}
    for name, text in (getattr(naive.module, "macros", None) or {}).items():
        try:
            value = evaluate(text, {**out, **sizes})
        except (ValueError, ZeroDivisionError):
            continue
        if isinstance(value, int):
            out[name] = value
    return out


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
    extents = [int(evaluate(t, sizes)) for t in kernel.threads]
    if min(extents) < 1:
        raise Unverifiable(f"the thread space ({', '.join(kernel.threads)}) is "
                           f"{tuple(extents)} at these sizes: no thread runs")
    threads = int(np.prod(extents))
    for what, count in (("array elements", elements), ("threads", threads)):
        if count > MAX_ELEMENTS:
            raise ValueError(f"{count} {what} at these sizes (verification runs at most "
                             f"{MAX_ELEMENTS}): verify at smaller sizes")


def _check_sizes(kernel: KernelSpec, sizes: dict[str, int], naive: Program, output: Program,
                 macros: dict[str, str], seed: int, shown: dict[str, int] | None = None
                 ) -> tuple[Mismatch | None, str, str]:
    """(the first mismatch, what was checked, why the check proves nothing on its own or
    ''); ``shown``: the sizes the check names (the set without the file's macros, _macro_sizes)."""
    _check_bounds(kernel, sizes)
    _check_device(kernel, naive, output)
    options = [f"-D{name}={sizes[name]}" for name in kernel.defines if name in sizes]
    options += [f"-D{k}={v}" for k, v in macros.items() if k not in kernel.defines]
    args, expected, note, weak = _naive_run(kernel, sizes, naive, options, seed)
    try:
        got = _launch_built(output, kernel, sizes, args, options)
    except opencl.KernelCrash as exc:
        if "crashed the OpenCL runtime" not in str(exc):
            raise
        # PoCL 3.0 occasionally dies in a long-lived worker (seen once in ~10^4 runs, never
        # reproduced on the same kernel); a fresh worker reruns the same inputs once, and a
        # second crash fails the check as before
        try:
            got = _launch(output, kernel, sizes, args, options)
        except opencl.KernelCrash as again:
            # the naive run may survive an out-of-range index by luck (the address it wrote
            # happened to be mapped): a crash is the data's, not the output's
            _crash_on_index_data(kernel, "the kernel", again)
            raise
        note += " (the OpenCL runtime crashed once; the rerun in a fresh worker passed)"
    arrays = [a for a in kernel.args if a.role in ("in", "out", "inout")]
    for spec_arg, want, have in zip(arrays, expected, got):
        if spec_arg.role == "in":
            continue
        bad = first_mismatch(want, have)
        if bad is not None:
            return Mismatch(f"{spec_arg.name}[{bad}] = {have.flat[bad]!r}, naive kernel "
                            f"gives {want.flat[bad]!r}", spec_arg.name, int(bad)), "", ""
    ref_failure = _against_reference(kernel, sizes, args, got)
    if ref_failure:
        return Mismatch(ref_failure), "", ""
    compared = [a.name for a in arrays if a.role != "in"]
    what = "naive kernel" + (" and NumPy reference" if kernel.reference else "")
    return None, f"{_fmt(shown or sizes)}: {', '.join(compared)} match {what}{note}", weak


def _launch_built(output: Program, kernel: KernelSpec, sizes: dict[str, int], args, options):
    """The output's run, where the naive kernel built and ran: an output that does not build
    is the output's failure (KernelCrash: blamed on it), not an error in the input. One that
    runs past the time limit is run once more with PATIENT times the limit (a large unrolled
    output can take PoCL a minute to build, a slow run is no wrong one); past that too, it
    fails (a loop that does not end)."""
    try:
        try:
            return _launch(output, kernel, sizes, args, options)
        except opencl.KernelTimeout:
            return _launch(output, kernel, sizes, args, options, patient=True)
    except NaiveoptError as exc:
        if "OpenCL build failed" not in exc.message:
            raise
        raise opencl.KernelCrash(f"the output does not build: {exc.message}") from exc


def _elements(kernel: KernelSpec) -> dict[str, Element | None]:
    return {a.name: element(a.type) for a in kernel.args}


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _check_device(kernel: KernelSpec, naive: Program, output: Program) -> None:
    """Raise Unverifiable when the kernel needs a floating-point width the device lacks."""
    dtypes = {e.dtype for e in _elements(kernel).values() if e}
    # the code, not its comments ("half intensity" is no use of half)
    sources = _COMMENT.sub(" ", naive.source + "\n" + output.source)
    if "float64" in dtypes or re.search(r"\bdouble\b", sources):
        if not opencl.device_has("cl_khr_fp64"):
            raise Unverifiable("the OpenCL device has no fp64 (cl_khr_fp64): the kernel uses "
                               "double")
    # 'half' is an identifier in CUDA: only a declaration or a cast counts
    if "float16" in dtypes or re.search(r"\bhalf\d*\s+[A-Za-z_]|\(\s*half\d*\s*\)", sources):
        if not opencl.device_has("cl_khr_fp16"):
            raise Unverifiable("the OpenCL device has no fp16 (cl_khr_fp16): the kernel uses "
                               "half")


def _naive_run(kernel: KernelSpec, sizes: dict[str, int], naive: Program, options: list[str],
               seed: int) -> tuple[list, list[np.ndarray], str, str]:
    """Run the naive kernel on data whose check proves something: the default data, else the
    first of RANGES (for the float arrays) on which it writes the most finite outputs.
    Returns the arguments, the naive results, a note on the range used, and why the check
    proves nothing ('' when it does): outputs unchanged, or mostly NaN/inf, on every range.
    Such a set is still compared (a difference is a failure) but is no pass by itself."""
    floats = any(a.role in ("in", "inout") and a.init == "uniform" and
                 (e := element(a.type)) is not None and e.is_float for a in kernel.args) or \
        any(a.role in ("in", "inout") and element(a.type) is None for a in kernel.args)
    tried, best = [], None
    for value_range in (None,) + (RANGES if floats else ()):
        args = make_args(kernel, sizes, np.random.default_rng(seed), value_range)
        try:
            expected = _launch(naive, kernel, sizes, args, options)
        except opencl.KernelCrash as exc:
            _crash_on_index_data(kernel, "the naive kernel", exc)
            raise ValueError(f"the naive kernel itself fails at these sizes: {exc}") from exc
        written, nonfinite = _written(kernel, args, expected)
        share = nonfinite / written if written else 1.0
        label = "[%g, %g]" % (value_range or (-1, 1))
        tried.append((label, written, share))
        if best is None or (written and share < best[0]):
            best = (share if written else 2.0, args, expected, value_range, label)
        if written and nonfinite == 0:
            break
    share, args, expected, value_range, label = best
    weak = ""
    if share > 1.0:
        weak = ("the kernel changes no element of its output arrays on any input range tried "
                f"({', '.join(t[0] for t in tried)}): the check would prove nothing")
    elif share > MAX_NONFINITE:
        shares = ", ".join(f"{t[2]:.0%} on {t[0]}" for t in tried)
        weak = (f"the naive kernel's outputs are mostly NaN/inf ({shares}): the check would "
                "prove nothing")
    note = ""
    if value_range is not None and not weak:
        first = tried[0]
        why = "it changes no output element" if not first[1] else \
            f"{first[2]:.0%} of the naive outputs are NaN/inf"
        note = f" (float inputs in {label}: on {first[0]} {why})"
    if kernel.indices:
        note += " (index arrays " + ", ".join(a.name for a in kernel.args
                                              if a.name in kernel.indices) + " filled in range)"
    return args, expected, note, weak


def _crash_on_index_data(kernel: KernelSpec, who: str, exc: Exception) -> None:
    """Raise Unverifiable for a crash of a kernel that indexes through random data (its
    indices then go anywhere); return for any other kernel, whose crash is its own."""
    if kernel.unresolved_indices:
        raise Unverifiable(_data_dependent(
            kernel, f"{who} fails on random index data ({exc})")) from exc


def _data_dependent(kernel: KernelSpec, what: str) -> str:
    names = ", ".join(kernel.unresolved_indices)
    whys = "; ".join(kernel.unresolved_indices.values())
    return f"data-dependent indices through {names} ({whys}): {what}"


def _written(kernel: KernelSpec, args: list, expected: list[np.ndarray]) -> tuple[int, int]:
    """How many elements of the written arrays the naive kernel changed, and how many of
    those are NaN or inf."""
    initial = [v for v in args if isinstance(v, np.ndarray)]
    arrays = [a for a in kernel.args if a.role in ("in", "out", "inout")]
    written = nonfinite = 0
    for spec_arg, before, after in zip(arrays, initial, expected):
        if spec_arg.role == "in":
            continue
        unit = np.dtype(f"u{before.itemsize}") if before.itemsize in (1, 2, 4, 8) else None
        changed = before.view(unit) != after.view(unit) if unit else \
            ~np.isclose(before, after, equal_nan=True)
        written += int(changed.sum())
        if after.dtype.kind == "f":
            nonfinite += int((~np.isfinite(after[changed])).sum())
    return written, nonfinite


def first_mismatch(want: np.ndarray, have: np.ndarray) -> int | None:
    """The flat index of the first element of ``have`` that differs from ``want``, or None.

    Floats: relative tolerance by element type (RTOLS), with an absolute floor scaled by the
    largest finite expected value: an inf in ``want`` must not widen it to infinity (inf and
    NaN must match exactly). Integers must be equal."""
    if want.dtype.kind in "iub":
        same = want == have
        return None if same.all() else int(np.argmax(~same))
    rtol = RTOLS.get(want.dtype.name, RTOL)
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    close = np.isclose(have, want, rtol=rtol, atol=rtol * scale, equal_nan=True)
    return None if close.all() else int(np.argmax(~close))


def _fmt(sizes: dict[str, int]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in sizes.items()) + ")"


def make_arg(arg: ArgSpec, sizes: dict[str, int], rng: np.random.Generator,
             value_range: tuple[float, float] | None = None):
    """One argument's value at ``sizes``, of the argument's element type (ir/elements.py).

    Arrays get random data that suits the type: floats uniform in [-1, 1] (or metadata's
    init; ``value_range`` replaces the uniform default), signed integers in [-8, 8],
    unsigned ones in [0, 16]; a vector type (float4) has its lanes (4 floats per element);
    unknown types are float32."""
    elem, lanes = vector_element(arg.type)
    elem = elem or element("float")
    dtype = np.dtype(elem.dtype)
    if arg.role in ("size", "scalar"):
        value = evaluate(arg.value or (arg.name if arg.role == "size" else "1"), sizes)
        if lanes > 1:                 # a vector passed by value: every lane the value
            from pyopencl import cltypes

            vec = cltypes.vec_types[(dtype, int(re.search(r"\d+$", arg.type).group()))]
            return np.array(tuple([value] * len(vec.names)), dtype=vec)[()]
        return dtype.type(value)
    dims = [int(evaluate(d, sizes)) for d in arg.shape]
    count = (int(np.prod(dims)) if dims else 0) * lanes   # a float4 array: 4 floats each
    if arg.role == "local":                  # dynamic shared memory: its size, no data
        return opencl.LocalBytes(count * dtype.itemsize)
    if not elem.is_float:
        low, high = (0, 16) if elem.kind == "unsigned" else (-8, 8)
        return rng.integers(low, high + 1, size=count).astype(dtype)
    if arg.init == "positive":
        return rng.uniform(0.5, 1.5, size=count).astype(dtype)
    if arg.init == "lower_triangular":
        n = dims[0]
        m = np.tril(rng.uniform(-1, 1, size=(n, n)), -1) / n
        m += np.diag(rng.uniform(1, 2, size=n))
        return m.astype(dtype).ravel()
    low, high = value_range or (-1, 1)
    return rng.uniform(low, high, size=count).astype(dtype)


def make_args(kernel: KernelSpec, sizes: dict[str, int], rng: np.random.Generator,
              value_range: tuple[float, float] | None = None) -> list:
    """Every argument of ``kernel`` (make_arg), with its index arrays in range
    (verify/indices.py: values in [0, extent), sorted where they bound loops)."""
    args = [make_arg(a, sizes, rng, value_range) for a in kernel.args]
    by_name = {a.name: (a, i) for i, a in enumerate(kernel.args)}
    for name in kernel.unresolved_indices:
        # values in a computed index (wte[ix * C + c]): 0 and 1 keep it in range wherever the
        # array holds two rows, where random ones from [-8, 8] read before it
        if name in by_name and isinstance(args[by_name[name][1]], np.ndarray):
            position = by_name[name][1]
            args[position] = rng.integers(0, 2, size=args[position].size).astype(
                args[position].dtype)
    for name, fill in kernel.indices.items():
        if name not in by_name or not isinstance(args[by_name[name][1]], np.ndarray):
            continue
        extents = [int(np.prod([int(evaluate(d, sizes)) for d in by_name[t][0].shape]))
                   + (1 if inclusive else 0)
                   for t, inclusive in fill.bounds if t in by_name and by_name[t][0].shape]
        extents += [fill.limit] if fill.limit else []
        if not extents:
            continue
        position = by_name[name][1]
        values = rng.integers(0, max(1, min(extents)), size=args[position].size)
        args[position] = (np.sort(values) if fill.sorted else values).astype(
            args[position].dtype)
    return args


def launch_sizes(geo: LaunchGeometry, sizes: dict[str, int]
                 ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The OpenCL (global, local) sizes of a launch at concrete problem sizes: the full 3-D
    NDRange, evaluated from the geometry's trees (launch.evaluate, as the sidecar gives
    them to a host), so a launch that dropped a dimension would be checked as such."""
    return geo.sizes(sizes)


def _launch(program: Program, kernel: KernelSpec, sizes: dict[str, int], args, options,
            patient: bool = False):
    global_size, local_size = launch_sizes(program.geometry[kernel.name], sizes)
    added = program.size_args.get(kernel.name)
    if added:
        args = list(args) + [np.int32(v) for v in size_arguments(added, sizes)]
    return opencl.run(program.source, kernel.name, program.options + options, args,
                      global_size, local_size, program.layouts.get(kernel.name), patient)


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
