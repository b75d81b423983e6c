"""Launch geometry: the block size and grid a kernel needs, as functions of the problem size.

The thread space (gx, gy) is what the naive kernel needs (from metadata, pragma, #define
globalDimX/Y or its bounds guard). A kernel whose threads each compute (cx, cy) outputs (thread
merge) is launched with ceil(gx / (bx*cx)) x ceil(gy / (by*cy)) blocks of (bx, by) threads.
Kernels that read arrays through textures (``--memory texture``) also say how the host makes
each texture object / image from its array.
"""
from __future__ import annotations

from dataclasses import dataclass

from .ir import GProcedure, PredefId
from .ir.nodes import TEXTURE_ELEMENTS
from .ir.rewrite import walk
from .ir.textures import TextureParam


@dataclass
class LaunchGeometry:
    block: tuple[int, int]
    coarsen: tuple[int, int]
    thread_space: tuple[str, str]

    @property
    def grid(self) -> tuple[str, str]:
        return tuple(_ceil_div(g, b * c) for g, b, c in
                     zip(self.thread_space, self.block, self.coarsen))  # type: ignore[return-value]

    @property
    def global_size(self) -> tuple[str, str]:
        """The OpenCL NDRange global size: grid * block."""
        return tuple(f"{g} * {b}" if g != "1" else str(b)
                     for g, b in zip(self.grid, self.block))  # type: ignore[return-value]

    def to_json(self) -> dict:
        return {"block": list(self.block), "grid": list(self.grid),
                "global_size": list(self.global_size), "thread_space": list(self.thread_space),
                "outputs_per_thread": list(self.coarsen)}


def _ceil_div(a: str, b: int) -> str:
    if b == 1:
        return a
    if a.isdigit():
        return str(-(-int(a) // b))
    return f"ceil({a} / {b})"


def uses_y(proc: GProcedure) -> bool:
    """Whether the kernel's threads are laid out in 2-D."""
    return any(isinstance(n, PredefId) and n.name in ("idy", "tidy", "bidy", "blockDimY")
               for n, _ in walk(proc.body))


def default_block(proc: GProcedure) -> tuple[int, int]:
    """The block a naive kernel is launched with when nothing says otherwise."""
    bx, by = proc.pragma.block_dim
    if bx and str(bx).isdigit():
        return int(bx), int(by) if by and str(by).isdigit() else 1
    return (16, 16) if uses_y(proc) else (256, 1)


def geometry(proc: GProcedure, block: tuple[int, int] | None = None,
             thread_space: tuple[str, str] | None = None) -> LaunchGeometry:
    """The launch geometry of a (possibly transformed) kernel."""
    gx, gy = thread_space or proc.pragma.global_dim
    return LaunchGeometry(block or proc.launch_block or default_block(proc), proc.coarsen,
                          (gx or "globalDimX", gy or ("globalDimY" if uses_y(proc) else "1")))


def allowed_blocks(proc: GProcedure, candidates: list[tuple[int, int]], guarded: bool
                   ) -> list[tuple[int, int]]:
    """The candidate blocks a transformation may launch with.

    A kernel with a bounds guard runs correctly on any block (the grid is rounded up and the
    guard masks the excess). One without a guard relies on its launch covering the thread
    space exactly, so only blocks that divide the naive block keep it exact."""
    if guarded:
        return candidates
    nx, ny = default_block(proc)
    return [(bx, by) for bx, by in candidates if nx % bx == 0 and ny % by == 0]


def texture_json(t: TextureParam, target: str, elements: str | None) -> dict:
    """How the host makes texture/image parameter ``t`` from its array (launch sidecar).

    ``elements`` is the array's element count as an expression of the sizes (from metadata),
    when known. The texture covers the array's existing linear buffer: no host allocation
    changes, which is why naiveopt uses 1-D fetches (tex2D would need cudaMallocPitch'd or
    cudaArray storage)."""
    count = elements or f"number of elements of {t.array}"
    texels = count if t.width == 1 else f"({count}) / {t.width}"
    value = t.elem if t.width == 1 else f"{t.elem}{t.width}"
    out = {"param": t.param, "array": t.array, "argument": t.position, "element": t.elem,
           "width": t.width, "texels": texels}
    if target == "cuda":
        kind = TEXTURE_ELEMENTS[t.elem][0]
        out["cuda"] = {
            "type": "cudaTextureObject_t", "fetch": f"tex1Dfetch<{value}>({t.param}, i)",
            "create": "cudaCreateTextureObject(&tex, &res, &desc, NULL)",
            "resource": {"resType": "cudaResourceTypeLinear",
                         "res.linear.devPtr": f"the device buffer of {t.array}",
                         "res.linear.desc": f"cudaCreateChannelDesc<{value}>() ({kind}, "
                                            f"{t.width} x 32 bits)",
                         "res.linear.sizeInBytes": f"{texels} * sizeof({value})"},
            "texture": {"readMode": "cudaReadModeElementType",
                        "filterMode": "cudaFilterModePoint", "normalizedCoords": 0},
            "host_code": (f"cudaResourceDesc res = {{}}; res.resType = cudaResourceTypeLinear; "
                          f"res.res.linear.devPtr = d_{t.array}; res.res.linear.desc = "
                          f"cudaCreateChannelDesc<{value}>(); res.res.linear.sizeInBytes = "
                          f"{texels} * sizeof({value}); cudaTextureDesc desc = {{}}; "
                          f"desc.readMode = cudaReadModeElementType; cudaTextureObject_t "
                          f"{t.param}; cudaCreateTextureObject(&{t.param}, &res, &desc, NULL);"),
            "limits": "devPtr must be a multiple of cudaDeviceProp::textureAlignment; texels "
                      "<= cudaDeviceProp::maxTexture1DLinear",
        }
    else:
        order = "CL_R" if t.width == 1 else "CL_RGBA"
        out["opencl"] = {
            "type": "read_only image1d_buffer_t",
            "create": "clCreateImage(context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err)",
            "format": {"image_channel_order": order,
                       "image_channel_data_type": TEXTURE_ELEMENTS[t.elem][1]},
            "desc": {"image_type": "CL_MEM_OBJECT_IMAGE1D_BUFFER", "image_width": texels,
                     "buffer": f"the cl_mem buffer of {t.array}"},
            "limits": "image_width <= CL_DEVICE_IMAGE_MAX_BUFFER_SIZE (at least 65536); a "
                      "sub-buffer must start on CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT",
        }
    return out


def texture_note(t: TextureParam, target: str) -> str:
    """One short line for the output file's header (the sidecar has the details): what the
    host passes for parameter ``t``."""
    value = t.elem if t.width == 1 else f"{t.elem}{t.width}"
    if target == "cuda":
        return f"{t.param}: texture object over {t.array} (linear, {value})"
    order = "CL_R" if t.width == 1 else "CL_RGBA"
    return f"{t.param}: image1d_buffer over {t.array} ({order}, {TEXTURE_ELEMENTS[t.elem][1]})"
