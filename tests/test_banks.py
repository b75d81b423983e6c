"""Bank conflicts of the shared tiles the staging passes generate: the load order and pad of
tiling.load_order, the row order of the coalesce-writes tile, and profiled library kernels."""
import os
from dataclasses import replace

import pytest
import sympy

import naiveopt
from conftest import unsplit
from naiveopt.passes.optimize import coalesce_writes, tiling
from naiveopt.passes.optimize.banks import interleaved, warp_degree
from naiveopt.profile import profile_file
from naiveopt.targets import get_target

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels", "naive")
SM90 = get_target("sm_90")


def _plan(kind, block, tile, merge=(1, 1), width=1):
    k, i = sympy.symbols("k i", integer=True)
    staging = tiling.Staging("A", kind, i, k, sympy.Symbol("W", integer=True), "float")
    return replace(tiling.TilingPlan(None, 0, [staging], block, tile), merge=merge,
                   load_width=width)


def test_interleaved_rows_are_a_permutation_of_each_group():
    assert [interleaved(r, 2, 16) for r in range(4)] == [0, 16, 1, 17]
    assert sorted(interleaved(r, 2, 16) for r in range(64)) == list(range(64))
    assert [interleaved(r, 2, 8) for r in range(16)] == [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5,
                                                         13, 6, 14, 7, 15]


def _warp_degrees(plan, target):
    """Degree of every warp's tile stores (each element of its units) and of its loop reads,
    over the whole tile: the first warp must stand for all."""
    (s,) = plan.stagings
    segment, interleave, pad = tiling.load_order(s, plan, target)
    rows, cols = tiling.tile_extent(s, plan)
    width = tiling.unit_width(s, plan)
    pitch = cols + pad
    units = rows * cols // width
    cells = [tiling.unit_cell(u, s, plan, segment, interleave) for u in range(units)]
    assert sorted((r, c + i) for r, c in cells for i in range(width)) == \
        [(r, c) for r in range(rows) for c in range(cols)]          # each cell once
    lanes = min(target.warp_size, plan.block[0] * plan.block[1])
    stores = [warp_degree([(r, c + i) for r, c in cells[w:w + lanes]], pitch, target)
              for w in range(0, units, lanes) for i in range(width)]
    bx = plan.block[0]
    within = [(lane % bx) if s.thread_axis == "x" else (lane // bx) for lane in range(lanes)]
    reads = [(w, 0) for w in within] if s.kind.startswith("row") else [(0, w) for w in within]
    return interleave, pad, set(stores), warp_degree(reads, pitch, target)


def test_short_tile_rows_are_interleaved_so_stores_and_column_reads_do_not_conflict():
    # gesummv / mv with a 16-wide k-tile: a warp loads two rows of 16, the loop reads a column
    interleave, pad, stores, reads = _warp_degrees(_plan("row_x", (256, 1), 16), SM90)
    assert interleave == (2, 16) and pad == 1
    assert stores == {1} and reads == 1
    # row-major order could not: adjacent rows want pitch 16 mod 32, the column reads an odd one
    (s,) = _plan("row_x", (256, 1), 16).stagings
    rowmajor = [tiling.unit_cell(u, s, _plan("row_x", (256, 1), 16), 0) for u in range(32)]
    assert all(warp_degree(rowmajor, 16 + p, SM90) + warp_degree([(w, 0) for w in range(32)],
                                                                 16 + p, SM90) > 2
               for p in range(32))


@pytest.mark.parametrize("kind,block,tile,merge", [
    ("row_x", (256, 1), 16, (1, 1)), ("row_x", (128, 1), 32, (1, 1)),
    ("row_x", (64, 1), 16, (2, 1)), ("row_y", (16, 16), 16, (1, 2)),
    ("col_x", (16, 16), 16, (1, 1)), ("col_x", (16, 16), 32, (2, 1)),
    ("col_y", (16, 16), 32, (1, 4)), ("row_y", (32, 8), 16, (1, 1)),
    ("col_x", (64, 4), 32, (1, 1))])
def test_chosen_load_order_and_pad_leave_no_conflict(kind, block, tile, merge):
    _, _, stores, reads = _warp_degrees(_plan(kind, block, tile, merge), SM90)
    assert stores == {1} and reads == 1


@pytest.mark.parametrize("kind,block,tile", [("col_x", (16, 16), 16), ("row_y", (16, 16), 32),
                                             ("row_x", (128, 1), 32), ("col_x", (32, 8), 32)])
def test_row_major_order_is_kept_where_it_does_not_conflict(kind, block, tile):
    (s,) = _plan(kind, block, tile).stagings
    assert tiling.load_order(s, _plan(kind, block, tile), SM90)[1] is None


def test_prefetch_slots_of_interleaved_rows_keep_a_constant_row_offset():
    path = os.path.join(KERNELS, "gesummv.cu")
    result = naiveopt.optimize(open(path).read(), filename=path, verify=False,
                               options=unsplit())
    assert "prefetch" in result.kernels[0].passes
    assert "int r = tidx / 16 % 2 * 16 + tidx / 16 / 2 + 8;" in result.code


@pytest.mark.parametrize("side", [8, 16, 32])
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_transpose_tile_rows_and_pad_leave_no_conflict(side, arch):
    target = get_target(arch)
    pad, order = coalesce_writes._layout(side, target)
    row = (lambda t: interleaved(t, *order)) if order else (lambda t: t)
    assert sorted(map(row, range(side))) == list(range(side))
    threads = [(t % side, t // side) for t in range(side * side)]
    for w in range(0, side * side, target.warp_size):
        warp = threads[w:w + target.warp_size]
        assert warp_degree([(row(ty), tx) for tx, ty in warp], side + pad, target) == 1
        assert warp_degree([(row(tx), ty) for tx, ty in warp], side + pad, target) == 1
    assert (order is None) == (side == 32)          # a 32-wide block stores one row per warp


@pytest.mark.parametrize("name,defines", [("gesummv.cu", {"N": "128"}),
                                          ("transpose_macro.cu", {"H": "64", "W": "64"}),
                                          ("transpose.cu", {"H": "64", "W": "64"})])
def test_optimized_kernels_profile_without_bank_conflicts(name, defines):
    path = os.path.join(KERNELS, name)
    source = open(path).read()
    (opt,) = profile_file(source, path, opt=True, defines=defines)
    (naive,) = profile_file(source, path, defines=defines)
    assert opt.totals.shared_requests > 0 and opt.totals.shared_bank_conflicts == 0
    assert opt.totals.global_sectors < naive.totals.global_sectors
    result = naiveopt.optimize(source, filename=path, defines=defines)
    assert result.verified, [k.verification.detail for k in result.kernels]


def test_transpose_macro_without_metadata_takes_32x32_tiles_behind_an_added_guard():
    # without its metadata the thread space is inferred before the passes (globalDimX,
    # globalDimY: nothing in the kernel says more), so the unguarded kernel gains a guard over
    # it and takes 32x32 tiles, padded (it kept 16x16 tiles with rows interleaved against
    # bank conflicts, test_transpose_tile_rows_and_pad_leave_no_conflict, while its thread
    # space was unknown)
    path = os.path.join(KERNELS, "transpose_macro.cu")
    result = naiveopt.optimize(open(path).read(), filename="transpose_macro.cu", verify=False)
    text = " ".join(r.message for r in result.remarks if r.pass_name == "coalesce-writes")
    assert "transposed through s_B[32][33]" in text, text
    assert "guarded by its thread space (globalDimX, globalDimY); new parameter(s) int " \
        "naiveopt_globalDimX (globalDimX), int naiveopt_globalDimY (globalDimY)" in text, text

