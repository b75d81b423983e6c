"""3-vector arrays keep their input's layout across dialects (passes/functional/vector3_layout.py).

A CUDA float3 takes 12 bytes, an OpenCL float3 16: the same ``float3 *`` in the other dialect
reads another element than the input did, and verification, which runs both kernels in one
dialect, cannot see it. These tests run the translated output on data laid out as the input
dialect lays it out and compare with NumPy."""
import shutil

import numpy as np
import pytest

import naiveopt
from conftest import compile_cuda

# particles: positions moved by velocities (components, += on a component, a whole load),
# a whole-vector store, a component read through a cast of a float array, and a helper
# taking the array whole
CUDA = """
#pragma naiveopt sizes(n=1000)
__device__ float3 at(const float3 *v, int i) { return v[i]; }

__global__ void advance(float3 *pos, const float3 *vel, float *speed, const float *raw,
                     float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 v = at(vel, i);
    pos[i].x += v.x * dt;
    pos[i].y = pos[i].y + v.y * dt;
    pos[i].z -= -v.z * dt;
    speed[i] = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z) + ((const float3 *)raw)[i].y;
}

__global__ void scale(float3 *a, const float3 *b, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = make_float3(b[i].x * s, b[i].y * s, b[i].z * s);
}
"""

OPENCL = """
#pragma naiveopt sizes(n=1000)
__kernel void norms(__global const float3 *p, __global float3 *q, __global float *out,
                    __global const float *raw, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float3 v = p[i];
        q[i] = v * 2.0f;
        q[i].y += 1.0f;
        out[i] = sqrt(v.x * v.x + v.y * v.y + v.z * v.z) + ((__global const float3 *)raw)[i].z;
    }
}
"""


def _run_opencl(code, kernel, arrays, scalars, n):
    import pyopencl as cl

    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, code).build()
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    getattr(program, kernel)(queue, (-(-n // 64) * 64,), (64,), *bufs, *scalars)
    for a, b in zip(arrays, bufs):
        cl.enqueue_copy(queue, a, b)
    queue.finish()


def test_cuda_float3_arrays_keep_12_byte_elements_in_opencl():
    result = naiveopt.optimize(CUDA, filename="p.cu", target="opencl")
    code = result.code
    assert result.verified, result.unverified
    assert "__kernel void advance(__global float *pos, __global const float *vel" in code
    assert "vload3(i, vel)" in code or "vload3(i, v)" in code
    assert "pos[3 * i + 1] = pos[3 * i + 1] + v.y * dt" in code
    assert "raw[3 * i + 1]" in code                      # the cast, read as its element
    assert "vstore3(" in code and "float3 *" not in code
    assert "//   pos: float3 elements of 12 bytes, as in the CUDA input" in code

    n, rng = 1000, np.random.default_rng(3)
    pos = rng.uniform(-1, 1, (n, 3)).astype(np.float32)        # 12-byte float3s, as in CUDA
    vel = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    raw = rng.uniform(-1, 1, 3 * n).astype(np.float32)
    speed = np.zeros(n, np.float32)
    want_pos = pos + vel * np.float32(0.5)
    want_speed = np.sqrt((vel ** 2).sum(axis=1)) + raw.reshape(n, 3)[:, 1]
    _run_opencl(code, "advance", [pos, vel, speed, raw], [np.float32(0.5), np.int32(n)], n)
    np.testing.assert_allclose(pos, want_pos, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(speed, want_speed, rtol=1e-5, atol=1e-6)

    a, b = np.zeros((n, 3), np.float32), rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    _run_opencl(code, "scale", [a, b], [np.float32(3), np.int32(n)], n)
    np.testing.assert_allclose(a, 3 * b, rtol=1e-6)


def test_cuda_to_cuda_verifies_with_the_packed_translation():
    """Verification runs a CUDA input packed in OpenCL, naive kernel and output alike: the
    helper that takes the array whole is packed in the naive kernel, inlined in the output."""
    result = naiveopt.optimize(CUDA, filename="p.cu", target="cuda")
    assert result.verified, result.unverified
    assert "const float3 *vel" in result.code          # CUDA output: CUDA's own float3


def test_an_array_stored_as_a_value_keeps_opencl_layout_and_says_so():
    src = """
    #pragma naiveopt sizes(n=300)
    __global__ void both(const float3 *p, float3 *q, float3 *r, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) q[i] = r[i] = p[i];
    }
    """
    result = naiveopt.optimize(src, filename="b.cu", target="opencl")
    assert result.verified, result.unverified
    code = result.code
    assert "__global float3 *r" in code and "__global float *q" in code
    assert "vstore3(r[i] = vload3(i, p), i, q)" in code
    assert "//   r: 3-vector elements of OpenCL's 16 bytes (CUDA's take 12)" in code
    assert any(r.pass_name == "vector3-layout" and r.kind == "missed" and "'r'" not in
               r.message and r.message.startswith("r: ") for r in result.remarks)


def test_opencl_float3_arrays_keep_16_byte_elements_in_cuda(tmp_path):
    result = naiveopt.optimize(OPENCL, filename="n.cl", target="cuda")
    code = result.code
    assert result.verified, result.unverified
    assert "__global__ void norms(const float4 *p, float4 *q, float *out, const float *raw" \
        in code
    assert "*((const float3 *)(&p[i]))" in code
    assert "q[i].y += 1.0f" in code                      # a float4's component, as written
    assert "raw[4 * i + 2]" in code                      # OpenCL's cast: 4 floats a float3
    assert "//   p: float3 elements of 16 bytes, as in the OpenCL input (float4 here)" in code
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH: the CUDA output is not compiled")
    path = tmp_path / "n.cu"
    path.write_text(code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_opencl_to_opencl_keeps_float3_as_written():
    result = naiveopt.optimize(OPENCL, filename="n.cl", target="opencl")
    assert result.verified, result.unverified
    assert "__global const float3 *p" in result.code and "bytes" not in result.code
    code = result.code

    n, rng = 1000, np.random.default_rng(5)
    p = rng.uniform(-1, 1, (n, 4)).astype(np.float32)     # 16-byte float3s, as in OpenCL
    q = np.zeros((n, 4), np.float32)
    raw = rng.uniform(-1, 1, 4 * n).astype(np.float32)
    out = np.zeros(n, np.float32)
    _run_opencl(code, "norms", [p, q, out, raw], [np.int32(n)], n)
    np.testing.assert_allclose(q[:, :3], 2 * p[:, :3] + [0, 1, 0], rtol=1e-6)
    np.testing.assert_allclose(out, np.sqrt((p[:, :3] ** 2).sum(axis=1)) +
                               raw.reshape(n, 4)[:, 2], rtol=1e-5, atol=1e-6)
