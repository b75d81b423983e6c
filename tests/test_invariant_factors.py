"""invariant-factors: a factor every term of a reduction shares is taken out of the loop
where that is a reassociation only, and nowhere else; outputs verify at odd sizes in both
dialects."""
from __future__ import annotations

import os
import re

import pytest

import naiveopt
from conftest import KERNELS_DIR

HEAD = """#pragma naiveopt sizes(n=67, m=45) array(A, n, m) array(x, m) array(y, n)
__global__ void k(const float *A, const float *x, float *y, float alpha, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
"""


def run(body: str, target: str = "cuda", **kw) -> naiveopt.OptimizeResult:
    source = HEAD + body + "\n    }\n}\n"
    return naiveopt.optimize(source, filename="k.cu", target=target,
                             passes=["register-promotion", "invariant-factors"], **kw)


def fired(result) -> bool:
    return "invariant-factors" in result.kernels[0].passes


@pytest.mark.parametrize("target", ["cuda", "opencl"])
@pytest.mark.parametrize("body", [
    "float acc = 0.0f;\n for (int j = 0; j < m; j++) acc += alpha * A[i * m + j] * x[j];\n"
    " y[i] = acc;",
    "float acc = 1.0f;\n for (int j = 0; j < m; j++) acc = acc + A[i * m + j] * alpha;\n"
    " y[i] = acc;",
    # two updates sharing the factor, one under a condition
    "float acc = 0.0f;\n for (int j = 0; j < m; j++) { acc += alpha * A[i * m + j];\n"
    " if (j % 3 == 0) acc += x[j] * alpha * 0.5f; }\n y[i] = acc;",
    # an integer factor
    "double acc = 0.0;\n for (int j = 0; j < m; j++) acc += m * A[i * m + j] * x[j];\n"
    " y[i] = (float)acc;",
])
def test_shared_factors_are_taken_out_and_verified(body, target):
    result = run(body, target)
    assert fired(result), [str(r) for r in result.remarks]
    assert result.verified, result.kernels[0].verification.detail


@pytest.mark.parametrize("body, why", [
    ("float acc = 0.0f;\n for (int j = 0; j < m; j++) acc = acc * 0.5f + alpha * x[j];\n"
     " y[i] = acc;", "acc is read other than by its update"),
    ("float acc = 0.0f; float f = alpha;\n for (int j = 0; j < m; j++) { acc += f * x[j];"
     " f = f * 0.5f; }\n y[i] = acc;", "the factor changes in the loop"),
    ("float acc = 0.0f;\n for (int j = 0; j < m; j++) { acc += alpha * x[j];"
     " acc += A[i * m + j]; }\n y[i] = acc;", "a term without the factor"),
    ("float acc = 0.0f;\n for (int j = 0; j < m; j++) { acc += alpha * x[j];"
     " y[i] = acc; }", "the sum is stored in the loop"),
    ("int acc = 0;\n for (int j = 0; j < m; j++) acc += m * j;\n y[i] = acc;",
     "an integer sum: nothing to gain from a float rule"),
])
def test_no_factor_is_taken_where_it_would_change_more_than_rounding(body, why):
    result = run(body)
    assert not fired(result), why
    assert result.verified


def test_fp_strict_keeps_the_order():
    body = "float acc = 0.0f;\n for (int j = 0; j < m; j++) acc += alpha * x[j];\n y[i] = acc;"
    result = run(body, options={"fp_strict": True})
    assert not fired(result)
    assert any("--fp-strict" in r.message for r in result.remarks
               if r.pass_name == "invariant-factors")


@pytest.mark.parametrize("name", ["gemm.cu", "syrk.cu"])
def test_gemm_and_syrk_hot_loops_multiply_by_alpha_no_more(name):
    """The issue's static criterion: the innermost loop of the output has no alpha."""
    path = os.path.join(KERNELS_DIR, name)
    with open(path, encoding="utf-8") as fh:
        result = naiveopt.optimize(fh.read(), filename=path)
    assert result.verified
    assert "invariant-factors" in result.kernels[0].passes
    code = result.code[:result.code.index("_launch(")]
    # the loop over a staged tile's k: from its head to the barrier after it (in an
    # asynchronous pipeline, to the stage update that ends the k-tile loop)
    hot = re.findall(r"for \(int kk\b.*?(?:__syncthreads|\bws = st;)", code, re.S)
    assert hot and not any(re.search(r"\balpha\b", loop) for loop in hot)
    assert re.search(r"\+= alpha \* r_c_alpha", code)
