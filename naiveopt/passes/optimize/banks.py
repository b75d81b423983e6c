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
