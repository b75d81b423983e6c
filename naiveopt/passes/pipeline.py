"""The pass order, written once.

functional (build the IR) -> optimization (transform it) -> functional (write it back out),
as in paper 002 Fig. 2. Building the IR translates the dialect and the thread ids, then
canonicalizes the kernel (passes/functional/canonicalize/), then analyses it. ``--passes``
(PipelineOptions.passes) picks optimization passes out of this order by name and runs them in
the order it gives; ``--disable-pass`` switches off optimization and canonicalization passes.
"""
from __future__ import annotations

from ..errors import NaiveoptError
from .functional.canonicalize.clamp_ifs import ClampIfs
from .functional.canonicalize.const_propagation import ConstPropagation
from .functional.canonicalize.grid_stride import GridStrideLoops, RestoreGridStride
from .functional.canonicalize.inline_helpers import InlineHelpers
from .functional.canonicalize.loop_inits import LoopInits
from .functional.canonicalize.loop_iterators import LoopIterators
from .functional.canonicalize.merge_guards import MergeGuards
from .functional.canonicalize.sink_declarations import SinkDeclarations
from .functional.canonicalize.split_locals import SplitLocals
from .functional.canonicalize.vector_locals import VectorLocals
from .functional.canonicalize.thread_ids import ThreadIds
from .functional.canonicalize.while_to_for import WhileToFor
from .functional.cuda_to_opencl import CUDAToOpenCL
from .functional.delinearize import Delinearize, RestoreDelinearized
from .functional.id_width import IdWidth
from .functional.launch_extents import LaunchExtents, RestoreLaunchExtents
from .functional.loops import Loops
from .functional.memory_expressions import MemoryExpressions
from .functional.nvcc import NVCCResources
from .functional.opencl_to_cuda import OpenCLToCUDA
from .functional.postprocessor import Postprocessor
from .functional.predefined import Predefined
from .functional.struct_params import StructParams
from .functional.thread_space import ThreadSpace
from .functional.vector3_layout import Vector3Layout
from .manager import Disabled, Pass
from .optimize.async_pipeline import AsyncPipeline
from .optimize.coalesce import Coalesce
from .optimize.coalesce_writes import CoalesceWrites
from .optimize.invariant_factors import InvariantFactors
from .optimize.partition_camping import PartitionCamping
from .optimize.prefetch import Prefetch
from .optimize.register_promotion import RegisterPromotion
from .optimize.split_reduction import SplitReduction
from .optimize.stencil import Stencil
from .optimize.texture import Texture
from .optimize.thread_block_merge import ThreadBlockMerge
from .optimize.thread_merge import ThreadMerge
from .optimize.vectorize import Vectorize, VectorsAsWritten
from .options import PipelineOptions


def translation_passes() -> list[Pass]:
    """Passes that put a parsed file in the IR's terms (CUDA, predefined ids) as written: the
    naive kernel that verification runs is these passes' output."""
    return [OpenCLToCUDA(), Predefined()]


def default_canonicalization_passes() -> list[Pass]:
    """The canonicalization passes, in order: helpers written out first (the others then see
    what they read and compute), integer vector locals split into their components (a
    thread's ``int2`` position), thread ids next (later passes see ids), const
    values before the loops read their bounds, a loop's start set before it moved into its
    header (``int i = idx; for (; i < n; ...)``), grid-stride and while loops before their
    iterators move into them, declarations sunk after that (an iterator read after its loop
    is then declared where it gets its final value), clamps written as if-statements as
    assignments (sunk declarations first, so C89 locals are declared where they are set), a
    local per definition where straight-line code reassigns one (after the sinking made C89
    locals' first assignments their declarations), guards last."""
    return [InlineHelpers(), VectorLocals(), ThreadIds(), ConstPropagation(), LoopInits(),
            GridStrideLoops(), WhileToFor(), LoopIterators(), SinkDeclarations(), ClampIfs(),
            SplitLocals(), MergeGuards()]


def canonicalization_pass_names() -> list[str]:
    return [p.name for p in default_canonicalization_passes()]


def canonicalization_passes(options: PipelineOptions = PipelineOptions()) -> list[Pass]:
    """The canonicalization passes, those in ``options.disable`` replaced by a remark."""
    return [Disabled(p.name) if p.name in options.disable else p
            for p in default_canonicalization_passes()]


def analysis_passes() -> list[Pass]:
    """Passes that read the canonical kernel: the width of its global ids, thread space,
    loops, memory expressions, and the resources nvcc measures."""
    return [IdWidth(), ThreadSpace(), Loops(), MemoryExpressions(), NVCCResources()]


def front_passes(options: PipelineOptions = PipelineOptions()) -> list[Pass]:
    """Passes that turn a parsed file into the analysed GPU IR. The first two are
    :func:`translation_passes`."""
    return translation_passes() + canonicalization_passes(options) + analysis_passes()


def launch_passes(options: PipelineOptions = PipelineOptions()) -> list[Pass]:
    """Passes that run once each kernel's thread space is known (the passes above, then
    inference for a kernel no guard or pragma gives one), before the optimization passes:
    the launch's size read as that thread space's extent, or the launch kept; a 1-D kernel
    over a flattened 2-D space read as the 2-D kernel (``--disable-pass delinearize`` keeps
    it 1-D)."""
    return [LaunchExtents(), Disabled("delinearize") if "delinearize" in options.disable
            else Delinearize()]


def launch_rewrite_pass_names() -> list[str]:
    """The launch passes ``--disable-pass`` accepts (a rewrite the user may not want)."""
    return ["delinearize"]


def settling_passes() -> list[Pass]:
    """Passes that run after the optimization passes (or in their place), once the launch is
    settled: a canonical form that needs another launch than the input's is written back
    where no pass changed the launch (the 2-D reading of a 1-D kernel first: the grid-stride
    loop is written back around the 1-D body)."""
    return [RestoreDelinearized(), RestoreGridStride()]


def default_optimization_passes() -> list[Pass]:
    """The optimization passes of the default pipeline, in order."""
    return [RegisterPromotion(), InvariantFactors(), SplitReduction(), Coalesce(),
            ThreadBlockMerge(), ThreadMerge(), Stencil(), Prefetch(), AsyncPipeline(),
            CoalesceWrites(), Texture(), Vectorize(), PartitionCamping()]


def optimization_pass_names() -> list[str]:
    """The names ``--passes`` accepts, in the default order."""
    return [p.name for p in default_optimization_passes()]


def disableable_pass_names() -> list[str]:
    """The names ``--disable-pass`` accepts: canonicalization, then optimization passes."""
    return canonicalization_pass_names() + launch_rewrite_pass_names() + \
        optimization_pass_names()


def optimization_passes(options: PipelineOptions = PipelineOptions()) -> list[Pass]:
    """The optimization passes ``options`` select: the default pipeline, or exactly those
    ``options.passes`` names, in that order. Those in ``options.disable`` are replaced by a
    pass that only says so (every pass leaves a remark). An unknown name is an error naming
    the known ones; the pipeline's is located at its column."""
    known = {p.name: p for p in default_optimization_passes()}
    names = ", ".join(known)
    unknown = sorted(set(options.disable) - set(known) - set(canonicalization_pass_names())
                     - set(launch_rewrite_pass_names()))
    if unknown:
        raise NaiveoptError(f"unknown pass '{unknown[0]}' (optimization passes: {names}; "
                            "canonicalization passes: "
                            f"{', '.join(canonicalization_pass_names())})")
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


def unoptimized_passes() -> list[Pass]:
    """What runs in place of the optimization passes without optimization (``--no-opt``):
    the input's vector accesses written back as it wrote them."""
    return [VectorsAsWritten()]


def back_passes(target: str) -> list[Pass]:
    """Passes that write the IR back out in ``target``'s dialect."""
    return [RestoreLaunchExtents(), Postprocessor(), Vector3Layout()] + \
        ([CUDAToOpenCL()] if target == "opencl" else []) + [StructParams()]
