"""The pass order, written once.

functional (build the IR) -> optimization (transform it) -> functional (write it back out),
as in paper 002 Fig. 2. ``--passes`` (PipelineOptions.passes) picks optimization passes out of
this order by name and runs them in the order it gives.
"""
from __future__ import annotations

from ..errors import NaiveoptError
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
from .options import PipelineOptions


def front_passes() -> list[Pass]:
    """Passes that turn a parsed file into the analysed GPU IR."""
    return [OpenCLToCUDA(), Predefined(), Loops(), MemoryExpressions(), NVCCResources()]


def default_optimization_passes() -> list[Pass]:
    """The optimization passes of the default pipeline, in order."""
    return [RegisterPromotion(), Coalesce(), ThreadBlockMerge(), ThreadMerge(), Stencil(),
            Prefetch(), CoalesceWrites(), Texture(), Vectorize(), PartitionCamping()]


def optimization_pass_names() -> list[str]:
    """The names ``--passes`` and ``--disable-pass`` accept, in the default order."""
    return [p.name for p in default_optimization_passes()]


def optimization_passes(options: PipelineOptions = PipelineOptions()) -> list[Pass]:
    """The optimization passes ``options`` select: the default pipeline, or exactly those
    ``options.passes`` names, in that order. Those in ``options.disable`` are replaced by a
    pass that only says so (every pass leaves a remark). An unknown name is an error naming
    the known ones; the pipeline's is located at its column."""
    known = {p.name: p for p in default_optimization_passes()}
    names = ", ".join(known)
    unknown = sorted(set(options.disable) - set(known))
    if unknown:
        raise NaiveoptError(f"unknown pass '{unknown[0]}' (optimization passes: {names})")
    if options.passes is None:
        passes = list(known.values())
    else:
        passes, text, column = [], ",".join(options.passes), 1
        for name in options.passes:
            if name not in known:
                raise NaiveoptError(f"unknown pass '{name}' at column {column} of pipeline "
                                    f"'{text}' (optimization passes: {names})")
            if any(p.name == name for p in passes):
                raise NaiveoptError(f"pass '{name}' named twice in pipeline '{text}' (column "
                                    f"{column}): each pass runs at most once")
            passes.append(known[name])
            column += len(name) + 1
    return [Disabled(p.name) if p.name in options.disable else p for p in passes]


def back_passes(target: str) -> list[Pass]:
    """Passes that write the IR back out in ``target``'s dialect."""
    return [Postprocessor()] + ([CUDAToOpenCL()] if target == "opencl" else [])
