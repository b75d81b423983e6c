"""An integer vector local read only by its components is one local per component.

Course and sample code names a thread's 2-D position as one value (Udacity CS344's
``const int2 thread_2D_pos = make_int2(blockIdx.x * blockDim.x + threadIdx.x, ...);``, then
``thread_2D_pos.y * numCols + thread_2D_pos.x`` and ``if (thread_2D_pos.x >= numCols ...)
return;``). The analyses read integer locals as names for their values; a field of a vector
value they cannot read, so the thread ids, the guard and every index through them stayed
opaque (no verification without pragmas, no pass). ``int2 p = make_int2(a, b);`` becomes
``int p_x = a; int p_y = b;`` and ``p.x`` reads ``p_x``.

Exact when the local is initialized by ``make_T(...)`` with one argument per component (none
reading memory: a vector loaded at once stays one value, which vectorize loads as one) and
is never assigned, incremented or addressed, whole or by component, and every use reads a
component (``p.x``, never ``p`` itself).
"""
from __future__ import annotations

import re

from pycparser import c_ast

from ....ir import GProcedure
from ....ir.rewrite import map_nodes, walk
from ...manager import PassContext
from .base import CanonicalizationPass

#: Integer vector types (CUDA's and OpenCL's names) and the scalar type of their components.
_TYPES = re.compile(r"^(int|uint|short|ushort|char|uchar|long|ulong)([234])$")
_SCALAR = {"int": "int", "uint": "unsigned int", "short": "short", "ushort": "unsigned short",
           "char": "char", "uchar": "unsigned char", "long": "long", "ulong": "unsigned long"}
_LANES = "xyzw"


class VectorLocals(CanonicalizationPass):
    name = "vector-locals"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        taken = proc.names_taken()
        done = []
        for block in [n for n, _ in walk(proc.body) if isinstance(n, c_ast.Compound)]:
            for decl in [s for s in block.block_items or [] if isinstance(s, c_ast.Decl)]:
                split = _split(proc, decl, taken)
                if split is None:
                    continue
                items = block.block_items        # map_nodes rebuilt the lists of the tree
                at = next(i for i, s in enumerate(items) if s is decl)
                items[at:at + 1] = split
                done.append(f"{decl.name} -> {', '.join(d.name for d in split)}")
        if done:
            self.applied(proc, ctx, f"{len(done)} integer vector local(s) read by component "
                         "made one local per component: " + "; ".join(done))
        return bool(done)


def _split(proc: GProcedure, decl: c_ast.Decl, taken: set[str]) -> list[c_ast.Decl] | None:
    """The component locals of ``decl`` (its uses rewritten to them), or None where it is
    not such a local (module docstring)."""
    t = decl.type
    if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and
            len(t.type.names) == 1 and not decl.storage):
        return None
    m = _TYPES.match(t.type.names[0])
    init = decl.init
    if m is None or not (isinstance(init, c_ast.FuncCall) and isinstance(init.name, c_ast.ID)
                         and init.name.name == f"make_{t.type.names[0]}" and init.args is not
                         None and len(init.args.exprs) == int(m.group(2))):
        return None
    if any(isinstance(n, c_ast.ArrayRef) for n, _ in walk(init)):
        return None                    # a vector loaded from memory stays one (vectorize)
    name, width = decl.name, int(m.group(2))
    if sum(1 for n, _ in walk(proc.body) if isinstance(n, c_ast.Decl) and n.name == name) != 1:
        return None                    # another local of that name: scopes would be mixed up
    reads = []
    for node, parent in walk(proc.body):
        if not (isinstance(node, c_ast.ID) and node.name == name):
            continue
        if not (isinstance(parent, c_ast.StructRef) and parent.name is node and
                parent.type == "." and parent.field.name in _LANES[:width]):
            return None                # the whole value used
        reads.append(parent)
    for node, _ in walk(proc.body):
        target = node.lvalue if isinstance(node, c_ast.Assignment) else \
            node.expr if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++",
                                                                        "p--", "&") else None
        if target is not None and any(target is r for r in reads):
            return None                # a component written or addressed
    names = {}
    for lane in _LANES[:width]:
        new = f"{name}_{lane}"
        while new in taken:
            new += "_"
        taken.add(new)
        names[lane] = new
    targets = {id(r): names[r.field.name] for r in reads}
    map_nodes(proc.body, lambda n: c_ast.ID(targets[id(n)], n.coord) if id(n) in targets
              else n)
    scalar = _SCALAR[m.group(1)]
    return [c_ast.Decl(names[lane], list(decl.quals), [], [], [],
                       c_ast.TypeDecl(names[lane], list(t.quals), None,
                                      c_ast.IdentifierType([scalar])),
                       value, None, coord=decl.coord)
            for lane, value in zip(_LANES, init.args.exprs)]
