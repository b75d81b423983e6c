"""What a host program needs to launch an output: the grid and block at given problem sizes.

An optimized kernel needs another launch than its naive input (a 32x16 block covering 64x64
outputs instead of 16x16 covering 16x16), and a stale launch computes wrong numbers. The
launch geometry travels with every output as data (the sidecar JSON's trees, launch.py);
:func:`launch_config` evaluates it for Python hosts (cupy, pyopencl, numba) exactly as
verification does, and refuses sizes the output cannot run at (an unguarded kernel whose
thread space must be a multiple of its coverage).
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple

from .errors import NaiveoptError
from .ir import dynamic_shared, structs
from .ir.gprocedure import size_param_name
from .ir.typenames import INTEGER_WORDS
from .launch import evaluate


class LaunchConfig(NamedTuple):
    """A launch: ``grid`` blocks of ``block`` threads, each (x, y, z). Unpacks as
    ``grid, block = ...``; ``global_size`` is OpenCL's NDRange (grid * block)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def global_size(self) -> tuple[int, int, int]:
        return tuple(g * b for g, b in zip(self.grid, self.block))  # type: ignore[return-value]


def launch_config(output, kernel: str | None = None, **sizes: int) -> LaunchConfig:
    """The grid and block of ``kernel`` at ``sizes``.

    ``output`` is an :class:`~naiveopt.api.OptimizeResult`, the sidecar JSON's path (the
    ``-o`` file plus ``.json``), or that JSON as a dict; ``kernel`` may be left out when the
    output has one. Raises NaiveoptError for an unknown kernel, a size the geometry needs but
    was not given, or sizes the kernel cannot run at."""
    kernel, entry = _entry(output, kernel)
    try:
        grid = tuple(int(evaluate(t, sizes)) for t in entry["grid_tree"])
        space = [int(evaluate(t, sizes)) for t in entry["thread_space_tree"]]
    except (KeyError, ValueError, TypeError) as exc:
        raise NaiveoptError(f"cannot evaluate the launch of '{kernel}' at {sizes}: {exc} "
                            f"(its thread space is {', '.join(entry['thread_space'])})"
                            ) from exc
    multiple = entry.get("thread_space_multiple_of")
    if multiple:
        bad = [f"{axis}: {n} is not a multiple of {m}" for axis, n, m in
               zip("xy", space, multiple) if m and n % m]
        if bad:
            raise NaiveoptError(f"'{kernel}' has no bounds guard and covers {multiple} threads "
                                f"per block step: its thread space must be a multiple of that "
                                f"({'; '.join(bad)})")
    block = tuple(int(b) for b in entry["block"])
    return LaunchConfig(grid, block)  # type: ignore[arg-type]


def size_args(output, kernel: str | None = None, **sizes: int) -> tuple[int, ...]:
    """The values ``kernel`` takes after its own arguments at ``sizes``: the sizes naiveopt
    added as parameters where it gave a kernel without a bounds guard one (the sidecar's
    ``size_args``; ``int naiveopt_HEIGHT_A``); () for most kernels. ``output`` and ``kernel``
    as for :func:`launch_config`."""
    kernel, entry = _entry(output, kernel)
    try:
        return tuple(int(sizes[a["name"]]) for a in entry.get("size_args", []))
    except KeyError as exc:
        raise NaiveoptError(f"'{kernel}' takes the size {exc.args[0]} after its arguments: "
                            "give it") from exc


def _entry(output, kernel: str | None) -> tuple[str, dict]:
    """The kernel's name and its sidecar entry (the output's only kernel where not named)."""
    kernels = _kernels(output)
    if kernel is None:
        if len(kernels) != 1:
            raise NaiveoptError(f"the output has kernels {', '.join(kernels)}: name one")
        kernel = next(iter(kernels))
    if kernel not in kernels:
        raise NaiveoptError(f"no kernel '{kernel}' in the output (it has "
                            f"{', '.join(kernels)})")
    return kernel, kernels[kernel]


def _kernels(output) -> dict:
    if hasattr(output, "launch_json"):
        return output.launch_json()["kernels"]
    if isinstance(output, (str, os.PathLike)):
        try:
            with open(output, encoding="utf-8") as fh:
                output = json.load(fh)
        except (OSError, json.JSONDecodeError) as exc:
            raise NaiveoptError(f"cannot read the launch sidecar: {exc}", str(output)) from exc
    if not isinstance(output, dict) or "kernels" not in output:
        raise NaiveoptError("expected an OptimizeResult, a sidecar path or its JSON")
    return output["kernels"]


# ------------------------------------------------------------------ CUDA launcher functions
class LauncherSignature(NamedTuple):
    """What a kernel's launcher takes and computes: the kernel's parameter declarations and
    names, the sizes the launch needs that neither a parameter nor a macro gives (``free``:
    one ``int`` parameter each, after the kernel's own; among them the sizes a bounds guard
    made parameters, GProcedure.size_params, which the host's own launch never passed), and
    the grid and thread-space expressions in the kernel's parameter names (C, x/y/z)."""

    decls: list[str]
    names: list[str]
    free: list[str]
    grid: list[str]      # in the kernel's parameter names and the free sizes' parameters
    space: list[str]
    call: list[str]      # the kernel's arguments, in its parameters' order

    @property
    def free_params(self) -> list[str]:
        """The launcher's parameter for each free size, named as the kernel's added size
        parameters are (a build may define the size as a macro: size_param_name)."""
        return [size_param_name(f) for f in self.free]


def _with_free_params(text: str, free: list[str]) -> str:
    import re

    return re.sub(r"(?<![.\w])[A-Za-z_]\w*\b", lambda m: size_param_name(m.group(0))
                  if m.group(0) in free else m.group(0), text)


#: Words of a C expression that are not names: type words of casts, qualifiers, sizeof.
_C_WORDS = INTEGER_WORDS | {"float", "double", "half", "bool", "void", "const", "volatile",
                            "sizeof"}


def launcher_signature(proc, geometry, macros: dict[str, str]) -> LauncherSignature:
    import re

    from .ir.cgen import to_c

    params = proc.func.decl.type.args.params if proc.func.decl.type.args else []
    # an added size parameter (naiveopt_HEIGHT_A) takes the launcher's size (HEIGHT_A)
    sizes = {c: n for n, c in proc.size_param_names.items()}
    call = [sizes.get(p.name, p.name) for p in params if getattr(p, "name", None)]
    own = [p for p in params if getattr(p, "name", None) and p.name not in sizes]
    decls = [to_c(p) for p in own]
    names = [p.name for p in own]
    tree_name = {user: tree for tree, user in proc.renamed.items()}

    def c_expr(text: str) -> str:
        text = re.sub(r"[A-Za-z_]\w*", lambda m: tree_name.get(m.group(0), m.group(0)), text)
        return structs.in_output(proc, text)

    grid = [c_expr(g) for g in geometry.grid[:3]]
    space = [c_expr(t) for t in geometry.thread_space[:3]]
    # the sizes a geometry names: not the type words of a cast (``(long) w``) nor a call
    used = {w for text in grid + space     # not a struct's member (``p.n``: ir/structs.py)
            for w in re.findall(r"(?<![.\w])[A-Za-z_]\w*\b(?!\s*\()", text)} - _C_WORDS
    free = sorted(used - set(names) - set(macros) - {s.name for s in proc.struct_params})
    grid = [_with_free_params(g, free) for g in grid]
    space = [_with_free_params(t, free) for t in space]
    call = [size_param_name(c) if c in free else c for c in call]
    return LauncherSignature(decls, names, free, grid, space, call)


def has_launcher(proc) -> bool:
    """Whether ``proc``'s CUDA output gets a launcher (cuda_launcher): not where it reads
    texture objects, which the host makes first."""
    from .ir.textures import host_texture_params

    return not host_texture_params(proc)


def cuda_launcher(proc, geometry, macros: dict[str, str], replaces_launches: bool = False
                  ) -> str:
    """A host function that launches ``proc`` as its output needs, next to the kernel:
    ``static inline cudaError_t NAME_launch(<the kernel's parameters>, [free sizes,]
    cudaStream_t stream = 0)``, computing grid and block from the sizes the kernel takes, so
    that a program calls it instead of repeating a geometry that changes with each output.

    It returns what the launch left pending (``cudaPeekAtLastError``: a call written in
    place of ``<<<>>>`` must leave the error for the program's own ``cudaGetLastError``). A
    kernel without a bounds guard checks the thread-space multiple it relies on: a size that
    breaks it is refused with a launch the runtime rejects (an empty grid:
    ``cudaErrorInvalidConfiguration``, pending like any launch error) instead of a silent
    no-op. A kernel that reads texture objects gets none: the host must make those first
    (the header's texture lines say how).

    ``replaces_launches``: the host code's launches of the kernel are rewritten
    (frontend/launch_sites.py) to call ``NAME_launch_from(grid, block, <arguments>[,
    stream])``, written here too: it launches through ``NAME_launch``, taking from the naive
    launch's grid and block only the sizes nothing else gives (``globalDimX``: the naive
    thread count along x)."""
    name = proc.name
    if not has_launcher(proc):
        return (f"// No {name}_launch: {name} reads texture objects the host creates first "
                "(see the texture lines above).")
    sig = launcher_signature(proc, geometry, macros)
    # dynamic shared memory (ir/dynamic_shared.py): its bytes, as the naive launch gave them
    shared = [f"{p.name}_bytes" for p in dynamic_shared.params(proc)]
    decls = sig.decls + [f"int {f}" for f in sig.free_params] + [f"size_t {s}" for s in shared]
    shared_bytes = shared[0] if shared else "0"
    block = ", ".join(map(str, geometry.block[:3]))
    lines = [f"// {name}_launch: launches {name} with the geometry its output needs "
             "(above), on `stream`.",
             f"[[maybe_unused]] static inline cudaError_t {name}_launch({', '.join(decls + ['cudaStream_t stream = 0'])})",
             "{"]
    if geometry.multiple:
        checks = [f"({text}) % {m} != 0" for text, m in zip(sig.space, geometry.multiple)
                  if m and m > 1]
        if checks:
            lines.append(f"    if ({' || '.join(checks)}) {{  // no bounds guard: whole "
                         "steps only")
            lines.append(f"        {name}<<<dim3(0), dim3({block}), {shared_bytes}, stream>>>"
                         f"({', '.join(sig.call)});  // refused: invalid configuration")
            lines.append("        return cudaPeekAtLastError();")
            lines.append("    }")
    lines.append(f"    dim3 grid({', '.join(sig.grid)}), block({block});")
    lines.append(f"    {name}<<<grid, block, {shared_bytes}, stream>>>({', '.join(sig.call)});")
    lines.append("    return cudaPeekAtLastError();")
    lines.append("}")
    if replaces_launches and launcher_problem(proc, geometry, macros) is None:
        lines += ["", *_launcher_from(name, sig)]
    return "\n".join(lines)


def _launcher_from(name: str, sig: LauncherSignature) -> list[str]:
    taken = set(sig.names)
    grid, block = (f"naive_{w}" + "_" * sum(1 for n in taken if n.startswith(f"naive_{w}"))
                   for w in ("grid", "block"))
    free = [f"{grid}.{'xyz'[sig.space.index(f)]} * {block}.{'xyz'[sig.space.index(f)]}"
            for f in sig.free_params]
    call = ", ".join(sig.names + free + ["stream"])
    decls = [f"dim3 {grid}", f"dim3 {block}"] + sig.decls + ["cudaStream_t stream = 0"]
    body = [] if free else [f"    (void){grid};", f"    (void){block};"]
    return [f"// {name}_launch_from: in place of {name}<<<grid, block, shared, stream>>>(...) "
            "in the host code below;",
            "// the naive launch's grid and block give only what the sizes do not.",
            f"[[maybe_unused]] static inline cudaError_t {name}_launch_from({', '.join(decls)})",
            "{", *body, f"    return {name}_launch({call});", "}"]


def launcher_problem(proc, geometry, macros: dict[str, str]) -> str | None:
    """Why the host code's launches of ``proc`` cannot call its launcher, or None: a free
    size the launcher takes must be a whole axis of the thread space (``globalDimX``), which
    the naive launch's own thread count gives."""
    if not has_launcher(proc):
        return (f"'{proc.name}' reads texture objects the host makes first: its launches "
                "cannot be rewritten")
    sig = launcher_signature(proc, geometry, macros)
    for f, param in zip(sig.free, sig.free_params):
        if param not in sig.space:
            return (f"the launch of '{proc.name}' needs '{f}', which neither its parameters "
                    "nor the file's macros give")
    return None


def launch_check(proc, geometry, macros: dict[str, str]) -> str:
    """The first statement of a CUDA kernel whose block a pass fixed: it traps (``__trap()``:
    the launch fails with cudaErrorLaunchFailure) when the kernel is launched with another
    block, or another grid along an axis the kernel's own parameters and macros give, than
    its launcher's. ``__launch_bounds__`` refuses more threads per block, not fewer, and not a
    stale grid: the naive launch of an optimized kernel (16x16 threads where it needs 32x16,
    or a grid for one output per thread where each thread computes four) would otherwise
    run and compute wrong numbers. The test is uniform across the launch and costs a few
    integer instructions per thread. '' where the block is free (the user's launch stands)."""
    if proc.launch_block is None:
        return ""
    sig = launcher_signature(proc, geometry, macros)
    tests = [f"blockDim.{a} != {b}" for a, b in zip("xyz", geometry.block)]
    # (a size a bounds guard added is the kernel's parameter, named as the launcher's)
    free = {size_param_name(f) for f in sig.free} - set(proc.size_param_names.values())
    import re

    for axis, grid in zip("xyz", sig.grid):
        if not set(re.findall(r"[A-Za-z_]\w*", grid)) & free:
            tests.append(f"gridDim.{axis} != {grid}" if grid.isdigit() else
                         f"gridDim.{axis} != (unsigned)({grid})")
    return (f"    if ({' || '.join(tests)}) {{\n"
            f"        __trap();  // not the launch this output needs: call {proc.name}_launch\n"
            "    }\n")


# ------------------------------------------------------------------ OpenCL work-size header
def opencl_header(procs, geometries: dict, macros: dict[str, str], output_name: str) -> str:
    """``OUT.h`` beside an OpenCL output ``OUT``: for each kernel, a C function
    ``int NAME_work_sizes(<sizes>, size_t global_size[3], size_t local_size[3])`` that fills
    the NDRange its output needs at the given sizes (enqueue with work_dim 3), for C and C++
    hosts; the same as the sidecar's trees and :func:`launch_config`. The sizes are the
    kernel's parameters the thread space names (as ``long``), then the sizes nothing else
    gives (``globalDimX``: the naive kernel's thread count along x); macros keep the values
    the output was compiled with unless the host defines them first. It returns 0, or -63
    (CL_INVALID_GLOBAL_WORK_SIZE) for sizes an output without a bounds guard cannot run at."""
    import re

    guard = "NAIVEOPT_" + re.sub(r"\W", "_", output_name).upper() + "_H"
    lines = [f"/* Work sizes of the kernels in {output_name}, generated by naiveopt: the "
             "global and local",
             " * sizes each output needs (clEnqueueNDRangeKernel, work_dim 3). A kernel "
             "whose work-group",
             " * a pass fixed carries reqd_work_group_size: any other local size is "
             "refused. */",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", ""]
    used_macros = set()
    bodies = []
    for proc in procs:
        geo = geometries[proc.name]
        # the user's names; a struct's member (``p.n``) taken as a size of its own (``p_n``)
        grid = [structs.unspell(proc.struct_params, g) for g in geo.grid[:3]]
        space = [structs.unspell(proc.struct_params, t) for t in geo.thread_space[:3]]
        names = set(re.findall(r"[A-Za-z_]\w*", " ".join(grid + space)))
        used_macros |= names & set(macros)
        params = [proc.renamed.get(n, n) for n in launcher_signature(proc, geo, macros).names]
        params += [sym for s in proc.struct_params for sym in s.symbols.values()]
        sizes = [n for n in params if n in names]
        free = sorted(names - set(sizes) - set(macros))
        grid = [_with_free_params(g, free) for g in grid]
        space = [_with_free_params(t, free) for t in space]
        sizes += [size_param_name(f) for f in free]
        params = [f"long {n}" for n in sizes] + ["size_t global_size[3]", "size_t local_size[3]"]
        members = [f"{sym} is {p}.{m}" for sym, (p, m) in structs.symbols(proc).items()
                   if sym in sizes]
        body = [f"/* {proc.name}: work-group ({', '.join(map(str, geo.block[:3]))}), thread "
                f"space ({', '.join(geo.thread_space[:3])}){'; ' if members else ''}"
                f"{', '.join(members)} */",
                f"static inline int {proc.name}_work_sizes({', '.join(params)})", "{"]
        if geo.multiple:
            checks = [f"({t}) % {m} != 0" for t, m in zip(space, geo.multiple) if m and m > 1]
            if checks:
                body += [f"    if ({' || '.join(checks)})",
                         "        return -63; /* CL_INVALID_GLOBAL_WORK_SIZE: no bounds guard, "
                         "whole steps only */"]
        for axis, (g, b) in enumerate(zip(grid, geo.block[:3])):
            body.append(f"    global_size[{axis}] = {int(g) * b};" if g.isdigit() else
                        f"    global_size[{axis}] = (size_t)({g}) * {b};")
        for axis, b in enumerate(geo.block[:3]):
            body.append(f"    local_size[{axis}] = {b};")
        body += ["    return 0;", "}", ""]
        bodies += body
    for name in sorted(used_macros):
        lines += [f"#ifndef {name}", f"#define {name} {macros[name]}", "#endif"]
    if used_macros:
        lines.append("")
    return "\n".join(lines + bodies + [f"#endif /* {guard} */", ""])
