"""Struct parameters written back as the kernel's signature has them (ir/structs.py).

The front end reads a struct parameter's members as scalar parameters (``p.n`` as ``p_n``)
so that every analysis and pass sees sizes and coefficients; the host still passes one
struct. This pass, the last before emission, puts the struct parameter back in its place
and each member read back as ``p.n``.
"""
from __future__ import annotations

from ...ir import GProcedure
from ...ir import structs
from ..manager import Pass, PassContext


class StructParams(Pass):
    name = "struct-params"

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        structs.fold(proc)
        for s in proc.struct_params:
            ctx.remark("analysis", self.name, proc, f"{s.name}: a {s.type.written} passed "
                       f"by value, its {len(s.symbols)} members read as scalars")
