"""Launch geometry: the block size and grid a kernel needs, as functions of the problem size.

The thread space (gx, gy) is what the naive kernel needs (from metadata, pragma, #define
globalDimX/Y or its bounds guard). A kernel whose threads each compute (cx, cy) outputs (thread
merge) is launched with ceil(gx / (bx*cx)) x ceil(gy / (by*cy)) blocks of (bx, by) threads.
Kernels that read arrays through textures (``--memory texture``) also say how the host makes
each texture object / image from its array.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .ir import GModule, GProcedure, PredefId
from .ir.nodes import TEXTURE_ELEMENTS
from .ir.rewrite import walk
from .ir.textures import TextureParam


@dataclass
class LaunchGeometry:
    block: tuple[int, int]
    coarsen: tuple[int, int]
    thread_space: tuple[str, str]
    # what the thread space must be a multiple of, where that is more than the naive
    # kernel needed (an unguarded kernel launched on a coverage its naive block does not
    # divide, allowed by a thread space fixed at compile time): GProcedure.launch_multiple
    multiple: tuple[int, int] | None = None

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
        out = {"block": list(self.block), "grid": list(self.grid),
               "global_size": list(self.global_size), "thread_space": list(self.thread_space),
               "outputs_per_thread": list(self.coarsen)}
        if self.multiple:
            out["thread_space_multiple_of"] = list(self.multiple)
        return out


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
    """The launch geometry of a (possibly transformed) kernel, in the user's names of its
    parameters (a parameter a translation renamed is still the user's to the host)."""
    gx, gy = thread_space or [_user_names(proc, e) for e in proc.pragma.global_dim]
    return LaunchGeometry(block or proc.launch_block or default_block(proc), proc.coarsen,
                          (gx or "globalDimX", gy or ("globalDimY" if uses_y(proc) else "1")),
                          proc.launch_multiple)


def _user_names(proc: GProcedure, expr: str | None) -> str | None:
    if not expr or not proc.renamed:
        return expr
    return _NAME.sub(lambda m: proc.renamed.get(m.group(0), m.group(0)), expr)


def allowed_blocks(proc: GProcedure, candidates: list[tuple[int, int]], guarded: bool
                   ) -> list[tuple[int, int]]:
    """The candidate blocks a transformation may launch with.

    A kernel with a bounds guard runs correctly on any block (the grid is rounded up and the
    guard masks the excess). One without a guard relies on its launch covering the thread
    space exactly: see :func:`unguarded_obstacle`."""
    if guarded:
        return candidates
    return [b for b in candidates if not unguarded_obstacle(proc, b)]


# --------------------------------------------------------------- unguarded kernels' launches
_NAME = re.compile(r"[A-Za-z_]\w*")
_FUNCTIONS = {"ceil", "min", "max"}


def apply_extents(module: GModule, fixed: dict[str, int], overridable: set[str]) -> None:
    """Record in each kernel's GPragma its thread space as integers, per axis, where the
    compile fixes it (``fixed``: frontend.fixed_macros, the -D values and unconditional
    #defines), and how that is known or why it is not (``overridable``: names that are only
    #ifndef defaults)."""
    for proc in module.procedures:
        facts = [_extent(expr, fixed, overridable) for expr in proc.pragma.global_dim]
        proc.pragma.extents = (facts[0][0], facts[1][0])
        proc.pragma.extents_why = (facts[0][1], facts[1][1])


def _extent(expr: str | None, fixed: dict[str, int], overridable: set[str]
            ) -> tuple[int | None, str]:
    from .verify.expr import evaluate

    if not expr:
        return None, "the thread space is unknown"
    names = sorted(set(_NAME.findall(expr)) - _FUNCTIONS)
    try:
        value = evaluate(expr, fixed)
    except (ValueError, ZeroDivisionError):
        value = None
    if isinstance(value, int) and value > 0:
        how = ", ".join(f"{n}={fixed[n]}" for n in names)
        return value, f"{expr} = {value}" + (f" ({how} fixed at compile time)" if how else "")
    why = [f"{n} is a #ifndef default that a build may override" if n in overridable else
           f"{n} is not a compile-time constant" for n in names if n not in fixed]
    return None, "; ".join(why) or f"{expr} is not a positive integer"


def unguarded_obstacle(proc: GProcedure, cover: tuple[int, int]) -> str:
    """Why a kernel without a bounds guard may not be launched with blocks that cover
    ``cover`` threads (block x outputs per thread), or '' when it may.

    Such a kernel relies on its launch covering the thread space exactly: the grid
    ceil(thread space / cover) must not reach past it. That holds for a cover that divides
    the naive block (the naive launch already needs the thread space to be a multiple of
    that), and for one that divides the thread space itself where the compile fixes it
    (GPragma.extents: -D sizes, unconditional #defines, literal thread spaces). A cover of
    neither kind could run threads past the thread space, which nothing in the kernel
    stops."""
    naive = default_block(proc)
    reasons = []
    for axis, c, n, extent, why in zip("xy", cover, naive, proc.pragma.extents,
                                       proc.pragma.extents_why):
        if n % c == 0 or (extent is not None and extent % c == 0):
            continue
        reasons.append(f"{why}, not a multiple of {c}" if extent is not None else why)
    if not reasons:
        return ""
    gx, gy = proc.pragma.global_dim
    return (f"no bounds guard, and {cover[0]}x{cover[1]} divides neither the naive block "
            f"{naive[0]}x{naive[1]} nor the thread space ({gx}, {gy}) as the compile fixes "
            f"it: {'; '.join(reasons)}")


def relied_multiple(proc: GProcedure, cover: tuple[int, int], guarded: bool
                    ) -> tuple[int, int] | None:
    """``cover`` where an unguarded kernel's launch on it relies on a fixed thread space
    (it does not divide the naive block), else None: GProcedure.launch_multiple."""
    nx, ny = default_block(proc)
    if guarded or (nx % cover[0] == 0 and ny % cover[1] == 0):
        return None
    return cover


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
