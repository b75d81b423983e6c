"""The Python API's account of verification: verified, or written unverified with a reason."""
from __future__ import annotations

import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.passes.options import PipelineOptions
from naiveopt.passes.pipeline import front_passes

NO_SIZES = """\
__global__ void twice(const float *A, float *B, const float *C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = 2.0f * A[(int)C[i]];
}
"""


def test_unverified_kernel_says_why():
    result = naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False)
    (k,) = result.kernels
    assert k.verified is False and result.verified is False and not result.failed
    assert k.unverified.startswith("array shape unknown")
    assert result.unverified == {"twice": k.unverified}
    assert result.unverified_messages() == [
        f"twice.cu: twice: warning: written unverified: {k.unverified}"]
    assert f"//   unverified: {k.unverified}\n" in result.code
    assert k.to_json()["unverified"] == k.unverified


def test_verify_false_is_unverified():
    result = naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False, verify=False)
    assert result.unverified == {"twice": "verification disabled (--no-verify)"}


def test_require_verified_raises():
    with pytest.raises(NaiveoptError, match="kernel 'twice' not verified: array shape unknown"):
        naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False, require_verified=True)


def test_reason_is_one_comment_line():
    from naiveopt.api import REASON_WIDTH, one_line

    assert one_line("a\n  b\tc \\") == "a b c"
    assert len(one_line("x" * 1000)) == REASON_WIDTH


MV = """\
#pragma naiveopt sizes(H=67, W=45) array(A, H, W) array(B, W) array(C, H)
__global__ void mv(float *A, float *B, float *C, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j++)
            sum += A[i * W + j] * B[j];
        C[i] = sum;
    }
}
"""


def _optimization_remarks(result) -> list[str]:
    front = {p.name for p in front_passes()}
    return list(dict.fromkeys(r.pass_name for r in result.remarks
                              if r.pass_name not in front))


def test_passes_and_pipeline_run_exactly_those_passes():
    listed = naiveopt.optimize(MV, filename="mv.cu", passes=["thread-merge", "coalesce"])
    text = naiveopt.optimize(MV, filename="mv.cu", pipeline="thread-merge, coalesce")
    assert _optimization_remarks(listed) == ["thread-merge", "coalesce"]
    assert listed.code == text.code and listed.verified
    assert listed.kernels[0].passes == ["coalesce"]
    default = naiveopt.optimize(MV, filename="mv.cu", verify=False)
    assert _optimization_remarks(default)[:4] == ["register-promotion", "invariant-factors",
                                                  "split-reduction", "coalesce"]


def test_options_dict_and_pipeline_options_are_the_same_run():
    as_dict = naiveopt.optimize(MV, filename="mv.cu", verify=False,
                                options={"disable": ["coalesce"], "vectorize": "never"})
    typed = naiveopt.optimize(MV, filename="mv.cu", verify=False,
                              options=PipelineOptions(disable=("coalesce",), vectorize="never"))
    assert as_dict.code == typed.code
    assert "remark [coalesce] missed: disabled (--disable-pass)" in [
        f"remark [{r.pass_name}] {r.kind}: {r.message}" for r in typed.remarks]


@pytest.mark.parametrize("kwargs, message", [
    ({"options": {"memroy": "texture"}}, "unknown option 'memroy' \\(options: passes, "),
    ({"options": {"memory": "shared"}}, "unknown memory 'shared' \\(expected global or "
     "texture\\)"),
    ({"options": {"merge": (0, 2)}}, "bad merge \\(0, 2\\): expected two positive integers"),
    ({"options": {"disable": ["nope"]}}, "unknown pass 'nope' \\(optimization passes: "),
    ({"passes": ["coalesce", "nope"]}, "unknown pass 'nope' at column 10 of pipeline "
     "'coalesce,nope'"),
    ({"passes": "coalesce"}, "bad passes 'coalesce': expected a list of pass names"),
    ({"passes": ["coalesce"], "pipeline": "coalesce"}, "not both"),
    ({"passes": ["coalesce"], "opt": False}, "opt=False runs no optimization pass"),
])
def test_bad_options_are_errors(kwargs, message):
    with pytest.raises(NaiveoptError, match=message):
        naiveopt.optimize(MV, filename="mv.cu", verify=False, **kwargs)


@pytest.mark.parametrize("filename", ["mv.cu", "mv.cl"])
def test_the_source_is_parsed_once(filename, monkeypatch):
    """The front end reads a file once (frontend.parse_unit): the pipeline and verification's
    naive program share its SourceUnit, so libclang sees a file without macros or undeclared
    paper ids once per optimize, verification included (it was twice: the naive program
    parsed the text again)."""
    from naiveopt.frontend import clang_setup

    parsed, real = [], clang_setup.parse
    monkeypatch.setattr(clang_setup, "parse",
                        lambda path, *rest: parsed.append(path) or real(path, *rest))
    source = MV if filename.endswith(".cu") else MV.replace(
        "__global__ void", "__kernel void").replace("float *", "__global float *").replace(
        "blockIdx.x * blockDim.x + threadIdx.x", "get_global_id(0)")
    result = naiveopt.optimize(source, filename=filename)
    assert result.verified, result.kernels[0].verification.detail
    assert parsed == [filename]
