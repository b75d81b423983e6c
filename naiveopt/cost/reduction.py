"""The work of a one-output-per-thread reduction kernel, launched whole or split into lanes.

Kernels of the mv family give each thread one output and loop over a reduction dimension:

    i = idx; if (i < H) { acc = 0; for (j = 0; j < W; j++) acc += A[i * W + j] * B[j]; C[i] = acc; }

At H = 4096 and blocks of 256 threads that is 16 blocks: 16 of the H100's 132 SMs do all the
work, and the few warps they hold keep too few loads in flight to cover the DRAM latency
(the model's ``latency`` bound). Splitting each output's loop over a group of ``lanes``
threads (split-reduction) multiplies the threads by ``lanes``; this module describes both
launches as :class:`~naiveopt.cost.model.KernelWork` so that the model, not a rule of
thumb, says which is faster at the sizes of interest.

The description is static (no trace): per iteration of the loop, the global reads it makes,
each either a stream of its own per output (``A[i * W + j]``) or shared by all outputs
(``B[j]``, served by L1/L2 after the first reader); DRAM bytes are the distinct bytes
touched. Reads are assumed coalesced in the unsplit launch (what the coalescing passes reach
at best), so the comparison credits the split launch with its parallelism only. In a split
launch, a read contiguous along the loop (``A[i * W + j]`` with lanes along ``j``) or along
the outputs (``A[j * W + i]`` with the outputs of a block along x) moves ``lanes`` or
``outputs per block`` consecutive elements per group: a segment under a 32-byte sector wastes
the rest of it between L1 and L2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..targets import Target
from .model import Estimate, KernelWork, estimate

#: The size an unknown problem dimension is estimated at: large enough that a kernel's launch
#: shape, not its fixed costs, decides (remarks say when it is used).
ESTIMATE_SIZE = 4096
#: Instructions a warp issues per loop iteration besides its loads (FMA, index, compare,
#: branch): nvcc's loops of this kind compile to about this many.
_LOOP_OVERHEAD = 4
#: Bytes one sector moves between L1 and L2.
_SECTOR = 32
#: Iterations whose loads a warp has in flight at once: the iterations of a reduction are
#: independent but for the sum, and nvcc unrolls such a loop of unknown trip count by 4,
#: issuing the four iterations' loads before their FMAs.
_UNROLL = 4


@dataclass
class Read:
    """A global read in the loop body: its element size, and whether each output reads its
    own elements (else all outputs read the same ones)."""

    bytes: int
    per_output: bool


@dataclass
class ReductionKernel:
    """outputs: threads of the naive kernel (one output each); trips: loop iterations per
    output; reads: global reads per iteration; write_bytes: bytes written per output;
    flops: floating-point operations per iteration (an FMA two)."""

    outputs: int
    trips: int
    reads: list[Read] = field(default_factory=list)
    write_bytes: int = 4
    flops: int = 2


def work(k: ReductionKernel, threads_per_block: int, lanes: int = 1,
         segment_bytes: float = 128.0, shared_bytes: int = 0) -> KernelWork:
    """The launch of ``k`` in blocks of ``threads_per_block`` threads, each output's loop
    split over ``lanes`` of them; ``segment_bytes``: the consecutive bytes a per-output read
    moves per group of threads (128: a coalesced warp)."""
    outputs_per_block = threads_per_block // lanes
    blocks = -(-k.outputs // outputs_per_block)
    per_output = sum(r.bytes for r in k.reads if r.per_output)
    shared = sum(r.bytes for r in k.reads if not r.per_output)
    reads = k.outputs * k.trips * per_output + k.trips * shared
    writes = k.outputs * k.write_bytes
    waste = max(1.0, _SECTOR / segment_bytes) if segment_bytes else 1.0
    warps_per_output = lanes / 32
    iterations = -(-k.trips // lanes)
    warp_iterations = k.outputs * warps_per_output * iterations
    instructions = warp_iterations * (len(k.reads) + _LOOP_OVERHEAD)
    wavefronts = 0.0
    if lanes > 1:
        # the partial sums combined in shared memory: log2(lanes) steps of a load, an add and
        # a store per warp, and a barrier
        steps = math.log2(lanes)
        instructions += k.outputs * warps_per_output * steps * 4
        wavefronts = k.outputs * warps_per_output * (steps * 2 + 1)
    # lanes past the trip count idle: a warp request then moves fewer bytes
    request = 128.0 * min(1.0, k.trips / lanes) if lanes > 1 else 128.0
    return KernelWork(blocks=blocks, threads_per_block=threads_per_block,
                      dram_bytes=reads + writes, dram_read_bytes=reads,
                      l2_bytes=k.outputs * k.trips * per_output * waste + k.trips * shared
                      + writes,
                      shared_wavefronts=wavefronts,
                      flops=k.outputs * k.trips * k.flops, instructions=instructions,
                      shared_bytes=shared_bytes,
                      loads_in_flight=max(1, len(k.reads)) * min(_UNROLL, max(1, iterations)), bytes_per_request=request)


def estimate_launch(k: ReductionKernel, target: Target, threads_per_block: int,
                    lanes: int = 1, segment_bytes: float = 128.0,
                    shared_bytes: int = 0) -> Estimate:
    """:func:`work` estimated on ``target`` (cost/model.py)."""
    return estimate(work(k, threads_per_block, lanes, segment_bytes, shared_bytes), target)
