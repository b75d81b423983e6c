"""Launch geometry (issue 11, items 3 and 4): every dimension of the naive kernel's thread
space is launched (z batches, rows taken from blockIdx alone, threadIdx.z), and the geometry
text is C integer arithmetic that compiles and agrees with the sidecar's trees, the Python
evaluator and the launch verification runs."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import naiveopt
from naiveopt.api import compile_module
from naiveopt.frontend import parse_unit
from naiveopt.launch import LaunchGeometry, evaluate, parse, to_c
from naiveopt.verify import expr, opencl
from naiveopt.verify.check import launch_sizes, make_arg
from naiveopt.verify.spec import load_metadata, metadata_path

from conftest import KERNEL_FILES, kernel_id, run_opencl

CC = shutil.which("gcc") or shutil.which("cc") or shutil.which("clang")


# --------------------------------------------------------------- item 4: the geometry text
def test_ceil_division_is_parenthesized_integer_arithmetic():
    geo = LaunchGeometry((64, 1), (1, 1), ("nx - 1", "1"))
    assert geo.grid == ("(nx - 1 + 63) / 64", "1", "1")
    assert geo.global_size == ("(nx - 1 + 63) / 64 * 64", "1", "1")
    assert geo.grid_trees[0] == {"op": "ceil_div", "args": [
        {"op": "-", "args": [{"var": "nx"}, {"const": 1}]}, {"const": 64}]}
    assert geo.sizes({"nx": 129}) == ((128, 1, 1), (64, 1, 1))
    assert geo.sizes({"nx": 130}) == ((192, 1, 1), (64, 1, 1))
    # coarsened, products, literal spaces, metadata's ceil(a, b)
    geo = LaunchGeometry((16, 8), (2, 4), ("W * H", "ceil(N, 3)"))
    assert geo.grid[:2] == ("(W * H + 31) / 32", "((N + 2) / 3 + 31) / 32")
    assert LaunchGeometry((256, 1), (1, 1), ("1000", "1")).grid == ("4", "1", "1")
    assert to_c(parse("a - (b - c)")) == "a - (b - c)"
    assert to_c(parse("(a - b) - c")) == "a - b - c"
    assert to_c(parse("a * (b + c) / d")) == "a * (b + c) / d"
    assert to_c(parse("min(a, b + 1)")) == "a < (b + 1) ? a : (b + 1)"
    assert parse("(float)n") is None and parse("sizeof(float)") is None


def test_integer_casts_in_a_thread_space_leave_the_sizes():
    """``x >= (long)w`` bounds the thread space by w: a cast to an integer type changes no
    size, so the geometry stays arithmetic the sidecar carries and verification evaluates."""
    assert parse("(int)n") == {"var": "n"}
    assert parse("(long) w") == {"var": "w"}
    assert parse("(unsigned long long)(n / 2) * 2") == parse("(n / 2) * 2")
    assert parse("(const size_t) n + 1") == parse("n + 1")
    assert parse("(n) * 2") == parse("n * 2")
    geo = LaunchGeometry((32, 8), (1, 1), ("(long) w", "(size_t)h"))
    assert geo.sizes({"w": 33, "h": 9}) == ((64, 16, 1), (32, 8, 1))


def test_evaluate_has_c_integer_semantics():
    assert evaluate(parse("-7 / 2"), {}) == -3          # truncation toward zero, as C
    assert evaluate(parse("-7 % 2"), {}) == -1
    assert evaluate(parse("ceil(7, 2)"), {}) == 4
    with pytest.raises(ValueError):
        evaluate(parse("n + 1"), {})
    with pytest.raises(ValueError):
        evaluate(parse("n / 0"), {"n": 3})


def _c_values(expressions: list[str], sizes: dict[str, int], tmp_path) -> list[int]:
    """Compile the expressions as C with ``sizes`` as int variables; print their values."""
    decls = "".join(f"    int {k} = {v};\n" for k, v in sizes.items())
    uses = "".join(f"    (void){k};\n" for k in sizes)
    prints = "".join(f'    printf("%ld\\n", (long)({e}));\n' for e in expressions)
    src = tmp_path / "geo.c"
    src.write_text(f"#include <stdio.h>\nint main(void) {{\n{decls}{uses}{prints}"
                   "    return 0;\n}\n")
    exe = tmp_path / "geo"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return [int(v) for v in out.split()]


LIBRARY = [p for p in KERNEL_FILES if os.path.exists(metadata_path(p))]


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("path", LIBRARY, ids=kernel_id)
def test_library_geometry_compiles_as_c_and_agrees_with_the_sidecar(path, tmp_path):
    """Each library kernel's grid, naive and optimized: the header's C text compiled by a C
    compiler, the sidecar's trees evaluated by naiveopt.launch.evaluate, and the launch the
    verifier makes all give ceil(thread space / (block * outputs per thread / threads per
    output)) at the
    metadata's test and odd sizes."""
    spec = load_metadata(metadata_path(path))
    source = open(path).read()
    for opt in (False, True):
        result = naiveopt.optimize(source, filename=path, opt=opt, verify=False)
        for k in result.kernels:
            data = json.loads(json.dumps(k.geometry.to_json()))      # as a JSON consumer
            header = (f"dim3({', '.join(data['grid'][:2])})" if path.endswith(".cu") else
                      f"global size: ({', '.join(data['global_size'][:2])})")
            assert header in result.code
            for name in ("test", "odd"):
                sizes = spec.sizes.get(name)
                if not sizes:
                    continue
                # a group of threads_per_output threads computes one output along x
                lanes = [data.get("threads_per_output", 1), 1, 1]
                want = [-(-int(expr.evaluate(t, sizes)) // (b * c // n)) for t, b, c, n in zip(
                    data["thread_space"], data["block"], data["outputs_per_thread"], lanes)]
                assert [evaluate(t, sizes) for t in data["grid_tree"]] == want
                assert _c_values(data["grid"] + data["global_size"], sizes, tmp_path) == \
                    want + [w * b for w, b in zip(want, data["block"])]
                global_size, local = launch_sizes(k.geometry, sizes)
                assert list(global_size) == [w * b for w, b in zip(want, data["block"])]
                assert list(local) == data["block"]


# ------------------------------------------------------------ item 3: every dimension
def _optimize(source: str, filename: str, **kw):
    return naiveopt.optimize(source, filename=filename, **kw)


def _run_output(result, source: str, kernel: str, sizes: dict[str, int]):
    """Run the output (OpenCL target) with the launch its geometry gives; the arrays after."""
    k = next(k for k in result.kernels if k.name == kernel)
    spec = compile_module(parse_unit(result.input, source), None, "sm_90", False).spec
    rng = np.random.default_rng(3)
    args = [make_arg(a, sizes, rng) for a in spec.kernels[kernel].args]
    global_size, local = launch_sizes(k.geometry, sizes)
    return opencl.run(result.code, kernel, [], args, global_size, local), global_size


BATCH_CU = """\
#pragma naiveopt sizes(m=1000, nb=5)
#pragma naiveopt array(a, nb*m) array(b, nb*m)
__global__ void scale(const float *a, float *b, int m, int nb) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int z = blockIdx.z;
    if (i < m && z < nb)
        b[z * m + i] = 2.0f * a[z * m + i] + 1.0f;
}
"""

BATCH_CL = {
    "group": """\
#pragma naiveopt sizes(m=1000, nb=5)
#pragma naiveopt array(a, nb*m) array(b, nb*m)
__kernel void scale(__global const float *a, __global float *b, int m, int nb) {
    int i = get_global_id(0);
    int z = get_group_id(2);
    if (i < m && z < nb)
        b[z * m + i] = 2.0f * a[z * m + i] + 1.0f;
}
""",
    "global": """\
#pragma naiveopt sizes(m=1000, nb=5)
#pragma naiveopt array(a, nb*m) array(b, nb*m)
__kernel void scale(__global const float *a, __global float *b, int m, int nb) {
    int i = get_global_id(0);
    if (i >= m || get_global_id(2) >= nb) return;
    b[get_global_id(2) * m + i] = 2.0f * a[get_global_id(2) * m + i] + 1.0f;
}
"""}


def _check_batch(result, source, m=1000, nb=5):
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.geometry.thread_space[2] == "nb" and k.geometry.grid[2] == "nb"
    assert k.geometry.block[2] == 1
    for target in ("opencl",):
        out = result if result.target == target else None
        if out is None:
            continue
        (a, b), global_size = _run_output(out, source, "scale", {"m": m, "nb": nb})
        assert global_size[2] == nb                        # the z dimension is launched
        b = b.reshape(nb, m)
        assert np.allclose(b[-1], 2 * a.reshape(nb, m)[-1] + 1)   # the last batch written


@pytest.mark.parametrize("opt", [False, True])
def test_blockidx_z_batched_cuda_kernel_launches_every_batch(opt):
    result = _optimize(BATCH_CU, "batch.cu", opt=opt)
    _check_batch(result, BATCH_CU)
    assert ", nb), dim3(" in result.code
    # translated to OpenCL: run it with the output's own launch
    _check_batch(_optimize(BATCH_CU, "batch.cu", target="opencl", opt=opt), BATCH_CU)


@pytest.mark.parametrize("form", sorted(BATCH_CL))
def test_opencl_z_batched_kernel_launches_every_batch(form):
    result = _optimize(BATCH_CL[form], "batch.cl")
    _check_batch(result, BATCH_CL[form])
    assert re.search(r"global size: \(.*, 1, nb\)", result.code)


def test_z_without_a_known_extent_is_not_launched_as_one_batch():
    source = BATCH_CU.replace(" && z < nb", "")
    (k,) = _optimize(source, "batch.cu").kernels
    assert k.geometry.thread_space[2] == "globalDimZ" and k.verification.status != "passed"
    assert "threads(X, Y, Z)" in k.verification.detail
    # a 3-D pragma gives it
    (k,) = _optimize(source.replace("array(b, nb*m)", "array(b, nb*m) threads(m, 1, nb)"),
                     "batch.cu").kernels
    assert k.verification.status == "passed" and k.geometry.grid[2] == "nb"


ROWS_CU = """\
#pragma naiveopt sizes(n=300, m=37)
#pragma naiveopt array(a, m, n) array(b, m, n)
__global__ void rows(const float *a, float *b, int n, int m) {
    int row = blockIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n)
        b[row * n + col] = a[row * n + col] + 1.0f;
}
"""


@pytest.mark.parametrize("opt", [False, True])
def test_row_from_blockidx_y_alone_covers_every_row(opt):
    result = _optimize(ROWS_CU, "rows.cu", target="opencl", opt=opt)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.geometry.thread_space[:2] == ("n", "m")
    (a, b), global_size = _run_output(result, ROWS_CU, "rows", {"n": 300, "m": 37})
    assert global_size[1] >= 37
    assert np.allclose(b, a + 1)                          # every row, the last included


def test_column_from_blockidx_x_alone_runs_one_thread_per_block_in_the_naive_launch():
    source = """\
#pragma naiveopt sizes(n=333)
#pragma naiveopt array(a, n) array(b, n)
__kernel void inc(__global const float *a, __global float *b, int n) {
    int i = get_group_id(0);
    if (i < n) b[i] = a[i] + 1.0f;
}
"""
    result = _optimize(source, "inc.cl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    (a, b), _ = _run_output(result, source, "inc", {"n": 333})
    assert np.allclose(b, a + 1)


THREAD_Z_CU = """\
#pragma naiveopt sizes(n=100, d=6)
#pragma naiveopt array(a, d, n) array(b, d, n) block(32, 1, 2) threads(n, 1, d)
__global__ void depth(const float *a, float *b, int n, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i < n && k < d)
        b[k * n + i] = a[k * n + i] * 3.0f;
}
"""


def test_threadidx_z_block_is_kept_and_the_passes_decline():
    result = _optimize(THREAD_Z_CU, "depth.cu", target="opencl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.geometry.block == (32, 1, 2) and k.geometry.grid[2] == "(d + 1) / 2"
    assert k.passes == []
    assert any("threads along z" in r.message for r in result.remarks if r.kind == "missed")
    (a, b), global_size = _run_output(result, THREAD_Z_CU, "depth", {"n": 100, "d": 7})
    assert global_size[2] == 8
    assert np.allclose(b, a * 3)


def test_threadidx_z_with_the_default_block_is_optimized_with_block_z_1():
    source = THREAD_Z_CU.replace(" block(32, 1, 2)", "")
    result = _optimize(source, "depth.cu", target="opencl")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert k.geometry.block[2] == 1 and k.geometry.grid[2] == "d"
    (a, b), _ = _run_output(result, source, "depth", {"n": 100, "d": 7})
    assert np.allclose(b, a * 3)


def test_profiler_counts_blocks_across_z():
    from naiveopt.profile import profile_file

    (p,) = profile_file(BATCH_CU, "batch.cu", opt=False)
    assert p.blocks == 4 * 5               # ceil(1000 / 256) x 1 x 5


@pytest.mark.parametrize("arch", ["gfx90a", "sm_80"])
def test_partition_camping_model_reads_3d_geometry(arch):
    """The partition-camping model (gfx90a, sm_80) reads the grid: a 3-D geometry crashed it
    (fuzz seed 1111); its grid at the model size comes from the geometry's trees."""
    from naiveopt.passes.optimize.partition_camping import MODEL_SIZE, _at_model_size

    result = _optimize(BATCH_CU, "batch.cu", arch=arch)
    assert result.kernels[0].verification.status == "passed"
    geo = LaunchGeometry((64, 1), (1, 1), ("N - 1", "1"))
    assert _at_model_size(geo.grid_trees[0]) == -(-(MODEL_SIZE - 1) // 64)


# ---------------------------------------- block constants: blockIdx.x * BLOCK_SIZE + threadIdx.x
CS_MATMUL_CU = """\
#define BLOCK_SIZE 16
#pragma naiveopt sizes(wA=37, wB=48, hA=32) threads(wB, hA)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__global__ void matrixMulNaive(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = by * BLOCK_SIZE + ty;
    int col = BLOCK_SIZE * bx + tx;
    float Csub = 0;
    for (int k = 0; k < wA; ++k)
        Csub += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = Csub;
}
"""

HOST_LAUNCH = """
int main() {
    float *A = 0, *B = 0, *C = 0;
    dim3 threads(%s);
    dim3 grid(48 / threads.x, 32 / threads.y);
    matrixMulNaive<<<grid, threads>>>(C, A, B, 37, 48);
    return 0;
}
"""


def _remarks(result, kind: str, pass_name: str) -> list[str]:
    return [r.message for r in result.remarks if r.kind == kind and r.pass_name == pass_name]


def _module(source: str, filename: str):
    return compile_module(parse_unit(filename, source), None, "sm_90", False).module


def test_block_constant_is_the_naive_block_and_the_index_the_global_id():
    from naiveopt.launch import default_block

    result = _optimize(CS_MATMUL_CU, "cs.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert any("BLOCK_SIZE = 16 taken as the block size along x" in m and "along y" in m
               for m in _remarks(result, "analysis", "predefined"))
    assert any("by * BLOCK_SIZE + ty -> idy" in m and "BLOCK_SIZE * bx + tx -> idx" in m
               for m in _remarks(result, "applied", "thread-ids"))
    assert "thread-block-merge" in k.passes
    (proc,) = _module(CS_MATMUL_CU, "cs.cu").procedures
    assert proc.pragma.block_constant == (16, 16) and default_block(proc) == (16, 16)
    # another constant is another block; a literal is a constant; the naive program keeps the
    # index as written and runs at that block
    source = CS_MATMUL_CU.replace("#define BLOCK_SIZE 16", "#define BLOCK_SIZE 8")
    (proc,) = _module(source, "cs.cu").procedures
    assert default_block(proc) == (8, 8)
    source = """\
#pragma naiveopt sizes(n=1001) array(a, n) array(b, n)
__global__ void inc(const float *a, float *b, int n) {
    int i = threadIdx.x + blockIdx.x * 128;
    if (i < n) b[i] = a[i] + 1.0f;
}
"""
    (proc,) = _module(source, "inc.cu").procedures
    assert proc.pragma.block_constant == (128, None) and default_block(proc) == (128, 1)
    result = _optimize(source, "inc.cu", target="opencl")
    assert result.kernels[0].verification.status == "passed"
    (a, b), _ = _run_output(result, source, "inc", {"n": 1001})
    assert np.allclose(b, a + 1)


def test_block_constant_agrees_with_the_host_launch():
    result = _optimize(CS_MATMUL_CU + HOST_LAUNCH % "BLOCK_SIZE, BLOCK_SIZE", "cs.cu")
    assert result.kernels[0].verification.status == "passed"
    assert "thread-block-merge" in result.kernels[0].passes
    assert "matrixMulNaive_launch_from(grid, threads," in result.code


@pytest.mark.parametrize("change, why", [
    (lambda s: s + HOST_LAUNCH % "32, 8",
     "line 22: the host code launches it with 32 threads along x, not 16"),
    (lambda s: s + HOST_LAUNCH.replace("dim3 threads(%s);", "dim3 threads(16, 16); "
                                       "threads.x = 32;"),
     "block 'threads', which naiveopt cannot evaluate"),
    (lambda s: s.replace("threads(wB, hA)", "threads(wB, hA) block(32, 8)"),
     "the naive launch's block is 32 along x (metadata or pragma), not 16"),
    (lambda s: s.replace("#define BLOCK_SIZE 16", "#ifndef BLOCK_SIZE\n#define BLOCK_SIZE 16\n"
                         "#endif"),
     "BLOCK_SIZE is a #ifndef default that a build may override"),
    (lambda s: s.replace("#define BLOCK_SIZE 16\n", "").replace("int wB)", "int wB, "
                                                                 "int BLOCK_SIZE)"),
     "BLOCK_SIZE is not an integer the compile fixes"),
    (lambda s: s.replace("C[row * wB + col] = Csub;", "C[row * wB + col] = Csub * "
                         "(blockDim.x / 16) * (blockDim.y / 16);"),
     "the kernel also reads blockDim.x"),
])
def test_block_constant_not_taken(change, why):
    """A block the launch gives otherwise, a constant a build or a caller may change, or a
    blockDim beside the constant: the block is not inferred and the index stays as it is."""
    source = change(CS_MATMUL_CU)
    module = _module(source, "cs.cu")
    assert module.procedures[0].pragma.block_constant[0] is None
    result = _optimize(source, "cs.cu", verify=False)
    assert any(why in m for m in _remarks(result, "missed", "predefined")), \
        _remarks(result, "missed", "predefined")
    assert not any("-> idx" in m for m in _remarks(result, "applied", "thread-ids"))
    assert "thread-block-merge" not in result.kernels[0].passes


def test_block_constant_with_a_thread_id_used_on_its_own_keeps_that_axis():
    """threadIdx.x read elsewhere keeps the meaning of the naive block: x is not read as idx
    (the naive block is still the constant's), y, whose ids serve the index alone, is."""
    from naiveopt.launch import default_block

    source = CS_MATMUL_CU.replace("float Csub = 0;", "float Csub = tx * 0.0f;")
    result = _optimize(source, "cs.cu")
    assert result.kernels[0].verification.status == "passed"
    assert any("along x not read as idx: the kernel also reads tx on its own" in m
               for m in _remarks(result, "missed", "thread-ids"))
    assert any("by * BLOCK_SIZE + ty -> idy" in m and "-> idx" not in m
               for m in _remarks(result, "applied", "thread-ids"))
    assert default_block(_module(source, "cs.cu").procedures[0]) == (16, 16)


TINYGRAD_AVGPOOL_CL = """\
__kernel void r_8_14_14_2_2(__global float* data0, const __global float* data1) {
  int gidx0 = get_group_id(0); /* 14 */
  int gidx1 = get_group_id(1); /* 8 */
  int lidx0 = get_local_id(0); /* 14 */
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 2; ridx0++) {
    for (int ridx1 = 0; ridx1 < 2; ridx1++) {
      float val0 = *(data1+((gidx1*784)+(gidx0*56)+(lidx0*2)+(ridx0*28)+ridx1));
      acc0 = (acc0+val0);
    }
  }
  *(data0+((gidx1*196)+(gidx0*14)+lidx0)) = (acc0*0.25f);
}
"""


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_a_block_constant_among_the_terms_of_a_flat_index_is_the_block(target):
    """tinygrad's generated kernels index by group and local ids and literal strides
    (``(gidx1*196)+(gidx0*14)+lidx0``: 14-wide work-groups, tinygrad launches 14x8 of them):
    the block constant among the terms of the sum is the naive block. Read as the default
    256-wide block, the header, sidecar and launcher gave a launch on which the output (the
    kernel unchanged) wrote 1456 of 1568 elements wrong, and verification compared the
    kernel with itself on that launch."""
    result = _optimize(TINYGRAD_AVGPOOL_CL, "tg.cl", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert any("14 = 14 taken as the block size along x" in m
               for m in _remarks(result, "analysis", "predefined"))
    cfg = naiveopt.launch_config(result, globalDimX=196, globalDimY=8)
    assert cfg.block[:2] == (14, 1) and cfg.grid[:2] == (14, 8)
    if target == "opencl":
        x = np.random.default_rng(7).standard_normal((8, 28, 28)).astype(np.float32)
        out = np.full(8 * 196, np.nan, np.float32)
        (got, _) = run_opencl(result.code, "r_8_14_14_2_2",
                              [g * b for g, b in zip(cfg.grid[:2], cfg.block[:2])],
                              list(cfg.block[:2]), [out, x.ravel()])
        np.testing.assert_allclose(got, x.reshape(8, 14, 2, 14, 2).mean((2, 4)).ravel(),
                                   atol=1e-6)


def test_a_flat_index_with_a_block_constant_is_rewritten_around_the_id():
    """The terms of the sum other than the block-id product and the thread id stay:
    ``1 + blockIdx.x * 64 + threadIdx.x`` (``(1 + blockIdx.x * 64) + threadIdx.x`` to the
    parser: the pair is no subexpression) is ``1 + idx``."""
    source = """\
__global__ void shift(const float *a, float *b, int n)
{
    int i = 1 + blockIdx.x * 64 + threadIdx.x;
    if (i < n) b[i] = a[i - 1] * 2.0f;
}
"""
    result = _optimize(source, "shift.cu", target="opencl")
    assert any("1 + bidx * 64 + tidx -> 1 + idx" in m
               for m in _remarks(result, "applied", "thread-ids")), \
        _remarks(result, "applied", "thread-ids")
    assert result.kernels[0].geometry.block[0] == 64
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail


BLOG_TRANSPOSE_CU = """#define TILE_DIM 32
#define BLOCK_ROWS 8
#pragma naiveopt sizes(N=64) threads(N, N)
__global__ void transposeNaive(float *odata, const float *idata)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x*width + (y+j)] = idata[(y+j)*width + x];
}
"""


@pytest.mark.parametrize("form", ["local", "inline", "c89"])
def test_a_coarsened_kernel_is_launched_with_its_step_as_the_block(form):
    """The NVIDIA blog's transpose is launched with TILE_DIM x BLOCK_ROWS threads: each
    thread copies TILE_DIM / BLOCK_ROWS rows (y + j). TILE_DIM is not the block along y:
    reading ``blockIdx.y * TILE_DIM + threadIdx.y`` as the global id made the output compute
    other rows than the input under the user's launch (it once did, silently), and launching
    TILE_DIM-row blocks (the header's launch, once) makes blocks overlap. The naive launch is
    32 x 8 threads, 4 rows a thread; the passes keep it; verification runs it and passes
    (at square sizes: the blog's kernel transposes square matrices only, and on others its
    threads write the same elements, a race that makes two runs differ)."""
    from naiveopt.launch import default_block, geometry

    source = BLOG_TRANSPOSE_CU
    if form == "inline":
        source = source.replace("(y+j)", "(blockIdx.y * TILE_DIM + threadIdx.y + j)")
    if form == "c89":
        source = source.replace("for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)",
                                "int j;\n    for (j = 0; j < TILE_DIM; j = j + BLOCK_ROWS)")
    proc = _module(source, "t.cu").procedures[0]
    assert proc.pragma.block_constant == (32, None)
    assert proc.pragma.coarsened == (None, (8, 4))
    assert default_block(proc) == (32, 8)
    geo = geometry(proc)
    assert geo.block == (32, 8, 1) and geo.coarsen == (1, 4, 1)
    result = _optimize(source, "t.cu")
    assert any("the naive block along y is 8 threads, each covering 4 rows" in m
               for m in _remarks(result, "analysis", "predefined")), \
        _remarks(result, "analysis", "predefined")
    assert any("a coarsened kernel" in m for m in _remarks(result, "missed", "coalesce"))
    assert not any("-> idy" in m for m in _remarks(result, "applied", "thread-ids"))
    assert "blockDim.y" not in result.code
    assert "dim3(32, 8)" in result.code and "dim3((N + 31) / 32, (N + 31) / 32)" in result.code
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail


@pytest.mark.parametrize("change, why", [
    ("j += 12", "the kernel adds the loop iterator j to it"),           # 12 does not divide 32
    ("j += step", "the kernel adds the loop iterator j to it"),         # not a constant
    ("j++", "the kernel adds the loop iterator j to it"),              # one-thread blocks
])
def test_a_coarsened_kernel_without_a_dividing_constant_step_is_not_read_so(change, why):
    source = BLOG_TRANSPOSE_CU.replace("j += BLOCK_ROWS", change).replace(
        "const float *idata)", "const float *idata, int step)")
    proc = _module(source, "t.cu").procedures[0]
    assert proc.pragma.coarsened == (None, None) and proc.pragma.block_constant[1] is None
    result = _optimize(source, "t.cu", verify=False)
    assert any(why in m for m in _remarks(result, "missed", "predefined"))


def test_a_loop_stepping_by_the_whole_tile_is_one_row_a_thread():
    """``j += TILE_DIM`` runs once: TILE_DIM-row blocks, one row a thread."""
    from naiveopt.launch import default_block, geometry

    source = BLOG_TRANSPOSE_CU.replace("j += BLOCK_ROWS", "j += TILE_DIM")
    proc = _module(source, "t.cu").procedures[0]
    assert proc.pragma.coarsened == (None, (32, 1))
    assert default_block(proc) == (32, 32) and geometry(proc).coarsen == (1, 1, 1)


def test_a_coarsened_kernel_follows_the_host_codes_launch():
    """A host launch with TILE_DIM-row blocks is the user's claim: not read as coarsened."""
    host = """
void run(float *o, const float *i, int n) {
    dim3 block(TILE_DIM, TILE_DIM), grid(n / TILE_DIM, n / TILE_DIM);
    transposeNaive<<<grid, block>>>(o, i);
}
"""
    proc = _module(BLOG_TRANSPOSE_CU + host, "t.cu").procedures[0]
    assert proc.pragma.coarsened == (None, None)
    ok = _module(BLOG_TRANSPOSE_CU + host.replace("block(TILE_DIM, TILE_DIM)",
                                                  "block(TILE_DIM, BLOCK_ROWS)"),
                 "t.cu").procedures[0]
    assert ok.pragma.coarsened == (None, (8, 4))


def test_launch_block_reads_dim3_blocks_from_host_code():
    from naiveopt.frontend.launch_sites import LaunchSite, launch_block

    def block(config: str, host: str = "", fixed=None):
        site = LaunchSite("k", 0, 0, 1, 1, config=["grid", config])
        return launch_block(site, host, fixed or {})

    assert block("threads", "dim3 threads(BS, BS);", {"BS": 16}) == (16, 16, 1)
    assert block("t", "dim3 t = dim3(32, 8);") == (32, 8, 1)
    assert block("dim3(BS, 4)", fixed={"BS": 64}) == (64, 4, 1)
    assert block("256") == (256, 1, 1)
    assert block("t", "dim3 t(16, 16); t.x = 32;") is None      # changed after
    assert block("t", "dim3 t(16, 16); /* t = dim3(1); */") == (16, 16, 1)
    assert block("n", "int n = 16;") is None                      # not a dim3
    assert block("dim3(n, 1)") is None                            # not a fixed size
    # the CUDA samples' list of dim3s in one declaration
    host = "dim3 grid(size_x / TILE_DIM, size_y / TILE_DIM), threads(TILE_DIM, BLOCK_ROWS);"
    assert block("threads", host, {"TILE_DIM": 32, "BLOCK_ROWS": 8}) == (32, 8, 1)
    assert block("threads", host + " threads.y = 4;", {"TILE_DIM": 32, "BLOCK_ROWS": 8}) is None
    assert block("b", "dim3 a(4), b;") is None                   # no size naiveopt reads


SAMPLES_TRANSPOSE_CU = """\
#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transposeNaive(float *odata, const float *idata, int width, int height)
{
    int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
    int index_in = xIndex + width * yIndex;
    int index_out = yIndex + height * xIndex;
    for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
        odata[index_out + i] = idata[index_in + i * width];
}
void run(float *d_out, const float *d_in, int size_x, int size_y)
{
    dim3 grid(size_x / TILE_DIM, size_y / TILE_DIM), threads(TILE_DIM, BLOCK_ROWS);
    transposeNaive<<<grid, threads>>>(d_out, d_in, size_x, size_y);
}
"""


def test_a_block_dependent_kernel_takes_its_host_launchs_block():
    """The CUDA samples' naive transpose reads its thread ids on their own (y covers 32 rows
    with 8 threads): its naive block is the host code's (32, 8), not the default 16x16 on
    which it was verified and which its header gave (rows overlapping)."""
    result = _optimize(SAMPLES_TRANSPOSE_CU, "tr.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert any("the naive block is the host code's launch block (32, 8, 1" in m
               for m in _remarks(result, "analysis", "predefined"))
    assert k.geometry.block[:2] == (32, 8)


@pytest.mark.parametrize("source", [
    # two block constants: which block was it written for?
    "__global__ void two(float *y, const float *x, int n)\n{\n"
    "    int i = blockIdx.x * 32 + threadIdx.x;\n    int k = blockIdx.x * 64 + threadIdx.x;\n"
    "    if (i < n && k < n) y[i] = x[k];\n}\n",
    # a coarsened loop whose step does not divide the tile
    BLOG_TRANSPOSE_CU.replace("j += BLOCK_ROWS", "j += 12").replace(
        "#pragma naiveopt sizes(N=64) threads(N, N)\n", ""),
])
def test_verification_does_not_guess_the_block_a_kernel_was_written_for(source):
    """Where the kernel's index names a block constant the predefined pass cannot read as
    its block and nothing gives the block, verification says so instead of running the naive
    kernel under the default block (out of bounds or racing, blamed on the output); with
    the block given, it runs."""
    result = _optimize(source, "u.cu")
    (kernel,) = result.kernels
    assert kernel.verification.status == "skipped"
    assert "the block the naive kernel was written for is unknown" in \
        kernel.verification.detail and "block(X, Y)" in kernel.verification.detail
    given = _optimize("#pragma naiveopt block(32, 8)\n" + source
                      if "TILE_DIM" in source else "#pragma naiveopt block(32)\n" + source,
                      "u.cu")
    assert "unknown" not in given.kernels[0].verification.detail
