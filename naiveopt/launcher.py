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
    kernels = _kernels(output)
    if kernel is None:
        if len(kernels) != 1:
            raise NaiveoptError(f"the output has kernels {', '.join(kernels)}: name one")
        kernel = next(iter(kernels))
    if kernel not in kernels:
        raise NaiveoptError(f"no kernel '{kernel}' in the output (it has "
                            f"{', '.join(kernels)})")
    entry = kernels[kernel]
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
def cuda_launcher(proc, geometry, macros: dict[str, str]) -> str:
    """A host function that launches ``proc`` as its output needs, next to the kernel:
    ``static inline cudaError_t NAME_launch(<the kernel's parameters>, [free sizes,]
    cudaStream_t stream = 0)``, computing grid and block from the sizes the kernel takes, so
    that a program calls it instead of repeating a geometry that changes with each output. A
    kernel without a bounds guard checks the thread-space multiple it relies on
    (``cudaErrorInvalidValue`` otherwise). A kernel that reads texture objects gets none: the
    host must make those first (the header's texture lines say how)."""
    import re

    from .ir.cgen import to_c
    from .ir.textures import host_texture_params

    name = proc.name
    if host_texture_params(proc):
        return (f"// No {name}_launch: {name} reads texture objects the host creates first "
                "(see the texture lines above).")
    params = proc.func.decl.type.args.params if proc.func.decl.type.args else []
    decls = [to_c(p) for p in params if getattr(p, "name", None)]
    names = [p.name for p in params if getattr(p, "name", None)]
    tree_name = {user: tree for tree, user in proc.renamed.items()}

    def c_expr(text: str) -> str:
        return re.sub(r"[A-Za-z_]\w*", lambda m: tree_name.get(m.group(0), m.group(0)), text)

    n = 3
    grid = [c_expr(g) for g in geometry.grid[:n]]
    space = [c_expr(t) for t in geometry.thread_space[:n]]
    used = {w for text in grid + space for w in re.findall(r"[A-Za-z_]\w*", text)}
    free = sorted(used - set(names) - set(macros))
    decls += [f"int {f}" for f in free]
    lines = [f"// {name}_launch: launches {name} with the geometry its output needs "
             "(above), on `stream`.",
             f"[[maybe_unused]] static inline cudaError_t {name}_launch({', '.join(decls + ['cudaStream_t stream = 0'])})",
             "{"]
    if geometry.multiple:
        for axis, text, m in zip("xy", space, geometry.multiple):
            if m and m > 1:
                lines.append(f"    if (({text}) % {m} != 0)  // no bounds guard: whole steps of "
                             f"{m} along {axis}")
                lines.append("        return cudaErrorInvalidValue;")
    lines.append(f"    dim3 grid({', '.join(grid)}), block({', '.join(map(str, geometry.block[:n]))});")
    lines.append(f"    {name}<<<grid, block, 0, stream>>>({', '.join(names)});")
    lines.append("    return cudaGetLastError();")
    lines.append("}")
    return "\n".join(lines)
