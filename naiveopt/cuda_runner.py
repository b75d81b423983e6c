"""Timing CUDA kernels on a real GPU through cuda-python (driver API + NVRTC).

Used by ``naiveopt bench`` when a CUDA device is present (the GPU machines have cuda-python;
pycuda does not build there, see shared/toolchain.md). Kernels are compiled with NVRTC for the
device's own architecture; C++ name mangling is resolved with name expressions. Arrays a
kernel reads through textures (``--memory texture``) are wrapped in texture objects over their
device buffers (cuTexObjectCreate on linear memory), as the launch sidecar tells a host to.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .errors import NaiveoptError


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


class CudaKernel:
    """One compiled kernel in the primary context of device 0.

    It holds a reference to the primary context and a loaded module until :meth:`close`
    (or the end of a ``with`` block): a benchmark builds two kernels per procedure, and
    without releasing them every module and context reference stayed alive until exit."""

    def __init__(self, source: str, name: str) -> None:
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]

        self.context = self.module = self.function = None
        _check(cu.cuInit(0))
        self.device = _check(cu.cuDeviceGet(0))
        major = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device))
        minor = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device))
        self.context = _check(cu.cuDevicePrimaryCtxRetain(self.device))
        try:
            _check(cu.cuCtxSetCurrent(self.context))
            cubin, lowered = _compile(source, name, nvrtc_options(major, minor))
            self.module = _check(cu.cuModuleLoadData(cubin))
            self.function = _check(cu.cuModuleGetFunction(self.module, lowered))
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
        self.module = self.function = self.context = None
        try:
            if module is not None:
                _check(cu.cuModuleUnload(module))
        finally:
            if context is not None:
                _check(cu.cuDevicePrimaryCtxRelease(self.device))

    def time(self, args: list, grid: tuple[int, ...], block: tuple[int, ...], warmup: int,
             runs: int, layout: list[tuple[int, int]] | None = None) -> list[float]:
        """Seconds per launch (CUDA events), after ``warmup`` launches. ``layout`` binds
        arguments to parameters as in verify/opencl.py: (argument, texel width), width 0 for
        the argument itself, 1/2/4 for a texture object over that array's device buffer."""
        from cuda.bindings import driver as cu  # type: ignore[import-not-found]

        pointers, textures = {}, []
        for position, a in enumerate(args):
            if isinstance(a, np.ndarray):
                ptr = _check(cu.cuMemAlloc(a.nbytes))
                _check(cu.cuMemcpyHtoD(ptr, a.ctypes.data, a.nbytes))
                pointers[position] = ptr
        values, types = [], []
        for position, width in layout or [(i, 0) for i in range(len(args))]:
            a = args[position]
            if width:
                textures.append(_texture_object(pointers[position], a, width))
                values.append(int(textures[-1]))
                types.append(ctypes.c_ulonglong)
            elif isinstance(a, np.ndarray):
                values.append(pointers[position])
                types.append(None)
            else:
                values.append(a.item())
                types.append(ctypes.c_int if a.dtype == np.int32 else ctypes.c_float)
        start, end = _check(cu.cuEventCreate(0)), _check(cu.cuEventCreate(0))
        times = []
        try:
            for i in range(warmup + runs):
                _check(cu.cuEventRecord(start, 0))
                _check(cu.cuLaunchKernel(self.function, grid[0], grid[1], grid[2], block[0],
                                         block[1], block[2], 0, 0, (tuple(values), tuple(types)), 0))
                _check(cu.cuEventRecord(end, 0))
                _check(cu.cuEventSynchronize(end))
                if i >= warmup:
                    times.append(_check(cu.cuEventElapsedTime(start, end)) * 1e-3)
        finally:
            for tex in textures:
                cu.cuTexObjectDestroy(tex)
            for ptr in pointers.values():
                cu.cuMemFree(ptr)
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(end)
        return times


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
