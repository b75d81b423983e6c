"""cuComplex.h kernels (ir/cu_complex.py): read with the header's types and functions,
verified in both dialects, the CUDA output including the header again, the OpenCL one
defining the functions, whose values are checked here against NumPy's complex numbers."""
import os
import sys

import numpy as np
import pyopencl as cl
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import compile_cuda, nvcc  # noqa: E402

import naiveopt  # noqa: E402
from naiveopt.errors import NaiveoptError  # noqa: E402
from naiveopt.ir import cu_complex  # noqa: E402

SPECTRUM = """#include <cuComplex.h>

__global__ void spectrum_mul(const cuFloatComplex *a, const cuFloatComplex *b, cuFloatComplex *c,
                             float *mag, int n, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        cuFloatComplex p = cuCmulf(a[i], cuConjf(b[i]));
        p = cuCaddf(p, make_cuFloatComplex(scale, 0.0f));
        c[i] = cuCdivf(p, cuCaddf(b[i], make_cuFloatComplex(2.0f, 1.0f)));
        mag[i] = cuCabsf(c[i]) + cuCrealf(p) * cuCimagf(a[i]);
    }
}

__global__ void zaxpy(const cuDoubleComplex *x, cuDoubleComplex *y, cuDoubleComplex alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = cuCfma(alpha, x[i], cuCsub(y[i], make_cuDoubleComplex(0.5, 0.0)));
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_complex_kernels_verify_in_both_dialects(target):
    """Was "unknown type name 'cuFloatComplex' (naiveopt does not read <cuComplex.h>)"."""
    result = naiveopt.optimize(SPECTRUM, filename="spec.cu", target=target)
    assert [k.verification.status for k in result.kernels] == ["passed", "passed"], \
        [k.verification.detail for k in result.kernels]
    if target == "opencl":
        assert "float2 cuCmulf(float2 x, float2 y) {" in result.code
        assert "cuCrealf(" in result.code and "cuCsubf(" not in result.code


@nvcc
def test_the_cuda_output_includes_the_header_and_compiles(tmp_path):
    code = naiveopt.optimize(SPECTRUM, filename="spec.cu", verify=False).code
    assert code.count("#include <cuComplex.h>") == 1
    path = tmp_path / "spec.cu"
    path.write_text(code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_opencl_definitions_compute_complex_arithmetic():
    """Each definition against NumPy on random operands (cuCabsf's scaling included)."""
    names = ["cuCaddf", "cuCsubf", "cuCmulf", "cuCdivf", "cuConjf", "cuCfmaf"]
    scalars = ["cuCabsf", "cuCrealf", "cuCimagf"]
    source = "\n".join(cu_complex.opencl_definitions(set(names + scalars +
                                                         ["make_cuFloatComplex"])))
    source += "\n__kernel void k(__global const float2 *x, __global const float2 *y, " \
              "__global const float2 *d, __global float2 *out, __global float *s) {\n" \
              "    int i = get_global_id(0);\n"
    for k, name in enumerate(names):
        args = {"cuConjf": "x[i]", "cuCfmaf": "x[i], y[i], d[i]"}.get(name, "x[i], y[i]")
        source += f"    out[{len(names)} * i + {k}] = {name}({args});\n"
    for k, name in enumerate(scalars):
        source += f"    s[{len(scalars)} * i + {k}] = {name}(x[i]);\n"
    source += f"    out[{len(names)} * i] += make_cuFloatComplex(0.0f, 0.0f);\n}}\n"
    rng = np.random.default_rng(7)
    n = 64
    x, y, d = (rng.uniform(-3, 3, (n, 2)).astype(np.float32) for _ in range(3))
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in (x, y, d)]
    out = np.zeros((n * len(names), 2), np.float32)
    s = np.zeros(n * len(scalars), np.float32)
    out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    s_buf = cl.Buffer(ctx, mf.WRITE_ONLY, s.nbytes)
    cl.Program(ctx, source).build().k(queue, (n,), None, *bufs, out_buf, s_buf)
    cl.enqueue_copy(queue, out, out_buf)
    cl.enqueue_copy(queue, s, s_buf)
    cx, cy, cd = (a[:, 0] + 1j * a[:, 1] for a in (x, y, d))
    want = {"cuCaddf": cx + cy, "cuCsubf": cx - cy, "cuCmulf": cx * cy, "cuCdivf": cx / cy,
            "cuConjf": np.conj(cx), "cuCfmaf": cx * cy + cd}
    got = (out[:, 0] + 1j * out[:, 1]).reshape(n, len(names))
    for k, name in enumerate(names):
        np.testing.assert_allclose(got[:, k], want[name], rtol=1e-5, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(s.reshape(n, 3), np.stack([abs(cx), cx.real, cx.imag], 1),
                               rtol=1e-5, atol=1e-6)


def test_a_file_defining_its_own_cucomplex_keeps_it():
    """CUDA by Example defines its own ``struct cuComplex`` (the Julia set): the header's
    typedef is not read over it (was "no member named 'r' in 'float2'"). A struct of floats
    read through a pointer verifies; one with constructors and operators is refused for what
    it is, at the call."""
    plain = """struct cuComplex { float r; float i; };
__global__ void mag(const cuComplex *z, float *out, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        out[k] = z[k].r * z[k].r + z[k].i * z[k].i;
}
"""
    result = naiveopt.optimize(plain, filename="mag.cu")
    assert result.verified and "#include <cuComplex.h>" not in result.code
    julia = """struct cuComplex {
    float r;
    float i;
    __device__ cuComplex(float a, float b) : r(a), i(b) {}
    __device__ float magnitude2(void) { return r * r + i * i; }
};
__device__ int julia(int x, int y) {
    cuComplex a(x * 0.01f, y * 0.01f);
    return a.magnitude2() > 1000;
}
__global__ void kernel(unsigned char *ptr) {
    int x = blockIdx.x;
    int y = blockIdx.y;
    ptr[x + y * gridDim.x] = 255 * julia(x, y);
}
"""
    with pytest.raises(NaiveoptError, match="constructor call 'cuComplex' is not supported"):
        naiveopt.optimize(julia, filename="julia.cu")
