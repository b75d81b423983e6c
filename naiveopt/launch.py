"""Launch geometry: the block size and grid a kernel needs, as functions of the problem size.

The thread space (gx, gy) is what the naive kernel needs (from metadata, pragma, #define
globalDimX/Y or its bounds guard). A kernel whose threads each compute (cx, cy) outputs (thread
merge) is launched with ceil(gx / (bx*cx)) x ceil(gy / (by*cy)) blocks of (bx, by) threads.
"""
from __future__ import annotations

from dataclasses import dataclass

from .ir import GProcedure, PredefId
from .ir.rewrite import walk


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
