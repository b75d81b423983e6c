"""The cost model against hand-worked cases (issue "Choose variants by estimated time"): a
streaming copy is DRAM-bound at the datasheet bandwidth, a tile loop of FMAs is FP32-bound at
the peak, a 16-block launch is latency-bound on 16 of the H100's 132 SMs, a launch one block
past a full wave takes two waves, and L2 holds what fits in it."""
from __future__ import annotations

import pytest

from naiveopt.cost import KernelWork, dram_bytes, estimate
from naiveopt.targets import TARGETS

H100 = TARGETS["sm_90"]


def test_a_streaming_copy_is_dram_bound_at_the_datasheet_bandwidth():
    n = 1 << 26                                   # floats read and written once
    work = KernelWork(blocks=n // 256, threads_per_block=256, dram_bytes=8 * n,
                      dram_read_bytes=4 * n, l2_bytes=8 * n, registers=16)
    e = estimate(work, H100)
    assert e.bound == "DRAM"
    assert e.seconds == pytest.approx(8 * n / 3350e9)          # 160 us
    assert e.dram_fraction == pytest.approx(1.0)
    # by hand: 132 SMs x 64 resident warps x 128 B in flight over 480 ns = 2.25 TB/s of reads
    assert e.times["latency"] == pytest.approx(4 * n / (132 * 64 * 128 / 480e-9))


def test_a_tile_loop_of_fmas_is_fp32_bound_at_the_peak():
    n = 4096                                      # C = A B, 128x128 tiles of 256 threads
    work = KernelWork(blocks=(n // 128) ** 2, threads_per_block=256,
                      dram_bytes=3 * 4 * n * n, flops=2 * n ** 3, registers=128,
                      shared_bytes=32 * 1024, shared_wavefronts=2 * n ** 3 / 32 / 16)
    e = estimate(work, H100)
    assert e.bound == "FP32"
    # 1024 blocks on 132 SMs: the busiest SM runs 8 of them, 1056 block slots for 1024
    assert e.seconds == pytest.approx(2 * n ** 3 / 1024 * 8 / (2 * 128 * 1.98e9))
    assert e.fp32_fraction == pytest.approx(1024 / 1056)


def test_a_16_block_launch_is_latency_bound_on_16_sms():
    """mv at 4096, one thread per row: 16 blocks of 256 threads; each warp's load touches 32
    rows (32 sectors, 1 KB) and the unrolled loop keeps 4 in flight."""
    n = 4096
    work = KernelWork(blocks=16, threads_per_block=256, dram_bytes=4 * n * n + 8 * n,
                      l2_bytes=4 * n * n, registers=32, loads_in_flight=4,
                      bytes_per_request=1024)
    e = estimate(work, H100)
    assert e.bound == "latency" and e.note == "16 of 132 SMs busy"
    assert "latency-bound, 16 of 132 SMs busy" in e.describe()
    in_flight = 16 * 8 * 4 * 1024                 # 512 KB
    assert e.seconds == pytest.approx((4 * n * n + 8 * n) / (in_flight / 480e-9))
    assert 0.2 < e.dram_fraction < 0.5


def test_one_block_past_a_full_wave_takes_two():
    def fp32_time(blocks: int) -> float:
        work = KernelWork(blocks=blocks, threads_per_block=256, dram_bytes=0,
                          flops=1e6 * blocks, registers=32)
        return estimate(work, H100).seconds

    assert fp32_time(133) == pytest.approx(2 * fp32_time(132))
    assert fp32_time(264) == pytest.approx(fp32_time(133))


def test_l2_holds_what_fits():
    assert dram_bytes(40e6, 400e6, H100) == 40e6             # 40 MB < 50 MB of L2
    assert dram_bytes(100e6, 100e6, H100) == 100e6            # read once
    # 200 MB touched, 1 GB requested: a quarter of the re-reads hit L2
    assert dram_bytes(200e6, 1e9, H100) == pytest.approx(200e6 + 800e6 * (1 - 50 * 2**20 / 200e6))


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_every_target_describes_its_rates(arch):
    t = TARGETS[arch]
    assert t.clock_ghz > 0.5 and t.dram_gbps > 500 and t.l2_bytes >= 4 * 2**20
    assert t.l2_gbps > t.dram_gbps and 100 < t.dram_latency_ns < 2000


def test_naiveopt_profile_reports_the_estimate():
    """`naiveopt profile` feeds the model from its trace: mv at its profile sizes launches a
    few blocks of 256 threads, which the estimate says leave most SMs idle."""
    import os

    from conftest import KERNELS_DIR
    from naiveopt.profile import profile_file
    from naiveopt.profile.report import compare_text, text

    path = os.path.join(KERNELS_DIR, "mv.cu")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    naive, = profile_file(source, path)
    optimized, = profile_file(source, path, opt=True)
    est = naive.totals.to_json()["estimate"]
    assert est["bound"] in ("DRAM", "L2", "latency", "shared memory")
    assert est["busy_sms"] == naive.blocks < 132 and est["note"].endswith("of 132 SMs busy")
    assert est["seconds"] > 0
    assert "estimate: " in text(naive) and "-bound" in text(naive)
    assert "estimated us" in compare_text(naive, optimized)
