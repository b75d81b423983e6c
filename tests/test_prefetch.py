"""Register prefetching of staged tiles and vectorized tile loads (the tiling engine's
``prefetch`` and ``load_width``): verified on and off on every tiled library kernel for both
targets and dialects, the shape of the prefetched loop, the occupancy rule, nvcc compiles."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
from dataclasses import replace

import pytest
import sympy

import naiveopt
from naiveopt.passes.optimize import selection, tiling
from naiveopt.targets import get_target, occupancy
from conftest import KERNELS_DIR, compile_cuda, nvcc, unsplit


def _resource_query() -> bool:
    """Whether the NVCC pass can measure registers here (nvcc, else NVRTC)."""
    if shutil.which("nvcc"):
        return True
    try:
        return importlib.util.find_spec("cuda.bindings.nvrtc") is not None
    except ModuleNotFoundError:
        return False


#: prefetching is kept only after its registers are measured; without nvcc or NVRTC it declines
QUERY = pytest.mark.skipif(not _resource_query(),
                           reason="neither nvcc nor NVRTC: prefetching cannot be measured")

#: library kernels whose main loop is staged through shared memory (one file per kernel set)
TILED = ["atax.cu", "bicg.cu", "gemm.cu", "gesummv.cu", "mm.cu", "mm_macro.cu", "mv.cu",
         "mv_macro.cu", "mvt.cu", "reduction.cu", "syrk.cu"]

# C = A^T B: A(k, idy) is a col_y staging, B(k, idx) col_x; sizes are not tile multiples
ATB = r"""
#pragma naiveopt sizes(H=67, W=45, K=37) threads(W, H)
#pragma naiveopt array(A, K, H) array(B, K, W) array(C, H, W)
__global__ void atb(float *A, float *B, float *C, int H, int W, int K) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < H && j < W) {
        float s = 0.0f;
        for (int k = 0; k < K; k++) {
            s += A[k * H + i] * B[k * W + j];
        }
        C[i * W + j] = s;
    }
}
"""

# four row_x tiles: each thread would hold 4 x 16 prefetched values
DOT4 = r"""
#pragma naiveopt sizes(H=70, W=33) threads(H)
#pragma naiveopt array(A, H, W) array(B, H, W) array(C, H, W) array(D, H, W) array(out, H)
__global__ void dot4(float *A, float *B, float *C, float *D, float *out, int H, int W) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float s = 0.0f;
        for (int j = 0; j < W; j++) {
            s += A[i * W + j] * B[i * W + j] + C[i * W + j] * D[i * W + j];
        }
        out[i] = s;
    }
}
"""


def registers_only(options=None) -> dict:
    """``options`` with async-pipeline off: on sm_80 and later its copies replace register
    prefetch where the model says so (tests/test_async_pipeline.py); here prefetch itself is
    tested."""
    options = dict(options or {})
    options["disable"] = list(options.get("disable", [])) + ["async-pipeline"]
    return options


def run(name: str, **kw):
    path = os.path.join(KERNELS_DIR, name)
    with open(path) as fh:
        return naiveopt.optimize(fh.read(), filename=path,
                                 options=unsplit(registers_only(kw.pop("options", None))),
                                 **kw)


def prefetch_remarks(result) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in result.remarks:
        if r.pass_name == "prefetch":
            out.setdefault(r.kernel, []).append(r)
    return out


def assert_verified_at_both_sizes(result) -> None:
    for k in result.kernels:
        assert k.verification.status == "passed", (k.name, k.verification.detail)
        assert [c.split()[0] for c in k.verification.checks] == ["test", "odd"], \
            k.verification.checks


@pytest.mark.parametrize("arch,target", [("sm_90", "cuda"), ("gfx90a", "opencl")])
@pytest.mark.parametrize("name", TILED)
def test_prefetch_on_and_off_verify_on_every_tiled_kernel(name, target, arch):
    # (the other pairings run in tests/test_pass_matrix.py, which also switches prefetch off)
    on = run(name, target=target, arch=arch)
    off = run(name, target=target, arch=arch, options={"disable": ["prefetch"]})
    assert_verified_at_both_sizes(on)
    assert_verified_at_both_sizes(off)
    remarks_on, remarks_off = prefetch_remarks(on), prefetch_remarks(off)
    staged = 0
    for k in on.kernels:
        (r_on,) = remarks_on[k.name]                         # one remark per kernel, either way
        (r_off,) = remarks_off[k.name]
        assert (r_off.kind, r_off.message) == ("missed", "disabled (--disable-pass)")
        assert "prefetch" not in next(x for x in off.kernels if x.name == k.name).passes
        if r_on.message == "no staged loop":
            continue
        staged += 1
        assert re.match(r"(applied: )?prefetching \d+ registers per thread|"
                        r"prefetching would need \d+ registers", r_on.message), r_on
        assert ("prefetch" in k.passes) == (r_on.kind == "applied")
    assert staged, "a tiled kernel set whose kernels have no staged loop"
    applied = any("prefetch" in k.passes for k in on.kernels)
    assert bool(re.search(r"\bp_\w+\[\d+\] = ", on.code)) == applied
    assert not re.search(r"\bp_\w+\[\d+\] = ", off.code)


@QUERY
def test_mv_loads_the_next_tile_into_registers_before_the_compute_loop():
    result = run("mv.cu", defines={"H": "300", "W": "77"}, options={"disable": ["vectorize"]})
    k = result.kernels[0]
    assert "prefetch" in k.passes, result.remarks
    assert k.verification.status == "passed", k.verification.detail
    code = result.code
    # tile 0 goes to registers before the k-tile loop
    before, loop = code.split("for (int j0 = 0; j0 < W; j0 += 32)")
    assert "const int j0 = 0;" in before
    assert re.search(r"p_A\[0\] =\s*\(c \+ j0 < W && \d+ \* bidx \+ r < H\)", before)
    # each iteration: registers -> shared tile, barrier, next tile's loads, compute, barrier
    store = loop.index("s_A[r][c] = p_A[0];")
    barrier = loop.index("__syncthreads();")
    load_next = re.search(r"p_A\[0\] =\s*\(c \+ j0 \+ 32 < W", loop)
    compute = loop.index("for (int jj = 0;")
    assert load_next, loop
    assert store < barrier < load_next.start() < compute < loop.rindex("__syncthreads();")
    # 256 threads share a 256x32 tile: 32 unrolled registers for A, one for the 32 B values
    assert "float p_A[32];" in before and "float p_B[1];" in before
    assert "p_A[31] =" in loop and "p_A[32] =" not in code
    assert "if (tidx < 32)" in loop               # only 32 of 256 threads hold a B value


@QUERY
def test_prefetch_refused_when_occupancy_would_fall_below_the_target():
    result = naiveopt.optimize(DOT4, filename="dot4.cu", arch="sm_90",
                               options=registers_only())
    k = result.kernels[0]
    assert k.passes == ["coalesce"] and k.verification.status == "passed"
    (remark,) = prefetch_remarks(result)["dot4"]
    m = re.fullmatch(r"prefetching would need (\d+) registers per thread: (\d+) registers, "
                     r"occupancy (\d+)% < 50% \(limited by (\w[\w ]*)\)", remark.message)
    assert remark.kind == "missed" and m, remark
    share, registers, percent, limiter = int(m[1]), int(m[2]), int(m[3]), m[4]
    tile = int(re.search(r"\[coalesce\] applied: .* tile (\d+)",
                         "\n".join(map(str, result.remarks)))[1])
    assert share == 4 * tile                 # four BXxT row tiles over BX threads
    assert registers > share                 # the measured compile holds them
    shared = sum(4 * int(a) * int(b) for a, b in
                 re.findall(r"__shared__ float s_\w+\[(\d+)\]\[(\d+)\];", result.code))
    block = k.geometry.block[0] * k.geometry.block[1]
    expected, why = occupancy(get_target("sm_90"), block, registers, shared)
    assert (round(expected * 100), why) == (percent, limiter)
    assert "p_A" not in result.code


def test_prefetch_declines_without_a_resource_query(monkeypatch):
    monkeypatch.setattr(selection, "measure",
                        lambda module, proc, arch: (None, "neither nvcc nor NVRTC"))
    result = run("mm.cu", verify=False)
    (remark,) = prefetch_remarks(result)["mm"]
    assert remark.kind == "missed"
    assert "its occupancy cannot be checked (neither nvcc nor NVRTC)" in remark.message
    assert "p_A" not in result.code


def test_kernels_without_a_staged_loop_say_so():
    result = run("tmv.cu", verify=False)
    (remark,) = prefetch_remarks(result)["tmv"]
    assert (remark.kind, remark.message) == ("missed", "no staged loop")


@QUERY
@pytest.mark.parametrize("arch,target", [("sm_90", "cuda"), ("gfx90a", "opencl")])
def test_col_y_and_col_x_tiles_prefetched_with_merged_threads(arch, target):
    # at sizes this small the cost model merges no threads (fewer blocks, no gain): the
    # factors are forced
    for sizes in ({"H": "64", "W": "64", "K": "64"}, {"H": "67", "W": "45", "K": "37"}):
        result = naiveopt.optimize(ATB, filename="atb.cu", arch=arch, target=target,
                                   defines=sizes, options=registers_only({"merge": (2, 2)}))
        k = result.kernels[0]
        assert k.verification.status == "passed", k.verification.detail
        assert {"thread-block-merge", "thread-merge", "prefetch"} <= set(k.passes)
        assert k.geometry.coarsen[:2] != (1, 1)


@nvcc
@pytest.mark.parametrize("name", TILED)
def test_prefetched_cuda_compiles_with_nvcc(name, tmp_path):
    result = run(name, arch="sm_90", verify=False)
    src = tmp_path / "k.cu"
    src.write_text(result.code)
    done = compile_cuda(str(src), str(tmp_path))
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------- vector tile loads
def _plan(kind: str, elem: str, block=(256, 1), tile=32) -> tiling.TilingPlan:
    k, i = sympy.symbols("k i", integer=True)
    staging = tiling.Staging("A", kind, i, k, sympy.Symbol("W", integer=True), elem)
    return tiling.TilingPlan(None, 0, [staging], block, tile)


def test_with_load_width_accepts_vector_element_types_and_whole_rows_only():
    plan = _plan("row_x", "float")
    wider, why = tiling.with_load_width(plan, 4)
    assert why == "" and wider.load_width == 4 and plan.load_width == 1
    assert tiling.unit_width(wider.stagings[0], wider) == 4
    assert tiling.with_load_width(plan, 3) == (None, "load width 3 is not 1, 2 or 4")
    none, why = tiling.with_load_width(_plan("row_x", "double"), 4)
    assert none is None and "vector element type" in why
    # a 16x6 block covers 6 columns of a col_y tile: not a multiple of 4, but of 2
    odd = _plan("col_y", "float", block=(16, 6))
    assert tiling.with_load_width(odd, 4)[0] is None
    assert tiling.with_load_width(odd, 2)[0] is not None
    # prefetched registers count whole vectors: 8192 elements / 4 / 256 threads = 8 vectors
    assert tiling.prefetch_registers(replace(wider, prefetch=True)) == 32
    assert tiling.prefetch_registers(replace(_plan("vec", "float"), load_width=4)) == 4


@pytest.mark.parametrize("kind,block,width", [("col_x", (32, 16), 4), ("col_x", (64, 4), 2),
                                              ("row_x", (256, 1), 4), ("row_y", (16, 16), 4)])
def test_vector_units_cover_each_tile_cell_once(kind, block, width):
    plan = replace(_plan(kind, "float", block=block), merge=(2, 4), load_width=width)
    target = get_target("sm_90")
    staging = plan.stagings[0]
    rows, cols = tiling.tile_extent(staging, plan)
    segment = tiling.segment_units(staging, plan, target)
    # a row longer than one bank span (32 words) is loaded in segments of 32 / width units
    assert segment == (32 // width if cols > 32 else 0)
    cells = [tiling.unit_cell(u, staging, plan, segment) for u in range(rows * cols // width)]
    covered = {(r, c + i) for r, c in cells for i in range(width)}
    assert len(covered) == rows * cols and covered == {(r, c) for r in range(rows)
                                                      for c in range(cols)}
    # a warp's units: whole 32-word runs of global memory
    for warp in range(0, len(cells), 32):
        runs = {}
        for r, c in cells[warp:warp + 32]:
            runs.setdefault(r, []).append(c)
        assert all(sorted(cs) == list(range(min(cs), min(cs) + width * len(cs), width))
                   for cs in runs.values())


@pytest.fixture
def load_width_4(monkeypatch):
    """Every tiling plan generated with 4-wide tile loads (as the vectorize pass asks)."""
    real = tiling.generate

    def generate(plan, target, am):
        wider, _ = tiling.with_load_width(plan, 4)
        return real(wider or plan, target, am)

    monkeypatch.setattr(selection, "generate", generate)


@pytest.mark.parametrize("disable", [[], ["prefetch"]])
@pytest.mark.parametrize("arch,target", [("sm_90", "cuda"), ("gfx90a", "opencl")])
@pytest.mark.parametrize("name", ["mm.cu", "mv.cu", "syrk.cu"])
def test_vector_tile_loads_verify_at_multiple_and_odd_sizes(load_width_4, name, arch, target,
                                                            disable):
    result = run(name, arch=arch, target=target, options={"disable": disable})
    assert_verified_at_both_sizes(result)
    vector = "vload4(0, &" if target == "opencl" else "naiveopt_load_float4(&"
    assert vector in result.code
    # the vector path only where the unit's last element is in range; scalars otherwise
    guard = re.search(r"if \(([^{]*\+ 3 < \w+[^{]*)\) \{\s*float4 v_\w+ = ", result.code)
    assert guard, result.code
    assert re.search(r"\} else \{\s*(p|s)_\w+\[[^\]]+\](\[[^\]]+\])? =\s*\(", result.code)


def test_vector_tile_loads_store_into_shared_memory_without_bank_conflicts(load_width_4):
    from naiveopt.profile import profile_file

    path = os.path.join(KERNELS_DIR, "mm.cu")
    # the merged layout the library's default sizes get (at 64 the model merges nothing)
    (prof,) = profile_file(open(path).read(), path, opt=True, defines={"H": "64", "W": "64",
                                                                       "K": "64"},
                           options={"merge": (2, 4)})
    assert prof.totals.shared_requests > 0 and prof.totals.shared_bank_conflicts == 0


def test_vector_tile_loads_of_col_y_tiles_verify(load_width_4):
    for sizes in ({"H": "64", "W": "64", "K": "64"}, {"H": "67", "W": "45", "K": "37"}):
        result = naiveopt.optimize(ATB, filename="atb.cu", defines=sizes,
                                   options=registers_only())
        assert result.kernels[0].verification.status == "passed"
        assert re.search(r"naiveopt_load_float4\(&A\[", result.code)


@nvcc
@pytest.mark.parametrize("name", ["mm.cu", "mv.cu", "gesummv.cu"])
def test_vector_tile_loads_compile_with_nvcc(load_width_4, name, tmp_path):
    result = run(name, arch="sm_90", verify=False)
    assert "naiveopt_load_float4(" in result.code
    src = tmp_path / "k.cu"
    src.write_text(result.code)
    done = compile_cuda(str(src), str(tmp_path))
    assert done.returncode == 0, done.stderr
