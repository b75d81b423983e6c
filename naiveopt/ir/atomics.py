"""Atomic read-modify-write operations on one element: how the IR holds them and how each
dialect spells them.

Histograms (``atomicAdd(&bins[v], 1)``), sums into one value (``atomicAdd(out, a[i] * b[i])``)
and counters are ordinary in code others write. The IR keeps CUDA's call with the element's
address written ``&A[i]`` (the front end reads ``A + i``, ``A`` and OpenCL's
``atomic_inc(&A[i])`` so), which keeps the element an array access for the analyses: the
memory-expression analysis counts it as a read and a write of ``A``, so verification
compares ``A``.

The dialects differ in more than names, and the differences matter for correctness:

- OpenCL C 1.2 has no floating-point atomic add: ``atomicAdd`` of a float or double becomes a
  compare-and-swap loop on the value's bits (a helper per type and address space; the double
  one needs cl_khr_int64_base_atomics);
- CUDA's ``atomicInc(p, v)`` / ``atomicDec(p, v)`` wrap at ``v``; OpenCL's ``atomic_inc(p)``
  does not: they become compare-and-swap loops too, and OpenCL's ``atomic_inc(p)`` /
  ``atomic_dec(p)`` become ``atomicAdd(p, 1)`` / ``atomicSub(p, 1)``;
- 64-bit integer atomics are an extension in OpenCL and a different type in CUDA
  (``unsigned long long``): the front end refuses them by name.
"""
from __future__ import annotations

from pycparser import c_ast

from .elements import Element
from .rewrite import walk

#: CUDA's atomic functions (the IR's spelling) -> the element kinds they take: "i" 32-bit
#: integers, "f" float, "d" double.
CUDA_ATOMICS = {"atomicAdd": "ifd", "atomicSub": "i", "atomicExch": "if", "atomicMin": "i",
                "atomicMax": "i", "atomicInc": "i", "atomicDec": "i", "atomicCAS": "i",
                "atomicAnd": "i", "atomicOr": "i", "atomicXor": "i"}

#: OpenCL C's 32-bit atomic functions (and the OpenCL 1.0 ``atom_`` names of the same) ->
#: (the CUDA function, the value argument it adds where OpenCL's has none).
OPENCL_ATOMICS = {"add": ("atomicAdd", None), "sub": ("atomicSub", None),
                  "xchg": ("atomicExch", None), "min": ("atomicMin", None),
                  "max": ("atomicMax", None), "and": ("atomicAnd", None),
                  "or": ("atomicOr", None), "xor": ("atomicXor", None),
                  "cmpxchg": ("atomicCAS", None), "inc": ("atomicAdd", "1"),
                  "dec": ("atomicSub", "1")}

#: CUDA -> OpenCL for 32-bit integers (and atomicExch of a float: OpenCL's atomic_xchg
#: takes one).
_TO_OPENCL = {"atomicAdd": "atomic_add", "atomicSub": "atomic_sub", "atomicExch": "atomic_xchg",
              "atomicMin": "atomic_min", "atomicMax": "atomic_max", "atomicCAS": "atomic_cmpxchg",
              "atomicAnd": "atomic_and", "atomicOr": "atomic_or", "atomicXor": "atomic_xor"}


def opencl_name(name: str) -> tuple[str, str | None] | None:
    """(CUDA function, added value argument) of an OpenCL atomic function name, or None."""
    for prefix in ("atomic_", "atom_"):
        if name.startswith(prefix) and name[len(prefix):] in OPENCL_ATOMICS:
            return OPENCL_ATOMICS[name[len(prefix):]]
    return None


def is_atomic_name(name: str) -> bool:
    """Whether ``name`` is an atomic function of either dialect (supported or not)."""
    return name.startswith(("atomic", "atom_"))


def kind_of(elem: Element | None) -> str | None:
    """The CUDA_ATOMICS kind letter of an element type, or None where no atomic takes it."""
    if elem is None:
        return None
    if elem.is_float:
        return {4: "f", 8: "d"}.get(elem.bytes)
    return "i" if elem.bytes == 4 else None


def unsupported(name: str, elem: Element | None, type_name: str, opencl: bool = False) -> str:
    """Why ``name`` (CUDA's spelling) on elements of ``type_name`` is refused, or ''.
    ``opencl``: the kernel called OpenCL's function, whose 32-bit forms take integers (and
    atomic_xchg a float)."""
    kinds = CUDA_ATOMICS.get(name)
    if kinds is None:
        return f"atomic operation '{name}' is not supported"
    if opencl:
        kinds = "if" if name == "atomicExch" else "i"
    if kind_of(elem) not in tuple(kinds):
        return f"'{name}' on {type_name} elements is not supported (32-bit integers" + \
            (", float and double" if "d" in kinds else ", float" if "f" in kinds else "") + ")"
    return ""


def atomic_target(node: c_ast.Node) -> c_ast.Node | None:
    """The element an atomic call updates (``A[i]`` of ``atomicAdd(&A[i], v)``, or the ID of
    a __shared__ scalar), or None for any other node. The call may be in either dialect's
    spelling (the IR's, or the OpenCL output's, helpers included)."""
    if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and
            (is_atomic_name(node.name.name) or node.name.name.startswith("naiveopt_atomic_"))
            and node.args is not None and node.args.exprs):
        return None
    address = node.args.exprs[0]
    if isinstance(address, c_ast.UnaryOp) and address.op == "&":
        return address.expr
    return None


def array_of(target: c_ast.Node) -> str | None:
    """The array (or scalar) an atomic target names."""
    while isinstance(target, c_ast.ArrayRef):
        target = target.name
    return target.name if isinstance(target, c_ast.ID) else None


def atomic_arrays(tree: c_ast.Node) -> dict[str, str]:
    """Array (or __shared__ scalar) -> the first atomic function that updates it in
    ``tree``, in source order."""
    from .rewrite import walk

    out: dict[str, str] = {}
    for node, _ in walk(tree):
        target = atomic_target(node)
        name = array_of(target) if target is not None else None
        if name is not None:
            out.setdefault(name, node.name.name)
    return out


def value_used(tree: c_ast.Node) -> list[str]:
    """The atomic functions in ``tree`` whose returned (old) value the code uses: such a
    kernel's results depend on the order its threads run in."""
    used = []
    for node, parent in walk(tree):
        if atomic_target(node) is not None and not isinstance(parent, (c_ast.Compound,
                                                                       c_ast.Case,
                                                                       c_ast.Default)) \
                and not (isinstance(parent, (c_ast.If, c_ast.For, c_ast.While,
                                             c_ast.DoWhile)) and
                         node is not getattr(parent, "cond", None)):
            used.append(node.name.name)
    return used


def to_opencl(call: c_ast.FuncCall, elem: Element | None, space: str) -> c_ast.FuncCall:
    """The OpenCL form of a CUDA atomic call on an element of type ``elem`` in ``space``
    (``__global`` / ``__local``): a built-in, or a helper of opencl_helpers()."""
    name = call.name.name
    kind = kind_of(elem)
    if kind in ("f", "d") and name == "atomicAdd" or name in ("atomicInc", "atomicDec"):
        call.name = c_ast.ID(helper_name(name, kind or "i", space))
    elif name in _TO_OPENCL:
        call.name = c_ast.ID(_TO_OPENCL[name])
    return call


def helper_name(name: str, kind: str, space: str) -> str:
    """``atomicAdd`` of a float in __global -> ``naiveopt_atomic_add_float_global``."""
    what = {"atomicAdd": "add", "atomicInc": "inc", "atomicDec": "dec"}[name]
    elem = {"f": "float", "d": "double", "i": "uint"}[kind]
    return f"naiveopt_atomic_{what}_{elem}_{space.strip('_')}"


def opencl_helpers(names: set[str]) -> list[str]:
    """OpenCL C definitions of the helpers named in ``names`` (others are ignored): each
    retries a compare-and-swap of the element's bits until no other work-item changed it
    between the read and the swap, and returns the old value, as CUDA's function does."""
    out = []
    for space in ("global", "local"):
        q = f"volatile __{space}"
        for elem, bits, cas in (("float", "uint", "atomic_cmpxchg"),
                                ("double", "ulong", "atom_cmpxchg")):
            name = f"naiveopt_atomic_add_{elem}_{space}"
            if name in names:
                out.append(
                    f"{elem} {name}({q} {elem} *p, {elem} v) {{\n"
                    f"    {bits} old = as_{bits}(*p), seen;\n"
                    f"    do {{\n        seen = old;\n"
                    f"        old = {cas}(({q} {bits} *)p, seen, as_{bits}(as_{elem}(seen) + v));\n"
                    f"    }} while (old != seen);\n"
                    f"    return as_{elem}(old);\n}}")
        for what, step in (("inc", "old >= v ? 0 : old + 1"),
                           ("dec", "(old == 0 || old > v) ? v : old - 1")):
            name = f"naiveopt_atomic_{what}_uint_{space}"
            if name in names:
                out.append(
                    f"uint {name}({q} uint *p, uint v) {{\n"
                    f"    uint old = *p, seen;\n"
                    f"    do {{\n        seen = old;\n"
                    f"        old = atomic_cmpxchg(p, seen, {step.replace('old', 'seen')});\n"
                    f"    }} while (old != seen);\n"
                    f"    return old;\n}}")
    return out


def needs_int64_atomics(names: set[str]) -> bool:
    """Whether the helpers ``names`` need cl_khr_int64_base_atomics (double's swap)."""
    return any(n.startswith("naiveopt_atomic_add_double_") for n in names)
