"""Statement-tree nodes that pycparser's c_ast lacks.

The statement tree of a kernel is pycparser's ``c_ast`` (mutable, printable, with a visitor).
The GPU IR adds a predefined thread id such as ``idx`` (paper 002, PredefinedPass), which
stands for ``blockIdx.x*blockDim.x+threadIdx.x`` in CUDA and ``get_global_id(0)`` in OpenCL, so
the passes reason about thread ids without caring how the input spelled them; and a texture
fetch (``--memory texture``), a read of a read-only array through a CUDA texture object or an
OpenCL image.
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


#: Element types a texture fetch reads: (CUDA channel format, OpenCL channel type, image read).
TEXTURE_ELEMENTS: dict[str, tuple[str, str, str]] = {
    "float": ("cudaChannelFormatKindFloat", "CL_FLOAT", "read_imagef"),
    "int": ("cudaChannelFormatKindSigned", "CL_SIGNED_INT32", "read_imagei"),
}
TEXTURE_WIDTHS = (1, 2, 4)


def texture_param(array: str, width: int, dialect: str) -> str:
    """The kernel parameter a ``width``-wide fetch of ``array`` reads.

    Each vector width needs its own texture object (CUDA) or image (OpenCL): its texels are
    ``width`` elements wide. Width 1 keeps the array's name; wider ones are ``A_v2``/``A_v4``.
    OpenCL has no two-channel 1-D buffer image that every device supports (PoCL lists R and
    RGBA only), so an OpenCL width-2 fetch reads two texels of the width-1 image."""
    if dialect == "opencl" and width == 2:
        width = 1
    return array if width == 1 else f"{array}_v{width}"


class TexFetch(c_ast.FuncCall):
    """``width`` consecutive elements of the read-only array ``array`` read through the texture
    path, starting at element ``index * width`` (``index`` counts texels, as tex1Dfetch does).

    It is a function call in both dialects (``tex1Dfetch<float4>(A_v4, i)``,
    ``read_imagef(A_v4, i)``), and it is one in the IR too: every analysis that does not know
    this node treats it as an opaque call, i.e. as a memory read that is not safe for inactive
    threads and not a known index, which is right. The node has no ``__slots__`` of its own,
    so the generic tree rewriter (which follows ``__slots__``) sees FuncCall's ``name`` and
    ``args`` and reaches the index. ``dialect`` selects the spelling (cuda-to-opencl flips it).
    """

    def __init__(self, array: str, index: c_ast.Node, width: int, elem: str,
                 dialect: str = "cuda", coord: object = None) -> None:
        if width not in TEXTURE_WIDTHS or elem not in TEXTURE_ELEMENTS:
            raise ValueError(f"no texture fetch of {width} x {elem}")
        super().__init__(c_ast.ID("tex1Dfetch"), c_ast.ExprList([index]), coord)
        self.array, self.width, self.elem, self.dialect = array, width, elem, dialect

    @property
    def index(self) -> c_ast.Node:
        return self.args.exprs[0]

    @property
    def param(self) -> str:
        """The kernel parameter this fetch reads."""
        return texture_param(self.array, self.width, self.dialect)

    @property
    def value_type(self) -> str:
        """The C type of the fetched value (``float``, ``float4``...)."""
        return self.elem if self.width == 1 else f"{self.elem}{self.width}"
