"""Human-readable IR dumps (``--dump-ir DIR``): everything a GProcedure holds, then its code."""
from __future__ import annotations

from .cgen import to_c
from .gprocedure import GModule, GProcedure


def dump_procedure(proc: GProcedure) -> str:
    lines = [f"kernel {proc.name}  ({proc.file}:{proc.line}, tree in {proc.dialect})"]
    for p in proc.params:
        kind = f"{p.address_space} array of {p.base_type}" if p.is_pointer else p.base_type
        flags = "".join([" const" if p.const else "", " restrict" if p.restrict else ""])
        lines.append(f"  param {p.name}: {kind}{flags}")
    pr = proc.pragma
    lines.append(f"  pragma blockDim=({pr.block_dim[0]}, {pr.block_dim[1]}) "
                 f"globalDim=({pr.global_dim[0]}, {pr.global_dim[1]})"
                 f"{' from ' + pr.global_dim_source if pr.global_dim_source else ''}"
                 f"{' user=' + repr(pr.user) if pr.user else ''}")
    if proc.predefined_names:
        lines.append("  predefined " + ", ".join(f"{k}->{v}" for k, v in
                                                 sorted(proc.predefined_names.items())))
    for loop in proc.loops:
        bounds = (f"{loop.iterator} in [{to_c(loop.lower) if loop.lower else '?'}, "
                  f"{to_c(loop.upper) if loop.upper else '?'}) step {loop.step}"
                  if loop.canonical else f"non-canonical ({loop.why_not_canonical})")
        lines.append(f"  {'  ' * loop.depth}loop depth {loop.depth}: {bounds}; "
                     f"{len(loop.memory_expressions)} memory expression(s)")
    for m in proc.memory_expressions:
        where = f" in loops {','.join(m.loops)}" if m.loops else ""
        lines.append(f"  mem {m.space} {m.kind:10s} {m.describe():28s} "
                     f"index={m.index}  [{m.decomposition}]{where}")
    if proc.resources:
        r = proc.resources
        lines.append(f"  resources {r.arch}: {r.registers} registers, {r.shared_bytes} bytes "
                     f"shared ({r.tool})")
    lines.append(to_c(proc.func))
    return "\n".join(lines)


def dump_module(module: GModule) -> str:
    parts = [f"; module {module.path}"]
    if module.macros:
        parts.append("; macros " + ", ".join(f"{k}={v}" for k, v in module.macros.items()))
    parts += [to_c(h) for h in module.helpers]
    parts += [dump_procedure(p) for p in module.procedures]
    return "\n".join(parts) + "\n"
