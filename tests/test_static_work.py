"""The cost model's static reading of a kernel (cost/static.py) against hand-worked cases: a
streaming copy, the naive matrix product's sectors and FMAs, a shared-memory read a merged
thread repeats (one load), a tile loop bounded by a conjunction and a cooperative copy
whose bounds hold a thread id; and selection by estimated time (selection.py)."""
from __future__ import annotations

import re

import pytest

import naiveopt
from naiveopt.api import compile_module
from naiveopt.cost.static import static_work
from naiveopt.frontend import parse_module, parse_unit
from naiveopt.passes import optimize as optimize_passes
from naiveopt.passes.manager import PassContext, run_passes
from naiveopt.passes.pipeline import front_passes
from naiveopt.targets import TARGETS, resident_blocks

H100 = TARGETS["sm_90"]


def work(source: str, sizes: dict[str, int], block: tuple[int, int] = (256, 1)):
    """The static work of the kernel in ``source`` launched in blocks of ``block`` (as a
    transformation fixes it: GProcedure.launch_block)."""
    module = parse_module("k.cu", source, {})
    ctx = PassContext(module, "cuda", "none")
    run_passes(front_passes(), ctx)
    proc = module.procedures[0]
    proc.launch_block = block
    return static_work(proc, module, H100, sizes)


COPY = """__global__ void copy(const float *A, float *B, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = A[i];
}
"""


def test_a_streaming_copy_moves_each_byte_once_and_is_dram_bound():
    n = 1 << 24
    w = work(COPY, {"n": n}).work
    assert w.blocks == n // 256 and w.threads_per_block == 256
    assert w.l2_bytes == pytest.approx(8 * n)      # 4 sectors per warp, read and write
    assert w.dram_bytes == pytest.approx(8 * n)
    assert w.flops == 0
    # one load in flight per warp: Little's law puts the read rate a little under the DRAM
    # bandwidth (test_cost_model: 2.25 TB/s), so the launch is at most 1.5x the DRAM time
    e = work(COPY, {"n": n}).estimate(H100)
    assert e.bound in ("DRAM", "latency") and e.seconds <= 1.5 * e.times["DRAM"]


PLANES = """__global__ void planes(const float *A, float *P, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        P[i] = A[i];
        P[n + i] = 2.0f * A[i];
        P[2 * n + i] = A[i] + 1.0f;
        P[n + i + 1] = A[i];
    }
}
"""


def test_writes_to_separate_planes_of_one_array_each_count():
    """The three planes of ``P[k*n + i]`` are three ranges of bytes, not one (demosaic's
    planar RGB output); a fourth write overlapping the second plane adds its one element."""
    n = 1 << 20           # 16 MB touched: within the L2, so each byte is fetched once
    w = work(PLANES, {"n": n}).work
    assert w.dram_bytes == pytest.approx(4 * n + 4 * (3 * n + 1))


MM = """__global__ void mm(const float *A, const float *B, float *C, int N) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < N && y < N) {
        float sum = 0.0f;
        for (int k = 0; k < N; k++)
            sum += A[y * N + k] * B[k * N + x];
        C[y * N + x] = sum;
    }
}
"""


def test_the_naive_matrix_product_by_hand():
    """A warp of a 32x8 block is one row of 32 outputs: per k it reads one element of A (one
    sector, a broadcast) and 32 consecutive of B (four sectors), two 128-byte lines in L1;
    one FMA per k. Through L1 a block fetches its 8 rows of A (8 x N floats, contiguous) and
    a 32-wide column strip of B (N rows of four sectors) once: what one k step touches (12
    sectors a block) stays cached until the next."""
    n = 1024
    w = work(MM, {"N": n}, (32, 8)).work
    warps = n * n // 32
    blocks = (n // 32) * (n // 8)
    assert w.blocks == blocks
    per_block = 8 * n * 4 // 32 + n * 4
    assert w.l2_bytes == pytest.approx(blocks * per_block * 32 + warps * 4 * 32)
    assert w.l1_wavefronts == pytest.approx(warps * n * 2 + warps)
    assert w.flops == pytest.approx(2 * n ** 3)
    # every element of A, B and C once: 3 n^2 floats fit in L2
    assert w.dram_bytes == pytest.approx(3 * 4 * n * n)


SHARED = """__global__ void k(const float *A, float *C, int N) {
    __shared__ float s[8][32];
    float a = 0.0f, b = 0.0f;
    for (int k = 0; k < N; k++) {
        a += s[threadIdx.y][k % 32] * 2.0f;
        b += s[threadIdx.y][k % 32] * 3.0f;
    }
    C[(blockIdx.y * 8 + threadIdx.y) * N + blockIdx.x * 32 + threadIdx.x] = a + b;
}
"""


def test_a_shared_element_read_twice_in_an_iteration_is_one_load():
    """A merged thread's copies read s[ty][k] twice per k; nvcc loads it once (a broadcast:
    one wavefront per warp)."""
    n = 512
    # no guard: the thread space is the launch's (globalDimX/Y), given like a size
    w = work(SHARED, {"N": n, "globalDimX": n, "globalDimY": n}, (32, 8)).work
    warps = (n // 32) * (n // 8) * 8
    assert w.shared_wavefronts == pytest.approx(warps * n)


def test_a_conjunctive_tile_bound_and_a_thread_dependent_copy_loop():
    source = """__global__ void k(const float *A, float *C, int K) {
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        for (int kk = 0; kk < 32 && k0 + kk < K; kk++)
            acc += A[k0 + kk];
        for (int r = threadIdx.y; r < 32; r += 8)
            acc += A[r * K + threadIdx.x];
    }
    C[threadIdx.y * 32 + threadIdx.x] = acc;
}
"""
    sizes = {"K": 1024, "globalDimX": 32, "globalDimY": 8}
    w = work(source, sizes, (32, 8)).work
    # per warp: 32 tile steps x (32 broadcast reads + 4 rows of one 128-byte line); one
    # block; the stores: a line each
    warps = 8
    assert w.l1_wavefronts == pytest.approx(warps * 32 * (32 + 4) + warps)
    # through L1 the block fetches the 32 rows its threads copy (rows tidy, tidy + 8, ...:
    # all 32 of them, four sectors each) once, reused by every tile step; A[k0 + kk] is
    # not affine (kk's loop has a conjunction for a bound): its requests go to L2 as they
    # are; so do the stores
    assert w.l2_bytes == pytest.approx(32 * 4 * 32 + warps * 32 * 32 * 32 + warps * 4 * 32)
    assert work(source, sizes, (32, 8)).notes == []


def test_unknown_sizes_are_assumed_and_said():
    sw = work(COPY, {})
    assert sw.work.blocks == 4096 // 256
    assert sw.notes == ["n taken as 4096"]


def test_the_fastest_estimate_wins_over_the_reuse_rule(monkeypatch):
    """With the model saying 2x2 merged outputs are 20% faster than 2x4, thread-merge takes
    2x2 (by reuse alone it would take 2x4), and its remark gives the estimates."""
    from naiveopt.passes.optimize import selection
    real = selection.static_work

    def rigged(proc, module, target, sizes):
        sw = real(proc, module, target, sizes)
        if proc.coarsen == (2, 2):
            sw.work.shared_wavefronts /= 100
            sw.work.flops /= 100
            sw.work.l2_bytes /= 100
            sw.work.dram_bytes /= 100
            sw.work.instructions /= 100
        return sw

    monkeypatch.setattr(selection, "static_work", rigged)
    from conftest import KERNELS_DIR
    path = f"{KERNELS_DIR}/mm.cu"
    result = naiveopt.optimize(open(path).read(), filename=path, verify=False)
    chosen = [r.message for r in result.remarks if r.pass_name == "thread-merge"
              and "chosen: estimated" in r.message]
    assert chosen and chosen[0].startswith("merge x=2 y=2 chosen"), chosen
    assert "-bound" in chosen[0] and "K=" in chosen[0]
    assert any("merge x=2 y=4" in r.message and "slower than" in r.message
               for r in result.remarks if r.pass_name == "thread-merge")


def test_at_4096_the_model_prefers_the_register_tile_to_the_most_merged_variant():
    """At the library's default sizes the 8x8 register tile (4 128-bit shared loads per 64
    FMAs) is the fastest estimate, and among the block-cyclic merges the most merged one
    (fewest shared loads per FMA), as the reuse rule would have it."""
    from conftest import KERNELS_DIR
    path = f"{KERNELS_DIR}/mm.cu"
    result = naiveopt.optimize(open(path).read(), filename=path, verify=False)
    chosen = [r.message for r in result.remarks if r.pass_name == "thread-merge"
              and "chosen: estimated" in r.message]
    assert chosen[0].startswith("register tile x=8 y=8 chosen"), chosen
    estimates = {}
    for r in result.remarks:
        m = re.match(r"(merge x=\d y=\d): .* estimated ([\d.]+) us", r.message)
        if r.pass_name == "thread-merge" and m:
            estimates[m.group(1)] = float(m.group(2))
    assert min(estimates, key=estimates.get) == "merge x=2 y=4", estimates


ADD = """__global__ void add(const float *A, const float *B, float *C, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H)
        C[y * W + x] = A[y * W + x] + 2.0f * B[y * W + x];
}
"""


def test_a_vectorized_map_moves_the_same_bytes_and_its_scalar_edge_is_not_counted():
    """Across-thread vectorization (float4 loads and store, a scalar path for the threads
    whose four outputs cross the edge): the model counts the bytes the naive kernel moves,
    not four times their span (a vector's index counts elements), and the vector path, not
    also the scalar fallback that only threads at the border take."""
    sizes = {"H": 4096, "W": 4096}
    works = {}
    for mode in ("never", "always"):
        c = compile_module(parse_unit("add.cu", ADD, {}), None, "sm_90", True,
                           options={"vectorize": mode}, launcher=False)
        (proc,) = c.analysed.procedures         # the IR the passes left
        assert ("vectorize" in c.ctx.applied.get("add", [])) == (mode == "always")
        works[mode] = static_work(proc, c.analysed, H100, sizes).work
    plain, vector = works["never"], works["always"]
    assert plain.dram_bytes == pytest.approx(3 * 4 * 4096 * 4096)
    assert vector.dram_bytes == pytest.approx(plain.dram_bytes, rel=0.01)
    assert vector.l2_bytes == pytest.approx(plain.l2_bytes, rel=0.01)
    assert vector.instructions < plain.instructions


@pytest.mark.parametrize("cond,inside", [
    ("x < W", True), ("x >= 0", True), ("W > x", True), ("0 <= x", True),
    ("4 * x + 3 < W && y < H", True), ("k0 + 8 <= K", True), ("(long)x < (long)W", True),
    ("x >= W", False), ("x < 0", False), ("W <= x", False), ("x % 2 == 0", False),
    ("x < W && x < 0", False), ("W < H", False), ("x > y", False), ("x < W || y < H", False),
])
def test_inside_tests_are_told_from_edge_tests(cond, inside):
    from naiveopt.cost.static import _inside_test
    from naiveopt.ir.build import statements

    (stmt,) = statements(f"if ({cond}) a = 1; else a = 2;")
    assert _inside_test(stmt.cond, {"W", "H", "K"}) is inside


TAPS = """__global__ void k(const float *A, float *B, int N) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < N - 1 && y < N - 1)
        B[y * N + x] = A[(y - 1) * N + x - 1] + A[(y - 1) * N + x] + A[(y - 1) * N + x + 1]
                     + A[y * N + x - 1] + A[y * N + x] + A[y * N + x + 1]
                     + A[(y + 1) * N + x - 1] + A[(y + 1) * N + x] + A[(y + 1) * N + x + 1];
}
"""


def test_a_written_out_filter_fetches_its_window_once_per_block():
    """Nine taps of one array whose indices differ by constants share their sectors in L1:
    a 32x8 block fetches 10 rows of 34 floats (136 bytes from a column off a sector
    boundary: six sectors), 60 sectors in all, not 9 x 8 rows. In L1 each tap one column off
    crosses a line: two wavefronts; the three centred ones one; the store one."""
    n = 1024
    w = work(TAPS, {"N": n}, (32, 8)).work
    blocks, warps = (n // 32) * (n // 8), n * n // 32
    assert w.l2_bytes == pytest.approx(blocks * 10 * 6 * 32 + warps * 4 * 32)
    assert w.l1_wavefronts == pytest.approx(warps * (6 * 2 + 3 + 1))


def test_a_loop_that_stores_every_iteration_keeps_one_load_in_flight():
    """``y[j] += A[i][j] * x[i]`` stores to y in every iteration: the next iteration's loads
    cannot move above the store (the pointers may alias), so only A's load (x[i] is the same
    for every thread: an L1 hit; y[j] is forwarded from the store) waits per iteration. With
    ``__restrict__`` pointers the compiler overlaps iterations: the usual count."""
    loop = """__global__ void k(const float *{r}A, const float *{r}x, float *{r}y, int n) {{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n)
        for (int i = 0; i < n; i++)
            y[j] += A[i * n + j] * x[i];
}}
"""
    assert work(loop.format(r=""), {"n": 4096}).work.loads_in_flight == 1
    assert work(loop.format(r="__restrict__ "), {"n": 4096}).work.loads_in_flight == 3


def test_a_vector_read_off_its_alignment_counts_as_its_scalar_path():
    """``A[y*W + x - 1]`` read as float4 by a thread of 4 outputs is never 16-byte aligned:
    CUDA's vector helper takes its scalar path, four requests each touching every line of the
    warp's 512 bytes. The model counts those, not one aligned vector request, so that the
    vector form of a filter's off-centre taps does not look cheaper than it is."""
    taps = ADD.replace("A[y * W + x] + 2.0f * B[y * W + x]", "A[y * W + x - 1] + B[y * W + x]")
    sizes = {"H": 4096, "W": 4096}
    c = compile_module(parse_unit("add.cu", taps, {}), None, "sm_90", True,
                       options={"vectorize": "always"}, launcher=False)
    (proc,) = c.analysed.procedures
    assert "vectorize" in c.ctx.applied.get("add", [])
    w = static_work(proc, c.analysed, H100, sizes).work
    warps = 4096 * 4096 // 4 // 32          # a warp of 32 threads, 4 outputs each
    # B and C aligned: 4 lines a request; A: 4 scalar requests of 4 (or 5) lines each
    assert w.l1_wavefronts >= warps * (4 + 4 + 4 * 4)


BOX = """#define R 1
__global__ void box(const float *A, float *B, int N, int K) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= R && y >= R && x < N - R && y < N - R) {
        float s = 0.0f;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = LO; dx < HI; dx++)
                s += A[(y + dy) * N + x + dx];
        B[y * N + x] = s;
    }
}
"""


@pytest.mark.parametrize("lo, hi, loads", [
    ("-R", "R + 1", 8),     # 3x3 taps, unrolled by nvcc: nine loads, counted up to 8
    ("0", "2", 6),          # 3x2
    ("0", "K", 1),          # a runtime bound: a loop, one load an iteration
    ("0", "32", 1),         # too long to unroll in full: a loop
])
def test_loads_in_small_constant_loops_count_once_unrolled(lo, hi, loads):
    """nvcc unrolls a loop of a few constant iterations (literals, macros) in full, and the
    copies of its loads are independent: a 3x3 filter written as dy/dx loops keeps as many
    loads in flight as one with its nine taps written out (TAPS: 8, the most counted)."""
    source = BOX.replace("LO", lo).replace("HI", hi)
    w = work(source, {"N": 4096, "K": 3, "R": 1}, (32, 8)).work
    assert w.loads_in_flight == loads
    assert work(TAPS, {"N": 4096}, (32, 8)).work.loads_in_flight == 8


def test_a_row_width_not_given_is_assumed_and_the_reads_still_placed():
    """Without sizes (a kernel with no metadata) a row stride ``N`` is taken at the default,
    as the trip counts are, and said: the taps' reads are placed in L1 as with N given, not
    counted as a full warp's bytes each."""
    given = work(TAPS, {"N": 4096}, (32, 8))
    assumed = work(TAPS, {}, (32, 8))
    assert assumed.notes == ["N taken as 4096"]
    assert assumed.work.l2_bytes == pytest.approx(given.work.l2_bytes)
    assert assumed.work.dram_bytes == pytest.approx(given.work.dram_bytes)


def test_widths_from_the_launch_dimensions_are_the_launch_s():
    """An index whose row width is the launch's (``gridDim.x * blockDim.x``, the paper's
    globalDimX) is evaluated with the launch's own blocks and grid, not an assumed 4096."""
    source = """__global__ void t(const float *A, float *B, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H)
        B[x * (gridDim.y * blockDim.y) + y] = A[y * (gridDim.x * blockDim.x) + x];
}
"""
    n = 2048
    w = work(source, {"W": n, "H": n}, (16, 16))
    assert w.notes == []
    # both arrays span n*n floats once: DRAM moves each byte once, not a 4096-wide guess
    assert w.work.dram_bytes == pytest.approx(2 * 4 * n * n, rel=0.05)


def test_a_loop_storing_every_iteration_waits_a_round_trip_per_iteration():
    """The naive gemm stores C[i][j] in its k loop, and the pointers may alias: each
    iteration's load of C waits for the store before it, wherever the data is cached. The
    H100 ran it at 353 ns an iteration (512^3: 0.181 ms; targets.chain_latency_ns): the
    latency term is waves x iterations x that. Two arrays stored in the loop (gesummv's two
    sums) wait twice."""
    gemm = """__global__ void g(const float *A, const float *B, float *C, int N) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N)
        for (int k = 0; k < N; k++)
            C[i * N + j] += A[i * N + k] * B[k * N + j];
}
"""
    n = 512
    sw = work(gemm, {"N": n}, (32, 8))
    w = sw.work
    assert w.serial_iterations == n and w.loads_in_flight == 2      # A and B: C is stored
    e = sw.estimate(H100)
    resident = resident_blocks(H100, 256, w.registers, 0)
    waves = -(-w.blocks // (132 * resident))
    assert e.bound == "latency"
    assert e.times["latency"] == pytest.approx(waves * n * 375e-9)
    two = """__global__ void s(const float *A, const float *B, const float *x, float *t, float *y,
                  int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        for (int j = 0; j < N; j++) {
            t[i] += A[i * N + j] * x[j];
            y[i] += B[i * N + j] * x[j];
        }
}
"""
    assert work(two, {"N": 4096}).work.serial_iterations == 2 * 4096
    # with __restrict__ pointers the loop is an ordinary one
    restrict = gemm.replace("float *", "float *__restrict__ ")
    assert work(restrict, {"N": n}, (32, 8)).work.serial_iterations == 0


def test_a_request_in_flight_moves_its_sectors():
    """Little's law counts bytes in flight: a warp reading 32 rows apart (a naive mv's A)
    moves 32 sectors a request, 1 KB, where a row of 32 floats moves 128 bytes; x, which
    every thread reads alike, one sector: 1056 bytes over its two loads."""
    mv = """__global__ void mv(const float *A, const float *x, float *y, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float s = 0.0f;
        for (int j = 0; j < N; j++)
            s += A[i * N + j] * x[j];
        y[i] = s;
    }
}
"""
    w = work(mv, {"N": 4096}).work
    assert w.loads_in_flight == 2
    assert w.bytes_per_request == pytest.approx((1024 + 32) / 2, rel=0.01)
    assert work(COPY, {"n": 1 << 20}).work.bytes_per_request == 128


def test_a_clamped_read_is_placed_as_the_threads_inside_make_it():
    """An image filter clamping its taps into the image (``min(max(y + dy, 0), H - 1)``)
    has an opaque index; interior threads read the unclamped taps, which the model places
    as it does the written-out filter's (TAPS), not as a warp's bytes per request."""
    clamped = TAPS
    for d in ("- 1", "+ 1"):
        clamped = clamped.replace(f"(y {d}) * N", f"min(max(y {d}, 0), N - 1) * N")
    assert "min(max(" in clamped
    sizes = {"N": 4096}
    plain, opaque = work(TAPS, sizes, (32, 8)).work, work(clamped, sizes, (32, 8)).work
    assert opaque.l2_bytes == pytest.approx(plain.l2_bytes, rel=0.01)
    assert opaque.dram_bytes == pytest.approx(plain.dram_bytes, rel=0.01)


def test_an_opaque_index_that_differs_between_threads_is_not_a_broadcast():
    """``A[I[i]]`` (data-dependent): where the lanes fall is unknown, so each request counts
    a warp's bytes (as if contiguous), not the one sector of a read all lanes share; an
    opaque index of loop iterators alone (``A[k0 + kk]`` in a loop the analysis cannot
    bound) is the same for every lane."""
    gather = """__global__ void g(const float *A, const int *I, float *B, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) B[i] = A[I[i]];
}
"""
    n = 1 << 20
    w = work(gather, {"n": n}).work
    warps = n // 32
    # I and B: 4 sectors a request; A[I[i]]: 32 lanes x 4 bytes, as if contiguous
    assert w.l2_bytes == pytest.approx(warps * (4 + 4) * 32 + warps * 128)


def test_a_cooperative_copy_moves_a_row_a_request():
    """A staged copy's lanes take consecutive values of a loop iterator that starts at a
    thread id (``c = threadIdx.x; c < 64; c += 32``): a warp's request is a row of 32
    floats, four sectors, not one address all lanes share."""
    source = """__global__ void k(const float *A, float *B, int N) {
    __shared__ float s[64];
    for (int c = threadIdx.x; c < 64; c += 32)
        s[c] = A[blockIdx.x * 64 + c];
    __syncthreads();
    B[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + 32];
}
"""
    w = work(source, {"N": 4096, "globalDimX": 4096}, (32, 1)).work
    assert w.bytes_per_request == 128
    blocks = 4096 // 32
    # per block: two requests of A, four sectors each, and one store of four sectors
    assert w.l2_bytes == pytest.approx(blocks * (2 * 4 + 4) * 32)
