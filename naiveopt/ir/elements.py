"""Scalar element types of kernel parameters: C spelling -> NumPy dtype, kind and size.

The one table of what a parameter's ``base_type`` (frontend.base_type_name: unqualified, with
OpenCL's ``uint``/``uchar``/... spelled out) means in memory. Verification allocates buffers
and scalars of exactly these dtypes (a kernel argument of the wrong width is silently
misread, or refused by the OpenCL runtime), picks random data and tolerances by the kind, and
the partition-camping model reads element sizes from it.

Sizes are those of the device ABI shared by CUDA (LP64 host) and OpenCL C: ``long`` is 64 bits
in both, ``size_t`` is taken as 64 bits (OpenCL forbids it as a kernel argument; in CUDA it
is the host's 64-bit size_t).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Element:
    """A scalar element type: its NumPy dtype name, kind (float | signed | unsigned) and size."""

    dtype: str
    kind: str
    bytes: int

    @property
    def is_float(self) -> bool:
        return self.kind == "float"


#: The standard scalar typedef names kernels use (C's <stddef.h> and <stdint.h>; OpenCL C has
#: the first four built in) -> the type each names on the device ABI. The front end's prelude
#: declares them from this table, and the IR resolves them through it.
STANDARD_TYPEDEFS = {"size_t": "unsigned long", "ptrdiff_t": "long", "intptr_t": "long",
                     "uintptr_t": "unsigned long", "int8_t": "signed char",
                     "uint8_t": "unsigned char", "int16_t": "short",
                     "uint16_t": "unsigned short", "int32_t": "int", "uint32_t": "unsigned int",
                     "int64_t": "long", "uint64_t": "unsigned long"}

_FLOAT = {"half": Element("float16", "float", 2), "float": Element("float32", "float", 4),
          "double": Element("float64", "float", 8)}
_INTS = {8: ("int8", "uint8"), 16: ("int16", "uint16"), 32: ("int32", "uint32"),
         64: ("int64", "uint64")}
#: Integer spellings (after dropping 'signed', 'unsigned' and a redundant 'int') -> bits.
_INT_BITS = {"char": 8, "short": 16, "int": 32, "long": 64, "long long": 64, "bool": 8,
             "int8_t": 8, "int16_t": 16, "int32_t": 32, "int64_t": 64, "size_t": 64,
             "ptrdiff_t": 64, "intptr_t": 64, "uintptr_t": 64, "uint8_t": 8, "uint16_t": 16,
             "uint32_t": 32, "uint64_t": 64,
             "uchar": 8, "ushort": 16, "uint": 32, "ulong": 64}
_UNSIGNED_NAMES = {"size_t", "uintptr_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
                   "uchar", "ushort", "uint", "ulong", "bool"}


def element(name: str) -> Element | None:
    """The element type a C scalar type name denotes, or None (vector, struct, unknown)."""
    words = name.split()
    if len(words) == 1 and words[0] in _FLOAT:
        return _FLOAT[words[0]]
    unsigned = "unsigned" in words
    rest = [w for w in words if w not in ("signed", "unsigned")]
    if len(rest) > 1 and rest[-1] == "int":
        rest = rest[:-1]                       # 'short int', 'long long int', 'unsigned int'
    base = " ".join(rest) or "int"             # 'unsigned', 'signed'
    bits = _INT_BITS.get(base)
    if bits is None:
        return None
    unsigned = unsigned or base in _UNSIGNED_NAMES
    return Element(_INTS[bits][1 if unsigned else 0], "unsigned" if unsigned else "signed",
                   bits // 8)


def vector_element(name: str) -> tuple[Element | None, int]:
    """(element, lanes in memory) of a vector type name (``float4`` -> float, 4), or
    (element(name), 1) for a scalar. A ``float3`` counts 4: it takes the room of 4 in
    OpenCL and of 3 in CUDA (passes/functional/vector3_layout.py), so 4 holds either."""
    import re

    m = re.fullmatch(r"(\w*?[a-z])(2|3|4|8|16)", name.strip())
    if m and element(m.group(1)) is not None:
        lanes = int(m.group(2))
        return element(m.group(1)), 4 if lanes == 3 else lanes
    return element(name), 1


#: Bytes of a 32-bit word: the element size assumed for a type the table does not know (a
#: struct or typedef the front end let through), and the size of every element type that has
#: a vector form (ir/vector.VECTOR_ELEMENTS: float, int, unsigned int).
WORD_BYTES = 4


def element_bytes(name: str, default: int = WORD_BYTES) -> int:
    """Bytes of one element of type ``name`` (``default`` for types not in the table)."""
    e = element(name)
    return e.bytes if e else default


def array_bytes(name: str, dims) -> int:
    """Bytes of an array of ``dims`` (its extents) elements of type ``name``."""
    total = element_bytes(name)
    for dim in dims:
        total *= dim
    return total
