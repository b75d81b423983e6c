"""Statement-tree nodes that pycparser's c_ast lacks.

The statement tree of a kernel is pycparser's ``c_ast`` (mutable, printable, with a visitor).
The GPU IR adds one node: a predefined thread id such as ``idx`` (paper 002, PredefinedPass),
which stands for ``blockIdx.x*blockDim.x+threadIdx.x`` in CUDA and ``get_global_id(0)`` in
OpenCL, so the passes reason about thread ids without caring how the input spelled them.
"""
from __future__ import annotations

from pycparser import c_ast

#: Predefined ids: name -> (CUDA spelling, OpenCL spelling, varies across threads in x, in y).
PREDEFINED_IDS: dict[str, tuple[str, str]] = {
    "idx": ("blockIdx.x * blockDim.x + threadIdx.x", "get_global_id(0)"),
    "idy": ("blockIdx.y * blockDim.y + threadIdx.y", "get_global_id(1)"),
    "tidx": ("threadIdx.x", "get_local_id(0)"),
    "tidy": ("threadIdx.y", "get_local_id(1)"),
    "bidx": ("blockIdx.x", "get_group_id(0)"),
    "bidy": ("blockIdx.y", "get_group_id(1)"),
    "blockDimX": ("blockDim.x", "get_local_size(0)"),
    "blockDimY": ("blockDim.y", "get_local_size(1)"),
    "gridDimX": ("gridDim.x", "get_num_groups(0)"),
    "gridDimY": ("gridDim.y", "get_num_groups(1)"),
}


class PredefId(c_ast.Node):
    """A predefined thread id (``idx``, ``tidx``, ``blockDimX``...) inside an expression."""

    __slots__ = ("name", "coord", "__weakref__")
    attr_names = ("name",)

    def __init__(self, name: str, coord: object = None) -> None:
        if name not in PREDEFINED_IDS:
            raise ValueError(f"unknown predefined id {name!r}")
        self.name = name
        self.coord = coord

    def children(self) -> tuple:
        return ()

    def __iter__(self):
        return iter(())
