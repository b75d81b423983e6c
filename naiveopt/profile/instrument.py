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


#: What an instrumented helper function takes after its own parameters, and what its callers
#: pass: the trace buffers and the calling thread's identity and per-site counters.
_HELPER_PARAMS = ("unsigned int *nv_trace, unsigned int *nv_count, unsigned int nv_cap, "
                  "unsigned int nv_on, unsigned int *nv_inst, unsigned int nv_block, "
                  "unsigned int nv_thread")
_HELPER_ARGS = ("nv_trace", "nv_count", "nv_cap", "nv_on", "nv_inst", "nv_block", "nv_thread")


def instrument(module: GModule, proc: GProcedure) -> tuple[GModule, list[Site]]:
    """A copy of ``module`` whose kernel ``proc`` records its accesses; and its sites.

    Accesses inside helper functions (``__device__ float pixel(const float *raw, ...)``,
    demosaic's) are recorded too, as accesses of the kernel array the helper's pointer
    parameter receives: every helper gets the trace as extra parameters and every call
    passes it on. A pointer parameter that receives different arrays (or an offset pointer)
    at different calls is not traced; ``Site`` lists only what is. Without this the profile
    of a kernel that reads through helpers counted none of those reads (demosaic: 98,304
    sectors, stores only, where Nsight Compute counts 487,940 on an H100).

    ``module`` must already be written as OpenCL (after the cuda-to-opencl pass)."""
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
    _record_accesses(kernel.body, {n: (n, space, elem) for n, (space, elem) in arrays.items()},
                     pitches, sites)
    helpers = {h.decl.name: h for h in module.helpers}
    for name, received in _helper_arrays(kernel, helpers, set(arrays)).items():
        _record_accesses(helpers[name].body, {param: (array, *arrays[array])
                                              for param, array in received.items()},
                         {}, sites)
    for helper in helpers.values():
        extra = statements(f"void nv_f({_HELPER_PARAMS});")[0].type.args.params
        for decl in extra[:2]:                      # the trace buffers are global memory
            decl.type.type.quals = ["__global"]
        helper.decl.type.args.params = list(helper.decl.type.args.params) + extra
    for body in [kernel.body] + [h.body for h in helpers.values()]:
        for node, _ in walk(body):
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                    node.name.name in helpers:
                node.args = c_ast.ExprList(list(node.args.exprs if node.args else []) +
                                           [c_ast.ID(a) for a in _HELPER_ARGS])
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


def _helper_arrays(kernel: GProcedure, helpers: dict[str, c_ast.FuncDef],
                   arrays: set[str]) -> dict[str, dict[str, str]]:
    """For each helper, its pointer parameters that always receive one kernel array (passed
    as the array itself, from the kernel or from a helper's parameter that does): param ->
    array. Found by iterating over the calls until nothing changes."""
    def pointer_params(h: c_ast.FuncDef) -> list[str | None]:
        out = []
        for p in (h.decl.type.args.params if h.decl.type.args else []):
            out.append(p.name if isinstance(getattr(p, "type", None), c_ast.PtrDecl) else None)
        return out

    received: dict[str, dict[str, str | None]] = {n: {} for n in helpers}
    bodies = [(None, kernel.body)] + [(n, h.body) for n, h in helpers.items()]
    for _ in range(len(helpers) + 1):
        changed = False
        for caller, body in bodies:
            scope = ({a: a for a in arrays} if caller is None else
                     {p: a for p, a in received[caller].items() if a})
            for node, _ in walk(body):
                if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)
                        and node.name.name in helpers):
                    continue
                callee = node.name.name
                for param, arg in zip(pointer_params(helpers[callee]),
                                      node.args.exprs if node.args else []):
                    if param is None:
                        continue
                    array = scope.get(arg.name) if isinstance(arg, c_ast.ID) else None
                    before = received[callee].get(param, "unset")
                    after = array if before in ("unset", array) else None
                    if after != before:
                        received[callee][param] = after
                        changed = True
        if not changed:
            break
    return {n: {p: a for p, a in r.items() if a} for n, r in received.items()
            if any(r.values())}


def _record_accesses(body: c_ast.Node, arrays: dict[str, tuple[str, str, str]],
                     pitches: dict[str, list[int]], sites: list[Site]) -> None:
    """Make every access of ``arrays`` (name in this body -> (array it is, space, element
    type)) in ``body`` record itself; new sites are appended to ``sites``."""
    from ..ir.cgen import to_c

    parents = {id(n): p for n, p in walk(body)}

    def outermost(node: c_ast.ArrayRef) -> bool:
        return not isinstance(parents.get(id(node)), c_ast.ArrayRef) or \
            parents[id(node)].name is not node

    for node, parent in list(walk(body)):
        if not isinstance(node, c_ast.ArrayRef) or not outermost(node):
            continue
        base, subs = node, []
        while isinstance(base, c_ast.ArrayRef):
            subs.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID) or base.name not in arrays:
            continue
        array, space, elem = arrays[base.name]
        store = (isinstance(parent, c_ast.Assignment) and parent.lvalue is node) or \
            (isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++", "p--")) \
            or isinstance(parent, VectorStore)
        load = not store or (isinstance(parent, c_ast.Assignment) and parent.op != "=") or \
            isinstance(parent, c_ast.UnaryOp)
        width = parent.width if isinstance(parent, (VectorLoad, VectorStore)) else 1
        site = Site(len(sites), array, space, load, store, _elem_bytes(elem), to_c(node),
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
