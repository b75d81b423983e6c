"""``naiveopt bench``'s CUDA runner (naiveopt/cuda_runner.py) and bench_file, on the CPU.

No GPU is needed: a fake ``cuda.bindings`` (driver + nvrtc) is put into sys.modules. It records
every call in order, keeps device memory as bytes, rejects NVRTC options NVRTC does not
document (as the real one rejects ``-O3``), and models GPU time: each launch takes
``launch_ms`` and an event records the GPU time reached so far, so an elapsed time counts only
the launches between two event records.
"""
from __future__ import annotations

import ctypes
import enum
import os
import sys
import types

import numpy as np
import pytest

from conftest import KERNELS_DIR

from naiveopt import bench, cuda_runner

#: Options NVRTC documents for nvrtcCompileProgram (CUDA 12 NVRTC guide, "Supported Compile
#: Options"), long and short spellings; an option is accepted when it is one of these or
#: starts with one that ends in '='. No optimization level (-O...) is among them.
NVRTC_OPTIONS = (
    "--gpu-architecture=", "-arch=", "--device-c", "-dc", "--device-w", "-dw",
    "--relocatable-device-code=", "-rdc=", "--extensible-whole-program", "-ewp",
    "--device-debug", "-G", "--generate-line-info", "-lineinfo", "--dopt=", "-dopt=",
    "--ptxas-options=", "-Xptxas=", "--maxrregcount=", "-maxrregcount=", "--ftz=", "-ftz=",
    "--prec-sqrt=", "-prec-sqrt=", "--prec-div=", "-prec-div=", "--fmad=", "-fmad=",
    "--use_fast_math", "-use_fast_math", "--extra-device-vectorization",
    "-extra-device-vectorization", "--define-macro=", "-D", "--undefine-macro=", "-U",
    "--include-path=", "-I", "--pre-include=", "-include=", "--std=", "-std=",
    "--builtin-move-forward=", "--builtin-initializer-list=", "--disable-warnings", "-w",
    "--restrict", "-restrict", "--device-as-default-execution-space", "-default-device",
    "--optimization-info=", "--display-error-number", "--no-display-error-number",
    "--diag-error=", "--diag-suppress=", "--diag-warn=", "--brief-diagnostics=",
    "--time=", "--split-compile=", "--fdevice-syntax-only", "--minimal",
)


def nvrtc_accepts(option: str) -> bool:
    return any(option == o or (o.endswith("=") or o in ("-D", "-U", "-I")) and
               option.startswith(o) for o in NVRTC_OPTIONS)


class CUresult(enum.Enum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1


class nvrtcResult(enum.Enum):  # noqa: N801 - cuda-python's name
    NVRTC_SUCCESS = 0
    NVRTC_ERROR_INVALID_OPTION = 5
    NVRTC_ERROR_COMPILATION = 6


class CUdevice_attribute(enum.Enum):  # noqa: N801 - cuda-python's name
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class Event:
    def __init__(self) -> None:
        self.stamp = None


class FakeCuda:
    """The fake driver and NVRTC; ``install`` puts them into sys.modules."""

    OK = CUresult.CUDA_SUCCESS
    NVRTC_OK = nvrtcResult.NVRTC_SUCCESS

    def __init__(self, launch_ms: float = 0.004, param_sizes: list[int] | None = None,
                 compile_error: bool = False) -> None:
        self.launch_ms = launch_ms
        self.param_sizes = param_sizes      # bytes of each kernel parameter, to decode them
        self.compile_error = compile_error
        self.calls: list[tuple[str, tuple]] = []
        self.gpu_ms = 0.0
        self.memory: dict[int, bytearray] = {}
        self.uploads: list[tuple[int, bytes]] = []
        self.params: list[list[bytes]] = []  # decoded parameter values of each launch
        self.holds: list[int] = []           # nanoseconds of each hold launch
        self.options: list[list[bytes]] = []
        self.context_refs = 0
        self.loaded: set[int] = set()
        self.programs: set[int] = set()
        self.next_handle = 0x1000

    # -- bookkeeping -------------------------------------------------------------------
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def _handle(self) -> int:
        self.next_handle += 0x100
        return self.next_handle

    def install(self, monkeypatch) -> None:
        driver = types.ModuleType("cuda.bindings.driver")
        nvrtc = types.ModuleType("cuda.bindings.nvrtc")
        driver.CUresult, driver.CUdevice_attribute = CUresult, CUdevice_attribute
        nvrtc.nvrtcResult = nvrtcResult
        for name in dir(self):
            if name.startswith("cu") or name.startswith("nvrtc"):
                target = driver if name.startswith("cu") else nvrtc
                setattr(target, name, self._recorded(name, getattr(self, name)))
        bindings = types.ModuleType("cuda.bindings")
        bindings.__path__ = []
        bindings.driver, bindings.nvrtc = driver, nvrtc
        cuda = types.ModuleType("cuda")
        cuda.__path__ = []
        cuda.bindings = bindings
        for name, module in (("cuda", cuda), ("cuda.bindings", bindings),
                             ("cuda.bindings.driver", driver), ("cuda.bindings.nvrtc", nvrtc)):
            monkeypatch.setitem(sys.modules, name, module)

    def _recorded(self, name, fn):
        def call(*args):
            self.calls.append((name, args))
            return fn(*args)
        return call

    # -- driver --------------------------------------------------------------------------
    def cuInit(self, flags):
        return (self.OK,)

    def cuDeviceGetCount(self):
        return (self.OK, 1)

    def cuDeviceGet(self, ordinal):
        return (self.OK, 0)

    def cuDeviceGetName(self, length, device):
        return (self.OK, b"Fake GPU" + b"\0" * (length - 8))

    def cuDeviceGetAttribute(self, attribute, device):
        return (self.OK, 9 if attribute.name.endswith("MAJOR") else 0)

    def cuDevicePrimaryCtxRetain(self, device):
        self.context_refs += 1
        return (self.OK, "primary-context")

    def cuDevicePrimaryCtxRelease(self, device):
        self.context_refs -= 1
        return (self.OK,)

    def cuCtxSetCurrent(self, context):
        return (self.OK,)

    def cuModuleLoadData(self, image):
        module = self._handle()
        self.loaded.add(module)
        return (self.OK, module)

    def cuModuleGetFunction(self, module, name):
        return (self.OK, ("function", module, name))

    def cuModuleUnload(self, module):
        self.loaded.remove(module)
        return (self.OK,)

    def cuMemAlloc(self, size):
        ptr = self._handle() << 20
        self.memory[ptr] = bytearray(size)
        return (self.OK, ptr)

    def cuMemcpyHtoD(self, ptr, host, size):
        data = ctypes.string_at(host, size)
        self.memory[int(ptr)][:size] = data
        self.uploads.append((int(ptr), data))
        return (self.OK,)

    def cuMemFree(self, ptr):
        del self.memory[int(ptr)]
        return (self.OK,)

    def cuEventCreate(self, flags):
        return (self.OK, Event())

    def cuEventRecord(self, event, stream):
        event.stamp = self.gpu_ms
        return (self.OK,)

    def cuEventSynchronize(self, event):
        return (self.OK,)

    def cuEventElapsedTime(self, start, end):
        return (self.OK, end.stamp - start.stamp)

    def cuEventDestroy(self, event):
        return (self.OK,)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if function[2] == b"naiveopt_hold":            # spins its one parameter's ns
            pointer = ctypes.c_void_p.from_address(params).value
            self.holds.append(ctypes.c_uint64.from_address(pointer).value)
            self.gpu_ms += self.holds[-1] / 1e6
            return (self.OK,)
        self.gpu_ms += self.launch_ms
        if self.param_sizes is not None:
            assert isinstance(params, int), "kernel parameters are packed once, as a void**"
            table = (ctypes.c_void_p * len(self.param_sizes)).from_address(params)
            self.params.append([ctypes.string_at(table[i], size)
                                for i, size in enumerate(self.param_sizes)])
        return (self.OK,)

    def cuTexObjectDestroy(self, texture):
        return (self.OK,)

    # -- NVRTC ---------------------------------------------------------------------------
    def nvrtcCreateProgram(self, source, name, count, headers, include_names):
        program = self._handle()
        self.programs.add(program)
        return (self.NVRTC_OK, program)

    def nvrtcAddNameExpression(self, program, name):
        return (self.NVRTC_OK,)

    def nvrtcCompileProgram(self, program, count, options):
        assert count == len(options)
        self.options.append(list(options))
        if not all(nvrtc_accepts(o.decode()) for o in options):
            return (nvrtcResult.NVRTC_ERROR_INVALID_OPTION,)
        if self.compile_error:
            return (nvrtcResult.NVRTC_ERROR_COMPILATION,)
        return (self.NVRTC_OK,)

    def nvrtcGetProgramLogSize(self, program):
        return (self.NVRTC_OK, 12)

    def nvrtcGetProgramLog(self, program, log):
        return (self.NVRTC_OK,)

    def nvrtcGetLoweredName(self, program, name):
        return (self.NVRTC_OK, b"_Z" + name)

    def nvrtcGetCUBINSize(self, program):
        return (self.NVRTC_OK, 16)

    def nvrtcGetCUBIN(self, program, cubin):
        return (self.NVRTC_OK,)

    def nvrtcDestroyProgram(self, program):
        self.programs.remove(program)
        return (self.NVRTC_OK,)


KERNEL = "__global__ void k(float *a, float *b, int n, float s) { }\n"


def mm_like_args():
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, 64).astype(np.float32), np.zeros(32, np.float32),
            np.int32(64), np.float32(1.5)]


# -- 1. NVRTC options -------------------------------------------------------------------------

def test_the_fake_nvrtc_rejects_what_the_real_one_rejects():
    assert not nvrtc_accepts("-O3") and not nvrtc_accepts("-O2")
    assert nvrtc_accepts("--gpu-architecture=sm_90") and nvrtc_accepts("-std=c++17")


def test_nvrtc_gets_only_documented_options_and_no_optimization_level(monkeypatch):
    fake = FakeCuda()
    fake.install(monkeypatch)
    with cuda_runner.CudaKernel(KERNEL, "k"):
        pass
    (options,) = fake.options
    assert options and all(nvrtc_accepts(o.decode()) for o in options), options
    assert not any(o.startswith(b"-O") or o.startswith(b"--O") for o in options)
    assert b"--gpu-architecture=sm_90" in options       # the device's own (fake: 9.0)
    assert not fake.programs                             # the NVRTC program is destroyed


# -- 2. timing -----------------------------------------------------------------------------------

def test_launches_per_sample_reach_a_millisecond_and_are_capped():
    assert cuda_runner.launches_per_sample(4e-6) == 250
    assert cuda_runner.launches_per_sample(2e-3) == 1
    assert cuda_runner.launches_per_sample(1e-9) == cuda_runner.MAX_LAUNCHES
    assert cuda_runner.launches_per_sample(0.0) == cuda_runner.MAX_LAUNCHES


def is_hold(call) -> bool:
    name, args = call
    return name == "cuLaunchKernel" and args[0][2] == b"naiveopt_hold"


def test_a_timing_window_holds_only_launches_and_a_sample_is_elapsed_over_n(monkeypatch):
    fake = FakeCuda(launch_ms=0.004, param_sizes=[8, 8, 4, 4])
    fake.install(monkeypatch)
    args = mm_like_args()
    with cuda_runner.CudaKernel(KERNEL, "k") as kernel:
        start = len(fake.calls)
        times = kernel.time(args, (2, 1, 1), (32, 1, 1), warmup=3, runs=5)
        calls = fake.calls[start:]
    names = [n for n, _ in calls]
    first_record = names.index("cuEventRecord")
    # Buffers, copies and the parameter block are made before anything is timed.
    for setup in ("cuMemAlloc", "cuMemcpyHtoD", "cuTexObjectCreate", "cuEventCreate"):
        assert setup not in names[first_record:]
    # Warm-up launches of the kernel come first, outside any timing window.
    assert [n for n, _ in calls[:first_record - 1]].count("cuLaunchKernel") == 3
    # Each window (start record .. end record) holds the kernel's launches only: an estimate
    # of one launch, then 5 samples of n = 1 ms / 4 us = 250 launches each. Just before each
    # start record, a hold long enough for Python to enqueue the window's launches.
    windows, inside = [], None
    for i, (name, _) in enumerate(calls):
        if name == "cuEventRecord":
            if inside is None:
                assert is_hold(calls[i - 1])
                inside = []
            else:
                windows.append(inside)
                inside = None
        elif inside is not None:
            assert not is_hold(calls[i])
            inside.append(name)
    assert inside is None
    assert [len(w) for w in windows] == [1] + [250] * 5
    assert all(set(w) == {"cuLaunchKernel"} for w in windows)
    assert fake.holds == [round(n * cuda_runner.HOLD_PER_LAUNCH_S * 1e9)
                          for n in [1] + [250] * 5]
    assert kernel.launches == 250
    assert times == pytest.approx([4e-6] * 5)                 # elapsed / n, per launch
    # One parameter block, packed once: every launch passes the same void** address, and
    # it points at the device pointers and the scalars' own bytes.
    launches = [a for n, a in calls if n == "cuLaunchKernel" and not is_hold((n, a))]
    assert len({a[9] for a in launches}) == 1 and isinstance(launches[0][9], int)
    assert len(fake.params) == 3 + 1 + 5 * 250
    a_ptr, b_ptr, n, s = fake.params[0]
    assert all(p == fake.params[0] for p in fake.params)
    assert [int.from_bytes(a_ptr, "little"), int.from_bytes(b_ptr, "little")] == [
        ptr for ptr, _ in fake.uploads]
    assert np.frombuffer(n, np.int32)[0] == 64 and np.frombuffer(s, np.float32)[0] == 1.5
    assert not fake.memory                                       # every buffer freed


def test_the_hold_kernel_is_compiled_with_the_benchmarked_one(monkeypatch):
    fake = FakeCuda()
    fake.install(monkeypatch)
    with cuda_runner.CudaKernel(KERNEL, "k"):
        pass
    (source,) = [args[0] for name, args in fake.calls if name == "nvrtcCreateProgram"]
    assert source.startswith(KERNEL.encode()) and b"naiveopt_hold" in source
    assert [args[1] for name, args in fake.calls if name == "cuModuleGetFunction"] == [
        b"_Zk", b"naiveopt_hold"]


# -- 4. release ---------------------------------------------------------------------------------

def test_close_unloads_the_module_and_releases_the_primary_context(monkeypatch):
    fake = FakeCuda()
    fake.install(monkeypatch)
    with cuda_runner.CudaKernel(KERNEL, "k") as kernel:
        assert fake.context_refs == 1 and len(fake.loaded) == 1
    assert "cuModuleUnload" in fake.names() and "cuDevicePrimaryCtxRelease" in fake.names()
    assert fake.context_refs == 0 and not fake.loaded
    assert fake.names().index("cuModuleUnload") < fake.names().index(
        "cuDevicePrimaryCtxRelease")              # the module goes before its context
    kernel.close()                                # a second close does nothing
    assert fake.names().count("cuDevicePrimaryCtxRelease") == 1


def test_a_failed_compile_releases_the_context_and_destroys_the_program(monkeypatch):
    fake = FakeCuda(compile_error=True)
    fake.install(monkeypatch)
    with pytest.raises(bench.NaiveoptError, match="NVRTC compile failed"):
        cuda_runner.CudaKernel(KERNEL, "k")
    assert fake.context_refs == 0 and not fake.programs and not fake.loaded


# -- bench_file through the fake driver: 3. arguments, 4. release, 5. bytes ----------------

def bench_with_fake(monkeypatch, kernel: str) -> tuple[FakeCuda, list]:
    fake = FakeCuda(launch_ms=0.01)
    fake.install(monkeypatch)
    path = os.path.join(KERNELS_DIR, kernel)
    results = bench.bench_file(open(path).read(), path, device="cuda", size_set="test")
    return fake, results


def test_bench_releases_the_module_and_context_of_each_kernel_it_times(monkeypatch):
    fake, (result,) = bench_with_fake(monkeypatch, "mm.cu")
    assert result.sizes == {"H": 64, "W": 48, "K": 32} and result.device == "Fake GPU"
    # Naive and optimized kernel: two modules loaded and unloaded, two context references
    # retained and released, every buffer freed.
    assert fake.names().count("cuModuleLoadData") == 2
    assert fake.names().count("cuModuleUnload") == 2
    assert fake.names().count("cuDevicePrimaryCtxRetain") == 2
    assert fake.names().count("cuDevicePrimaryCtxRelease") == 2
    assert fake.context_refs == 0 and not fake.loaded and not fake.memory
    assert result.naive_s == pytest.approx(1e-5) == result.optimized_s


def test_bench_gives_same_shape_inputs_different_data(monkeypatch):
    fake, _ = bench_with_fake(monkeypatch, "mm.cu")
    # mm's arrays A [H][K], B [K][W], C [H][W] are uploaded in that order, once per variant.
    assert len(fake.uploads) == 6
    naive, optimized = fake.uploads[:3], fake.uploads[3:]
    a, b = (np.frombuffer(data, np.float32) for _, data in naive[:2])
    assert a.size == 64 * 32 and b.size == 32 * 48
    # A generator per argument made B the first K*W values of A (A == B at equal shapes).
    assert not np.array_equal(a[:b.size], b)
    assert [d for _, d in naive] == [d for _, d in optimized]    # both variants, same data


def test_bench_counts_inout_arrays_twice_in_the_bytes_moved(monkeypatch):
    _, (gemm,) = bench_with_fake(monkeypatch, "gemm.cu")
    ni, nj, nk = 64, 48, 32                  # gemm.toml's 'test' set; c [NI][NJ] is inout
    assert gemm.bytes == 4 * (ni * nk + nk * nj + 2 * ni * nj)
    assert gemm.to_json()["naive_gbps"] == pytest.approx(gemm.bytes / gemm.naive_s / 1e9)
    _, (mm,) = bench_with_fake(monkeypatch, "mm.cu")
    assert mm.bytes == 4 * (64 * 32 + 32 * 48 + 64 * 48)      # in, in, out: once each


def test_moved_bytes_counts_by_role():
    spec = types.SimpleNamespace(args=[types.SimpleNamespace(role=r) for r in
                                       ("in", "out", "inout", "size", "scalar")])
    args = [np.zeros(10, np.float32), np.zeros(3, np.float64), np.zeros(5, np.int32),
            np.int32(7), np.float32(1)]
    assert bench.moved_bytes(spec, args) == 40 + 24 + 2 * 20
