"""A roofline model of one kernel launch: estimated time and the bound that sets it.

The only place naiveopt estimates performance. A launch is described by what it does in total
(:class:`KernelWork`: bytes to and from DRAM and L2, shared-memory wavefronts, FP32
operations, warp instructions) and how it is launched (blocks, threads, registers and shared
memory per block); the target description gives every rate (targets.py). The time is the
largest of these lower bounds, each named:

- ``DRAM``: DRAM bytes / DRAM bandwidth;
- ``L2``: bytes between the SMs and L2 / L2 bandwidth, and the busiest SM's bytes over its
  own port to L2;
- ``shared memory``: wavefronts / (one per clock per SM);
- ``L1``: the wavefronts of global accesses in L1 (a cache line each a warp request touches),
  with the shared-memory ones where the two are one array (NVIDIA), at the same rate: a
  naive stencil whose taps hit in L1 is bound here, not by DRAM;
- ``FP32``: FP32 operations / (2 x FMA lanes per clock per SM);
- ``issue``: warp instructions / (issue slots per clock per SM);
- ``latency``: Little's law: the DRAM reads that the resident warps can keep in flight
  (``loads_in_flight`` requests of ``bytes_per_request`` each per warp), over the DRAM
  latency, bound the read bandwidth; a launch of few blocks is latency-bound long before it
  is bandwidth-bound. Where every iteration of the hot loop waits for the store of the one
  before (``serial_iterations``: a naive product storing ``C[i][j]`` in its k loop), each
  wave of resident blocks takes that many times the target's ``chain_latency_ns`` instead,
  wherever the data comes from (cached or not). Where a block's warps copy a tile together,
  wait at a barrier and then compute on it (``phased``: a staged stencil, a tiled product),
  no load is in flight while they compute: the compute phase (the largest of the shared
  memory, FP32 and issue bounds) adds to the loads' latency instead of hiding it (the H100
  ran a staged 3x3 filter at 75 us, where Little's law alone said 49).

The per-SM bounds count waves: blocks are spread over the SMs, so the busiest SM runs
ceil(blocks / SMs) of them, and a launch of 16 blocks on 132 SMs gets 16 SMs' throughput
(the estimate's note says so). DRAM is shared by all SMs and has no such term; its L2 reuse is
in ``dram_bytes`` (:func:`dram_bytes` estimates it from the bytes touched and the L2 size).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..targets import Target, resident_blocks


#: Independent global loads a warp is counted to keep in flight at most (its distinct load
#: instructions, up to this many: the compiler hoists them ahead of their uses).
MAX_LOADS_IN_FLIGHT = 8


def loads_in_flight(load_instructions: int) -> float:
    """The loads a warp keeps in flight for a kernel of ``load_instructions`` global loads
    (KernelWork.loads_in_flight), counted once nvcc unrolled its small constant loops
    (cost/static.py; the profiler's estimate takes the same figure)."""
    return float(min(MAX_LOADS_IN_FLIGHT, max(1, load_instructions)))


@dataclass
class KernelWork:
    """What one launch does, in totals over the launch."""

    blocks: int
    threads_per_block: int
    dram_bytes: float                 # bytes read and written in DRAM
    l2_bytes: float = 0.0             # bytes between L1 and L2 (global sectors x sector size)
    dram_read_bytes: float | None = None   # of dram_bytes, the reads (None: all of them)
    shared_wavefronts: float = 0.0
    l1_wavefronts: float = 0.0        # global accesses' L1 wavefronts (lines per request)
    flops: float = 0.0                # FP32 operations, an FMA counting two
    instructions: float = 0.0         # warp instructions issued (0: not known)
    registers: int | None = None      # per thread
    shared_bytes: int = 0             # per block
    loads_in_flight: float = 1.0      # independent global loads a warp keeps outstanding
    # iterations per thread of a hot loop whose loads wait for its previous iteration's store
    serial_iterations: float = 0.0
    # a block's warps copy a tile, wait at a barrier, then compute: the phases do not overlap
    phased: bool = False
    bytes_per_request: float = 128.0  # bytes one warp load moves (its sectors: a float row 128)


@dataclass
class Estimate:
    """The estimated time of a launch, the bound that sets it, and every bound's time."""

    seconds: float
    bound: str
    times: dict[str, float] = field(default_factory=dict)
    busy_sms: int = 0
    sms: int = 0
    resident_blocks: int = 0          # per SM
    dram_fraction: float = 0.0        # of the DRAM bandwidth this time sustains
    fp32_fraction: float = 0.0        # of the FP32 peak

    @property
    def note(self) -> str:
        """'16 of 132 SMs busy' where the launch leaves SMs idle, else ''."""
        return f"{self.busy_sms} of {self.sms} SMs busy" if self.busy_sms < self.sms else ""

    def describe(self) -> str:
        note = f", {self.note}" if self.note else ""
        return (f"{self.seconds * 1e6:.1f} us, {self.bound}-bound{note} ("
                f"{self.dram_fraction:.0%} of DRAM bandwidth, {self.fp32_fraction:.0%} of FP32 "
                "peak)")

    def to_json(self) -> dict:
        return {"seconds": self.seconds, "bound": self.bound, "note": self.note,
                "busy_sms": self.busy_sms,
                "resident_blocks_per_sm": self.resident_blocks,
                "dram_fraction": round(self.dram_fraction, 4),
                "fp32_fraction": round(self.fp32_fraction, 4),
                "times": {k: v for k, v in self.times.items()}}


def dram_bytes(touched: float, requested: float, target: Target) -> float:
    """DRAM bytes of a kernel that touches ``touched`` distinct bytes and moves ``requested``
    between L1 and L2: all reuse hits L2 when the touched bytes fit in it; beyond that, the
    share that does not fit is fetched again (a simple capacity model, no associativity)."""
    if touched <= target.l2_bytes or requested <= touched:
        return touched
    miss = 1.0 - target.l2_bytes / touched
    return touched + (requested - touched) * miss


def estimate(work: KernelWork, target: Target) -> Estimate:
    """The estimated time of ``work`` on ``target`` (module docstring)."""
    clock = target.clock_ghz * 1e9
    sms = target.multiprocessors
    warps = -(-work.threads_per_block // target.warp_size)
    resident = resident_blocks(target, work.threads_per_block, work.registers,
                               work.shared_bytes)
    busy = min(sms, work.blocks)
    # the busiest SM's share of the per-block work, and the rate of one SM
    per_sm = -(-work.blocks // sms) / work.blocks if work.blocks else 0.0
    times = {"DRAM": work.dram_bytes / (target.dram_gbps * 1e9)}
    if work.l2_bytes:
        times["L2"] = max(work.l2_bytes / (target.l2_gbps * 1e9), work.l2_bytes * per_sm / (
            target.l2_bytes_per_clock_per_sm * clock))
    if work.shared_wavefronts:
        times["shared memory"] = work.shared_wavefronts * per_sm / (
            target.shared_wavefronts_per_clock * clock)
    if work.l1_wavefronts:
        lines = work.l1_wavefronts + (work.shared_wavefronts if target.l1_with_shared else 0)
        times["L1"] = lines * per_sm / (target.shared_wavefronts_per_clock * clock)
    if work.flops:
        times["FP32"] = work.flops * per_sm / (2 * target.fp32_lanes_per_sm * clock)
    if work.instructions:
        times["issue"] = work.instructions * per_sm / (target.issue_per_clock * clock)
    reads = work.dram_bytes if work.dram_read_bytes is None else work.dram_read_bytes
    if work.serial_iterations:
        waves = -(-work.blocks // (sms * resident))
        times["latency"] = waves * work.serial_iterations * target.chain_latency_ns * 1e-9
    elif reads:
        warps_resident = min(work.blocks, sms * resident) * warps
        in_flight = warps_resident * work.loads_in_flight * work.bytes_per_request
        times["latency"] = reads / (in_flight / (target.dram_latency_ns * 1e-9))
    if work.phased and "latency" in times:
        times["latency"] += max(times.get(k, 0.0) for k in ("shared memory", "FP32", "issue"))
    bound = max(times, key=times.get)
    seconds = times[bound]
    peak_flops = 2 * target.fp32_lanes_per_sm * sms * clock
    return Estimate(seconds, bound, times, busy, sms, resident,
                    (work.dram_bytes / seconds) / (target.dram_gbps * 1e9) if seconds else 0.0,
                    (work.flops / seconds) / peak_flops if seconds else 0.0)
