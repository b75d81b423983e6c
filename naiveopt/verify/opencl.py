"""Running kernels on an OpenCL device through pyopencl (PoCL on the CPU by default).

Kernels run in a separate worker process: a kernel that writes out of bounds corrupts the
memory of the process it runs in (PoCL runs on the host), and one that loops forever must be
stopped. The worker is spawned (naiveopt.workers: without re-importing the caller's main
module, so that a script without a ``__main__`` guard works) once and reused; a crash or a
time-out fails that check and the worker is restarted. Every array is also surrounded by canary zones that must come back
unchanged, which catches out-of-bounds writes that do not crash.

Kernels that read arrays through images (``--memory texture``) take a layout: for each kernel
parameter, the argument it comes from and the texel width of the 1-D buffer image to wrap that
array in (0: the argument itself). Images are made over their own read-only buffer (a
``read_only`` image cannot be written, so it needs no canaries).

``NAIVEOPT_OPENCL_PLATFORM`` selects a platform by a substring of its name; otherwise PoCL is
preferred, since it is what the project installs and what CI has.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import workers
from ..errors import NaiveoptError

#: Seconds one kernel run may take before it is killed.
TIME_LIMIT = float(os.environ.get("NAIVEOPT_VERIFY_TIMEOUT", "60"))
CANARY = 256          # elements of canary on each side of every array
_CANARY_BITS = np.uint32(0x7FC0DEAD)   # a NaN payload no kernel computes by accident
#: The canary as bytes, repeated over the zones whatever the element size (char arrays too).
_CANARY_BYTES = np.array([_CANARY_BITS], dtype=np.uint32).view(np.uint8)


@dataclass(frozen=True)
class LocalBytes:
    """A ``__local`` pointer argument (dynamic shared memory, ir/dynamic_shared.py): no data,
    only its size, which the worker passes as ``cl.LocalMemory``."""

    nbytes: int


class KernelCrash(Exception):
    """The kernel crashed the OpenCL runtime, timed out, or wrote out of bounds."""


class KernelTimeout(KernelCrash):
    """The job (the program's build, then the kernel's run) took longer than its limit."""


#: How many times TIME_LIMIT an output that ran past it gets once more (verify/check.py):
#: PoCL's build of a large unrolled output alone can take a minute, and its cache spares the
#: second try the build.
PATIENT = 5


# ------------------------------------------------------------------ worker process side
@cache
def _context():
    import pyopencl as cl

    platforms = cl.get_platforms()
    wanted = os.environ.get("NAIVEOPT_OPENCL_PLATFORM", "Portable Computing Language")
    matching = [p for p in platforms if wanted.lower() in f"{p.name} {p.version}".lower()]
    platform = max(matching or platforms, key=lambda p: p.version)
    ctx = cl.Context(platform.get_devices())
    return ctx, cl.CommandQueue(ctx)


def _kernel(program, name: str):
    """The kernel ``name`` of a built program. PoCL builds a kernel whose name is also an
    OpenCL built-in's (``dot``, ``cross``, ``length``) as ``_cl_`` + the name."""
    import pyopencl as cl

    names = program.get_info(cl.program_info.KERNEL_NAMES).split(";")
    if name not in names and f"_cl_{name}" in names:
        name = f"_cl_{name}"
    return cl.Kernel(program, name)


@cache
def _program(source: str, options: tuple[str, ...]):
    import pyopencl as cl

    ctx, _ = _context()
    return cl.Program(ctx, source).build(options=list(options))


#: Image channel type of each array element type, and channel order of each texel width.
_CHANNEL_TYPES = {np.dtype(np.float32): "FLOAT", np.dtype(np.int32): "SIGNED_INT32"}
_CHANNEL_ORDERS = {1: "R", 4: "RGBA"}


def _image(ctx, array: np.ndarray, width: int):
    """A read-only 1-D buffer image of ``array`` with ``width``-element texels (as the host
    would make it over its buffer: floor(n / width) texels, at least one)."""
    import pyopencl as cl

    texels = max(1, array.size // width)
    host = np.zeros(texels * width, dtype=array.dtype)
    host[:min(array.size, host.size)] = array[:host.size]
    mf = cl.mem_flags
    buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    fmt = cl.ImageFormat(getattr(cl.channel_order, _CHANNEL_ORDERS[width]),
                         getattr(cl.channel_type, _CHANNEL_TYPES[array.dtype]))
    image = cl.create_image(ctx, mf.READ_ONLY, fmt, shape=(texels,), buffer=buf)
    image._buffer = buf         # the buffer must live as long as the image
    return image


def packed(values: list) -> np.ndarray:
    """The struct argument made of its members' values (numpy scalars, in declaration
    order; ir/structs.py), laid out as C lays out a struct of them (each member at its alignment, the
    whole padded to the largest): a 0-d array whose bytes a runner passes."""
    dtype = np.dtype([(f"m{i}", np.asarray(v).dtype) for i, v in enumerate(values)],
                     align=True)
    out = np.zeros((), dtype=dtype)
    for i, v in enumerate(values):
        out[f"m{i}"] = v
    return out



def _bind(ctx, args: list, memory: list, layout: list[tuple[int, int]] | None) -> list:
    """The kernel's parameters: ``memory`` holds each argument as passed (buffer or scalar);
    the layout picks and wraps them (see the module docstring)."""
    if layout is None:
        return list(memory)
    return [packed([memory[i] for i in position]) if isinstance(position, tuple)
            else _image(ctx, args[position], width) if width else memory[position]
            for position, width in layout]


def _time(job: tuple) -> tuple[str, object]:
    """Time a kernel (in the worker): warm-up runs, then ``runs`` timed by profiling events.
    Returns ('ok', [seconds...])."""
    import pyopencl as cl

    _, source, kernel, options, args, global_size, local_size, warmup, runs, layout = job
    try:
        ctx, _ = _context()
        program = _program(source, tuple(options))
    except cl.Error as exc:
        return "build", str(exc)[-3000:]
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
            if isinstance(a, np.ndarray) else _local(a) for a in args]
    k = _kernel(program, kernel)
    params = _bind(ctx, args, bufs, layout)    # kept alive while the kernel runs
    k.set_args(*params)
    times = []
    for i in range(warmup + runs):
        event = cl.enqueue_nd_range_kernel(queue, k, global_size, local_size)
        event.wait()
        if i >= warmup:
            times.append((event.profile.end - event.profile.start) * 1e-9)
    return "ok", times


def _execute(job: tuple) -> tuple[str, object]:
    """Run one job (in the worker). Returns ('ok', value), ('build', log), ('error', message)
    for an out-of-bounds write, or ('exception', message) when the runtime refused the job
    (a bad argument, a missing feature): that is not the kernel's fault, and must neither kill
    the worker (then it would read as a crash, 'probably an out-of-bounds access') nor pass."""
    try:
        if job[0] == "time":
            return _time(job)
        if job[0] == "device":
            return "ok", _context()[0].devices[0].name
        if job[0] == "extensions":
            return "ok", _context()[0].devices[0].extensions.split()
        return _run(job)
    except Exception as exc:  # noqa: BLE001 - reported to the caller, who decides
        return "exception", f"{type(exc).__name__}: {str(exc).strip()[-2000:]}"


def _run(job: tuple) -> tuple[str, object]:
    import pyopencl as cl

    source, kernel, options, args, global_size, local_size, layout = job
    try:
        ctx, queue = _context()
        program = _program(source, tuple(options))
    except cl.Error as exc:
        return "build", str(exc)[-3000:]
    mf = cl.mem_flags
    buffers, padded = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            host = np.empty(a.size + 2 * CANARY, dtype=a.dtype)
            raw = host.view(np.uint8)
            raw[:] = np.resize(_CANARY_BYTES, raw.size)
            host[CANARY:CANARY + a.size] = a
            padded.append(host)
            buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
            buffers.append(buf.get_sub_region(CANARY * a.itemsize, max(a.nbytes, a.itemsize))
                           if CANARY else buf)
            buffers[-1]._parent = buf
        else:
            buffers.append(_local(a))
    _kernel(program, kernel)(queue, global_size, local_size,
                               *_bind(ctx, args, buffers, layout))
    results = []
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    for position, buf, host in zip(positions, [b for b, a in zip(buffers, args)
                                               if isinstance(a, np.ndarray)], padded):
        cl.enqueue_copy(queue, host, buf._parent)
        raw, edge = host.view(np.uint8), CANARY * host.itemsize
        fill = np.resize(_CANARY_BYTES, raw.size)
        if not (np.array_equal(raw[:edge], fill[:edge]) and
                np.array_equal(raw[-edge:], fill[-edge:])):
            return "error", f"out-of-bounds write to argument {position} detected (canary " \
                "overwritten)"
        results.append(host[CANARY:-CANARY].copy())
    queue.finish()
    return "ok", results


def _local(arg):
    """An argument as pyopencl takes it: a LocalBytes as local memory of its size."""
    if isinstance(arg, LocalBytes):
        import pyopencl as cl

        return cl.LocalMemory(max(1, arg.nbytes))
    return arg


def _serve(conn) -> None:
    """Run jobs until told to stop, or until the process that started this worker is gone
    (killed, say, while a batch worker was verifying): then there is nobody to answer, and
    exiting quietly beats a BrokenPipeError traceback on the batch's stderr."""
    try:
        while True:
            job = conn.recv()
            if job is None:
                return
            conn.send(_execute(job))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return


# ------------------------------------------------------------------- caller side
class _Worker:
    def __init__(self) -> None:
        self.proc = None
        self.conn = None

    def start(self) -> None:
        ctx = workers.context()     # spawned without re-running the caller's script
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        self.conn = parent

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
        self.proc = self.conn = None

    def run(self, job: tuple, limit: float) -> tuple[str, object]:
        if self.proc is None or not self.proc.is_alive():
            self.start()
        try:
            self.conn.send(job)
            if not self.conn.poll(limit):
                self.stop()
                raise KernelTimeout(f"the kernel ran longer than {limit:.0f} s")
            return self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            if self.proc is not None:
                self.proc.join(1)
            code = self.proc.exitcode if self.proc else None
            self.stop()
            raise KernelCrash(f"the kernel crashed the OpenCL runtime (exit {code}): "
                              "probably an out-of-bounds access") from exc


_WORKER = _Worker()


class RuntimeRefused(Exception):
    """The OpenCL runtime refused a job without the kernel running wrong (a bad argument,
    an unsupported feature): verification could not run, which is neither a pass nor a
    failure of the kernel."""


def _result(status: str, value, what: str):
    if status == "build":
        # (imported here: ``python -m naiveopt.verify.pocl_cpu`` must not find it imported
        # by its package first)
        from .pocl_cpu import UNKNOWN_CPU

        hint = ""
        if UNKNOWN_CPU in str(value):
            hint = ("\n(PoCL's LLVM does not know this CPU: `python -m naiveopt.verify.pocl_cpu`, "
                    "which setup.sh runs, lets it build)")
        raise NaiveoptError(f"OpenCL build failed {what}:\n" + str(value) + hint)
    if status == "error":
        raise KernelCrash(str(value))
    if status == "exception":
        raise RuntimeRefused(str(value))
    return value


@cache
def device_extensions() -> frozenset[str]:
    """The OpenCL extensions of the device kernels run on (asked of the worker once)."""
    return frozenset(_result(*_WORKER.run(("extensions",), TIME_LIMIT), "asking the device"))


def device_has(extension: str) -> bool:
    """Whether the verification device supports ``extension`` (cl_khr_fp64, cl_khr_fp16)."""
    return extension in device_extensions()


def device_name() -> str:
    """The name of the OpenCL device kernels run on (asked of the worker)."""
    status, value = _WORKER.run(("device",), TIME_LIMIT)
    return str(value)


def time_kernel(source: str, kernel: str, options: list[str], args: list,
                global_size: tuple[int, int], local_size: tuple[int, int], warmup: int = 3,
                runs: int = 20, layout: list[tuple[int, int]] | None = None) -> list[float]:
    """Seconds of each of ``runs`` timed launches (after ``warmup``), in the worker."""
    return _result(*_WORKER.run(("time", source, kernel, list(options), args, global_size,
                                 local_size, warmup, runs, layout), TIME_LIMIT), "while timing")


#: Build options of checking runs (not of timing runs). PoCL 3.0 (LLVM 14) miscompiles some
#: kernels whose barrier loop is followed by guarded nested loops: at -O2 they crash or compute
#: wrong values (tests/lit/fuzz/pocl_barrier_loop_then_nested_loops.cl); unoptimized
#: builds run them as written.
CHECK_OPTIONS = ["-cl-opt-disable"]


def run(source: str, kernel: str, options: list[str], args: list[np.ndarray | np.generic],
        global_size: tuple[int, int], local_size: tuple[int, int],
        layout: list[tuple[int, int]] | None = None, patient: bool = False
        ) -> list[np.ndarray]:
    """Run ``kernel`` once in the worker; return the array arguments after the run.
    ``layout`` binds arguments to parameters when some are images (module docstring);
    ``patient`` allows PATIENT times TIME_LIMIT."""
    limit = TIME_LIMIT * (PATIENT if patient else 1)
    return _result(*_WORKER.run((source, kernel, CHECK_OPTIONS + list(options), args,
                                 global_size, local_size, layout), limit),
                   "during verification")
