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
import re
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
    # a shared load nvcc merges into its run's 128-bit load, or a repeated read of an
    # element it keeps in a register (run_leader: that load): its records are counted as
    # that load's (metrics.py); None for every other site
    run_leader: int | None = None


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


_TERM = re.compile(r"^(\d+) \* \w+$")


def _run_key(node, subs, parents, space: str, pure_load: bool, width: int, elem: str,
             dims: list[int], to_c) -> tuple[tuple, int] | None:
    """(run key, constant) of a shared load that may belong to a run nvcc merges into one
    128-bit load (cost/static.py's rule, read from the code): a 4-byte element, a row pitch
    that is a multiple of 4, a last subscript ``BASE + c`` whose BASE is a sum of ``N * id``
    terms with N a multiple of 4, in the innermost loop around it, which writes no element
    of that array. The key is (loop, array and leading subscripts, BASE)."""
    if space != "shared" or not pure_load or width != 1 or _elem_bytes(elem) != 4 or \
            any(d % 4 for d in dims[1:]):
        return None
    last = to_c(subs[-1])
    base, const = last, 0
    m = re.match(r"^(.*) \+ (\d+)$", last)
    if m:
        base, const = m.group(1), int(m.group(2))
    if not all(_TERM.match(t.strip()) and int(_TERM.match(t.strip()).group(1)) % 4 == 0
               for t in base.split(" + ")):
        return None
    loop = parents.get(id(node))
    while loop is not None and not isinstance(loop, (c_ast.For, c_ast.While, c_ast.DoWhile)):
        loop = parents.get(id(loop))
    if loop is None:
        return None
    name = subs and node
    while isinstance(name, c_ast.ArrayRef):
        name = name.name
    for n, p in walk(loop):
        if isinstance(p, c_ast.Assignment) and p.lvalue is n:
            target = n
            while isinstance(target, c_ast.ArrayRef):
                target = target.name
            if isinstance(target, c_ast.ID) and target.name == name.name:
                return None
    leading = tuple(to_c(x) for x in subs[:-1])
    return (id(loop), name.name, leading, base), const


def _mark_runs(runs: dict[tuple, dict[int, int]], sites: list) -> None:
    """Point the three later loads of every complete aligned run at its first."""
    for offsets in runs.values():
        for start in sorted(o for o in offsets if o % 4 == 0):
            if all(start + i in offsets for i in range(4)):
                for i in range(1, 4):
                    sites[offsets[start + i]].run_leader = offsets[start]


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
    # a __local parameter (dynamic shared memory) is shared memory, one-dimensional
    arrays = {p.name: ("shared" if p.address_space == "local" else "global", p.base_type)
              for p in kernel.params if p.is_pointer}
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

    runs: dict[tuple, dict[int, int]] = {}      # run key -> constant offset -> site number
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
            (isinstance(parent, c_ast.UnaryOp) and parent.op in ("++", "--", "p++", "p--",
                                                                 "&")) \
            or isinstance(parent, VectorStore)      # '&': an atomic's element, read and written
        load = not store or (isinstance(parent, c_ast.Assignment) and parent.op != "=") or \
            isinstance(parent, c_ast.UnaryOp)
        width = parent.width if isinstance(parent, (VectorLoad, VectorStore)) else 1
        site = Site(len(sites), array, space, load, store, _elem_bytes(elem), to_c(node),
                    width)
        sites.append(site)
        key = _run_key(node, subs, parents, space, load and not store, width, elem,
                       pitches.get(base.name, []), to_c)
        if key is not None:
            first = runs.setdefault(key[0], {}).setdefault(key[1], site.number)
            if first != site.number:
                # the same element again in the iteration (a merged copy's read of the
                # tile value another copy read): nvcc keeps it in a register
                site.run_leader = first
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
    _mark_runs(runs, sites)
