"""OpenCL built-ins whose CUDA form depends on their argument types, resolved in the front end.

Most OpenCL built-ins map to CUDA by name (passes/functional/builtins.py), but some are
overloaded on types CUDA spells apart: ``convert_uchar_sat(x)`` clamps a float or an int,
``as_int(x)`` reinterprets a float (``__float_as_int``) or merely casts an unsigned,
``mul_hi``/``popcount``/``clz`` have 32- and 64-bit, signed and unsigned intrinsics. Only the
front end still knows the argument types (libclang picked the overload), so these calls are
written here, in the IR's CUDA terms, which the CUDA -> OpenCL translation writes back:

- ``convert_T[_sat][_rte|_rtz|_rtp|_rtn](x)`` for a scalar T: a cast; a rounding mode other
  than C's (toward zero to an integer, to nearest to a float) rounds first (``rintf``,
  ``ceilf``, ``floorf``); ``_sat`` clamps to T's range first (``fminf``/``fmaxf`` for a
  floating source, which also sends NaN to 0 as OpenCL does; ``min``/``max`` for an integer);
- ``as_T(x)`` between float and a 32-bit integer: ``__float_as_int`` and kin; between integers
  of one size: a cast;
- ``mul_hi``, ``popcount``, ``clz``: the intrinsic of the argument's width and signedness.

Vector conversions and the rest are refused with the built-in's name.
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ..ir.elements import element

_CONVERT = re.compile(r"convert_([a-z]+)(_sat)?(_rte|_rtz|_rtp|_rtn)?")
_AS = re.compile(r"as_([a-z]+)")
#: OpenCL scalar type names -> C spellings.
SCALARS = {"char": "char", "uchar": "unsigned char", "short": "short",
           "ushort": "unsigned short", "int": "int", "uint": "unsigned int", "long": "long",
           "ulong": "unsigned long", "float": "float", "double": "double"}
TYPED = ("mul_hi", "popcount", "clz")


def handles(name: str) -> bool:
    """Whether ``name`` is one of the type-dependent built-ins (scalar or vector)."""
    return bool(_CONVERT.fullmatch(re.sub(r"\d+", "", name)) or
                _AS.fullmatch(re.sub(r"\d+", "", name)) or name in TYPED)


def translate(name: str, args: list[c_ast.Node], types: list[str]) -> c_ast.Node:
    """The CUDA-terms expression for a call of ``name`` with ``args`` of (C spelled) ``types``;
    ValueError saying why there is none."""
    m = _CONVERT.fullmatch(name)
    if m:
        return _convert(name, m, args[0], types[0])
    m = _AS.fullmatch(name)
    if m and m.group(1) in SCALARS:
        return _reinterpret(name, SCALARS[m.group(1)], args[0], types[0])
    if name in TYPED and types and element(types[0]) and not element(types[0]).is_float:
        e = element(types[0])
        wide, unsigned = e.bytes == 8, e.kind == "unsigned"
        callee = {"mul_hi": ("__umul64hi" if unsigned else "__mul64hi") if wide else
                  ("__umulhi" if unsigned else "__mulhi"),
                  "popcount": "__popcll" if wide else "__popc",
                  "clz": "__clzll" if wide else "__clz"}[name]
        return _call(callee, *args)
    raise ValueError(f"OpenCL built-in '{name}' on {', '.join(types) or 'no arguments'} is "
                     "not supported")


def _call(name: str, *args: c_ast.Node) -> c_ast.FuncCall:
    return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(list(args)))


def _cast(type_name: str, value: c_ast.Node) -> c_ast.Cast:
    typ = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType([type_name]))
    return c_ast.Cast(c_ast.Typename(None, [], None, typ), value)


def _convert(name: str, m: re.Match, arg: c_ast.Node, source: str) -> c_ast.Node:
    target = SCALARS.get(m.group(1))
    saturate, rounding = bool(m.group(2)), m.group(3)
    src, dst = element(source), element(target) if target else None
    if dst is None or src is None:
        raise ValueError(f"OpenCL built-in '{name}' on {source} is not supported (scalar "
                         "conversions only)")
    if dst.is_float:
        if rounding not in (None, "_rte"):
            raise ValueError(f"'{name}': rounding {rounding[1:]} to a float is not supported")
        return _cast(target, arg)
    value = arg
    if src.is_float:
        suffix = "f" if src.bytes == 4 else ""
        if rounding in ("_rte", "_rtp", "_rtn"):
            value = _call({"_rte": "rint", "_rtp": "ceil", "_rtn": "floor"}[rounding] + suffix,
                          value)
        if saturate:
            if dst.bytes > 2:
                raise ValueError(f"'{name}' from a floating value is not supported (its "
                                 "bounds are not exact in floating point)")
            lo, hi = _bounds(dst)
            value = _call("fmin" + suffix, _call("fmax" + suffix, value,
                                                 c_ast.Constant("float", f"{lo}.0{suffix}")),
                          c_ast.Constant("float", f"{hi}.0{suffix}"))
        return _cast(target, value)
    if saturate:
        slo, shi = _bounds(src)
        lo, hi = _bounds(dst)
        if src.bytes > 4:
            raise ValueError(f"'{name}' from a 64-bit integer is not supported")
        if hi < shi:
            value = _call("min", value, _cast(source, c_ast.Constant("int", str(hi))))
        if lo > slo:
            value = _call("max", value, _cast(source, c_ast.Constant("int", str(lo))))
    return _cast(target, value)


def _reinterpret(name: str, target: str, arg: c_ast.Node, source: str) -> c_ast.Node:
    src, dst = element(source), element(target)
    if src is None or dst is None or src.bytes != dst.bytes:
        raise ValueError(f"OpenCL built-in '{name}' on {source} is not supported")
    if src.is_float == dst.is_float:
        return _cast(target, arg)
    if src.bytes != 4:
        raise ValueError(f"'{name}' on {source} is not supported (32-bit only)")
    if src.is_float:
        return _call("__float_as_uint" if dst.kind == "unsigned" else "__float_as_int", arg)
    return _call("__uint_as_float" if src.kind == "unsigned" else "__int_as_float", arg)


def _bounds(e) -> tuple[int, int]:
    bits = 8 * e.bytes
    if e.kind == "unsigned":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
