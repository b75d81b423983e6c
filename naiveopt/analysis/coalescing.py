"""Whether the threads of a warp coalesce an access: the question the coalescing passes ask
of every global read (coalesce) and write (coalesce-writes).

Neighbouring threads in x differ by one in ``idx`` (and ``tidx``), so the stride of an access
between them is the sum of those two coefficients of its decomposed index: 1 is one run of
consecutive addresses (coalesced), 0 one address for the whole warp (a broadcast), anything
else a sector per thread.
"""
from __future__ import annotations

import sympy

from ..ir import MemoryExpression


def coalescing(m: MemoryExpression) -> str:
    """'coalesced', 'broadcast', 'uncoalesced' or 'unresolved' for neighbouring threads in x."""
    d = m.decomposition
    if not d.resolved:
        return "unresolved index"
    stride = sympy.simplify(d.coefficient("idx") + d.coefficient("tidx"))
    if stride == 0:
        return "broadcast (same address across a warp)"
    if stride == 1:
        return "coalesced (unit stride in x)"
    return "uncoalesced"
