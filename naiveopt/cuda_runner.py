"""Timing CUDA kernels on a real GPU through cuda-python (driver API + NVRTC).

Used by ``naiveopt bench`` when a CUDA device is present (the GPU machines have cuda-python;
pycuda does not build there, see shared/toolchain.md). Kernels are compiled with NVRTC for the
device's own architecture; C++ name mangling is resolved with name expressions. Arrays a
kernel reads through textures (``--memory texture``) are wrapped in texture objects over their
device buffers (cuTexObjectCreate on linear memory), as the launch sidecar tells a host to.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import NaiveoptError
from .verify.opencl import LocalBytes, packed


def available() -> bool:
    """Whether cuda-python is importable and sees at least one device."""
    try:
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]
    except ImportError:
        return False
    try:
        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return False
        err, count = cu.cuDeviceGetCount()
        return err == cu.CUresult.CUDA_SUCCESS and count > 0
    except Exception:  # noqa: BLE001 - no driver on this machine
        return False


def _check(result):
    from cuda.bindings import driver as cu, nvrtc  # type: ignore[import-not-found]

    err, *rest = result if isinstance(result, tuple) else (result,)
    if isinstance(err, cu.CUresult) and err != cu.CUresult.CUDA_SUCCESS:
        raise NaiveoptError(f"CUDA driver error {err.name}")
    if isinstance(err, nvrtc.nvrtcResult) and err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise NaiveoptError(f"NVRTC error {err.name}")
    return rest[0] if len(rest) == 1 else rest


def device_name() -> str:
    from cuda.bindings import driver as cu  # type: ignore[import-not-found]

    _check(cu.cuInit(0))
    device = _check(cu.cuDeviceGet(0))
    name = _check(cu.cuDeviceGetName(256, device))
    return name.split(b"\0")[0].decode()


#: Options given to NVRTC: only ones NVRTC documents (nvrtcCompileProgram rejects nvcc's
#: ``-O3`` as an unrecognized option, which made every CUDA benchmark fail). NVRTC optimizes
#: device code fully by default (``-dopt`` is on unless ``-G`` is given), so no level is passed;
#: the architecture is the device's own, so the CUBIN loads on it.
def nvrtc_options(major: int, minor: int) -> list[bytes]:
    return [f"--gpu-architecture=sm_{major}{minor}".encode()]


#: Each timed sample launches the kernel back to back until it spans at least this much GPU
#: time: CUDA events resolve about 0.5 us, and a sample of one short launch would be mostly
#: event and scheduling noise.
SAMPLE_TARGET_S = 1e-3
#: At most this many launches per sample (a kernel never runs much below 1 us back to back,
#: so 1000 launches reach SAMPLE_TARGET_S for any kernel).
MAX_LAUNCHES = 1000

#: Compiled with every kernel: one thread spinning ``ns`` nanoseconds on the GPU's global
#: timer. Launched just before a sample's start event, it keeps the GPU busy while Python
#: enqueues the sample's launches, so they run from a full queue. Without it a kernel shorter
#: than one cuLaunchKernel call from Python (about 6 us on an H100 host) starves the GPU and
#: is timed at the host's launch rate: measured there, a 1-block kernel read 6.0 us per
#: launch back to back and 2.1 us after a hold; a 4096-block one 5.6 us and 4.5 us.
HOLD_KERNEL = r"""
extern "C" __global__ void naiveopt_hold(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""
#: GPU time the hold gives Python for each launch it enqueues (about 3x what one took on an
#: H100 host); a slower host only shortens the head start, it cannot block the GPU.
HOLD_PER_LAUNCH_S = 20e-6


def launches_per_sample(estimate_s: float) -> int:
    """Launches per timed sample for a kernel whose single launch took ``estimate_s``: enough
    for SAMPLE_TARGET_S of GPU work, at least 1, at most MAX_LAUNCHES."""
    if estimate_s <= 0:
        return MAX_LAUNCHES
    # rounded first: 1 ms / 4 us is 250.00000000000003 in floating point, not 251 launches
    return max(1, min(MAX_LAUNCHES, math.ceil(round(SAMPLE_TARGET_S / estimate_s, 6))))


class CudaKernel:
    """One compiled kernel in the primary context of device 0.

    It holds a reference to the primary context and a loaded module until :meth:`close`
    (or the end of a ``with`` block): a benchmark builds two kernels per procedure, and
    without releasing them every module and context reference stayed alive until exit."""

    def __init__(self, source: str, name: str) -> None:
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]

        self.context = self.module = self.function = self.hold = None
        self.launches = 0    # launches per timed sample of the last time() call
        _check(cu.cuInit(0))
        self.device = _check(cu.cuDeviceGet(0))
        major = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device))
        minor = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device))
        self.context = _check(cu.cuDevicePrimaryCtxRetain(self.device))
        try:
            _check(cu.cuCtxSetCurrent(self.context))
            cubin, lowered = _compile(source + "\n" + HOLD_KERNEL, name,
                                      nvrtc_options(major, minor))
            self.module = _check(cu.cuModuleLoadData(cubin))
            self.function = _check(cu.cuModuleGetFunction(self.module, lowered))
            self.hold = _check(cu.cuModuleGetFunction(self.module, b"naiveopt_hold"))
        except BaseException:
            try:
                self.close()
            except NaiveoptError:
                pass            # the error that got us here is the one to report
            raise

    def __enter__(self) -> "CudaKernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Unload the module and release the primary context (once; later calls do nothing).
        The context is destroyed when its last reference goes, freeing what it held."""
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]

        module, context = self.module, self.context
        self.module = self.function = self.hold = self.context = None
        try:
            if module is not None:
                _check(cu.cuModuleUnload(module))
        finally:
            if context is not None:
                _check(cu.cuDevicePrimaryCtxRelease(self.device))

    def time(self, args: list, grid: tuple[int, ...], block: tuple[int, ...], warmup: int,
             runs: int, layout: list[tuple[int, int]] | None = None) -> list[float]:
        """Seconds per launch, ``runs`` samples (CUDA events), after ``warmup`` launches.

        ``layout`` binds arguments to parameters as in verify/opencl.py: (argument, texel
        width), width 0 for the argument itself, 1/2/4 for a texture object over that array's
        device buffer.

        Only GPU time is measured: the buffers, texture objects and the kernel's parameter
        block are made once, before any timing, and between a sample's start and end events
        there are only the kernel's launches. Were the start event recorded before Python
        packs the arguments, each sample would include the host's launch latency (5-20 us,
        10-50% of a short kernel). A sample launches the kernel ``n`` times back to back (n
        from a first single-launch estimate, launches_per_sample) and counts elapsed / n;
        a hold (HOLD_KERNEL) launched before its start event lets Python fill the queue."""
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]

        if self.function is None:
            raise NaiveoptError("the CUDA kernel was closed")
        pointers, textures, events = {}, [], []
        try:
            _check(cu.cuCtxSetCurrent(self.context))
            for position, a in enumerate(args):
                if isinstance(a, np.ndarray):
                    pointers[position] = _check(cu.cuMemAlloc(a.nbytes))
                    _check(cu.cuMemcpyHtoD(pointers[position], a.ctypes.data, a.nbytes))
            values = []
            # dynamic shared memory (a __local argument on OpenCL): the launch's bytes, not a
            # parameter of the CUDA kernel (ir/dynamic_shared.py)
            shared = sum(a.nbytes for a in args if isinstance(a, LocalBytes))
            for position, width in layout or [(i, 0) for i in range(len(args))]:
                if isinstance(position, tuple):     # a struct of scalars (ir/structs.py)
                    values.append(packed([args[i] for i in position]))
                    continue
                a = args[position]
                if isinstance(a, LocalBytes):
                    continue
                if width:
                    textures.append(_texture_object(pointers[position], a, width))
                    values.append(np.array(int(textures[-1]), dtype=np.uint64))
                elif isinstance(a, np.ndarray):
                    values.append(np.array(int(pointers[position]), dtype=np.uint64))
                else:
                    values.append(np.array(a))   # the scalar's own type and width
            # The void*[] that cuLaunchKernel reads: one pointer to each value, packed once.
            table = np.array([v.ctypes.data for v in values], dtype=np.uintp)
            params = int(table.ctypes.data) if values else None
            hold_ns = np.array(0, dtype=np.uint64)
            hold_table = np.array([hold_ns.ctypes.data], dtype=np.uintp)
            for _ in range(2):
                events.append(_check(cu.cuEventCreate(0)))
            start, end = events

            def launch() -> None:
                _check(cu.cuLaunchKernel(self.function, grid[0], grid[1], grid[2], block[0],
                                         block[1], block[2], shared, 0, params, 0))

            def sample(n: int) -> float:
                hold_ns[()] = round(n * HOLD_PER_LAUNCH_S * 1e9)
                _check(cu.cuLaunchKernel(self.hold, 1, 1, 1, 1, 1, 1, 0, 0,
                                         int(hold_table.ctypes.data), 0))
                _check(cu.cuEventRecord(start, 0))
                for _ in range(n):
                    launch()
                _check(cu.cuEventRecord(end, 0))
                _check(cu.cuEventSynchronize(end))
                return _check(cu.cuEventElapsedTime(start, end)) * 1e-3

            for _ in range(warmup):
                launch()
            self.launches = n = launches_per_sample(sample(1))
            return [sample(n) / n for _ in range(runs)]
        finally:
            for tex in textures:
                cu.cuTexObjectDestroy(tex)
            for ptr in pointers.values():
                cu.cuMemFree(ptr)
            for event in events:
                cu.cuEventDestroy(event)


def _compile(source: str, name: str, options: list[bytes]) -> tuple[bytes, bytes]:
    """NVRTC-compile ``source``: the CUBIN and the lowered (mangled) name of ``name``."""
    from cuda.bindings import nvrtc  # type: ignore[import-not-found]

    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], []))
    try:
        _check(nvrtc.nvrtcAddNameExpression(prog, name.encode()))
        err = nvrtc.nvrtcCompileProgram(prog, len(options), options)[0]
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = _check(nvrtc.nvrtcGetProgramLogSize(prog))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise NaiveoptError("NVRTC compile failed:\n" + log.decode(errors="replace"))
        lowered = _check(nvrtc.nvrtcGetLoweredName(prog, name.encode()))
        size = _check(nvrtc.nvrtcGetCUBINSize(prog))
        cubin = b" " * size
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin))
        return cubin, lowered
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _texture_object(pointer, array: np.ndarray, width: int):
    """A texture object over ``array``'s device buffer with ``width``-element texels:
    cudaResourceTypeLinear, point sampling, elements read as they are (integers as integers),
    floor(n / width) texels, exactly what the sidecar tells a host to create."""
    from cuda.bindings import driver as cu  # type: ignore[import-not-found]

    integer = array.dtype == np.int32
    res = cu.CUDA_RESOURCE_DESC()
    res.resType = cu.CUresourcetype.CU_RESOURCE_TYPE_LINEAR
    res.res.linear.devPtr = pointer
    res.res.linear.format = (cu.CUarray_format.CU_AD_FORMAT_SIGNED_INT32 if integer
                             else cu.CUarray_format.CU_AD_FORMAT_FLOAT)
    res.res.linear.numChannels = width
    res.res.linear.sizeInBytes = array.size // width * width * array.itemsize
    desc = cu.CUDA_TEXTURE_DESC()
    desc.filterMode = cu.CUfilter_mode.CU_TR_FILTER_MODE_POINT
    desc.flags = cu.CU_TRSF_READ_AS_INTEGER if integer else 0
    return _check(cu.cuTexObjectCreate(res, desc, None))
