"""The launch's size read as a value: ``blockDim.x * gridDim.x`` (OpenCL's
``get_global_size(0)``) as a row width, ``gridDim.x`` in an index.

CUDA by Example writes ``int offset = x + y * blockDim.x * gridDim.x;``, tutorials
``in[y * get_global_size(0) + x]``: the row width is whatever the launch covers. A pass that
gives the kernel another launch (a new block, merged outputs, a grid padded for a bounds
guard) changes that value, and the output computes something else: silently at sizes the
new block divides, caught by verification elsewhere.

Where the naive kernel has no bounds guard along an axis and its thread space there is known
(inferred, a pragma, metadata, a ``#define``), its launch covers that extent exactly, so
:class:`LaunchExtents` writes ``blockDimX * gridDimX`` (in any product, through casts) as the
extent itself before the optimization passes: ``y * W`` for ``y * blockDim.x * gridDim.x``,
which every pass reads as any row width. A size the kernel does not have (a pragma's ``W``, the
free size ``globalDimX``) becomes an ``int naiveopt_W`` parameter, as a bounds guard adds one
(tiling/bounds_guard.py). :class:`RestoreLaunchExtents` writes the product back where no pass
changed the launch (the user's launch gives the value, and the kernel keeps its parameters).

Any other read of the launch's block or grid size (``gridDim.x * TILE``, ``blockDim.x`` in a
reduction, a guarded kernel's ``blockDim.x * gridDim.x``, which the user's block rounds)
depends on the launch the user chose: the kernel keeps its launch (GProcedure.keep_launch), and
each optimization pass says so.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from ...analysis.guards import GuardBounds, is_id
from ...analysis.manager import PreservedAnalyses
from ...ir import GModule, GProcedure, Param, PredefId
from ...ir.gprocedure import size_param_name
from ...ir.build import expression
from ...ir.rewrite import map_nodes, walk
from ...launch import launch_changed, untransformable
from ..manager import Pass, PassContext, reanalyse

_NAME = re.compile(r"[A-Za-z_]\w*")
#: a thread-space extent the kernel may read in place of its launch size: names, numbers and
#: arithmetic
_PLAIN = re.compile(r"[\w\s+\-*/%()]+")
#: where a thread space that an unguarded kernel's launch covers exactly comes from
_EXACT_SOURCES = ("inferred", "pragma", "metadata", "define")
_LAUNCH_SIZES = ("blockDimX", "blockDimY", "gridDimX", "gridDimY")
_SPELLED = {"blockDimX": "blockDim.x", "blockDimY": "blockDim.y", "gridDimX": "gridDim.x",
            "gridDimY": "gridDim.y"}


def is_macro(name: str, module: GModule) -> bool:
    """Whether ``name`` is a macro of the compile: the file's own, or a -D value (a parameter
    of that name would be expanded away: ``int 48``; the kernel reads its value)."""
    return name in module.macros or name in module.fixed or name in module.overridable


def spelled_size(name: str, proc: GProcedure, module: GModule) -> str:
    """A thread-space size as the kernel reads it: the parameter that holds it (metadata's
    ``value = "W"``), the parameter an earlier rewrite added for it (``naiveopt_W``), the
    value of a size only -D names (not a macro of the file: the output's own build need not
    define it), else the name (a parameter, a macro)."""
    if proc.param(name) is None and name in proc.pragma.size_holders:
        return proc.pragma.size_holders[name]
    if name in proc.size_params:
        return proc.size_param_names[name]
    if name in module.fixed and name not in module.macros and proc.param(name) is None:
        return str(module.fixed[name])
    return name


def needs_parameter(name: str, proc: GProcedure, module: GModule) -> bool:
    """Whether the kernel must take thread-space size ``name`` as a new parameter to read it:
    neither a parameter, nor held by one, nor added already, nor a macro of the compile, nor
    host-filled data the kernel reads (``__constant__ int N;``)."""
    return proc.param(name) is None and name not in proc.pragma.size_holders and \
        name not in proc.size_params and not is_macro(name, module) and \
        name not in proc.global_args


def add_size_parameters(proc: GProcedure, names: list[str]) -> None:
    """Give ``proc`` an ``int naiveopt_NAME`` parameter after its own for each size of
    ``names`` (GProcedure.size_params: every runner and the launcher pass their values)."""
    proc.size_params = list(proc.size_params) + [n for n in names if n not in proc.size_params]
    decls = proc.func.decl.type.args.params
    for name in names:
        pname = proc.size_param_names[name]
        if proc.param(pname) is not None:
            continue
        proc.params.append(Param(pname, "int", False))
        decls.append(c_ast.Decl(pname, [], [], [], [], c_ast.TypeDecl(
            pname, [], None, c_ast.IdentifierType(["int"])), None, None))


def _factors(node: c_ast.Node) -> list[c_ast.Node]:
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


def _product(factors: list[c_ast.Node]) -> c_ast.Node:
    out = factors[0]
    for f in factors[1:]:
        out = c_ast.BinaryOp("*", out, f)
    return out


def _split(node: c_ast.Node, axis: str) -> tuple[list[c_ast.Node], c_ast.Node] | None:
    """A product ``... * blockDimA * ... * gridDimA * ...`` (its factors through casts) as
    (the other factors, the block factor as written, for its cast), or None."""
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "*"):
        return None
    factors = _factors(node)
    block = next((f for f in factors if is_id(f, f"blockDim{axis}")), None)
    grid = next((f for f in factors if is_id(f, f"gridDim{axis}")), None)
    if block is None or grid is None:
        return None
    return [f for f in factors if f is not block and f is not grid], block


def _with_cast(like: c_ast.Node, value: c_ast.Node) -> c_ast.Node:
    """``value`` under the casts ``like`` is written under (``(size_t)blockDim.x``)."""
    if isinstance(like, c_ast.Cast):
        return c_ast.Cast(like.to_type, _with_cast(like.expr, value))
    return value


def _products(proc: GProcedure, axis: str) -> int:
    count = 0
    for node, parent in walk(proc.body):
        if _split(node, axis) is not None and not (
                isinstance(parent, c_ast.BinaryOp) and parent.op == "*"):
            count += 1
    return count


def _rewrite(proc: GProcedure, axis: str, extent: c_ast.Node) -> None:
    """Each maximal product holding blockDim and gridDim along ``axis`` as the other factors
    times ``extent`` (a fresh copy each)."""
    def fn(node: c_ast.Node) -> c_ast.Node:
        split = _split(node, axis)
        if split is None:
            return node
        others, block = split
        return _product(others + [_with_cast(block, copy.deepcopy(extent))])

    map_nodes(proc.body, fn)


def launch_reads(proc: GProcedure) -> list[str]:
    """The launch sizes (``gridDim.x``...) the kernel reads, as CUDA spells them."""
    names = {n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)}
    return [_SPELLED[n] for n in _LAUNCH_SIZES if n in names]


def extent_obstacle(extent: str, proc: GProcedure, module: GModule) -> str:
    """Why the kernel cannot read thread-space extent ``extent`` ('' if it can): not a plain
    expression of sizes, a size the output renames, or one it would take as a parameter whose
    name the kernel already uses. (A bounds guard over the thread space asks the same.)"""
    if not _PLAIN.fullmatch(extent):
        return f"its thread-space extent {extent} is not a plain expression of sizes"
    renamed = set(proc.renamed) | set(proc.renamed.values())
    taken = proc.names_taken()
    for name in _NAME.findall(extent):
        if name in renamed:
            return f"its thread-space size {name} is renamed in the output"
        if needs_parameter(name, proc, module) and size_param_name(name) in taken:
            return f"{size_param_name(name)} names something in the kernel already"
    return ""


def _obstacle(proc: GProcedure, axis: str, extent: str | None, bounds: dict,
              module: GModule) -> str:
    """Why ``blockDimA * gridDimA`` cannot be read as the thread space's extent ('' if it
    can)."""
    ident = "idx" if axis == "X" else "idy"
    if ident in bounds:
        return "the kernel has a bounds guard, so its launch covers more than its thread space"
    if not extent or proc.pragma.global_dim_source not in _EXACT_SOURCES:
        return "its thread space is not known"
    why = extent_obstacle(extent, proc, module)
    if why:
        return why
    for name in _NAME.findall(extent):
        if needs_parameter(name, proc, module) and extent.strip() != name:
            # (the parameter stands for the whole extent: RestoreLaunchExtents writes the
            # launch's size back in its place)
            return f"its thread-space extent {extent} needs {name}, which the kernel does not take"
    return ""


class LaunchExtents(Pass):
    """Read ``blockDimA * gridDimA`` as the thread space's extent along A where the naive
    launch covers it exactly (module docstring); a kernel that reads its launch's size
    otherwise keeps its launch."""

    name = "launch-extents"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if not launch_reads(proc):
            return PreservedAnalyses.all()
        bounds = ctx.am.get(proc, GuardBounds)
        changed, why = False, ""
        for axis, extent in zip("XY", proc.pragma.global_dim[:2]):
            if not _products(proc, axis):
                continue
            why = _obstacle(proc, axis, extent, bounds, ctx.module)
            if why:
                ctx.remark("missed", self.name, proc, f"blockDim.{axis.lower()} * "
                           f"gridDim.{axis.lower()} kept as the launch gives it: {why}")
                continue
            added = [n for n in _NAME.findall(extent) if needs_parameter(n, proc, ctx.module)]
            add_size_parameters(proc, added)
            spelled = _NAME.sub(lambda m: spelled_size(m.group(0), proc, ctx.module), extent)
            count = _products(proc, axis)
            _rewrite(proc, axis, expression(f"({spelled})"))
            proc.launch_extents = list(proc.launch_extents) + \
                [(axis, proc.size_param_names[n]) for n in added]
            changed = True
            params = ", ".join(f"int {proc.size_param_names[n]}" for n in added)
            ctx.remark("analysis", self.name, proc, f"blockDim.{axis.lower()} * "
                       f"gridDim.{axis.lower()} read as {extent}, the thread space's "
                       f"{axis.lower()} extent, in {count} place(s): the kernel has no bounds "
                       "guard, so its launch covers exactly that" +
                       (f"; new parameter {params}, which the launcher passes (dropped again "
                        "if no pass changes the launch)" if added else ""))
        left = launch_reads(proc)
        if left and not untransformable(proc):
            proc.keep_launch = (f"the kernel reads its launch's size ({', '.join(left)}) "
                                f"{'; ' + why if why else 'beyond its thread ids'}: the "
                                "optimization passes keep its launch, which gives that value")
        if changed:
            reanalyse(proc, ctx)
            return PreservedAnalyses.none()
        return PreservedAnalyses.all()


class RestoreLaunchExtents(Pass):
    """Where no pass changed the launch, the parameters LaunchExtents added are read from the
    launch again (``blockDim.x * gridDim.x``) and dropped: the kernel keeps the parameters the
    user's launch passes."""

    name = "restore-launch-extents"
    preserves = PreservedAnalyses.none()

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        if not proc.launch_extents or launch_changed(proc):
            return PreservedAnalyses.all()
        names = {pname: axis for axis, pname in proc.launch_extents}

        def fn(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, c_ast.ID) and node.name in names:
                axis = names[node.name]
                return c_ast.BinaryOp("*", PredefId(f"blockDim{axis}"),
                                      PredefId(f"gridDim{axis}"))
            return node

        map_nodes(proc.body, fn)
        drop = [n for n, p in proc.size_param_names.items() if p in names]
        proc.size_params = [n for n in proc.size_params if n not in drop]
        proc.params = [p for p in proc.params if p.name not in names]
        decls = proc.func.decl.type.args.params
        decls[:] = [d for d in decls if getattr(d, "name", None) not in names]
        proc.launch_extents = []
        ctx.am.tree_changed(proc)
        return PreservedAnalyses.none()


