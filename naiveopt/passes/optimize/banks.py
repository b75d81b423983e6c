"""Shared-memory bank conflicts and the padding rule of Baskaran et al. (paper 000, sect. 3).

Threads of a warp reading a shared array with a stride of s words hit gcd(s, banks) words in
the same bank: the conflict degree. Padding each row of a tile by p words changes the stride to
s + p; the pad chosen is the smallest one of least degree.
"""
from __future__ import annotations

from math import gcd

from ...targets import Target


def conflict_degree(stride_words: int, target: Target) -> int:
    """How many ways a warp's accesses with this word stride conflict (1 = none)."""
    if stride_words == 0:
        return 1  # a broadcast: one word for the whole warp
    return gcd(stride_words, target.shared_banks)


def row_pad(row_words: int, target: Target) -> int:
    """The pad (in words) for a tile row of ``row_words`` read down a column by a warp."""
    best = min(range(target.shared_banks), key=lambda p: (conflict_degree(row_words + p,
                                                                         target), p))
    return best


def warp_degree(cells: list[tuple[int, int]], pitch: int, target: Target) -> int:
    """Conflict degree of one warp request: lanes read tile cells (row, col) of a tile whose
    rows are ``pitch`` words apart; the bank that must serve the most distinct words."""
    words = {row * pitch + col for row, col in cells}
    per_bank: dict[int, int] = {}
    for w in words:
        per_bank[w % target.shared_banks] = per_bank.get(w % target.shared_banks, 0) + 1
    return max(per_bank.values(), default=1)


def tile_pad(row_words: int, patterns: list[list[tuple[int, int]]], target: Target) -> int:
    """The smallest pad of least total conflict degree over a tile's warp access patterns.

    This is the gcd rule when a warp reads one column of 32 rows (degree gcd(pitch, banks));
    when a warp spans several rows and columns (a 16x16 block: two rows per warp) the
    degrees are counted directly, so stores and reads of the tile are both taken into
    account."""
    return pad_and_degree(row_words, patterns, target)[0]


def pad_and_degree(row_words: int, patterns: list[list[tuple[int, int]]], target: Target,
                   step: int = 1) -> tuple[int, int]:
    """:func:`tile_pad` and the total conflict degree of the patterns at that pad (one per
    pattern when none conflicts), to compare orders of the same accesses. ``step``: only
    pads that are multiples of it (rows read as vectors of ``step`` words must stay
    aligned)."""
    return min(((p, sum(warp_degree(cells, row_words + p, target) for cells in patterns))
                for p in range(0, target.shared_banks, step)), key=lambda pd: (pd[1], pd[0]))


def interleaved(row: int, rows_per_warp: int, spacing: int) -> int:
    """The tile row of the ``row``-th row in warp order when the ``rows_per_warp`` rows a
    warp touches together are ``spacing`` rows apart instead of adjacent.

    Rows go in groups of rows_per_warp * spacing: the i-th row of a group lands on row
    (i % rows_per_warp) * spacing + i // rows_per_warp of it. A pad can put adjacent rows at
    most one pitch apart in the banks, which for rows shorter than a bank span either
    overlaps them (an odd pitch) or makes reading down a column conflict (an even one); rows
    ``spacing`` pitches apart can be spread over disjoint banks with an odd pitch, which
    keeps the column reads conflict-free too."""
    group = rows_per_warp * spacing
    i = row % group
    return row - i + i % rows_per_warp * spacing + i // rows_per_warp
