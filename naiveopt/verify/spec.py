"""What verification needs to know about a kernel: sizes, thread space, argument roles/shapes.

It comes from the metadata TOML beside the kernel (docs/kernel-metadata.md) or, for a user's
kernel without one, from ``#pragma naiveopt`` lines plus what the IR shows (which arrays are
written); ``-D NAME=VALUE`` overrides sizes either way.
"""
from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field, replace

from ..errors import NaiveoptError
from ..ir import GModule, GProcedure
from ..ir.elements import element
from ..launch import z_used
from .expr import evaluate
from .indices import FREE_VALUES, IndexFill, index_facts

_CLAUSE = re.compile(r"(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


#: Times an array of each role must cross device memory in one launch at least: read once
#: (in), written once (out), read and written (inout) twice. Rates (GB/s) count these bytes.
TRAFFIC = {"in": 1, "out": 1, "inout": 2}


@dataclass
class ArgSpec:
    name: str
    # in | out | inout | size | scalar | local (dynamic shared memory: an OpenCL __local
    # argument of shape elements, a CUDA launch's shared-memory bytes; no data)
    role: str
    type: str                     # C element type: float, double, int, unsigned int, ...
    shape: list[str] = field(default_factory=list)
    value: str | None = None
    init: str = "uniform"


@dataclass
class KernelSpec:
    name: str
    threads: tuple[str, ...] | None          # (x, y) or (x, y, z)
    block: tuple[int, ...] | None            # (x, y) or (x, y, z)
    args: list[ArgSpec]
    defines: list[str] = field(default_factory=list)
    reference: dict[str, str] = field(default_factory=dict)
    flops: str | None = None
    # integer arrays whose values index other arrays (verify/indices.py): how to fill them,
    # and those whose needed range could not be determined (name -> why)
    indices: dict[str, "IndexFill"] = field(default_factory=dict)
    unresolved_indices: dict[str, str] = field(default_factory=dict)
    # where each fact came from ("threads", "shape A", "value alpha" -> inferred | pragma |
    # guard | grid-stride | metadata): verify/infer.py
    provenance: dict[str, str] = field(default_factory=dict)
    # file-scope arrays of fixed length the kernel indexes (``__constant__ float CT[16]``):
    # name -> (the elements it reads as a function of the sizes, its length); sizes at which
    # the naive kernel reads past one are sizes the kernel does not allow (verify/infer.py)
    limits: dict[str, tuple[object, int]] = field(default_factory=dict)
    # the inferred extents of the arrays whose shape a pragma gave (to report disagreement)
    overridden: dict[str, object] = field(default_factory=dict)
    # outputs along (x, y) each naive thread covers: a coarsened kernel's naive grid covers
    # block * per_thread (GPragma.coarsened)
    per_thread: tuple[int, int] = (1, 1)
    # the naive kernel's accesses of each array as verify/extents.Extent (also where a pragma
    # gave the shape): a mismatch on an array that two of its threads store to at the same
    # element is the naive kernel's race, not the output's fault (verify/check.py)
    accesses: dict[str, object] = field(default_factory=dict)


@dataclass
class FileSpec:
    """Verification facts for one kernel file."""

    origin: str                              # metadata path or 'pragma'
    sizes: dict[str, dict[str, int]]         # size set name -> sizes
    kernels: dict[str, KernelSpec]
    description: str = ""
    provenance: dict[str, str] = field(default_factory=dict)    # "sizes" -> its source


def metadata_path(kernel_path: str) -> str:
    return os.path.splitext(kernel_path)[0] + ".toml"


def load_metadata(path: str) -> FileSpec:
    """Read a metadata TOML file."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise NaiveoptError(f"cannot read metadata: {exc}", path) from exc
    kernels = {}
    for k in data.get("kernel", []):
        args = [ArgSpec(a["name"], a["role"], a.get("type", "float"),
                        [str(d) for d in a.get("shape", [])],
                        str(a["value"]) if "value" in a else None, a.get("init", "uniform"))
                for a in k.get("args", [])]
        # a 1-D kernel's ``threads = ["n"]`` and ``block = [256]`` mean y = 1, as in pragmas
        threads = [str(t) for t in k.get("threads", [])]
        block = [int(b) for b in k.get("block", [])]
        kernels[k["name"]] = KernelSpec(
            k["name"], tuple(threads + ["1"] * (2 - len(threads))) if threads else None,
            tuple(block + [1] * (2 - len(block))) if block else None, args,
            list(k.get("defines", [])), dict(k.get("reference", {})), k.get("flops"))
    sizes = {name: dict(values) for name, values in data.get("sizes", {}).items()}
    return FileSpec(path, sizes, kernels, data.get("description", ""))


def pragma_clauses(module: GModule) -> dict[str, list[list[str]]]:
    """The clauses of the file's '#pragma naiveopt' lines: name -> list of argument lists."""
    clauses: dict[str, list[list[str]]] = {}
    for text in module.pragmas:
        for name, body in _CLAUSE.findall(text[len("naiveopt"):]):
            clauses.setdefault(name, []).append([p.strip() for p in body.split(",")
                                                 if p.strip()])
    return clauses


def apply_launch_facts(module: GModule, spec: FileSpec | None) -> None:
    """Record the naive launch (block, thread space) from metadata or pragmas in each
    kernel's GPragma, where the file itself did not say: passes must keep kernels without a
    bounds guard on blocks that tile that launch exactly."""
    clauses = pragma_clauses(module)
    for proc in module.procedures:
        kspec = spec.kernels.get(proc.name) if spec else None
        block = kspec.block if kspec and kspec.block else (
            tuple(clauses["block"][0]) if "block" in clauses else None)
        threads = kspec.threads if kspec and kspec.threads else (
            tuple(clauses["threads"][0]) if "threads" in clauses else None)
        if block and proc.pragma.block_dim == (None, None):
            proc.pragma.block_dim = (str(block[0]), str(block[1]) if len(block) > 1 else "1")
        if block and len(block) > 2 and proc.pragma.block_dim_z is None:
            proc.pragma.block_dim_z = str(block[2])
        if threads and None in proc.pragma.global_dim:
            # per axis: a file may give one (``#define globalDimY 1``) and not the other
            given = (str(threads[0]), str(threads[1]) if len(threads) > 1 else "1")
            old = proc.pragma.global_dim
            proc.pragma.global_dim = tuple(o if o is not None else g
                                           for o, g in zip(old, given))  # type: ignore
            if old == (None, None):
                proc.pragma.global_dim_source = "metadata" if kspec else "pragma"
        if threads and len(threads) > 2 and proc.pragma.global_dim_z is None:
            proc.pragma.global_dim_z = str(threads[2])
        if kspec:
            proc.pragma.size_holders = {
                a.value: a.name for a in kspec.args
                if a.role == "size" and a.value and a.value.isidentifier() and
                a.value != a.name and proc.param(a.name) is not None}


def spec_from_pragmas(module: GModule) -> FileSpec | None:
    """Build a spec from '#pragma naiveopt ...' lines and the IR, or None if no sizes given."""
    clauses = pragma_clauses(module)
    sets = pragma_size_sets(clauses.get("sizes", []))
    shapes = {g[0]: g[1:] for g in clauses.get("array", [])}
    scalars = {g[0]: g[1] for g in clauses.get("scalar", []) if len(g) == 2}
    threads = tuple(clauses["threads"][0]) if "threads" in clauses else None
    block = tuple(int(b) for b in clauses["block"][0]) if "block" in clauses else None
    if threads is not None and len(threads) == 1:
        threads = (threads[0], "1")
    if block is not None and len(block) == 1:
        block = (block[0], 1)
    kernels = {p.name: _kernel_from_ir(p, shapes, scalars, threads, block)
               for p in module.procedures}
    return FileSpec("pragma", sets, kernels)


def pragma_size_sets(groups: list[list[str]]) -> dict[str, dict[str, int]]:
    """The size sets of the file's 'sizes(...)' clauses, in order: 'pragma', 'pragma2', ...

    A clause that names a size already given starts a new set (sizes it does not name are
    taken from the first set); one that names only new sizes adds them to every set, so that
    sizes spread over several lines still form one set."""
    sets: list[dict[str, int]] = []
    for group in groups:
        values = {}
        for item in group:
            key, _, value = item.partition("=")
            values[key.strip()] = int(evaluate(value, {}))
        if sets and not set(values) & set(sets[-1]):
            for each in sets:             # every set names the same sizes
                each.update(values)
        elif values:
            sets.append({**(sets[0] if sets else {}), **values})
    return {("pragma" if i == 0 else f"pragma{i + 1}"): s for i, s in enumerate(sets)}


def _kernel_from_ir(proc: GProcedure, shapes, scalars, threads, block) -> KernelSpec:
    """The kernel's arguments in the user's names (pragmas name them so; a parameter the
    translation renamed, e.g. OpenCL's ``new`` -> ``new_``, is the user's ``new``)."""
    def user(name: str) -> str:
        return proc.renamed.get(name, name)

    written = {user(m.array) for m in proc.memory_expressions if m.is_write}
    args = []
    for p in proc.params:
        elem = element(p.base_type)
        floating = elem is None or elem.is_float
        name = user(p.name)
        if p.is_pointer and p.address_space == "local":
            args.append(ArgSpec(name, "local", p.base_type, shapes.get(name, [])))
        elif p.is_pointer:
            args.append(ArgSpec(name, "inout" if name in written else "in", p.base_type,
                                shapes.get(name, [])))
        elif name in scalars:
            args.append(ArgSpec(name, "scalar", p.base_type, value=scalars[name]))
        else:
            args.append(ArgSpec(name, "scalar" if floating else "size", p.base_type,
                                value="1.25" if floating else None))
    if threads is None and proc.pragma.global_dim[0]:
        gx, gy = (re.sub(r"[A-Za-z_]\w*", lambda m: user(m.group(0)), e) if e else e
                  for e in proc.pragma.global_dim)
        threads = (gx, gy or "1")
    if threads is not None and len(threads) < 3:
        # the z extent: from the pragma's 3-D form, the bounds guard, or 1 for a kernel
        # that reads no z id; a z id with no known extent leaves the thread space unknown
        z = proc.pragma.global_dim_z or ("1" if not z_used(proc) else None)
        threads = (threads + ("1",))[:2] + (z,) if z else None
    return KernelSpec(proc.name, threads, block, args)


def size_sets(spec: FileSpec, defines: dict[str, str]) -> dict[str, dict[str, int]]:
    """The size sets to verify at: metadata's test and odd sets, or what -D / pragmas give.

    A -D that names a size replaces the test sizes with one set built from it."""
    names = set().union(*spec.sizes.values()) if spec.sizes else set(defines)
    integers = {k: int(evaluate(v, {})) for k, v in defines.items()
                if re.fullmatch(r"\s*-?\d+\s*", v)}
    overrides = {k: v for k, v in integers.items() if k in names}
    # a -D no set names (a size the inference left out because -D fixes it) holds in each
    fixed = {k: v for k, v in integers.items() if k not in names}
    if overrides:
        base = spec.sizes.get("test") or next(iter(spec.sizes.values()), {})
        return {"cli": {**fixed, **base, **overrides}}
    return {k: {**fixed, **v} for k, v in spec.sizes.items() if k in ("test", "odd") or
            re.fullmatch(r"pragma\d*|inferred(-odd)?", k)}


def with_file_data(kernel: KernelSpec, module: GModule, spec: FileSpec,
                   defines: dict[str, str]) -> KernelSpec:
    """``kernel`` with the host-filled file-scope data it reads appended to its arguments
    (ir/globals.py: OpenCL takes them after the kernel's own), each filled with random data
    like any input array. The shape is the declaration's: a dimension written with size names
    only (``MASK_WIDTH`` where the sizes set it) follows each size set, any other takes its
    value at this compile."""
    proc = next((p for p in module.procedures if p.name == kernel.name), None)
    if proc is None or not proc.global_args:
        return kernel
    size_names = set(defines).union(*spec.sizes.values()) if spec.sizes else set(defines)
    by_name = {g.name: g for g in module.globals}
    extra, facts = [], dict(kernel.provenance)
    for written in proc.global_args:
        g = by_name[written]
        name = proc.renamed.get(written, written)   # the user's (OpenCL renames ``half``)
        kind = g.base_type if element(g.base_type) else (
            "float" if g.base_type in ("float", "double") else "int")
        if not g.dims and kind not in ("float", "double", "half") and name in size_names:
            # an integer the host sets that the kernel uses as a size (``__constant__ int
            # c_n;``, bounding its guard): the size set's value, as a parameter's
            extra.append(ArgSpec(name, "size", kind))
            continue
        if not g.dims:
            value = "1.25" if kind in ("float", "double", "half") else "3"
            extra.append(ArgSpec(name, "scalar", kind, value=value))
            facts.setdefault(f"value {name}", "inferred")
            continue
        shape = [d if set(re.findall(r"[A-Za-z_]\w*", d)) <= size_names else str(n)
                 for d, n in zip(g.dims, g.extents)]
        extra.append(ArgSpec(name, "in", kind, shape))
    return replace(kernel, args=kernel.args + extra, provenance=facts)


def with_kernel_facts(kernel: KernelSpec, proc: GProcedure | None) -> KernelSpec:
    """``kernel`` as verification runs it against the naive ``proc``: each argument of the
    type the kernel declares (metadata's ``type`` only where the parameter is not found:
    a buffer of the wrong element size is misread), and the integer arrays whose values index
    other arrays (verify/indices.py)."""
    if proc is None:
        return kernel
    params = {proc.renamed.get(p.name, p.name): p for p in proc.params}
    args = [dataclasses.replace(a, type=params[a.name].base_type)
            if a.name in params and element(params[a.name].base_type) else a
            for a in kernel.args]
    fills, unresolved = index_facts(proc, {a.name: a.shape for a in args if a.shape})
    # index arrays whose values an inferred extent took in [0, FREE_VALUES)
    # (verify/extents.py): filled so, also where their values are part of a computed index
    # (wte[ix * C + c]), when every array's extent is inferred (none a pragma's, which the
    # values might overrun)
    shapes = [a.shape for a in args if a.role in ("in", "out", "inout")]
    inferred = all(shape and all(hasattr(d, "data") for d in shape) for shape in shapes)
    for name in sorted(set().union(*(d.data for shape in shapes for d in shape
                                     if hasattr(d, "data")))):
        if name in unresolved and inferred:
            del unresolved[name]
            fills[name] = IndexFill()
        if name in fills:
            fills[name].limit = FREE_VALUES
    return dataclasses.replace(kernel, args=args, indices=fills, unresolved_indices=unresolved)
