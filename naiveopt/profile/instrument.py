"""Instrument an OpenCL kernel so that it records every memory access it makes.

Each array access ``A[i]`` (global or shared, load or store) becomes ``A[nv_rec(..., site,
i)]``: the function records (site, block, thread, dynamic instance, element index) into a trace
buffer and returns the index unchanged, so the kernel computes exactly what it computed
before. Multi-dimensional shared tiles record their flattened index. Only the sampled blocks
(block id divisible by ``nv_stride``) record, which bounds the trace for large launches; the
per-thread dynamic instance counts every execution of a site, so the lanes of a warp at the
same site and instance form one request, as on hardware (paper 001, ch. 5).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from ..ir import GModule, GProcedure
from ..ir.build import statements
from ..ir.elements import element_bytes
from ..ir.literals import integer_value
from ..ir.rewrite import walk
from ..ir.vector import VectorLoad, VectorStore

RECORD_WORDS = 5

RECORDER = """
int nv_rec(__global uint *nv_trace, __global uint *nv_count, uint nv_cap, uint nv_on,
           uint *nv_inst, int site, uint block, uint thread, int index) {
    if (nv_on) {
        uint slot = atomic_inc(nv_count);
        if (slot < nv_cap) {
            __global uint *r = nv_trace + 5 * slot;
            r[0] = (uint)site;
            r[1] = block;
            r[2] = thread;
            r[3] = nv_inst[site];
            r[4] = (uint)index;
        }
    }
    nv_inst[site] += 1;
    return index;
}
"""


@dataclass
class Site:
    """One static memory instruction."""

    number: int
    array: str
    space: str        # global | shared
    is_load: bool
    is_store: bool
    elem_bytes: int
    text: str         # the access as written
    width: int = 1    # consecutive elements per access (4 for a float4 load)


def _elem_bytes(type_name: str) -> int:
    """Bytes one element of ``type_name`` occupies: a scalar sized by ir/elements.py, or an
    OpenCL vector of them (``float4``: four floats)."""
    base = type_name.rstrip("0123456789")
    return element_bytes(base) * int(type_name[len(base):] or 1)


def instrument(module: GModule, proc: GProcedure) -> tuple[GModule, list[Site]]:
    """A copy of ``module`` whose kernel ``proc`` records its accesses; and its sites.

    ``module`` must already be written as OpenCL (after the cuda-to-opencl pass)."""
    from ..ir.cgen import to_c

    module = copy.deepcopy(module)
    kernel = next(p for p in module.procedures if p.name == proc.name)
    module.procedures = [kernel]
    arrays = {p.name: ("global", p.base_type) for p in kernel.params if p.is_pointer}
    pitches: dict[str, list[int]] = {}
    for node, _ in walk(kernel.body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.ArrayDecl) and \
                "__local" in node.storage:
            dims, t = [], node.type
            while isinstance(t, c_ast.ArrayDecl):
                dims.append(integer_value(t.dim.value))
                t = t.type
            arrays[node.name] = ("shared", " ".join(t.type.names))
            pitches[node.name] = dims
    sites: list[Site] = []
    parents = {id(n): p for n, p in walk(kernel.body)}

    def outermost(node: c_ast.ArrayRef) -> bool:
        return not isinstance(parents.get(id(node)), c_ast.ArrayRef) or \
            parents[id(node)].name is not node

    for node, parent in list(walk(kernel.body)):
        if not isinstance(node, c_ast.ArrayRef) or not outermost(node):
            continue
        base, subs = node, []
        while isinstance(base, c_ast.ArrayRef):
            subs.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID) or base.name not in arrays:
            continue
        space, elem = arrays[base.name]
        store = (isinstance(parent, c_ast.Assignment) and parent.lvalue is node) or \
            (isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++", "p--")) \
            or isinstance(parent, VectorStore)
        load = not store or (isinstance(parent, c_ast.Assignment) and parent.op != "=") or \
            isinstance(parent, c_ast.UnaryOp)
        width = parent.width if isinstance(parent, (VectorLoad, VectorStore)) else 1
        site = Site(len(sites), base.name, space, load, store, _elem_bytes(elem), to_c(node),
                    width)
        sites.append(site)
        flat: c_ast.Node = copy.deepcopy(subs[0])
        for sub, dim in zip(subs[1:], pitches.get(base.name, [])[1:]):
            flat = c_ast.BinaryOp("+", c_ast.BinaryOp("*", flat, c_ast.Constant("int", str(
                dim))), copy.deepcopy(sub))
        call = statements(f"__x = nv_rec(nv_trace, nv_count, nv_cap, nv_on, nv_inst, "
                          f"{site.number}, nv_block, nv_thread, FLAT);", FLAT=flat)[0].rvalue
        if len(subs) == 1:
            node.subscript = call
        else:   # record the flattened index, keep the last subscript's value
            last = node.subscript
            node.subscript = c_ast.ExprList([call, last])
    prologue = statements(
        f"unsigned int nv_inst[{max(1, len(sites))}]; "
        f"for (int nv_i = 0; nv_i < {max(1, len(sites))}; nv_i++) nv_inst[nv_i] = 0; "
        "unsigned int nv_block = get_group_id(0) + (get_group_id(1) + get_group_id(2) * "
        "get_num_groups(1)) * get_num_groups(0); "
        "unsigned int nv_thread = get_local_id(0) + (get_local_id(1) + get_local_id(2) * "
        "get_local_size(1)) * get_local_size(0); "
        "unsigned int nv_on = (nv_block % nv_stride) == 0;")
    kernel.body.block_items = prologue + list(kernel.body.block_items or [])
    extra = statements("unsigned int *nv_trace; unsigned int *nv_count; unsigned int nv_cap; "
                       "unsigned int nv_stride;")
    for decl in extra:
        if isinstance(decl.type, c_ast.PtrDecl):
            decl.type.type.quals = ["__global"]
    params = kernel.func.decl.type.args
    params.params = list(params.params) + extra
    return module, sites
