"""A bounds guard for a kernel written without one, so that a launch may cover more threads.

Kernels in the style of the paper's inputs and of the CUDA samples' naive matrixMul have no
bounds guard: their launch must cover the thread space exactly, so the sizes are multiples of
the naive block (16). Thread merge's best variants cover 32x64 or 128x128 outputs per block,
which such sizes need not be multiples of, and the extra copies would write past the arrays.
(mm_macro on an H200: 1.14x faster than naive where mm, the same product with a guard, was
8.2x, for want of a merge.)

:func:`with_bounds_guard` makes the plan's kernel as if written with the guard
``if (idx < X && idy < Y) { ... }`` over its thread space (X, Y): the thread-space names that
are neither parameters nor macros (``HEIGHT_A``, a size only the launch knew) become ``int``
parameters after the kernel's own (``int naiveopt_HEIGHT_A``: a build may define HEIGHT_A as
a macro), recorded in GProcedure.size_params so that every runner passes their values (the generated launcher takes them already: they size its grid). The
tiling engine then treats it as any guarded kernel: per-copy active flags, tiles zero-filled
past the bounds. A stale launch of the naive kernel no longer compiles (one argument short).
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from ....analysis.memory_expressions import store_in_ir
from ....ir import GModule, GProcedure
from ....ir.build import expression
from ....ir.gprocedure import size_param_name
from ....launch import uses_y
from ...functional.launch_extents import (add_size_parameters, extent_obstacle, needs_parameter,
                                          spelled_size)
from ...manager import PassContext

_NAME = re.compile(r"[A-Za-z_]\w*")


def guard_obstacle(proc: GProcedure, module: GModule) -> str:
    """Why :func:`with_bounds_guard` cannot guard ``proc`` ('' if it can)."""
    if proc.keep_launch:
        return proc.keep_launch
    axes = proc.pragma.global_dim[:2] if uses_y(proc) else proc.pragma.global_dim[:1]
    if not all(axes):
        return "its thread space is unknown"
    for expr in axes:
        why = extent_obstacle(expr, proc, module)
        if why:
            return why
    if proc.host_launched:
        # its launches become NAME_launch_from(grid, block, <the host's arguments>), which
        # takes a size no argument gives from the naive launch: a whole axis only
        whole = {expr.strip() for expr in axes}
        for expr in axes:
            for name in _NAME.findall(expr):
                if needs_parameter(name, proc, module) and name not in whole:
                    return (f"the file's own host code launches it, and its launch gives no "
                            f"{name}")
    return ""


def with_bounds_guard(proc: GProcedure, ctx: PassContext) -> GProcedure:
    """A copy of the unguarded kernel ``proc`` (analysed; never modified) whose body runs
    under a bounds guard over its thread space, with the sizes the guard needs as new
    parameters (``guard_obstacle`` must have said yes)."""
    module = ctx.module
    p = copy.deepcopy(proc)
    axes = [("idx", p.pragma.global_dim[0])]
    if uses_y(p):
        axes.append(("idy", p.pragma.global_dim[1]))
    cond = None
    added = []
    for _, extent in axes:
        added += [n for n in _NAME.findall(extent)
                  if needs_parameter(n, proc, module) and n not in added]
    named = {n: size_param_name(n) for n in added}
    for axis, extent in axes:
        # a size only -D names (not a macro of the file) is its value: the output's own build
        # need not define it
        extent = _NAME.sub(lambda m: named.get(m.group(0)) or spelled_size(m.group(0), p,
                                                                          module), extent)
        test = expression(f"@{axis} < ({extent})")
        cond = test if cond is None else c_ast.BinaryOp("&&", cond, test)
    p.body.block_items = [c_ast.If(cond, c_ast.Compound(list(p.body.block_items or [])), None)]
    add_size_parameters(p, added)
    ctx.am.tree_changed(p)
    store_in_ir(p, ctx.am)
    return p


def guard_remark(guarded: GProcedure, cover: str) -> str:
    """The remark a pass gives when the variant it chose runs on the copy ``guarded``
    (:func:`with_bounds_guard`): why the guard, over what, and the parameters it added.
    ``cover``: what the variant's blocks cover (``"its blocks now cover 32x64 outputs"``)."""
    dims = guarded.pragma.global_dim if uses_y(guarded) else guarded.pragma.global_dim[:1]
    added = ", ".join(f"int {c} ({n})" for n, c in guarded.size_param_names.items())
    return (f"the kernel has no bounds guard and {cover}, which its thread space need not be "
            f"a multiple of: guarded by its thread space ({', '.join(d for d in dims if d)})" +
            (f"; new parameter(s) {added}, which the launcher passes" if added else ""))
