"""The CUDA samples' helper_math.h (ir/helper_math.py): vector operators and functions read as
the C operators on vectors and what the header defines, verified, and computing what the
header computes (checked against NumPy, not only against the naive kernel, which the same
translation reads)."""
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

import naiveopt
from naiveopt.fuzz.generate import helper_math_file
from naiveopt.verify.check import launch_sizes

sys.path.insert(0, str(Path(__file__).parent))
from conftest import nvcc, run_opencl  # noqa: E402

INTEGRATE = """#include "helper_math.h"
__global__ void integrate(float3 *pos, float3 *vel, const float3 *force, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 v = vel[i] + force[i] * dt;
        v *= 0.99f;
        pos[i] += v * dt;
        vel[i] = v;
    }
}
"""

# every operator with the scalar on either side (- and / do not commute), the conversions
# and each function the header defines
ORDER = """#include <helper_math.h>
__global__ void order(const float4 *p, const float3 *q, float4 *out, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 a = make_float3(p[i]);
    float3 b = q[i];
    float3 r = (2.0f - a) / (b + make_float3(3.0f)) + a * s - b / 2.0f - (-a);
    r += cross(a, b) * dot(a, b) + lerp(a, b, 0.25f) + clamp(b, -0.5f, 0.5f);
    r -= normalize(b + make_float3(2.0f)) * length(a) + fracf(a * 3.0f);
    out[i] = make_float4(r, p[i].w + s);
}
"""


def _reference(p: np.ndarray, q: np.ndarray, s: float) -> np.ndarray:
    a, b = p[:, :3], q
    r = (2.0 - a) / (b + 3.0) + a * s - b / 2.0 - (-a)
    dot = (a * b).sum(1, keepdims=True)
    r = r + np.cross(a, b) * dot + (a + 0.25 * (b - a)) + np.clip(b, -0.5, 0.5)
    c = b + 2.0
    norm = c / np.sqrt((c * c).sum(1, keepdims=True))
    t = a * 3.0
    r = r - (norm * np.sqrt((a * a).sum(1, keepdims=True)) + (t - np.floor(t)))
    return np.concatenate([r, p[:, 3:] + s], axis=1)


def remarks(result):
    return "\n".join(f"[{r.pass_name}] {r.kind}: {r.message}" for r in result.remarks)


def test_operators_and_compound_assignments_are_verified():
    """``vel[i] + force[i] * dt``, ``v *= 0.99f``, ``pos[i] += v * dt``: accepted (the header
    is not beside the file), verified at odd sizes in CUDA and as OpenCL; the CUDA output
    includes the header as the input does, and defines the operators only where it is not
    included (HELPER_MATH_H), so nvcc measured the kernel."""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(INTEGRATE, filename="particles.cu", target=target)
        (k,) = result.kernels
        assert result.verified and not result.internal_errors, remarks(result)
        assert "inferred-odd" in k.verification.detail
    result = naiveopt.optimize(INTEGRATE, filename="particles.cu")
    assert '#include "helper_math.h"' in result.code
    assert "#ifndef HELPER_MATH_H" in result.code
    assert "float3 v = vel[i] + force[i] * dt;" in result.code
    assert "registers" in "\n".join(r.message for r in result.remarks if r.pass_name == "nvcc")


def test_the_output_computes_what_the_header_defines():
    """Run the OpenCL output (float3 arrays packed as in CUDA, float4 as they are) and compare
    with NumPy: the scalar on the left of - and /, cross, dot, lerp, clamp, normalize,
    length, fracf, make_float3 of a float4, make_float4 of a float3 and a scalar."""
    result = naiveopt.optimize(ORDER, filename="order.cu", target="opencl")
    (k,) = result.kernels
    assert result.verified, remarks(result)
    n, s = 77, 0.75
    rng = np.random.default_rng(5)
    p = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    q = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    global_size, local_size = launch_sizes(k.geometry, {"n": n})
    _, _, out = run_opencl(result.code, "order", global_size, local_size,
                           [p, q, np.zeros((n, 4), dtype=np.float32), np.float32(s),
                            np.int32(n)])
    np.testing.assert_allclose(out, _reference(p.astype(np.float64), q.astype(np.float64), s),
                               rtol=1e-4, atol=1e-4)


@nvcc
def test_the_cuda_output_builds_with_and_without_the_header(tmp_path):
    """With the samples' header on the include path (it defines HELPER_MATH_H and the
    operators) and with an empty stand-in (the output's own definitions), nvcc builds the
    output."""
    result = naiveopt.optimize(ORDER, filename="order.cu")
    assert result.verified, remarks(result)
    out = tmp_path / "order.cu"
    out.write_text(result.code)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "helper_math.h").write_text("")
    header = tmp_path / "samples"
    header.mkdir()
    (header / "helper_math.h").write_text(
        "#ifndef HELPER_MATH_H\n#define HELPER_MATH_H\n#include <cuda_runtime.h>\n" +
        result.code[result.code.index("#ifndef HELPER_MATH_H"):].split("#endif")[0].split(
            "\n", 1)[1] + "#endif\n")
    for include in (empty, header):
        done = subprocess.run(["nvcc", "-arch=sm_90", "-c", f"-I{include}", "-o",
                               str(tmp_path / "order.o"), str(out)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_generator_writes_helper_math_kernels():
    """The fuzzer writes these kernels (operators, functions, conversions, an n-body loop);
    a sample verifies in both targets."""
    sources = [helper_math_file(random.Random(seed)) for seed in range(30)]
    for text in ("lerp(", "cross(", "normalize(", "make_float4(r, p[i].w)", "f += d *",
                 "fracf("):
        assert any(text in s for s in sources), text
    for index, source in enumerate(sources[:4]):
        result = naiveopt.optimize(source, filename="k.cu",
                                   target="opencl" if index % 2 else "cuda")
        assert result.verified and not result.internal_errors, (source, remarks(result))


def test_double_operands_of_float_vectors_are_converted():
    """``v * 0.5``, ``(a + b) / 2.0``, a double scalar times a float3: C++ converts the double
    to the header's float parameter; OpenCL C rejects ``float3 * double``, so the output
    writes the conversion (verified, so the OpenCL build succeeded)."""
    source = """#include "helper_math.h"
__global__ void k(const float3 *p, float3 *out, double s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double w = s * 0.5;
        out[i] = (p[i] + make_float3(2.0)) / 2.0 + p[i] * w - clamp(p[i], -0.5, 0.5);
    }
}
"""
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(source, filename="k.cu", target=target)
        assert result.verified and not result.internal_errors, remarks(result)
