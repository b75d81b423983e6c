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
