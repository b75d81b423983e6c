"""cuComplex.h: CUDA's complex numbers, as FFT and signal-processing kernels use them.

``cuFloatComplex`` is ``float2`` (``cuDoubleComplex`` is ``double2``) and the header's
functions are inline arithmetic on the two lanes (``cuCmulf(a, b)``, ``cuCrealf(z)``). The
front end declares them in its prelude (an ``#include <cuComplex.h>`` is read as an empty
file), the IR spells the types as the vectors they are and keeps the calls; a CUDA output
includes the header again, an OpenCL output (and verification, which runs one) defines the
functions it calls (:func:`opencl_definitions`), as the header writes them.
"""
from __future__ import annotations

#: The header's types and the vector type each is.
TYPES = {"cuFloatComplex": "float2", "cuDoubleComplex": "double2", "cuComplex": "float2"}

#: Each function: (return type, parameter types), in the header's spelling.
FUNCTIONS: dict[str, tuple[str, str]] = {}
for _sfx, _t, _r in (("f", "cuFloatComplex", "float"), ("", "cuDoubleComplex", "double")):
    FUNCTIONS.update({
        f"cuCreal{_sfx}": (_r, _t), f"cuCimag{_sfx}": (_r, _t), f"cuCabs{_sfx}": (_r, _t),
        f"cuConj{_sfx}": (_t, _t), f"cuCadd{_sfx}": (_t, f"{_t}, {_t}"),
        f"cuCsub{_sfx}": (_t, f"{_t}, {_t}"), f"cuCmul{_sfx}": (_t, f"{_t}, {_t}"),
        f"cuCdiv{_sfx}": (_t, f"{_t}, {_t}"), f"cuCfma{_sfx}": (_t, f"{_t}, {_t}, {_t}"),
        f"make_{_t}": (_t, f"{_r}, {_r}")})
FUNCTIONS["make_cuComplex"] = ("cuFloatComplex", "float, float")

#: The names a file's words select the prelude's declarations by.
NAMES = frozenset(TYPES) | frozenset(FUNCTIONS)


def prelude() -> str:
    """The declarations the front end reads before a file that names any of :data:`NAMES`
    (after the vector types)."""
    lines = [f"typedef {vector} {name};" for name, vector in TYPES.items()]
    lines += [f"__device__ {ret} {name}({params});" for name, (ret, params) in FUNCTIONS.items()]
    return "\n".join(lines)


def _body(name: str) -> str:
    """The OpenCL body of a function (``x``, ``y``, ``d``: its parameters), the header's."""
    base = name[:-1] if name.endswith("f") and not name.startswith("make_") else name
    r = "float" if name.endswith(("f", "cuFloatComplex", "cuComplex")) else "double"
    v = f"{r}2"
    big = "3.402823466e38f" if r == "float" else "1.79769313486231570e+308"
    one = "1.0f" if r == "float" else "1.0"
    return {
        "cuCreal": "return x.x;", "cuCimag": "return x.y;",
        "cuConj": f"return ({v})(x.x, -x.y);",
        "cuCadd": f"return ({v})(x.x + y.x, x.y + y.y);",
        "cuCsub": f"return ({v})(x.x - y.x, x.y - y.y);",
        "cuCmul": f"return ({v})(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);",
        "cuCdiv": (f"{r} s = fabs(y.x) + fabs(y.y); {r} oos = {one} / s;\n"
                   f"    {r} ars = x.x * oos, ais = x.y * oos, brs = y.x * oos, bis = y.y * oos;\n"
                   f"    s = brs * brs + bis * bis; oos = {one} / s;\n"
                   f"    return ({v})((ars * brs + ais * bis) * oos, (ais * brs - ars * bis) * oos);"),
        "cuCabs": (f"{r} a = fabs(x.x), b = fabs(x.y); {r} v = fmax(a, b), w = fmin(a, b);\n"
                   f"    {r} t = w / v; t = {one} + t * t; t = v * sqrt(t);\n"
                   f"    if (v == 0 || v > {big} || w > {big}) t = v + w;\n    return t;"),
        "cuCfma": (f"{r} re = x.x * y.x + d.x, im = x.y * y.x + d.y;\n"
                   f"    return ({v})(-(x.y * y.y) + re, x.x * y.y + im);"),
    }.get(base, f"return ({v})(x, y);")          # make_cuFloatComplex(r, i)


def opencl_definitions(called: set[str]) -> list[str]:
    """OpenCL C definitions of the header's functions named in ``called``."""
    out = []
    for name, (ret, params) in FUNCTIONS.items():
        if name not in called:
            continue
        names = "xyd"
        decls = ", ".join(f"{TYPES.get(t.strip(), t.strip())} {names[k]}"
                          for k, t in enumerate(params.split(",")))
        out.append(f"{TYPES.get(ret, ret)} {name}({decls}) {{\n    {_body(name)}\n}}")
    return out
