"""Asynchronous multi-stage tile pipelines (passes/optimize/async_pipeline.py): the copies in
both dialects, the shape of the pipelined loop, verification at multiple and odd sizes from
both input dialects, the pass's decisions, and nvcc compiles for sm_80 and sm_90 (cp.async in
the SASS) and for an older architecture (the synchronous fallback)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from pycparser import c_ast

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.ir.async_copy import AsyncCopy, AsyncFence, can_copy, cuda_helpers, drop_fences
from naiveopt.ir.cgen import to_c
from naiveopt.passes.options import PipelineOptions
from conftest import KERNELS_DIR, compile_cuda, nvcc, unsplit

# C = A B^T read through a staged tile (coalesce), sizes that are not tile multiples
DOTS = r"""
#pragma naiveopt sizes(N=45, M=37, K=29) array(A, M, K) array(B, N, K) array(C, N, M)
__global__ void dots(const float *A, const float *B, float *C, int N, int M, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < N && col < M) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[col * K + k] * B[row * K + k];
        C[row * M + col] = sum;
    }
}
"""

# the same in OpenCL, written as others do (size_t ids, C89 iterator)
DOTS_CL = r"""
#pragma naiveopt sizes(N=45, M=37, K=29) array(A, M, K) array(B, N, K) array(C, N, M)
__kernel void dots(__global const float *A, __global const float *B, __global float *C,
                   int N, int M, int K)
{
    size_t col = get_global_id(0);
    size_t row = get_global_id(1);
    int k;
    if (row < N && col < M) {
        float sum = 0.0f;
        for (k = 0; k < K; k++)
            sum += A[col * K + k] * B[row * K + k];
        C[row * M + col] = sum;
    }
}
"""

# a tile of chars: cp.async copies 4, 8 or 16 bytes
CHARS = DOTS.replace("void dots(const float *A", "void cdots(const char *A")

STAGED = ["coalesce", "prefetch", "async-pipeline"]


def remarks(result, name: str = "async-pipeline") -> list:
    return [r for r in result.remarks if r.pass_name == name]


def pipelined(source: str, filename: str, stages: int | None = None, **kw):
    options = PipelineOptions(passes=tuple(kw.pop("passes", STAGED)), pipeline_stages=stages)
    return naiveopt.optimize(source, filename=filename, options=options, **kw)


def _ref(name: str, index: str) -> c_ast.ArrayRef:
    return c_ast.ArrayRef(c_ast.ID(name), c_ast.ID(index))


def test_copies_print_as_cp_async_in_cuda_and_as_plain_copies_in_opencl():
    ok = c_ast.BinaryOp("<", c_ast.ID("i"), c_ast.ID("N"))
    node = AsyncCopy(_ref("s", "r"), _ref("A", "i"), ok, "float")
    assert to_c(node) == "naiveopt_cp_async(&s[r], &A[i], i < N);"
    assert to_c(AsyncCopy(_ref("s", "r"), _ref("A", "i"), None, "float")) == \
        "naiveopt_cp_async(&s[r], &A[i], 1);"
    node.dialect = "opencl"
    assert to_c(node) == "s[r] = i < N ? A[i] : 0;"
    assert to_c(AsyncFence("commit")) == "naiveopt_cp_async_commit();"
    assert to_c(AsyncFence("wait", 2)) == "naiveopt_cp_async_wait<2>();"
    body = c_ast.Compound([AsyncFence("wait", 1), node, AsyncFence("commit")])
    drop_fences(body)
    assert body.block_items == [node]
    assert cuda_helpers([body]) and not cuda_helpers([c_ast.Compound([])])
    assert can_copy("float") and can_copy("double") and can_copy("int")
    assert not can_copy("char") and not can_copy("short") and not can_copy("mystery_t")


@pytest.mark.parametrize("stages", [2, 3])
def test_pipelined_loop_issues_the_tile_stages_ahead_and_waits_for_its_own(stages):
    result = pipelined(DOTS, "dots.cu", stages)
    (k,) = result.kernels
    assert k.passes == STAGED and k.verification.status == "passed", result.remarks
    code = result.code
    assert re.search(rf"__shared__ float s_A\[{stages}\]\[16\]\[33\];", code)
    before, loop = code.split("for (int k0 = 0; k0 < K; k0 += 32)")
    loop = loop.rsplit("naiveopt_cp_async_wait<0>();", 1)[0]     # after the loop
    # tiles 0 .. S-2 issued before the loop, one group each, into stages 0 .. S-2
    assert before.count("naiveopt_cp_async_commit();") == stages - 1
    for j in range(stages - 1):
        assert re.search(rf"naiveopt_cp_async\(&s_A\[{j}\]\[r\]\[c\],", before)
    assert "float p_A" not in code                   # register prefetch is replaced
    # each iteration: wait for this tile, barrier, issue the tile S-1 ahead, compute
    wait = loop.index(f"naiveopt_cp_async_wait<{stages - 2}>();")
    barrier = loop.index("__syncthreads();")
    issue = re.search(rf"naiveopt_cp_async\(&s_A\[ws\]\[r\]\[c\],\s*&A\[[^;]*c \+ k0 \+ "
                      rf"{32 * (stages - 1)}\)\]", loop)
    commit = loop.index("naiveopt_cp_async_commit();")
    compute = loop.index("sum += s_A[st][tidx][kk]")
    assert issue and wait < barrier < issue.start() < commit < compute, loop
    assert loop.count("__syncthreads();") == 1        # the next barrier guards the buffer
    # out of range: zero-filled and nothing read (the range check is the copy's condition)
    assert re.search(r"c \+ k0 \+ \d+ < K && 16 \* bidx \+ r < M\);", loop)
    assert "naiveopt_cp_async_wait<0>();" in code      # nothing in flight after the loop


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("source,filename", [(DOTS, "dots.cu"), (DOTS_CL, "dots.cl")])
def test_pipelines_verify_from_both_dialects_at_multiple_and_odd_sizes(source, filename,
                                                                        stages):
    for sizes in ({"N": "64", "M": "64", "K": "64"}, {"N": "45", "M": "37", "K": "29"},
                  {"N": "17", "M": "70", "K": "3"}):
        result = pipelined(source, filename, stages, target="cuda", defines=sizes)
        (k,) = result.kernels
        assert "async-pipeline" in k.passes, remarks(result)
        assert k.verification.status == "passed", (sizes, k.verification.detail)


@pytest.mark.parametrize("stages", [2, 3])
def test_register_tiled_product_keeps_its_unrolled_whole_tiles(stages, tmp_path):
    from conftest import sizes_metadata
    meta = sizes_metadata(tmp_path, "mm", {"H": 128, "W": 128, "K": 64},
                          {"H": 131, "W": 67, "K": 37})
    with open(os.path.join(KERNELS_DIR, "mm.cu")) as fh:
        result = naiveopt.optimize(fh.read(), filename=os.path.join(KERNELS_DIR, "mm.cu"),
                                   metadata=meta, options=unsplit(PipelineOptions(
                                       register_tile=(8, 8), pipeline_stages=stages)))
    (k,) = result.kernels
    assert {"thread-merge", "async-pipeline"} <= set(k.passes), remarks(result)
    assert k.verification.status == "passed", k.verification.detail
    assert [c.split()[0] for c in k.verification.checks] == ["test", "odd"]
    code = result.code
    assert re.search(rf"__shared__ float s_A\[{stages}\]\[8\]\[\d+\];", code)
    # a whole k-tile runs the unrolled loop; the partial last one the bounded loop
    whole = re.search(r"if \(k0 \+ 8 <= K\) \{\s*#pragma unroll\s*for \(int kk = 0; kk < 8; "
                      r"kk\+\+\)", code)
    assert whole and "kk < 8 && k0 + kk < K" in code[whole.end():]
    # vector tile loads are declined: the copies hold no registers
    vec = [r for r in remarks(result, "vectorize") if "cp.async" in r.message]
    assert vec or "v_A" not in code


def test_pass_declines_where_there_is_no_cp_async_and_says_why():
    opencl = pipelined(DOTS, "dots.cu", target="opencl", arch="gfx90a")
    assert opencl.kernels[0].passes == ["coalesce", "prefetch"] or \
        opencl.kernels[0].passes == ["coalesce"]
    (r,) = remarks(opencl)
    assert r.kind == "missed" and r.message.startswith("OpenCL output has no asynchronous "
                                                       "copy (cp.async, sm_80 and later)")
    old = pipelined(DOTS, "dots.cu", arch="sm_75")
    (r,) = remarks(old)
    assert r.kind == "missed" and r.message.startswith("sm_75 has no asynchronous copy")
    chars = pipelined(CHARS, "cdots.cu", 2)
    (r,) = [r for r in remarks(chars) if r.kind == "missed"]
    assert "elements of type 'char': cp.async copies elements of 4 or 8 bytes" in r.message
    assert "naiveopt_cp_async" not in chars.code
    alone = pipelined(DOTS, "dots.cu", passes=["async-pipeline"])
    assert [(r.kind, r.message) for r in remarks(alone)] == [("missed", "no staged loop")]
    none = pipelined(DOTS, "dots.cu", 1)
    assert [r.message for r in remarks(none)] == \
        ["--pipeline-stages 1: the tiles keep register prefetch"]


def test_model_chooses_among_the_tiles_as_they_are_and_the_pipelines():
    result = pipelined(DOTS, "dots.cu")
    analysis = [r.message for r in remarks(result) if r.kind == "analysis"]
    # every candidate is estimated: the tiles as they are and the 2- and 3-stage pipelines
    assert len(analysis) == 3
    assert any("the tiles as they are (register prefetch)" in m for m in analysis)
    assert any(m.startswith("2-stage cp.async pipeline") for m in analysis)
    assert any(m.startswith("3-stage cp.async pipeline") for m in analysis)
    # the 3-stage one declares the tile three times
    assert re.search(r"3-stage cp.async pipeline: block 16x16, \d+ registers, 6336 B shared",
                     "\n".join(analysis))


def test_stage_count_is_checked():
    with pytest.raises(NaiveoptError, match="bad pipeline stages 5"):
        PipelineOptions(pipeline_stages=5)
    with pytest.raises(NaiveoptError, match="bad pipeline stages 0"):
        PipelineOptions(pipeline_stages=0)


def _sass(path: str, arch: str, tmp_path) -> str:
    done = compile_cuda(path, tmp_path, arch)
    assert done.returncode == 0, done.stderr
    from naiveopt.cost.sass import disassemble
    with open(os.path.join(str(tmp_path), os.path.basename(path) + ".cubin"), "rb") as fh:
        text, why = disassemble(fh.read())
    if text is None:
        pytest.skip(why)
    return text


@nvcc
@pytest.mark.parametrize("stages", [2, 3])
def test_pipelined_cuda_compiles_for_sm_80_and_sm_90_with_cp_async(stages, tmp_path):
    result = pipelined(DOTS, "dots.cu", stages, verify=False)
    path = tmp_path / "dots.cu"
    path.write_text(result.code)
    for arch in ("sm_80", "sm_90"):
        sass = _sass(str(path), arch, tmp_path)
        assert "LDGSTS" in sass and "DEPBAR" in sass, arch     # cp.async and its wait
    # before sm_80 the helpers copy synchronously: the file still compiles
    sass = _sass(str(path), "sm_75", tmp_path)
    assert "LDGSTS" not in sass


@nvcc
def test_register_tiled_pipeline_feeds_ffma_from_128_bit_shared_loads(tmp_path):
    with open(os.path.join(KERNELS_DIR, "mm.cu")) as fh:
        result = naiveopt.optimize(fh.read(), filename="mm.cu", verify=False,
                                   options=unsplit(PipelineOptions(register_tile=(8, 8),
                                                                   pipeline_stages=2)))
    assert "async-pipeline" in result.kernels[0].passes
    path = tmp_path / "mm.cu"
    path.write_text(result.code)
    from naiveopt.cost.sass import hot_loop
    for arch in ("sm_80", "sm_90"):
        mix = hot_loop(_sass(str(path), arch, tmp_path))
        assert mix.ffma_share >= 0.8 and mix.vector_shared_loads, (arch, mix.describe())


def test_sass_reading_skips_instructions_that_never_run():
    # ptxas pads cp.async with loads predicated on !PT: they are not shared loads of the loop
    from naiveopt.cost.sass import loops
    text = """
.L_x_3:
        /*0100*/              @!PT LDS RZ, [RZ] ;
        /*0110*/                   LDGSTS.E [R31], desc[UR4][R2.64], !P4 ;
        /*0120*/                   LDS.128 R24, [R90] ;
        /*0130*/               @P0 FFMA R1, R2, R3, R1 ;
        /*0140*/              @!P1 BRA `(.L_x_3) ;
"""
    (lp,) = loops(text)
    assert lp.shared_loads() == {"LDS.128": 1} and lp.ffma == 1 and lp.instructions == 4


@nvcc
def test_the_copy_helpers_compile_where_sizes_are_one_letter_macros(tmp_path):
    """syrk's output did not compile with -DN=... (NVRTC on an H200, 2026-11-29): the wait
    helper was ``template <int N>``. The helpers' template parameters are names no size has."""
    path = tmp_path / "syrk.cu"
    with open(os.path.join(KERNELS_DIR, "syrk.cu"), encoding="utf-8") as fh:
        source = fh.read()
    result = naiveopt.optimize(source, filename="syrk.cu", arch="sm_90", verify=False,
                               options=PipelineOptions(pipeline_stages=2))
    assert "naiveopt_cp_async_wait<" in result.code
    path.write_text(result.code)
    done = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-DN=512", "-DM=512", "-o",
                           str(tmp_path / "syrk.o"), str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
