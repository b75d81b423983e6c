"""Struct parameters written back as the kernel's signature has them (ir/structs.py).

The front end reads a struct parameter's members as scalar parameters (``p.n`` as ``p_n``)
so that every analysis and pass sees sizes and coefficients; the host still passes one
struct. This pass, the last before emission, puts the struct parameter back in its place
and each member read back as ``p.n`` (a member the target reserves, ``read_only`` in
OpenCL C, under another name: the host passes the struct's bytes, laid out by position).
"""
from __future__ import annotations

from ...ir import GProcedure
from ...ir import array_params, structs
from ..manager import Pass, PassContext
from .names import CUDA_RESERVED, OPENCL_RESERVED


class StructParams(Pass):
    name = "struct-params"

    def run_module(self, module, ctx: PassContext) -> None:
        super().run_module(module, ctx)
        for proc in module.procedures:
            for g in module.struct_globals:
                ctx.remark("analysis", self.name, proc, f"{g.name}: a {g.type.spelled} the host "
                           f"fills, its {len(g.symbols)} members read as scalars" +
                           (" (the output declares the struct)" if ctx.target == "cuda" else
                            " (each an argument of the output)"))

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        reserved = OPENCL_RESERVED if ctx.target == "opencl" else CUDA_RESERVED
        for s in proc.struct_params:
            names = {m for m, _, _ in s.type.members}
            s.type.written = {}
            for m in sorted(names & reserved):
                written = m + "_"
                while written in names or written in reserved:
                    written += "_"
                s.type.written[m] = written
                ctx.remark("analysis", self.name, proc, f"{s.name}.{m}: written {written} "
                           f"(the struct's member, which {ctx.target} reserves; the layout "
                           "is the input's)")
        for a in proc.struct_arrays:
            names = {m for m, _, _ in a.type.members}
            a.type.written = {m: m + "_" for m in sorted(names & reserved)}
        structs.fold(proc)
        if ctx.target == "cuda":
            array_params.fold(proc)
            for a in proc.array_params:
                ctx.remark("analysis", self.name, proc, f"{a.name}: rows of "
                           f"{' x '.join(map(str, a.dims))} elements, read through a flat "
                           f"pointer as {a.name}[i * {a.dims[-1]} + j]")
        for a in proc.struct_arrays:
            ctx.remark("analysis", self.name, proc, f"{a.name}: {a.type.spelled} elements of "
                       f"{a.stride} {a.type.members[0][1]}, read member by member as "
                       f"{a.name}[i * {a.stride} + k]")
        for s in proc.struct_params:
            ctx.remark("analysis", self.name, proc, f"{s.name}: a {s.type.spelled} passed "
                       f"by value, its {len(s.symbols)} members read as scalars")
