"""Target descriptions, the occupancy model and the bank-conflict padding rule."""
import pytest

from naiveopt.errors import NaiveoptError
from naiveopt.passes.optimize.banks import conflict_degree, row_pad
from naiveopt.targets import NAIVE_BLOCK_1D, NAIVE_BLOCK_2D, TARGETS, get_target, occupancy


def test_required_targets_exist_with_their_warp_sizes():
    assert get_target("sm_80").warp_size == 32
    assert get_target("sm_90").warp_size == 32
    amd = get_target("gfx90a")
    assert amd.warp_size == 64 and amd.vendor == "amd"
    for t in TARGETS.values():
        assert t.shared_banks == 32 and t.bank_width_bytes == 4
        assert t.threads_per_sm % t.warp_size == 0


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_candidate_blocks_are_whole_warps_that_fit(arch):
    """Every block a pass tries (Target.candidates) and the naive blocks are whole warps
    (wavefronts on gfx90a) within the target's block limit; tiles and merge factors are
    positive, and the unmerged (1, 1) is a thread-merge candidate (it must be able to lose)."""
    t = get_target(arch)
    c = t.candidates
    squares = [(s, s) for s in c.transpose_sides]
    blocks = [*c.coalesce_blocks_2d, *c.coalesce_blocks_1d, *c.merge_blocks, *squares,
              *c.stencil_blocks_2d, *c.stencil_blocks_1d, NAIVE_BLOCK_1D, NAIVE_BLOCK_2D]
    for x, y in blocks:
        assert (x * y) % t.warp_size == 0 and x * y <= t.threads_per_block, (arch, x, y)
    assert min(c.coalesce_tiles + c.merge_tiles) > 0
    for factors in (c.thread_merge_2d, c.thread_merge_1d, c.stencil_merges_2d,
                    c.stencil_merges_1d):
        assert (1, 1) in factors and min(min(f) for f in factors) >= 1
    assert all(my == 1 for _, my in c.thread_merge_1d + c.stencil_merges_1d)


def test_other_sm_versions_fall_back_and_unknown_arch_is_an_error():
    assert get_target("sm_86").name == "sm_80"
    assert get_target("sm_100").name == "sm_90"
    # a fallback does not lend features the architecture lacks: cp.async is sm_80's
    assert get_target("sm_86").async_copy and get_target("sm_100").async_copy
    assert not get_target("sm_75").async_copy and not get_target("sm_70").async_copy
    with pytest.raises(NaiveoptError):
        get_target("gfx_nonsense")


@pytest.mark.parametrize("threads,regs,smem,expected,limiter", [
    (256, 32, 0, 1.0, "threads"),              # 8 blocks x 8 warps = 64 warps
    (256, 64, 0, 0.5, "registers"),            # 65536 / (64*256) = 4 blocks = 32 warps
    (256, 32, 33792, 0.75, "shared memory"),   # 228 KiB / 33 KiB = 6 blocks = 48 warps
    (64, 16, 0, 1.0, "blocks"),                # 32 blocks x 2 warps = 64 warps (also threads)
    (1024, 255, 0, 0.0, "registers"),          # does not fit at all
])
def test_occupancy_hand_worked_on_sm_90(threads, regs, smem, expected, limiter):
    occ, lim = occupancy(get_target("sm_90"), threads, regs, smem)
    assert occ == pytest.approx(expected)
    if expected:
        assert lim == limiter or (limiter == "blocks" and lim in ("blocks", "threads"))


def test_gcd_rule_for_padding():
    t = get_target("sm_90")
    assert conflict_degree(32, t) == 32      # a 32x32 float tile read by column
    assert conflict_degree(33, t) == 1       # with a 33-word pitch
    assert conflict_degree(16, t) == 16
    assert conflict_degree(0, t) == 1        # broadcast
    assert row_pad(32, t) == 1
    assert row_pad(16, t) == 1
    assert row_pad(33, t) == 0
    assert row_pad(24, t) == 1               # gcd(25, 32) = 1


def test_partition_description():
    """Camping only where addresses are interleaved plainly across channels (AMD's documented
    256-byte channel interleave); NVIDIA hashes addresses across partitions since Fermi."""
    amd = get_target("gfx90a")
    assert amd.has_partition_camping and amd.partition_bytes == 256 and amd.partitions == 32
    for arch in ("sm_80", "sm_90"):
        t = get_target(arch)
        assert not t.has_partition_camping and t.partitions == 10


def test_occupancy_counts_the_grid_when_given():
    """mv at 4096: 16 blocks of 256 threads. The calculator's 100% hides that 116 of the
    H100's 132 SMs idle; with the launch's blocks it is one block per SM, 8 of 64 warps:
    12.5%, the achieved occupancy Nsight Compute measured (12.4%)."""
    from naiveopt.targets import TARGETS, occupancy

    h100 = TARGETS["sm_90"]
    assert occupancy(h100, 256, 29, 0) == (1.0, "threads")
    assert occupancy(h100, 256, 29, 0, blocks=16) == (0.125, "grid")
    assert occupancy(h100, 256, 29, 0, blocks=16 * 132)[0] == 1.0
    # 256 blocks of 256 threads on 132 SMs: at most 2 per SM
    assert occupancy(h100, 256, 29, 0, blocks=256) == (0.25, "grid")
