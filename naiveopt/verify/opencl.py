"""Running kernels on an OpenCL device through pyopencl (PoCL on the CPU by default).

``NAIVEOPT_OPENCL_PLATFORM`` selects a platform by a substring of its name; otherwise PoCL is
preferred, since it is what the project installs and what CI has.
"""
from __future__ import annotations

import os
from functools import cache

import numpy as np

from ..errors import NaiveoptError


@cache
def _context():
    import pyopencl as cl

    try:
        platforms = cl.get_platforms()
    except cl.Error as exc:
        raise NaiveoptError(f"no OpenCL platform for verification ({exc}); install "
                            "pocl-binary-distribution or pass --no-verify") from exc
    wanted = os.environ.get("NAIVEOPT_OPENCL_PLATFORM", "Portable Computing Language")
    platform = next((p for p in platforms if wanted.lower() in p.name.lower()), platforms[0])
    ctx = cl.Context(platform.get_devices())
    return ctx, cl.CommandQueue(ctx)


def device_name() -> str:
    ctx, _ = _context()
    return ctx.devices[0].name


@cache
def _program(source: str, options: tuple[str, ...]):
    import pyopencl as cl

    ctx, _ = _context()
    try:
        return cl.Program(ctx, source).build(options=list(options))
    except cl.RuntimeError as exc:
        log = str(exc)
        raise NaiveoptError("OpenCL build failed during verification:\n" + log[-2000:]) from exc


def run(source: str, kernel: str, options: list[str], args: list[np.ndarray | np.generic],
        global_size: tuple[int, int], local_size: tuple[int, int]) -> list[np.ndarray]:
    """Run ``kernel`` once; return copies of the array arguments after the run."""
    import pyopencl as cl

    ctx, queue = _context()
    program = _program(source, tuple(options))
    buffers, host = [], []
    mf = cl.mem_flags
    for a in args:
        if isinstance(a, np.ndarray):
            copy = np.ascontiguousarray(a).copy()
            host.append(copy)
            buffers.append(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=copy))
        else:
            buffers.append(a)
    cl.Kernel(program, kernel)(queue, global_size, local_size, *buffers)
    for buf, out in zip([b for b, a in zip(buffers, args) if isinstance(a, np.ndarray)], host):
        cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return host
