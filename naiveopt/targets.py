"""Target descriptions: every GPU constant naiveopt uses lives here and nowhere else.

Numbers are from the vendors' programming guides (CUDA C++ Programming Guide, compute
capability tables; AMD CDNA2 ISA / MI200 tuning guide). Shared memory per block is the static
limit (48 KiB on NVIDIA without opt-in), since emitted kernels use static __shared__ arrays.

Memory partitions (partition camping, paper 002 pass (5)): global memory is spread over
``partitions`` channels, consecutive ``partition_bytes`` of the address space going to
consecutive channels; blocks that run together and hit the same channel queue on it.
- NVIDIA: Ruetsch & Micikevicius (*Optimizing Matrix Transpose in CUDA*, 2009) give 6 or 8
  partitions of 256 bytes for the GPUs of that time, where camping was real. Since Fermi the
  memory controllers hash addresses across partitions, so A100 and H100 show no camping
  (``has_partition_camping=False``); ``partitions`` is their number of memory controllers
  (ten 512-bit controllers on both, A100 and H100 whitepapers) and 256 bytes the historical
  width, kept for reference only.
- AMD: the AMD APP/OpenCL Optimization Guide (GCN chapter, "channel conflicts") documents
  256-byte interleaving across memory channels, which is the effect Yang & Zhou remove on
  their HD 5870 ("one partition is 256 bytes", paper 002). An MI200 GCD has four HBM2e stacks
  of eight 128-bit channels (4096-bit interface), i.e. 32 channels, and its L2 has 32 channels
  (CDNA2 whitepaper). AMD does not publish MI200's exact address-to-channel function;
  naiveopt models it as the documented plain 256-byte interleave, which is the worst case the
  pass guards against.
``multiprocessors`` (A100 108 SMs, H100 SXM5 132 SMs, MI250X 110 CUs per GCD) sizes the wave of
blocks that run together in the camping model.
``fp32_lanes_per_sm``: FP32 FMA units per SM (CUDA C++ Programming Guide, arithmetic
instruction throughput table: 64 results per clock per SM on compute capability 8.0, 128 on
9.0) or per CU (64 on CDNA2 without packed FP32); FP32 peak = 2 x lanes x SMs x clock.
``vector_bytes``: the widest single access of a thread, 16 bytes on both vendors (CUDA's
float4/int4, one 128-bit LDG/STG; CDNA2's global_load_dwordx4); vectorization packs this many
bytes of elements (ir/elements.py sizes them) into one access.
``register_proxy``: the NVIDIA architecture whose nvcc register counts stand in for a target
without a resource query of its own (AMD: the same scalar code compiled for sm_90); None where
the target is measured itself.
``candidates``: the variants the optimization passes try (:class:`Candidates`).

The cost model's throughputs (cost/model.py): ``clock_ghz`` is the boost clock the FP32 peak
is quoted at (H100 SXM5 1.98 GHz: 2 x 128 x 132 x 1.98 = 66.9 TFLOPS, the datasheet's 67;
A100 1.41 GHz: 19.5 TFLOPS; MI250X 1.7 GHz); ``dram_gbps`` the memory bandwidth of the
datasheets (H100 SXM5 HBM3 3350 GB/s, A100 80GB HBM2e 2039 GB/s, one MI250X GCD 1638 GB/s);
``l2_bytes`` the L2 size (50 MB, 40 MB, 8 MB per GCD: whitepapers); ``l2_gbps`` the L2
bandwidth, which the vendors do not publish: the figures of published microbenchmarks
(Chips and Cheese's H100 and A100 articles, about 5.5 and 4.0 TB/s; MI200 about 4 TB/s per
GCD), as are ``dram_latency_ns`` (about 480, 450 and 600 ns unloaded); ``issue_per_clock``
warp instructions an SM issues per clock (four schedulers on NVIDIA; a CU's four SIMDs issue
one wavefront instruction each per four clocks, one per clock in all); ``shared_wavefronts_
per_clock`` shared-memory wavefronts an SM serves per clock (one: 32 banks x 4 bytes);
``l2_bytes_per_clock_per_sm`` what one SM's port to L2 moves per clock (64 bytes, from the
same microbenchmarks): a launch that keeps few SMs busy gets their ports, not all of L2;
``launch_us`` the fixed cost of a launch (driver, block-scheduling ramp and drain) that no
variant avoids: a few microseconds on recent NVIDIA GPUs (the CUDA Best Practices Guide puts
launch overhead in microseconds; microbenchmarks of an empty kernel give 2-4 us), more through
HIP. ``l1_bytes`` the L1 data cache of an SM: on NVIDIA one array with shared memory (A100
192 KB, H100 256 KB: CUDA C++ Programming Guide, compute capability 8.x and 9.0 sections),
of which the blocks' shared memory is carved out; on CDNA2 a separate 16 KB vector L1 per CU
(CDNA2 ISA guide / MI200 whitepaper); ``l1_wavefront_bytes`` the cache line one L1 wavefront
serves per clock (NVIDIA 128-byte lines, which global accesses and shared memory share; CDNA2
64 bytes per clock per CU). Choosing variants counts ``launch_us``, so that at tiny sizes,
where every variant takes well under it, none wins on a difference the run would not show.
``chain_latency_ns`` the time one iteration of a loop takes whose loads must wait for the
store of the iteration before (through pointers that may alias: a naive ``y[j] += A[i][j] *
x[i]``): H100 timings of the naive library kernels put it at 350-410 ns (bench/results/
NVIDIA-H100-80GB-HBM3-2026-11-23.json: tmv at 4096, 1.537 ms over 4096 iterations, 375 ns;
gemm at 512, 0.181 ms over 512, 353 ns; mvt's first kernel at 4031, 407 ns); no GPU of the
other targets has run, and their figures are the H100's scaled by their DRAM latencies.
These are model parameters to be judged against the GPU timings in bench/results/
(bench/model_check.py compares the model with them).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import NaiveoptError

#: The block a naive kernel is launched with when neither metadata, a ``#define blockDimX`` nor
#: a pragma says (launch.default_block): 256 threads in a row for a 1-D kernel, 16 x 16 for a
#: 2-D one. It is the naive program's launch, which the host already uses, not a choice of
#: naiveopt's: the same on every target, and what an unguarded kernel's thread space must be
#: a multiple of.
NAIVE_BLOCK_1D = (256, 1)
NAIVE_BLOCK_2D = (16, 16)

Pair = tuple[int, int]


@dataclass(frozen=True)
class Candidates:
    """The variants the optimization passes try on a target; the occupancy model, with the
    NVCC pass's registers, chooses among those that fit (passes/optimize/selection.py).

    Blocks are (x, y) threads, 64 to 512 of them: whole warps on NVIDIA and whole 64-lane
    wavefronts on gfx90a. Tiles are the lengths of the tiled loop's step (elements of a
    staged row or column per barrier); merge factors are (x, y) outputs per thread. The
    candidates are the same on every target described today: the choice among them, by each
    target's resources, is where targets differ."""

    #: coalesce: blocks of a 2-D and a 1-D kernel (the naive block is added when it is not
    #: one of them), and the loop tile lengths
    coalesce_blocks_2d: tuple[Pair, ...] = ((16, 16), (32, 8))
    coalesce_blocks_1d: tuple[Pair, ...] = ((256, 1), (128, 1), (64, 1))
    coalesce_tiles: tuple[int, ...] = (32, 16)
    #: thread-block-merge: the merged blocks, and the loop tile lengths
    merge_blocks: tuple[Pair, ...] = ((16, 16), (32, 8), (32, 16), (64, 4), (16, 8), (8, 8))
    merge_tiles: tuple[int, ...] = (16, 32)
    #: thread-merge: (x, y) outputs per thread of a 2-D and a 1-D kernel ((1, 1): no merge)
    thread_merge_2d: tuple[Pair, ...] = ((1, 1), (1, 2), (1, 4), (1, 8), (2, 1), (2, 2),
                                         (2, 4))
    thread_merge_1d: tuple[Pair, ...] = ((1, 1), (2, 1), (4, 1))
    #: thread-merge's register-tiled variants of a 2-D kernel: the block, the loop tile and
    #: the (x, y) micro-tiles, each thread's outputs in runs of one 128-bit vector (the
    #: classic SGEMM layout: 16x16 threads of 8x8 outputs cover 128x128); the second block
    #: serves OpenCL outputs whose naive block is the first (thread_merge.py says why)
    register_tile_blocks: tuple[Pair, ...] = ((16, 16), (32, 8))
    register_tile_k: int = 8
    register_tiles: tuple[Pair, ...] = ((8, 8), (8, 4), (4, 8), (4, 4))
    #: coalesce-writes: sides of the square tile a transposed write goes through
    transpose_sides: tuple[int, ...] = (32, 16, 8)
    #: coalesce-writes: tile rows per thread (a side x side tile on side x side/rows threads,
    #: the classic 32x8 transpose at 4); more than one only where a warp is one tile row
    transpose_rows: tuple[int, ...] = (1, 4, 8)
    #: stencil: blocks and (x, y) outputs per thread of a 2-D and a 1-D kernel
    stencil_blocks_2d: tuple[Pair, ...] = ((32, 8), (64, 4), (16, 16), (32, 16))
    stencil_merges_2d: tuple[Pair, ...] = ((1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (1, 8))
    stencil_blocks_1d: tuple[Pair, ...] = ((128, 1), (256, 1))
    stencil_merges_1d: tuple[Pair, ...] = ((1, 1), (2, 1), (4, 1))
    #: stencil's register-blocked variants (one fused loop nest per thread, taps unrolled
    #: for the common filter sizes): a block and the (x, y, run) outputs per thread, in
    #: runs of ``run`` adjacent ones along each axis the run divides (a sliding window of
    #: 128-bit shared reads along x; along y rows reused from registers); the last covers
    #: 16x16, what an unguarded kernel's naive block allows
    stencil_register_2d: tuple[tuple[Pair, tuple[int, int, int]], ...] = (
        ((32, 8), (4, 4, 4)), ((32, 8), (1, 4, 4)), ((32, 8), (1, 8, 8)), ((16, 4), (1, 4, 4)))
    stencil_register_1d: tuple[tuple[Pair, tuple[int, int, int]], ...] = (
        ((128, 1), (4, 1, 4)), ((128, 1), (8, 1, 8)))
    #: vectorize: blocks a streaming kernel's vector form is tried on besides its naive one
    #: (a warp of 32 float4 accesses: one 512-byte run of a row)
    streaming_blocks: tuple[Pair, ...] = ((32, 8), (256, 1))
    #: async-pipeline: shared buffers per tile of an asynchronous copy pipeline (cp.async)
    pipeline_stages: tuple[int, ...] = (2, 3)


@dataclass(frozen=True)
class Target:
    name: str
    vendor: str                      # nvidia | amd
    description: str
    warp_size: int                   # warp / wavefront
    shared_banks: int
    bank_width_bytes: int
    shared_per_sm: int               # bytes usable by blocks on one SM / CU
    shared_per_block: int            # static limit per block
    shared_alloc_unit: int           # allocation granularity of shared memory per block
    registers_per_sm: int
    registers_per_thread: int        # maximum a thread may use
    register_alloc_unit: int         # registers are allocated per warp in units of this
    threads_per_block: int
    threads_per_sm: int
    blocks_per_sm: int
    sector_bytes: int                # memory access granularity (NVIDIA sector, AMD cache line)
    partition_bytes: int             # interleave width of the memory partitions (channels)
    occupancy_target: float          # fraction of the SM's threads wanted resident
    has_partition_camping: bool      # False where addresses are hashed across partitions
    partitions: int                  # memory partitions (channels) addresses interleave over
    multiprocessors: int             # SMs / CUs: at least this many blocks run together
    fp32_lanes_per_sm: int = 64      # FP32 FMA lanes per SM / CU per clock (peak = 2 x this)
    vector_bytes: int = 16           # widest vector access of one thread (float4 / int4)
    register_proxy: str | None = None   # arch measured for registers when this one cannot be
    clock_ghz: float = 1.0           # boost clock of the FP32 peak
    dram_gbps: float = 1000.0        # DRAM bandwidth, GB/s
    l2_bytes: int = 0                # L2 cache size
    l2_gbps: float = 2000.0          # L2 bandwidth (microbenchmarks), GB/s
    dram_latency_ns: float = 500.0   # unloaded DRAM latency (microbenchmarks)
    chain_latency_ns: float = 400.0  # a loop iteration whose loads wait for its store
    issue_per_clock: int = 4         # warp instructions issued per SM per clock
    shared_wavefronts_per_clock: int = 1   # shared-memory wavefronts per SM per clock
    l2_bytes_per_clock_per_sm: int = 64    # what one SM can move to and from L2 per clock
    launch_us: float = 3.0           # the fixed cost of one launch, microseconds
    l1_bytes: int = 0                # L1 data cache per SM / CU (with shared memory: below)
    l1_with_shared: bool = False     # L1 and shared memory are one array (what blocks'
                                     # shared memory takes, L1 loses)
    l1_wavefront_bytes: int = 128    # bytes of one cache line the L1 serves per clock
    # register-file partitions (an SM's 4 sub-partitions since Volta, each a quarter of the
    # registers and of the warps): ptxas sizes a __launch_bounds__ budget per partition
    register_partitions: int = 1
    # global -> shared copies without registers (cp.async, sm_80 and later)
    async_copy: bool = False
    candidates: Candidates = Candidates()   # the variants the passes try

    @property
    def warps_per_sm(self) -> int:
        return self.threads_per_sm // self.warp_size


TARGETS: dict[str, Target] = {
    "sm_80": Target("sm_80", "nvidia", "NVIDIA A100 (Ampere)", 32, 32, 4, 164 * 1024,
                    48 * 1024, 128, 65536, 255, 256, 1024, 2048, 32, 32, 256, 0.5, False,
                    partitions=10, multiprocessors=108,
                    fp32_lanes_per_sm=64, vector_bytes=16, clock_ghz=1.41, dram_gbps=2039,
                    l2_bytes=40 * 2**20, l2_gbps=4000, dram_latency_ns=450,
                    chain_latency_ns=350,
                    register_partitions=4, async_copy=True, l1_bytes=192 * 1024,
                    l1_with_shared=True),
    "sm_90": Target("sm_90", "nvidia", "NVIDIA H100 (Hopper)", 32, 32, 4, 228 * 1024,
                    48 * 1024, 128, 65536, 255, 256, 1024, 2048, 32, 32, 256, 0.5, False,
                    partitions=10, multiprocessors=132,
                    fp32_lanes_per_sm=128, vector_bytes=16, clock_ghz=1.98, dram_gbps=3350,
                    l2_bytes=50 * 2**20, l2_gbps=5500, dram_latency_ns=480,
                    chain_latency_ns=375,
                    register_partitions=4, async_copy=True, l1_bytes=256 * 1024,
                    l1_with_shared=True),
    "gfx90a": Target("gfx90a", "amd", "AMD Instinct MI200 (CDNA2)", 64, 32, 4, 64 * 1024,
                     64 * 1024, 256, 4 * 512 * 64, 512, 8 * 64, 1024, 2048, 32, 64, 256,
                     0.25, True, partitions=32, multiprocessors=110,
                     fp32_lanes_per_sm=64, vector_bytes=16, register_proxy="sm_90",
                     clock_ghz=1.7, dram_gbps=1638, l2_bytes=8 * 2**20, l2_gbps=4000,
                     dram_latency_ns=600, chain_latency_ns=470, issue_per_clock=1,
                     launch_us=5.0,
                     l1_bytes=16 * 1024, l1_wavefront_bytes=64),
}


def get_target(arch: str) -> Target:
    """The description of ``--arch``; other sm_XX fall back to the nearest described one,
    less the features it lacks: before sm_80 there is no asynchronous copy (cp.async)."""
    if arch in TARGETS:
        return TARGETS[arch]
    if arch.startswith("sm_") and arch[3:].isdigit():
        number = int(arch[3:])
        if number < 80:
            return replace(TARGETS["sm_80"], async_copy=False)
        return TARGETS["sm_80"] if number < 90 else TARGETS["sm_90"]
    raise NaiveoptError(f"unknown --arch '{arch}' (known: {', '.join(TARGETS)}, or sm_XX)")


def find_target(arch: str) -> Target | None:
    """The description of ``arch``, or None when naiveopt has none (passes then decline)."""
    try:
        return get_target(arch)
    except NaiveoptError:
        return None


def resident_blocks(target: Target, threads_per_block: int, registers: int | None,
                    shared_bytes: int, blocks: int | None = None) -> int:
    """The blocks one SM holds at once (at least one), by :func:`occupancy`'s limits."""
    occ, _ = occupancy(target, threads_per_block, registers, shared_bytes, blocks)
    warps = -(-threads_per_block // target.warp_size)
    return max(1, round(occ * target.warps_per_sm / warps))


def occupancy(target: Target, threads_per_block: int, registers: int | None,
              shared_bytes: int, blocks: int | None = None) -> tuple[float, str]:
    """Fraction of the SM's warp slots occupied, and which resource limits it.

    The CUDA occupancy calculator's model: resident blocks are limited by threads, blocks,
    registers (allocated per warp in units) and shared memory (allocated in units). Given
    the launch's ``blocks``, also by the grid: a launch of fewer blocks than the SMs could
    hold leaves each SM with ceil(blocks / SMs) at most, which is what Nsight Compute's
    achieved occupancy shows (mv at 4096: 16 blocks of 256 threads on 132 SMs, 12%, where the
    calculator's 100% said nothing of the 116 idle SMs)."""
    warps = -(-threads_per_block // target.warp_size)
    limits = {"threads": target.threads_per_sm // (warps * target.warp_size),
              "blocks": target.blocks_per_sm}
    if registers:
        unit = target.register_alloc_unit
        per_warp = -(-registers * target.warp_size // unit) * unit
        limits["registers"] = target.registers_per_sm // (per_warp * warps)
    if shared_bytes:
        unit = target.shared_alloc_unit
        per_block = -(-shared_bytes // unit) * unit
        limits["shared memory"] = target.shared_per_sm // per_block
    if blocks is not None:
        limits["grid"] = -(-blocks // target.multiprocessors)
    blocks_per_sm = min(limits.values())
    limiter = min(limits, key=limits.get)
    return min(1.0, blocks_per_sm * warps / target.warps_per_sm), limiter
