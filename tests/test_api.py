"""The Python API's account of verification: verified, or written unverified with a reason."""
from __future__ import annotations

import pytest

import naiveopt
from naiveopt.errors import NaiveoptError

NO_SIZES = """\
__global__ void twice(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = 2.0f * A[i];
}
"""


def test_unverified_kernel_says_why():
    result = naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False)
    (k,) = result.kernels
    assert k.verified is False and result.verified is False and not result.failed
    assert k.unverified.startswith("problem sizes unknown")
    assert result.unverified == {"twice": k.unverified}
    assert result.unverified_messages() == [
        f"twice.cu: twice: warning: written unverified: {k.unverified}"]
    assert f"//   unverified: {k.unverified}\n" in result.code
    assert k.to_json()["unverified"] == k.unverified


def test_verify_false_is_unverified():
    result = naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False, verify=False)
    assert result.unverified == {"twice": "verification disabled (--no-verify)"}


def test_require_verified_raises():
    with pytest.raises(NaiveoptError, match="kernel 'twice' not verified: problem sizes"):
        naiveopt.optimize(NO_SIZES, filename="twice.cu", opt=False, require_verified=True)


def test_reason_is_one_comment_line():
    from naiveopt.api import REASON_WIDTH, one_line

    assert one_line("a\n  b\tc \\") == "a b c"
    assert len(one_line("x" * 1000)) == REASON_WIDTH
