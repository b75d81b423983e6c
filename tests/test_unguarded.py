"""Kernels without a bounds guard: a launch coverage (block x outputs per thread) is allowed
when it divides the naive block, or the thread space as the compile fixes it (-D sizes,
unconditional #defines, literal thread spaces); otherwise the passes decline and say why."""
import os
import re

import numpy as np
import pytest

import naiveopt
from conftest import run_opencl
from naiveopt.frontend import fixed_macros

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels", "naive")


def run(name, **kw):
    path = os.path.join(KERNELS, name)
    with open(path) as fh:
        return naiveopt.optimize(fh.read(), filename=path, **kw)


def remarks(result, pass_name):
    return "\n".join(r.message for r in result.remarks if r.pass_name == pass_name)


def kernel_params(code, name):
    """The parameter list of kernel ``name``'s definition in ``code`` (not its launcher's)."""
    return re.search(rf"__global__[^{{;]*?\b{name}\(([^)]*)\)", code).group(1)


def coverage(k):
    return (k.geometry.block[0] * k.geometry.coarsen[0],
            k.geometry.block[1] * k.geometry.coarsen[1])


def test_fixed_macros_are_command_line_values_and_unconditional_defines():
    source = ("#define W 64\n#define H (W * 2)\n#ifndef K\n#define K 32\n#endif\n"
              "#define F 1.5f\n#define G 8\n#undef G\n")
    assert fixed_macros(source, {}) == ({"W": 64, "H": 128}, {"K"})
    fixed, overridable = fixed_macros(source, {"K": "16", "N": "100", "S": "abc"})
    assert fixed == {"W": 64, "H": 128, "K": 16, "N": 100} and overridable == set()
    # a -D that an unconditional #define contradicts: which value counts is unclear
    assert "W" not in fixed_macros(source, {"W": "48"})[0]
    assert fixed_macros(source, {"W": "64"})[0]["W"] == 64


def test_mm_macro_merges_threads_behind_an_added_bounds_guard():
    # no size fixed: the merged blocks (128x128 outputs) overhang a thread space that is only
    # a multiple of 16, so the output gains the guard the input lacks, with the one size the
    # kernel did not take (HEIGHT_A: the launch knew it) as a new parameter
    result = run("mm_macro.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "thread-merge" in k.passes and k.geometry.multiple is None
    cx, cy = coverage(k)
    assert 16 % cx != 0 or 16 % cy != 0
    # (prefixed: the paper's style builds with -DHEIGHT_A=..., which would make ``int 4096``)
    assert re.search(r"mm_macro\(float \*A, float \*B, float \*C, int naiveopt_HEIGHT_A\)",
                     result.code)
    assert re.search(r"< WIDTH_B &&\s+[^;]*< naiveopt_HEIGHT_A;", result.code)  # per copy
    # the launcher passes it; the header and the sidecar say it is new
    assert re.search(r"mm_macro_launch\(float \*A, float \*B, float \*C,\s+int naiveopt_HEIGHT_A",
                     result.code)
    assert "mm_macro<<<grid, block, 0, stream>>>(A, B, C, naiveopt_HEIGHT_A);" in result.code
    assert "int naiveopt_HEIGHT_A: new parameter, HEIGHT_A" in result.code
    assert k.launch_json()["size_args"] == [{
        "name": "HEIGHT_A", "argument": 3, "declaration": "int naiveopt_HEIGHT_A",
        "from": "the size of the thread space the launch covers"}]
    text = remarks(result, "thread-merge")
    assert "the kernel has no bounds guard and its blocks now cover" in text
    assert "new parameter(s) int naiveopt_HEIGHT_A (HEIGHT_A), which the launcher passes" in text
    assert "thread space a multiple" not in result.code and "#error" not in result.code


def test_an_added_bounds_guard_in_opencl_takes_the_size_after_the_arguments():
    result = run("mm_macro.cu", target="opencl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "thread-merge" in k.passes
    assert re.search(r"mm_macro\(__global float \*A, __global float \*B, "
                     r"__global float \*C, int naiveopt_HEIGHT_A\)", result.code)
    assert "argument 3: int naiveopt_HEIGHT_A: new parameter, HEIGHT_A" in result.code


def test_host_code_launches_a_guarded_output_with_the_size_from_its_naive_launch():
    # the CUDA samples' template kernel launched by the file's own host code: the added hA
    # comes from the naive launch's grid (NAME_launch_from), as the launcher's free sizes do
    path = os.path.join(ROOT, "tests", "corpus", "cs_matrixmul_template.cu")
    with open(path) as fh:
        result = naiveopt.optimize(fh.read(), filename=path)
    k = next(k for k in result.kernels if k.name == "MatrixMulCUDA_16")
    assert "thread-merge" in k.passes and k.verified, k.verification.detail
    assert "MatrixMulCUDA_16(float *C, float *A, float *B, int wA, int wB, int naiveopt_hA)" \
        in result.code
    assert "MatrixMulCUDA_16<<<grid, block, 0, stream>>>(C, A, B, wA, wB, naiveopt_hA);" in \
        result.code
    assert "return MatrixMulCUDA_16_launch(C, A, B, wA, wB, naive_grid.y * naive_block.y, " \
        "stream);" in result.code


def test_mm_macro_merges_threads_at_sizes_fixed_by_the_command_line():
    # big enough that merging pays: at 64 x 64 outputs 16 blocks of one output per thread
    # beat fewer merged blocks on 132 SMs (the cost model counts each merged copy's bytes)
    sizes = {"HEIGHT_A": "576", "WIDTH_A": "32", "WIDTH_B": "512"}
    result = run("mm_macro.cu", defines=sizes)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert [c.split()[0] for c in k.verification.checks] == ["cli"]
    assert "thread-merge" in k.passes and k.geometry.coarsen[:2] != (1, 1)
    cx, cy = coverage(k)
    assert (cx, cy) != (16, 16) and 512 % cx == 0 and 576 % cy == 0
    assert k.geometry.multiple == (cx, cy)
    assert k.launch_json()["thread_space_multiple_of"] == [cx, cy]
    assert f"//   requires: thread space a multiple of ({cx}, {cy}): no bounds guard" in \
        result.code
    # the macro the output keeps by name cannot be overridden with a value the launch overruns
    assert re.search(rf"#if \(WIDTH_B\) % {cx} != 0\n#error \"mm_macro [^\"]*WIDTH_B[^\"]*\"",
                     result.code)
    # a coverage the fixed sizes are not a multiple of is tried behind a guard of the fixed
    # sizes (macros: no parameter added), not rejected
    assert "rejected" not in remarks(result, "thread-merge")
    assert "naiveopt_HEIGHT_A" not in kernel_params(result.code, "mm_macro")


def test_mm_macro_with_only_its_width_fixed_guards_its_height():
    result = run("mm_macro.cu", defines={"WIDTH_B": "64"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "thread-merge" in k.passes
    # WIDTH_B is a macro of the compile; HEIGHT_A, known to the launch only, a parameter
    assert re.search(r"float \*C, int naiveopt_HEIGHT_A\)", result.code) and \
        "naiveopt_WIDTH_B" not in result.code


def test_sizes_fixed_but_not_a_multiple_guard_with_the_macros():
    result = run("mm_macro.cu", defines={"HEIGHT_A": "48", "WIDTH_A": "32", "WIDTH_B": "48"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    # a -D size in the guard is the macro (a parameter of its name would read ``int 48``)
    assert "naiveopt_HEIGHT_A" not in kernel_params(result.code, "mm_macro")
    assert k.launch_json().get("size_args") is None


def test_transpose_macro_takes_a_32x32_tile_when_its_sizes_are_fixed():
    result = run("transpose_macro.cu", defines={"H": "64", "W": "96"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert coverage(k) == (32, 32) and k.geometry.multiple == (32, 32)
    # W and H are the kernel's runtime arguments: no macro to check, the header says it
    assert "requires: thread space a multiple of (32, 32)" in result.code
    assert "#error" not in result.code
    # sizes not a multiple of the tile: the tile overhangs, behind an added guard
    odd = run("transpose_macro.cu", defines={"H": "48", "W": "96"})
    assert coverage(odd.kernels[0]) == (32, 32) and odd.verified
    assert odd.kernels[0].geometry.multiple is None and "requires:" not in odd.code


UNGUARDED = """#pragma naiveopt sizes(N=64) array(A, N, N) array(B, N, N) array(C, N, N)
#pragma naiveopt threads(N, N) block(16, 16)
DEFINE
#define A(y,x) A[(y)*N+(x)]
#define B(y,x) B[(y)*N+(x)]
#define C(y,x) C[(y)*N+(x)]
__global__ void mm(float *A, float *B, float *C) {
    float sum = 0;
    for (int i = 0; i < N; i++)
        sum += A(idy, i) * B(i, idx);
    C(idy, idx) = sum;
}
"""


@pytest.mark.parametrize("define,fixed", [("#define N 64", True),
                                          ("#ifndef N\n#define N 64\n#endif", False)])
def test_an_unconditional_define_fixes_the_thread_space_and_a_default_does_not(define, fixed):
    # at N = 64 the cost model merges no threads (fewer blocks, no gain): with merged threads
    # forced, the coverage exceeds the naive block, which only a fixed N allows
    result = naiveopt.optimize(UNGUARDED.replace("DEFINE", define), filename="mm.cu",
                               options={"merge": (2, 2)} if fixed else None)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    if fixed:
        assert coverage(k) != (16, 16) and k.geometry.multiple == coverage(k)
        assert f"#if (N) % {coverage(k)[0]} != 0" in result.code
    else:
        # an overridable N may not be a multiple of the coverage: the output guards by it
        assert k.geometry.multiple is None and "#if (N) %" not in result.code
        if 16 % coverage(k)[0] or 16 % coverage(k)[1]:
            assert "no bounds guard and its blocks now cover" in remarks(result, "thread-merge")


@pytest.mark.parametrize("table", [True, False])
def test_a_local_table_before_the_guard_keeps_the_guard_a_guard(table):
    """A kernel declaring its weights first (``const float w[4] = {...};``) and returning
    early after: the table is part of the prologue, so the early return is the bounds guard
    coalescing hoists around its barriers. It was taken for an unguarded kernel's statement,
    and the staged loop ran after threads of the last block had returned (fuzz 95 case 74:
    PoCL wrote out of bounds). A return before the staged loop outside a recognized guard
    makes the pass decline."""
    head = "const float w[4] = {0.5f, 0.25f, -1.0f, 2.0f};" if table else ""
    source = f"""
__global__ void rows(const float *A, float *B, int N, int K)
{{
    {head}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[i * K + k] * {"w[k % 4]" if table else "0.5f"};
    B[i] = acc;
}}
"""
    result = naiveopt.optimize(source, filename="t.cu", passes=["coalesce"])
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.passes == ["coalesce"], remarks(result, "coalesce")
    assert "return;" not in result.code.split("__syncthreads")[0].split("{", 2)[-1]


def test_a_return_before_a_staged_loop_outside_a_guard_declines():
    from naiveopt.analysis.shape import kernel_shape
    from naiveopt.frontend import parse_module

    source = """
__global__ void rows(const float *A, float *B, int N, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    B[i] = 0.0f;
    if (i >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[i * K + k];
    B[i] = acc;
}
"""
    shape, _ = kernel_shape(parse_module("t.cu", source, {}).procedures[0])
    assert shape.guard is None
    result = naiveopt.optimize(source, filename="t.cu", passes=["coalesce"], verify=False)
    assert result.kernels[0].passes == []
    assert "a return before the staged loop" in remarks(result, "coalesce")


def test_size_args_gives_python_hosts_the_values_to_append():
    result = run("mm_macro.cu", verify=False)
    assert naiveopt.size_args(result, HEIGHT_A=4096) == (4096,)
    assert naiveopt.launch_config(result, HEIGHT_A=4096, WIDTH_B=4096).grid[1] * 16 * \
        result.kernels[0].geometry.coarsen[1] >= 4096
    with pytest.raises(naiveopt.errors.NaiveoptError, match="takes the size HEIGHT_A"):
        naiveopt.size_args(result, WIDTH_B=4096)
    guarded = naiveopt.optimize(open(os.path.join(KERNELS, "mm.cu")).read(),
                                filename=os.path.join(KERNELS, "mm.cu"), verify=False)
    assert naiveopt.size_args(guarded, H=64, W=64, K=64) == ()


def tutorial_mm() -> str:
    """The tutorial's matmul of the corpus, without its pragma (no annotations at all)."""
    path = os.path.join(ROOT, "tests", "corpus", "st_matmul_tutorial_unguarded.cu")
    with open(path) as fh:
        return "".join(line for line in fh if not line.startswith("#pragma naiveopt"))


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_an_unannotated_unguarded_kernel_gets_a_guard_over_its_inferred_thread_space(target):
    """A tutorial's matmul: no guard, no pragma, no metadata. Its thread space is inferred
    before the passes (columns and rows free sizes the launch gives, globalDimX and
    globalDimY: the row width Width bounds neither), so thread merge may take blocks that
    overhang a multiple of 16 behind an added guard (it declined every factor: 'its thread
    space is unknown')."""
    result = naiveopt.optimize(tutorial_mm(), filename="tut_mm.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "thread-merge" in k.passes, remarks(result, "thread-merge")
    assert any("thread space inferred: (globalDimX, globalDimY) (no bounds guard; globalDimX: "
               "a free size the launch gives; globalDimY: a free size the launch gives)"
               in r.message for r in result.remarks)
    assert "int naiveopt_globalDimX" in result.code and "int naiveopt_globalDimY" in result.code
    assert re.search(r"< naiveopt_globalDimX &&[^;]*< naiveopt_globalDimY", result.code)
    cx, cy = coverage(k)
    assert 16 % cx != 0 or 16 % cy != 0
    if target == "cuda":
        assert re.search(r"matmul<<<grid, block, 0, stream>>>\(A, B, C, Width, "
                         r"naiveopt_globalDimX, naiveopt_globalDimY\);", result.code)


def test_an_added_guard_in_opencl_follows_the_host_filled_data():
    """OpenCL takes host-filled file-scope data as arguments after the kernel's own, and an
    added guard's sizes after those: verification bound them the other way round where a
    kernel had both (fuzz 1197 case 2: clSetKernelArg's INVALID_ARG_SIZE, unverified)."""
    source = """\
__constant__ float coef[4];
#define M 32
#pragma naiveopt sizes(N=64) threads(N, M) block(8, 32) array(A, N, M) array(B, N, M)
__global__ void t(const float *A, float *B)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    B[i * M + j] = A[i * M + j] * coef[j % 4];
}
"""
    result = naiveopt.optimize(source, filename="t.cu", target="opencl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "coalesce-writes" in k.passes, remarks(result, "coalesce-writes")
    assert re.search(r"__global float \*B, __constant float \*coef, int naiveopt_N\)",
                     result.code), result.code[:1500]


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_an_added_guard_reads_a_size_the_host_filled_data_holds(target):
    """A thread-space size the kernel reads from host-filled data (``__constant__ int H;``)
    is read by the guard too: no new parameter."""
    source = """\
__constant__ int H;
__constant__ float coef[4];
#pragma naiveopt sizes(W=64, H=64) threads(W, H) block(8, 32) array(A, W, H) array(B, W, H)
__global__ void t(const float *A, float *B, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    B[i * H + j] = A[i * H + j] * coef[j % 4];
}
"""
    result = naiveopt.optimize(source, filename="t.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "guarded by its thread space (W, H)" in remarks(result, "coalesce-writes")
    assert "naiveopt_H" not in re.search(r"\bt\(([^)]*)\)\s*\{", result.code).group(1)
    assert re.search(r"< W && [^;]*< H\)", result.code)


GRID_STRIDE_ROWS = """\
typedef struct { int N; int K; int T; } Dims;
__kernel void gs0(__global const float *A, __global const float *X, __global float *B, Dims args)
{
    size_t i;
    int tid = get_group_id(0) * get_local_size(0) + get_local_id(0);
    for (i = tid; i < args.N; i = i + get_num_groups(0) * get_local_size(0)) {
        float acc = 0.0f;
        const __global float *row = A + i * args.K;
        for (int l = 0; l < args.K; l++)
            acc += row[l] * X[l];
        B[i] = acc;
    }
}
"""


def test_tile_rows_past_a_guard_through_a_copied_id_are_not_loaded():
    """Fuzz 1198 case 252: a grid-stride loop made one row per thread bounds ``i``, a copy
    of ``tid`` (itself the global id): the guard analysis followed one copy only, so the
    guard bounded no id, and the coalesced tile of A loaded rows past args.N (past A's end:
    PoCL crashed now and then, a GPU would fault). Its bound is read through both copies;
    a guard that bounds no id leaves the kernel to the rules of one without a guard."""
    from naiveopt.analysis.guards import id_aliases
    from naiveopt.analysis.shape import kernel_shape
    from naiveopt.passes.optimize.tiling import guards_thread_space

    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(GRID_STRIDE_ROWS, filename="gs0.cl", target=target,
                                   options={"disable": ["split-reduction"]})
        (k,) = result.kernels
        assert k.verification.status == "passed", k.verification.detail
        assert "coalesce" in k.passes
        code = re.sub(r"\s+", " ", result.code)
        loads = [m.start() for m in re.finditer(r"A\[\(64 \* bidx \+ r\) \* args\.K", code)]
        assert loads
        for at in loads:           # each load's condition bounds the row
            assert "64 * bidx + r < args.N" in code[at - 80:at], code[at - 80:at]


@pytest.mark.parametrize("guard, bounds_all", [
    ("i < n && j < m", True), ("i < n", False), ("j < m", False), ("i < n && p < m", False)])
def test_a_guard_bounds_the_thread_space_only_where_it_bounds_every_id(guard, bounds_all):
    """A 2-D kernel guarded on one id relies on its launch along the other, as one without
    a guard does (tiling.guards_thread_space): a launch may overhang only what the guard
    bounds."""
    from naiveopt.analysis.shape import ShapeAnalysis
    from naiveopt.frontend import parse_module
    from naiveopt.passes.manager import PassContext, run_passes
    from naiveopt.passes.optimize.tiling import guards_thread_space
    from naiveopt.passes.pipeline import front_passes

    source = f"""
__global__ void k(const float *A, float *C, int n, int m, int p)
{{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    size_t i = t;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if ({guard})
        C[j * n + i] = 2.0f * A[j * n + i];
}}
"""
    module = parse_module("k.cu", source, {})
    ctx = PassContext(module, "cuda", "none")
    run_passes(front_passes(), ctx)
    proc = module.procedures[0]
    shape, _ = ctx.am.get(proc, ShapeAnalysis)
    assert shape.guard is not None
    assert guards_thread_space(proc, shape) == bounds_all


PARBOIL_SGEMM = """\
#define A(i,j) A[(i) + (j)*lda]
#define B(i,j) B[(i) + (j)*ldb]
#define C(i,j) C[(i) + (j)*ldc]
__global__ void mysgemmNT(const float *A, int lda, const float *B, int ldb, float *C, int ldc,
                          int k, float alpha, float beta)
{
    float c = 0.0f;
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    int n = blockIdx.y * blockDim.y + threadIdx.y;
    for (int i = 0; i < k; ++i) {
        float a = A(m, i);
        float b = B(n, i);
        c += a * b;
    }
    C(m, n) = C(m, n) * beta + alpha * c;
}
"""


def test_a_padded_leading_dimension_is_no_thread_space():
    """Parboil's sgemm: column-major, no guard, launched over m x n threads where C's leading
    dimension ldc may exceed m. Reading ldc (the row width the written index implies) as the
    x extent made the optimized output write C's padding rows m..ldc-1 and read A past its
    end (a probe found 416 of 1952 elements wrong at m=48, ldc=61), verified all the same:
    the naive kernel ran on ldc columns too. The x extent is the launch's, a free size."""
    result = naiveopt.optimize(PARBOIL_SGEMM, filename="sgemm.cu", target="opencl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "thread-merge" in k.passes or "thread-block-merge" in k.passes, k.passes
    m, n, kk, lda, ldb, ldc = 48, 32, 37, 48, 32, 61
    rng = np.random.default_rng(5)
    A = rng.standard_normal((kk, lda)).astype(np.float32)
    B = rng.standard_normal((kk, ldb)).astype(np.float32)
    C = rng.standard_normal((n, ldc)).astype(np.float32)
    cfg = naiveopt.launch_config(result, globalDimX=m, globalDimY=n, lda=lda, ldb=ldb,
                                 ldc=ldc, k=kk)
    extra = [np.int32(m), np.int32(n)]          # naiveopt_globalDimX, naiveopt_globalDimY
    assert re.search(r"float beta, int naiveopt_globalDimX,\s+int naiveopt_globalDimY\)", result.code)
    (_, _, got) = run_opencl(result.code, "mysgemmNT",
                             [g * b for g, b in zip(cfg.grid, cfg.block)], list(cfg.block),
                             [A, np.int32(lda), B, np.int32(ldb), C.copy(), np.int32(ldc),
                              np.int32(kk), np.float32(1.5), np.float32(0.75)] + extra)
    want = C.copy()
    want[:, :m] = C[:, :m] * 0.75 + 1.5 * (B[:, :n].T @ A[:, :m])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert np.array_equal(got[:, m:], C[:, m:])          # the padding rows untouched
