"""Thread ids through locals: ``int tx = threadIdx.x; int bx = blockIdx.x;`` and then
``int i = bx * blockDim.x + tx;`` is the global id, as ``blockIdx.x * blockDim.x +
threadIdx.x`` is.

The predefined pass recognises the global id when its operands are the built-ins themselves
(in any operand order, through casts); textbook kernels often name the built-ins first. A local
defined once as a built-in holds that built-in's value wherever it is read, so a global-id
pattern over such locals is the global id: it is written as the id (``int i = idx;``); the
locals keep their other uses, and their declarations where they have some (a raw thread id
left in the kernel keeps thread merge from firing). Operands through casts are read through them
(ids are far below 2^31), as the predefined pass does.

An index by a block constant (``by * BLOCK_SIZE + ty``, predefined.py) is the global id too,
where the predefined pass took the constant as the naive block along that axis
(GPragma.block_constant), so long as the kernel uses that axis's block and thread ids nowhere
else, nor its blockDim or gridDim: a raw ``threadIdx.x`` left beside ``idx`` would keep the
meaning of the naive block, which the passes may change.
"""
from __future__ import annotations

from pycparser import c_ast

from ....ir import GProcedure, PredefId
from ....ir.cgen import to_c
from ....ir.rewrite import map_nodes, walk
from ...manager import PassContext
from ..predefined import name_ids
from ..thread_id_forms import (GLOBAL_IDS, alias_resolver, block_constant_index,
                               builtin_aliases, constant_value, cuda_spelling, global_id,
                               with_id)
from .base import CanonicalizationPass
from .locals import drop_unused


class ThreadIds(CanonicalizationPass):
    name = "thread-ids"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        aliases = builtin_aliases(proc)
        constants = {a: c for a, c in zip("xy", proc.pragma.block_constant) if c}
        if not aliases and not constants:
            return False
        rewritten: list[str] = []
        resolve = alias_resolver(aliases)
        constants = self._constant_axes(proc, ctx, aliases, constants)

        def fn(node: c_ast.Node) -> c_ast.Node:
            term = block_constant_index(node, resolve)
            if term is not None and term.axis in constants and \
                    constant_value(term.constant, proc, ctx.module) == constants[term.axis]:
                new = with_id(term, node, PredefId("id" + term.axis, node.coord))
                rewritten.append(f"{to_c(node)} -> {to_c(new)}")
                return new
            gid = global_id(node, resolve)
            if gid is None or not any(isinstance(n, c_ast.ID) for n, _ in walk(node)):
                return node
            rewritten.append(f"{to_c(node)} -> {gid}")
            return PredefId(gid, node.coord)

        map_nodes(proc.body, fn)
        if not rewritten:
            return False
        dropped = drop_unused(proc.body, set(aliases))
        name_ids(proc)
        self.applied(proc, ctx, f"{len(rewritten)} global id(s) written through locals: "
                     + "; ".join(rewritten) + (f" ({', '.join(dropped)} no longer read: "
                                              "declaration removed)" if dropped else ""))
        return True

    def _constant_axes(self, proc: GProcedure, ctx: PassContext, aliases: dict[str, str],
                       constants: dict[str, int]) -> dict[str, int]:
        """The axes of ``constants`` (axis -> block constant) whose block-constant indexes may
        be read as global ids: the axis's block and thread ids are read nowhere else (their
        aliases' declarations aside), its blockDim and gridDim not at all. A missed remark
        says why for the others."""
        resolve = alias_resolver(aliases)
        covered: set[int] = set()
        for node, _ in walk(proc.body):
            term = block_constant_index(node, resolve)
            if term is not None and term.axis in constants and \
                    constant_value(term.constant, proc, ctx.module) == constants[term.axis]:
                covered.update(id(n) for t in (term.product, term.thread) for n, _ in walk(t))
            elif isinstance(node, c_ast.Decl) and node.name in aliases:
                covered.update(id(n) for n, _ in walk(node))
        out = {}
        for axis, c in constants.items():
            bid, dim, tid, _ = GLOBAL_IDS[axis]
            grid = "gridDim" + axis.upper()
            stray = sorted({to_c(n) for n, _ in walk(proc.body) if id(n) not in covered and
                            resolve(n) in (bid, tid, dim, grid)})
            if stray:
                ctx.remark("missed", self.name, proc, f"the index by the block constant {c} "
                           f"along {axis} not read as id{axis}: the kernel also reads "
                           f"{', '.join(cuda_spelling(n) for n in stray)} on its own, whose "
                           "meaning a new block would change")
                continue
            out[axis] = c
        return out
