"""The partition-camping pass: where it fires, that its outputs verify on PoCL (with the pass on
and off, both dialects, at multiple and odd sizes and at sizes where several blocks rotate),
that the diagonal block order is a permutation, and its legality rule for loop rotation."""
import os
import re

import pytest
from conftest import KERNELS_DIR, compile_cuda, nvcc, run_cli, unsplit
from pycparser import c_parser

import naiveopt
from naiveopt.passes.optimize.partition_camping import _diagonal_id, _independence_obstacle

NAME = "partition-camping"
TRANSPOSES = ["transpose.cu", "transpose.cl", "transpose_macro.cu", "transpose_macro.cl"]
MVS = ["mv.cu", "mv.cl", "mv_macro.cu", "mv_macro.cl"]
NO_PREFETCH = {"disable": ["prefetch"]}


def run(name, **kw):
    path = os.path.join(KERNELS_DIR, name)
    with open(path) as fh:
        return naiveopt.optimize(fh.read(), filename=path,
                                 options=unsplit(kw.pop("options", None)), **kw)


def remarks(result, kind=None):
    return [r.message for r in result.remarks if r.pass_name == NAME and
            (kind is None or r.kind == kind)]


def assert_verified(result, sets=("test", "odd")):
    for k in result.kernels:
        assert k.verification.status == "passed", (k.name, k.verification.detail)
        assert [c.split()[0] for c in k.verification.checks] == list(sets)


@pytest.mark.parametrize("grid", [(gx, gy) for gx in range(1, 8) for gy in range(1, 8)])
def test_diagonal_order_is_a_permutation_of_the_grid(grid):
    gx, gy = grid
    ids = [_diagonal_id(bid, grid) for bid in range(gx * gy)]
    assert sorted(ids) == sorted((x, y) for x in range(gx) for y in range(gy))
    if gx == gy:      # the classic square form: bidy' = bidx, bidx' = (bidx + bidy) % gx
        for bid, got in enumerate(ids):
            bx, by = bid % gx, bid // gx
            assert got == ((bx + by) % gx, bx)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("name", ["transpose.cu", "mv.cu"])
def test_nvidia_targets_explain_why_nothing_is_done(name, arch):
    result = run(name, arch=arch, verify=False)
    assert remarks(result) == [f"{arch}: addresses are hashed across partitions; "
                               "no partition camping"]
    assert NAME not in result.kernels[0].passes


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("name", TRANSPOSES)
def test_transposes_get_the_diagonal_block_order_on_gfx90a(name, target):
    result = run(name, target=target, arch="gfx90a")
    assert_verified(result)
    (applied,) = remarks(result, "applied")
    assert applied.startswith("diagonal block order")
    # the camping write hits one channel before and many after
    moved = re.search(r"(\d+) -> (\d+) channels", applied)
    assert moved and int(moved.group(1)) == 1 and int(moved.group(2)) >= 16, applied
    assert NAME in result.kernels[0].passes
    assert "bidx_diag" in result.code and "% gridDimY" in result.code
    # idx/idy come from the remapped ids only: the raw block ids appear once each
    assert len(re.findall(r"\bbidx\b", result.code)) == 2, result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("name", TRANSPOSES + MVS)
def test_outputs_verify_with_the_pass_switched_off(name, target):
    result = run(name, target=target, arch="gfx90a", options={"disable": [NAME]})
    assert_verified(result)
    assert remarks(result) == ["disabled (--disable-pass)"]


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("name", MVS)
def test_mv_tiled_loop_is_rotated_per_block(name, target):
    result = run(name, target=target, arch="gfx90a", options=NO_PREFETCH)
    assert_verified(result)
    (applied,) = remarks(result, "applied")
    assert "wraps around (paper 002 Fig. 9)" in applied
    assert "hit 1 of 32 channels" in applied and "reassociation" in applied
    assert "coalesce" in result.kernels[0].passes
    assert re.search(r"_first = .*% \w+_n \* 4 % \w+_n", result.code), result.code


@pytest.mark.parametrize("disable,walk", [(["prefetch"], 4),
                                          (["prefetch", "coalesce", "vectorize"], 64)])
def test_rotation_verifies_where_several_blocks_start_apart(disable, walk):
    """At H=700 three blocks of 256 rows start 0, 1, 2 partitions (256 B) into the row."""
    result = run("mv.cu", arch="gfx90a", options={"disable": disable},
                 defines={"H": "700", "W": "333"})
    assert_verified(result, ("cli",))
    (applied,) = remarks(result, "applied")
    assert f"{walk} iteration(s) (256 B) per block" in applied


def test_prefetched_loop_is_not_rotated():
    """Prefetching carries the next tile in registers from one iteration to the next."""
    result = run("mv.cu", arch="gfx90a")
    if "prefetch" not in result.kernels[0].passes:
        pytest.skip("prefetch did not fire on mv for gfx90a")
    (missed,) = remarks(result, "missed")
    assert "prefetched" in missed and NAME not in result.kernels[0].passes


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("name", ["transpose.cu", "mv.cu"])
def test_forced_on_sm_90_applies_and_verifies(name, target):
    result = run(name, target=target, arch="sm_90",
                 options={"partition_camping": "force", **NO_PREFETCH})
    assert_verified(result)
    assert NAME in result.kernels[0].passes, remarks(result)


def test_no_block_strided_access_is_reported():
    result = run("vv.cu", arch="gfx90a", verify=False)
    (missed,) = remarks(result)
    assert "block" in missed


@nvcc
@pytest.mark.parametrize("name,options", [("transpose.cu", None), ("transpose_macro.cu", None),
                                          ("mv.cu", NO_PREFETCH), ("mv_macro.cu", NO_PREFETCH)])
def test_cuda_outputs_compile_with_nvcc(name, options, tmp_path):
    result = run(name, arch="gfx90a", verify=False, options=options)
    assert NAME in result.kernels[0].passes
    src = tmp_path / "k.cu"
    src.write_text(result.code)
    done = compile_cuda(str(src), str(tmp_path))
    assert done.returncode == 0, done.stderr


def _body(code):
    tree = c_parser.CParser().parse("void f(float *A, float *C, int W) { float sum, t; int j; "
                                    f"{code} }}")
    return tree.ext[0].body.block_items[-1].stmt


@pytest.mark.parametrize("code,reason", [
    ("for (j = 0; j < W; j++) sum += A[j] * A[j];", ""),
    ("for (j = 0; j < W; j++) { float v = A[j]; sum -= v; sum += 1.0f; }", ""),
    ("for (j = 0; j < W; j++) { sum += A[j]; C[j] = sum; }", "writes C"),
    ("for (j = 0; j < W; j++) sum = sum * A[j];", "assigns sum"),
    ("for (j = 0; j < W; j++) { sum += A[j]; t += sum; }", "reads the accumulator sum"),
    ("for (j = 0; j < W; j++) sum += sqrtf(A[j]);", ""),
    ("for (j = 0; j < W; j++) sum += g(A[j]);", "calls g"),
    ("for (j = 0; j < W; j++) { if (A[j] < 0) break; sum += A[j]; }", "break"),
    ("for (j = 0; j < W; j++) { t = A[j]; sum += t; }", "assigns t"),
])
def test_rotation_needs_independent_iterations(code, reason):
    why = _independence_obstacle(_body(code), "j", set())
    assert (reason in why and why) if reason else why == ""


def test_cli_explains(tmp_path):
    done = run_cli(os.path.join(KERNELS_DIR, "transpose.cu"), "--arch", "gfx90a", "--explain",
                   "--no-verify", "-o", tmp_path / "t.cu")
    assert done.returncode == 0, done.stderr
    assert f"[{NAME}] applied: diagonal block order" in done.stderr


# fuzz 100/21: a sum of K * N terms (75 000 at the odd sizes) that rotating the loop over k
# reorders: the rotated output differs from the naive kernel by 2e-4, beyond float32's
# tolerance, at the sizes verification draws
LONG_SUM = os.path.join(os.path.dirname(__file__), "lit", "fuzz",
                        "long_sum_rotated_beyond_tolerance.cl")


def _long_sum(**kw):
    with open(LONG_SUM) as fh:
        return naiveopt.optimize(fh.read(), filename=LONG_SUM, target="opencl", arch="gfx90a",
                                 passes=[NAME], **kw)


def test_fp_strict_keeps_a_float_sum_from_being_rotated():
    result = _long_sum(options={"fp_strict": True})
    assert any("--fp-strict: the sums of acc keep their order" in m
               for m in remarks(result, "missed"))
    assert "k_first" not in result.code
    assert_verified(result, ("inferred", "inferred-odd"))


def test_a_rotation_beyond_tolerance_is_compiled_again_keeping_the_order():
    result = _long_sum()
    assert_verified(result, ("inferred", "inferred-odd"))
    assert "k_first" not in result.code                 # the strict compile's output
    said = [r.message for r in result.remarks if r.pass_name == "verify"]
    assert len(said) == 1 and said[0].startswith(
        "the output of partition-camping (a reordering of floating-point arithmetic) "
        "differed from the naive kernel beyond tolerance (inferred-odd sizes")
    assert said[0].endswith("compiled keeping the order (as --fp-strict)")
