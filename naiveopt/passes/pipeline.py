"""The pass order, written once.

functional (build the IR) -> optimization (transform it) -> functional (write it back out),
as in paper 002 Fig. 2.
"""
from __future__ import annotations

from .functional.cuda_to_opencl import CUDAToOpenCL
from .functional.loops import Loops
from .functional.memory_expressions import MemoryExpressions
from .functional.nvcc import NVCCResources
from .functional.opencl_to_cuda import OpenCLToCUDA
from .functional.postprocessor import Postprocessor
from .functional.predefined import Predefined
from .manager import Disabled, Pass
from .optimize.coalesce import Coalesce
from .optimize.coalesce_writes import CoalesceWrites
from .optimize.partition_camping import PartitionCamping
from .optimize.prefetch import Prefetch
from .optimize.register_promotion import RegisterPromotion
from .optimize.stencil import Stencil
from .optimize.texture import Texture
from .optimize.thread_block_merge import ThreadBlockMerge
from .optimize.thread_merge import ThreadMerge
from .optimize.vectorize import Vectorize


def front_passes() -> list[Pass]:
    """Passes that turn a parsed file into the analysed GPU IR."""
    return [OpenCLToCUDA(), Predefined(), Loops(), MemoryExpressions(), NVCCResources()]


def optimization_passes(disabled: frozenset[str] = frozenset()) -> list[Pass]:
    """Optimization passes, in order; those named in ``disabled`` are replaced by a pass that
    only says so (every pass leaves a remark)."""
    passes: list[Pass] = [RegisterPromotion(), Coalesce(), ThreadBlockMerge(), ThreadMerge(),
                          Stencil(), Prefetch(), CoalesceWrites(), Texture(), Vectorize(),
                          PartitionCamping()]
    return [Disabled(p.name) if p.name in disabled else p for p in passes]


def optimization_pass_names() -> list[str]:
    """The names ``--disable-pass`` accepts."""
    return [p.name for p in optimization_passes()]


def back_passes(target: str) -> list[Pass]:
    """Passes that write the IR back out in ``target``'s dialect."""
    return [Postprocessor()] + ([CUDAToOpenCL()] if target == "opencl" else [])
