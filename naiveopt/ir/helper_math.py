"""helper_math.h: the CUDA samples' vector arithmetic, as particle, n-body, ray-marching and
image kernels use it (``vel[i] + force[i] * dt``, ``dot(a, b)``, ``normalize(v)``).

The header is not part of CUDA: it lives with the samples (Common/helper_math.h), and a file
that includes it is built with that directory on the include path. naiveopt reads such a file
with :func:`declarations` standing for the header (its operators and functions declared for
the vector types), and the front end writes each use in terms both dialects read:

- an operator (``a + b``, ``v * s``, ``-v``, ``v *= s``) is the C operator on the vectors,
  which OpenCL C has built in and a CUDA output reads through the header again (it keeps the
  input's ``#include``);
- a function is what the header defines it as (:data:`EXPANSIONS`: ``dot(a, b)`` is
  ``a.x * b.x + a.y * b.y + a.z * b.z``, ``lerp(a, b, t)`` is ``a + t * (b - a)``), or a math
  call both dialects overload for vectors (``fminf``, ``floorf``, ``fabs``);
- ``make_float3(v)`` of a wider vector, ``make_float4(v, w)``, ``make_float3(s)``: the
  constructor of the components (``make_float3(v.x, v.y, v.z)``).
"""
from __future__ import annotations

#: The header's name, as files include it.
HEADER = "helper_math.h"

_FLOATS = ("float2", "float3", "float4")
_INTS = ("int2", "int3", "int4", "uint2", "uint3", "uint4")
_LANES = {"x": 0, "y": 1, "z": 2, "w": 3}

#: Functions the header defines, written as what they compute over the arguments A0, A1, ...
#: (per vector width where it matters: the components spelled out).
EXPANSIONS: dict[tuple[str, int], str] = {}
for _n in (2, 3, 4):
    _c = "xyzw"[:_n]
    EXPANSIONS[("dot", _n)] = "(" + " + ".join(f"A0.{c} * A1.{c}" for c in _c) + ")"
    EXPANSIONS[("length", _n)] = "sqrtf(" + " + ".join(f"A0.{c} * A0.{c}" for c in _c) + ")"
    EXPANSIONS[("normalize", _n)] = "(A0 * rsqrtf(" + " + ".join(
        f"A0.{c} * A0.{c}" for c in _c) + "))"
    EXPANSIONS[("fracf", _n)] = "(A0 - floorf(A0))"
    EXPANSIONS[("lerp", _n)] = "(A0 + A2 * (A1 - A0))"
    EXPANSIONS[("clamp", _n)] = "fmaxf(A1, fminf(A0, A2))"
    # (between scalar bounds: per component, as neither the header nor CUDA has
    # fminf(float3, float))
    EXPANSIONS[("clamp-scalar", _n)] = f"make_float{_n}(" + ", ".join(
        f"fmaxf(A1, fminf(A0.{c}, A2))" for c in _c) + ")"
EXPANSIONS[("cross", 3)] = ("make_float3(A0.y * A1.z - A0.z * A1.y, A0.z * A1.x - A0.x * A1.z, "
                            "A0.x * A1.y - A0.y * A1.x)")
#: The scalar forms the header adds (``lerp(a, b, t)`` of floats, ``clamp`` of ints).
SCALAR_EXPANSIONS = {("lerp", "float"): "(A0 + A2 * (A1 - A0))",
                     ("clamp", "float"): "fmaxf(A1, fminf(A0, A2))",
                     ("clamp", "int"): "max(A1, min(A0, A2))",
                     ("clamp", "uint"): "max(A1, min(A0, A2))",
                     ("fracf", "float"): "(A0 - floorf(A0))"}
#: The header's geometric functions, which OpenCL C has built in and a CUDA output defines
#: where the header is not included (ir/vector.GEOMETRIC): a call is kept where its
#: expansion would copy a large argument.
GEOMETRIC = frozenset({"dot", "length", "normalize", "cross"})
#: Functions the header overloads for vectors that both dialects' math has for vectors
#: under the same CUDA name (the OpenCL translation renames them as for scalars).
VECTOR_MATH = frozenset({"fminf", "fmaxf", "floorf", "fabs", "fmodf", "sqrtf", "rsqrtf"})


def declarations() -> str:
    """The header as libclang reads it: its operators and functions declared for the vector
    types (their definitions are :data:`EXPANSIONS` and the operators of the dialects)."""
    lines = ["#pragma once"]
    for vec in _FLOATS + _INTS:
        scalar = {"float": "float", "int": "int", "uint": "unsigned int"}[vec[:-1]]
        for op in "+-*/":
            lines += [f"__device__ {vec} operator{op}({vec} a, {vec} b);",
                      f"__device__ {vec} operator{op}({vec} a, {scalar} b);",
                      f"__device__ {vec} operator{op}({scalar} a, {vec} b);",
                      f"__device__ void operator{op}=({vec} &a, {vec} b);",
                      f"__device__ void operator{op}=({vec} &a, {scalar} b);"]
        lines.append(f"__device__ {vec} operator-({vec} a);")
    for vec in _FLOATS:
        n = int(vec[-1])
        lines += [f"__device__ float dot({vec} a, {vec} b);",
                  f"__device__ float length({vec} v);",
                  f"__device__ {vec} normalize({vec} v);",
                  f"__device__ {vec} fracf({vec} v);",
                  f"__device__ {vec} lerp({vec} a, {vec} b, float t);",
                  f"__device__ {vec} clamp({vec} v, float a, float b);",
                  f"__device__ {vec} clamp({vec} v, {vec} a, {vec} b);",
                  f"__device__ {vec} fminf({vec} a, {vec} b);",
                  f"__device__ {vec} fmaxf({vec} a, {vec} b);",
                  f"__device__ {vec} floorf({vec} v);",
                  f"__device__ {vec} fabs({vec} v);",
                  f"__device__ {vec} fmodf({vec} a, {vec} b);",
                  f"__device__ {vec} make_{vec}(float s);"]
        for other in _FLOATS + ("int2", "int3", "int4", "uint2", "uint3", "uint4"):
            m = int(other[-1])
            if other != vec and m >= n:
                lines.append(f"__device__ {vec} make_{vec}({other} a);")
        if n > 2:
            lines.append(f"__device__ {vec} make_{vec}(float{n - 1} a, float s);")
    lines += ["__device__ float3 cross(float3 a, float3 b);",
              "__device__ float lerp(float a, float b, float t);",
              "__device__ float clamp(float f, float a, float b);",
              "__device__ int clamp(int f, int a, int b);",
              "__device__ unsigned int clamp(unsigned int f, unsigned int a, unsigned int b);",
              "__device__ float fracf(float v);"]
    for vec in _INTS:
        n = int(vec[-1])
        scalar = "int" if vec.startswith("int") else "unsigned int"
        lines.append(f"__device__ {vec} make_{vec}({scalar} s);")
        lines.append(f"__device__ {vec} make_{vec}(float{n} a);")
    return "\n".join(lines) + "\n"


def lanes(vector_type: str) -> int:
    """How many components a vector type (``float3``) has."""
    return int(vector_type[-1])
