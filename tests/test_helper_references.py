"""Reference parameters of device helpers (ir/references.py): CUDA returns values through
``float &`` and passes vectors as ``const float3 &``; OpenCL C has no references, and the
verification of every CUDA input runs its OpenCL translation."""
import shutil

import pytest

import naiveopt
from conftest import compile_cuda
from naiveopt.errors import NaiveoptError

# the CUDA samples' Black-Scholes form: two results through references, a helper passing
# its reference on, a const reference to a vector bound to a temporary, and components of
# a local vector passed by reference
CUDA = """
__device__ void minmax(float a, float b, float &lo, float &hi)
{
    lo = fminf(a, b);
    hi = fmaxf(a, b);
}
__device__ void twice(float a, float &lo, float &hi)
{
    minmax(a, 2.0f * a, lo, hi);
    lo += 1.0f;
}
__device__ float dot3(const float3 &a, const float3 &b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__global__ void k(const float *x, float *lo, float *hi, float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float l = 0.0f, h = 0.0f;
        float2 p = make_float2(0.0f, 0.0f);
        twice(x[i], l, h);
        if (x[i] > 0.5f)
            minmax(x[i], -x[i], p.x, p.y);
        lo[i] = l + p.x;
        hi[i] = h + p.y;
        d[i] = dot3(make_float3(x[i], 1.0f, 2.0f), make_float3(1.0f, x[i], 0.5f));
    }
}
"""


def test_references_are_private_pointers_in_opencl():
    result = naiveopt.optimize(CUDA, filename="r.cu", target="opencl", opt=False)
    code = result.code
    assert result.verified, result.unverified
    assert "void minmax(float a, float b, float *lo, float *hi)" in code
    assert "*lo = fmin(a, b);" in code
    assert "minmax(a, 2.0f * a, lo, hi);" in code          # a reference passed on
    assert "*lo += 1.0f;" in code
    assert "twice(x[i], &l, &h);" in code
    assert "float dot3(const float3 a, const float3 b)" in code   # const &: by value
    # OpenCL takes no address of a vector component: locals carry them
    assert "float ref_x = p.x;" in code and "minmax(x[i], -x[i], &ref_x, &ref_y);" in code
    assert "p.y = ref_y;" in code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_kernels_with_reference_helpers_verify(target, tmp_path):
    result = naiveopt.optimize(CUDA, filename="r.cu", target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    if target == "cuda":
        # the const reference keeps its const: a temporary binds only to a const reference
        assert "__device__ float dot3(const float3 &a, const float3 &b)" in result.code
        if shutil.which("nvcc") is None:
            pytest.skip("nvcc not on PATH")
        path = tmp_path / "r.cu"
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_references_into_global_and_shared_arrays(target):
    """A reference to a kernel array's element is a __global pointer, to a shared array's
    a __local one (the bitonic sort's swap)."""
    src = """
    #pragma naiveopt block(256, 1)
    __device__ void clip(float &v) { v = fminf(v, 0.5f); }
    __device__ void swap(float &a, float &b) { float t = a; a = b; b = t; }
    __global__ void pairs(float *d, float *e, int n)
    {
        __shared__ float s[256];
        int t = threadIdx.x;
        int i = blockIdx.x * blockDim.x + t;
        s[t] = i < n ? d[i] : 0.0f;
        __syncthreads();
        if ((t & 1) == 0 && s[t] > s[t + 1])
            swap(s[t], s[t + 1]);
        __syncthreads();
        if (i < n) {
            d[i] = s[t];
            clip(e[i]);
        }
    }
    """
    result = naiveopt.optimize(src, filename="s.cu", target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    # e is written only through clip's reference: compared all the same
    assert "d, e match naive kernel" in result.kernels[0].verification.detail
    if target == "opencl":
        assert "void clip(__global float *v)" in result.code
        assert "void swap(__local float *a, __local float *b)" in result.code
        assert "swap(&s[t], &s[t + 1]);" in result.code and "clip(&e[i]);" in result.code


def test_references_into_two_address_spaces_are_a_located_error_for_opencl():
    src = """
    __device__ void clip(float &v) { v = fminf(v, 1.0f); }
    __global__ void k(float *a, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float x = 2.0f;
        clip(x);
        if (i < n) clip(a[i]);
        if (i < n) a[i] += x;
    }
    """
    with pytest.raises(NaiveoptError) as err:
        naiveopt.optimize(src, filename="g.cu", target="opencl")
    assert err.value.line == 8 and "argument 1 of 'clip'" in str(err.value)
    assert "generic address space" in str(err.value)


def test_a_cuda_output_opencl_cannot_express_is_written_unverified():
    """The same kernel for CUDA: written, unverified, and the header says why (verification
    runs OpenCL); a CUDA built-in OpenCL lacks likewise."""
    src = """
    __device__ void clip(float &v) { v = fminf(v, 1.0f); }
    __global__ void k(float *a, unsigned *b, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float x = 2.0f;
        clip(x);
        if (i < n) clip(a[i]);
        if (i < n) a[i] += x;
    }
    """
    for source, why in ((src, "g.cu:8: argument 1 of 'clip' is a reference to global memory"),
                        (src.replace("clip(x);", "b[0] = __brev(b[1]);"),
                         "'__brev' has no OpenCL translation")):
        result = naiveopt.optimize(source, filename="g.cu", target="cuda")
        reason = result.unverified["k"]
        assert reason.startswith("verification runs OpenCL, which cannot express this "
                                 "kernel: ") and why in reason, reason
        assert f"//   unverified: {reason[:40]}" in result.code
