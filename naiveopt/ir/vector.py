"""Vector memory accesses: float2/float4 (int2/int4) loads and stores of consecutive elements.

A vector access reads or writes ``width`` consecutive elements starting at ``A[i]`` with one
instruction (LDG.128 / buffer_load_dwordx4). The IR keeps the scalar access ``A[i]`` inside the
node, so analyses and the profiler still see the array and the index of its first element.

The two dialects spell it differently, and the difference matters for correctness:

- OpenCL's ``vload4(0, &A[i])`` / ``vstore4(v, 0, &A[i])`` need only element alignment, so
  they are always legal.
- CUDA has no unaligned vector load: ``*(const float4 *)&A[i]`` faults unless the address is
  16-byte aligned, which depends on runtime values (row widths, the pointer the host passes).
  CUDA output therefore calls a small helper that takes the vector path when the address is
  aligned and falls back to scalar accesses otherwise (the scalar remainder), so an odd row
  width or an offset pointer is slower but never wrong.
"""
from __future__ import annotations

from pycparser import c_ast

from .elements import element_bytes

#: Scalar element types that have vector forms, with their size in bytes (elements.py's).
VECTOR_ELEMENTS = {name: element_bytes(name) for name in ("float", "int", "unsigned int", "uint")}
LANES = "xyzw"


def vector_type(elem: str, width: int) -> str:
    """``float`` x 4 -> ``float4`` (``unsigned int`` -> ``uint4``)."""
    return {"unsigned int": "uint"}.get(elem, elem) + str(width)


class VectorLoad(c_ast.Node):
    """``width`` consecutive elements read from ``ref`` (an ArrayRef ``A[i]``) at once."""

    __slots__ = ("ref", "width", "elem", "dialect", "coord", "__weakref__")
    attr_names = ("width", "elem", "dialect")

    def __init__(self, ref: c_ast.ArrayRef, width: int, elem: str, dialect: str = "cuda",
                 coord: object = None) -> None:
        self.ref, self.width, self.elem, self.dialect, self.coord = (ref, width, elem,
                                                                     dialect, coord)

    def children(self) -> tuple:
        return (("ref", self.ref),)

    def __iter__(self):
        yield self.ref


class VectorStore(c_ast.Node):
    """A statement: ``value`` (a vector) written to ``width`` consecutive elements at ``ref``."""

    __slots__ = ("ref", "value", "width", "elem", "dialect", "coord", "__weakref__")
    attr_names = ("width", "elem", "dialect")

    def __init__(self, ref: c_ast.ArrayRef, value: c_ast.Node, width: int, elem: str,
                 dialect: str = "cuda", coord: object = None) -> None:
        self.ref, self.value, self.width, self.elem, self.dialect, self.coord = (
            ref, value, width, elem, dialect, coord)

    def children(self) -> tuple:
        return (("ref", self.ref), ("value", self.value))

    def __iter__(self):
        yield self.ref
        yield self.value


def lane(vector: c_ast.Node, index: int) -> c_ast.StructRef:
    """Component ``index`` of a vector value (``v.x``, ``v.y``...)."""
    return c_ast.StructRef(vector, ".", c_ast.ID(LANES[index]))


def declare_vector(name: str, elem: str, width: int, init: c_ast.Node | None) -> c_ast.Decl:
    """``float4 name = init;`` (pycparser cannot parse vector type names from text)."""
    return c_ast.Decl(name, [], [], [], [],
                      c_ast.TypeDecl(name, [], None, c_ast.IdentifierType([vector_type(
                          elem, width)])), init, None)


def helper_name(kind: str, elem: str, width: int) -> str:
    return f"naiveopt_{kind}_{vector_type(elem, width)}"


def print_load(node: VectorLoad, ref_text: str) -> str:
    if node.dialect == "opencl":
        return f"vload{node.width}(0, &{ref_text})"
    return f"{helper_name('load', node.elem, node.width)}(&{ref_text})"


def print_store(node: VectorStore, ref_text: str, value_text: str) -> str:
    if node.dialect == "opencl":
        return f"vstore{node.width}({value_text}, 0, &{ref_text})"
    return f"{helper_name('store', node.elem, node.width)}(&{ref_text}, {value_text})"


def used_vectors(trees: list[c_ast.Node]) -> list[tuple[str, str, int]]:
    """The (load|store, element type, width) combinations the trees use, in a stable order."""
    found = set()
    for tree in trees:
        stack = [tree]
        while stack:
            n = stack.pop()
            if isinstance(n, VectorLoad):
                found.add(("load", n.elem, n.width))
            elif isinstance(n, VectorStore):
                found.add(("store", n.elem, n.width))
            stack.extend(child for _, child in n.children())
    return sorted(found)


def cuda_helpers(used: list[tuple[str, str, int]]) -> list[str]:
    """CUDA definitions of the helpers ``used``: vector access when aligned, else scalars."""
    out = []
    for kind, elem, width in used:
        vtype = vector_type(elem, width)
        mask = VECTOR_ELEMENTS[elem] * width - 1
        name = helper_name(kind, elem, width)
        lanes = ", ".join(f"p[{i}]" for i in range(width))
        if kind == "load":
            out.append(f"__device__ __forceinline__ {vtype} {name}(const {elem} *p) {{\n"
                       f"    if (((size_t)p & {mask}) == 0) {{\n"
                       f"        return *(const {vtype} *)p;\n    }}\n"
                       f"    return make_{vtype}({lanes});\n}}")
        else:
            scalars = " ".join(f"p[{i}] = v.{LANES[i]};" for i in range(width))
            out.append(f"__device__ __forceinline__ void {name}({elem} *p, {vtype} v) {{\n"
                       f"    if (((size_t)p & {mask}) == 0) {{\n"
                       f"        *({vtype} *)p = v;\n    }} else {{\n"
                       f"        {scalars}\n    }}\n}}")
    return out


# ------------------------------------------------------------------ OpenCL vector arithmetic
#: OpenCL vector types CUDA also has, by their element type (CUDA's names are the same).
_ARITHMETIC = {"float": "float", "double": "double", "int": "int", "uint": "unsigned int",
               "short": "short", "ushort": "unsigned short", "char": "signed char",
               "uchar": "unsigned char"}


def vector_types(trees: list[c_ast.Node]) -> list[tuple[str, str, int]]:
    """The (vector type, element type, width) of each OpenCL vector type the trees name
    (``float4``, ``uint2``), in a stable order."""
    import re

    pattern = re.compile(r"^(" + "|".join(_ARITHMETIC) + r")([234])$")
    found = set()
    for tree in trees:
        stack = [tree]
        while stack:
            n = stack.pop()
            if isinstance(n, c_ast.IdentifierType):
                for name in n.names:
                    m = pattern.match(name)
                    if m:
                        found.add((name, _ARITHMETIC[m.group(1)], int(m.group(2))))
            stack.extend(child for _, child in n.children())
    return sorted(found)


#: Math functions (as the CUDA output spells them) that OpenCL applies component-wise to
#: vectors: the output overloads those its kernels call on its vector types, by arity.
_GENERIC = {1: ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "fabs", "sin", "cos", "floor",
                "ceil", "tanh", "round", "trunc"),
            2: ("fmax", "fmin", "pow", "fmod"), 3: ("fma",)}
_COMPONENT_WISE = {
    "float": {1: _GENERIC[1] + ("sqrtf", "rsqrtf", "expf", "exp2f", "__expf", "logf", "log2f",
                                "__logf", "fabsf", "sinf", "cosf", "__sinf", "__cosf", "floorf",
                                "ceilf", "tanhf", "roundf", "truncf"),
              2: _GENERIC[2] + ("fmaxf", "fminf", "powf", "__powf", "__fdividef", "fmodf"),
              3: _GENERIC[3] + ("fmaf",)},
    "double": _GENERIC,
}


#: OpenCL's geometric functions (on float and double vectors), which CUDA lacks: the output
#: defines those its kernels call (as the CUDA samples' helper_math.h does).
GEOMETRIC = ("dot", "length", "distance", "normalize", "cross")


def _geometric(vtype: str, elem: str, width: int, called: set[str]) -> list[str]:
    """The definitions of the geometric functions of ``called`` on ``vtype``."""
    if elem not in ("float", "double"):
        return []
    head = "__device__ __forceinline__"
    sqrt, rsqrt = ("sqrtf", "rsqrtf") if elem == "float" else ("sqrt", "rsqrt")
    lanes = LANES[:width]
    out = []
    if called & {"dot", "length", "distance", "normalize"}:
        out.append(f"{head} {elem} dot({vtype} a, {vtype} b) {{ return "
                   + " + ".join(f"a.{c} * b.{c}" for c in lanes) + "; }")
    if called & {"length", "distance"}:
        out.append(f"{head} {elem} length({vtype} a) {{ return {sqrt}(dot(a, a)); }}")
    if "distance" in called:
        out.append(f"{head} {elem} distance({vtype} a, {vtype} b) {{ return length(a - b); }}")
    if "normalize" in called:
        out.append(f"{head} {vtype} normalize({vtype} a) {{ return a * {rsqrt}(dot(a, a)); }}")
    if "cross" in called and width in (3, 4):
        parts = ["a.y * b.z - a.z * b.y", "a.z * b.x - a.x * b.z", "a.x * b.y - a.y * b.x"]
        parts += ["0"] if width == 4 else []
        out.append(f"{head} {vtype} cross({vtype} a, {vtype} b) {{ return make_{vtype}("
                   + ", ".join(parts) + "); }")
    return out


def cuda_operators(types: list[tuple[str, str, int]], called: set[str] = frozenset()
                   ) -> list[str]:
    """The component-wise operators OpenCL C defines on vector types and CUDA does not
    (``a * x[i] + y[i]`` on float4): + - * / between two vectors or a vector and a scalar,
    unary minus, the compound assignments, the math functions of ``called`` that
    OpenCL applies per component (``sqrt(v)``, ``fmax(a, b)``, ``mad(a, b, c)``) and its
    geometric functions (``dot``, ``length``, ``normalize``, ``cross``...), for a CUDA
    output of an OpenCL kernel. Left out where the CUDA samples' helper_math.h, which
    defines most of the same, is included first."""
    if not types:
        return []
    lines = ["// clang-format off", "#ifndef HELPER_MATH_H  // operators OpenCL C has on vectors"]
    for vtype, elem, width in types:
        lanes = LANES[:width]

        def make(expr: str) -> str:
            return f"make_{vtype}(" + ", ".join(expr.format(c=c) for c in lanes) + ")"

        head = "__device__ __forceinline__"
        for op in "+-*/":
            lines.append(f"{head} {vtype} operator{op}({vtype} a, {vtype} b) {{ return "
                         f"{make('a.{c} ' + op + ' b.{c}')}; }}")
            lines.append(f"{head} {vtype} operator{op}({vtype} a, {elem} b) {{ return "
                         f"{make('a.{c} ' + op + ' b')}; }}")
            lines.append(f"{head} {vtype} operator{op}({elem} a, {vtype} b) {{ return "
                         f"{make('a ' + op + ' b.{c}')}; }}")
            lines.append(f"{head} {vtype} &operator{op}=({vtype} &a, {vtype} b) {{ "
                         + " ".join(f"a.{c} {op}= b.{c};" for c in lanes) + " return a; }")
            lines.append(f"{head} {vtype} &operator{op}=({vtype} &a, {elem} b) {{ "
                         + " ".join(f"a.{c} {op}= b;" for c in lanes) + " return a; }")
        lines.append(f"{head} {vtype} operator-({vtype} a) {{ return {make('-a.{c}')}; }}")
        for arity, names in _COMPONENT_WISE.get(elem, {}).items():
            for name in sorted(set(names) & set(called)):
                params = ", ".join(f"{vtype} {p}" for p in "abc"[:arity])
                args = ", ".join(f"{p}.{{c}}" for p in "abc"[:arity])
                lines.append(f"{head} {vtype} {name}({params}) {{ return "
                             f"{make(name + '(' + args + ')')}; }}")
        lines += _geometric(vtype, elem, width, set(called))
    lines += ["#endif", "// clang-format on"]
    return ["\n".join(lines)]
