"""OpenCL swizzles and geometric functions in a CUDA output (passes/functional/swizzles.py,
ir/vector.cuda_operators), and as written in an OpenCL one; every output verified against
the OpenCL input on PoCL."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import compile_cuda, nvcc  # noqa: E402

import naiveopt  # noqa: E402
from naiveopt.errors import NaiveoptError  # noqa: E402

SWIZZLES = """#pragma naiveopt sizes(n=300)
__kernel void swz(__global const float4 *a, __global float4 *b, __global float2 *c,
                  __global float *d, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 v = a[i];
    float3 head = v.xyz;
    float2 ends = v.s03 + a[i].hi;
    b[i].zyx = head * 2.0f;
    b[i].w = v.s1;
    c[i].xy = 0.5f;
    c[i].yx += v.lo;
    b[i].xy *= d[i] + 1.0f;
    d[i] = dot(head, cross(head, normalize(v.yzx))) + length(ends) + distance(v, a[i]);
}
"""


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_swizzles_verify_in_both_dialects(target):
    result = naiveopt.optimize(SWIZZLES, filename="swz.cl", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "b, c, d match naive kernel" in k.verification.detail
    if target == "opencl":
        assert "b[i].zyx = head * 2.0f;" in result.code      # as written
    else:
        code = result.code
        assert "make_float3(v.x, v.y, v.z)" in code
        assert "make_float2(v.x, v.w) + make_float2(a[i].z, a[i].w)" in code
        assert "b[i].z = naiveopt_swizzle.x;" in code and "b[i].x = naiveopt_swizzle.z;" in code
        assert "c[i].x = 0.5f;" in code and "c[i].y = 0.5f;" in code
        # a swizzle as wide as its vector (float2's .yx) swaps: it is no plain copy
        assert "c[i].y += naiveopt_swizzle_1.x;" in code and \
            "c[i].x += naiveopt_swizzle_1.y;" in code
        # a scalar stored to several components is evaluated once
        assert "float naiveopt_swizzle_2 = d[i] + 1.0f;" in code
        assert "b[i].x *= naiveopt_swizzle_2;" in code


@nvcc
def test_the_cuda_output_with_swizzles_and_geometric_functions_compiles(tmp_path):
    code = naiveopt.optimize(SWIZZLES, filename="swz.cl", target="cuda", verify=False).code
    for definition in ("float dot(float3 a, float3 b)", "float length(float2 a)",
                       "float distance(float4 a, float4 b)", "float3 normalize(float3 a)",
                       "float3 cross(float3 a, float3 b) { return make_float3(a.y * b.z - "
                       "a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }"):
        assert definition in code, definition
    path = tmp_path / "swz.cu"
    path.write_text(code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("body, message", [
    ("float8 v = vload8(0, a);\n    a[1] = v.s4;", None),
    ("float4 v = a4[0];\n    float2 w = (v.xy = v.zw);\n    a[0] = w.x;",
     "a store to components '.xy' inside an expression has no CUDA equivalent"),
    ("a[0] = next(a4).zw.x;", "vector component '.zw' has no CUDA equivalent"),
])
def test_what_cuda_cannot_say_is_a_located_error(body, message):
    source = ("float4 next(__global float4 *p) { return p[1]; }\n" if "next(" in body else "") + \
        "__kernel void k(__global float *a, __global float4 *a4)\n{\n    " + body + "\n}\n"
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="k.cl", target="cuda", verify=False, arch="none")
    assert info.value.line is not None
    if message:
        assert message in info.value.message


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_a_swizzle_as_wide_as_its_vector_is_not_dropped(target):
    """``c[i] = a[i].yx`` of float2s swaps the components: the front end took a swizzle of the
    vector's own width for an implicit cast and wrote ``c[i] = a[i]`` (verification refused
    the output); ``.xy`` of a float2 is the vector itself."""
    source = ("__kernel void k(__global float2 *c, __global const float2 *a, int n)\n{\n"
              "    int i = get_global_id(0);\n    if (i < n) c[i] = a[i].yx + a[i].xy;\n}\n")
    result = naiveopt.optimize(source, filename="k.cl", target=target)
    assert result.kernels[0].verification.status == "passed"
    assert ("a[i].yx + a[i]" if target == "opencl" else
            "make_float2(a[i].y, a[i].x) + ") in result.code
