"""Verification facts a kernel implies by itself: problem sizes, thread space, array extents.

A user's kernel rarely comes with metadata or pragmas, yet verification must run it: so the
facts come from the kernel. Sizes are the integer parameters and undefined names its guards,
loop bounds and indices use (``#define``d ones keep their value); the thread space is its
bounds guard's (an early return, a grid-stride loop) or, for an unguarded axis, a free size
the launch gives (``globalDimX``: a kernel without a guard runs on whatever its launch
covers, which its indices do not say: Parboil's ``C[m + n * ldc]`` is launched over m < ldc
rows of a padded matrix); each array's
extent is the exact maximum flat index + 1 over that launch (verify/extents.py). Pragmas and
metadata still override every fact, and each fact says where it came from (``provenance``).

Two size sets are chosen: ``inferred`` at multiples of every block and tile the optimized
kernels launch with, and ``inferred-odd``, primes past two tiles, so that partial tiles and
guards run (an unguarded axis keeps the multiple of the naive block it needs). Sizes that only
offset a thread's index or bound its taps (a filter radius, a mask width), that shape a
convolution's window (its extent, padding, stride, dilation), that bound the ids from below
(a solver's step), and z extents stay small: they multiply the work of every thread; the outer
factors of a thread space flattened from three or more dimensions (``N * K * OH * OW``) take
small distinct values, the innermost its tiles; a size compared with a remainder takes 0 and 1.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from tokenize import TokenError

import sympy

from ..analysis.manager import AnalysisManager
from ..analysis.memory_expressions import declared_arrays
from ..analysis.symbols import SymbolAnalysis
from ..ir import GModule, GProcedure, dynamic_shared
from ..ir.cgen import to_c
from ..ir.elements import element
from ..ir.symbolic import CMod, IntMax, IntMin, SymbolEnv
from ..ir.rewrite import walk
from ..launch import geometry, z_used
from .expr import evaluate
from .extents import Extent, extents
from .spec import ArgSpec, FileSpec, KernelSpec, pragma_clauses

#: Size values of the small roles (tap radii and mask widths, z extents): (test, odd).
SMALL = (5, 3)
#: Values of the factors of a thread-space extent that is a product of three or more sizes
#: (test, odd), one after the other: distinct, so a swap of two shows.
FACTORS = ((4, 5, 6, 7, 8, 9), (3, 5, 7, 9, 11, 13))
#: Values of a size compared with a remainder (a colour, a parity): (test, odd), both below
#: any modulus of 2 or more, so the two sets take both branches of a red-black sweep.
RESIDUES = (0, 1)
Z_SIZES = (4, 5)
#: The multiples of the tile a size takes in turn (distinct sizes get distinct values, so
#: that a transformation confusing two of them shows).
MULTIPLES = (2, 3)
#: The largest tile a size is made a multiple of (a launch wider than this still gets whole
#: blocks of this many): keeps inferred sets small enough to verify in seconds on PoCL.
MAX_TILE = 256
_NAME = re.compile(r"[A-Za-z_]\w*")
_FREE_DIMS = ("globalDimX", "globalDimY", "globalDimZ")
_IDS = {"idx", "idy", "idz", "tidx", "tidy", "tidz", "bidx", "bidy", "bidz", "blockDimX",
        "blockDimY", "blockDimZ", "gridDimX", "gridDimY", "gridDimZ"}


@dataclass
class _Kernel:
    """What inference found for one kernel before the sizes get values."""

    spec: KernelSpec
    guarded: tuple[bool, bool]         # whether the x / y thread space is bounded by the code
    naive_block: tuple[int, int]       # the block the naive kernel is launched with
    roles: dict[str, str] = field(default_factory=dict)    # size name -> x | y | z | small | k
    extents: dict[str, Extent] = field(default_factory=dict)
    fixed: dict[str, int] = field(default_factory=dict)


@dataclass
class Inference:
    """What a file's kernels imply, read from the analysed naive kernels (before the
    optimization passes change them); :func:`file_spec` gives it values once the launches
    of the optimized kernels are known."""

    kernels: dict[str, _Kernel]
    given: FileSpec | None


def infer_kernels(canonical: GModule, given: FileSpec | None, fixed: dict[str, int]
                  ) -> Inference:
    """The facts of each kernel of ``canonical`` (the module after the functional passes):
    ``given`` (pragmas) where it says something, the kernel's own facts elsewhere; ``fixed``:
    the integer macros this compile fixes (their values are not chosen)."""
    given_sizes = set().union(*given.sizes.values()) if given and given.sizes else set()
    for kernel in given.kernels.values() if given else ():
        for arg in kernel.args:          # the names the pragma's shapes use are sizes too
            for dim in arg.shape:
                given_sizes |= set(_NAME.findall(str(dim)))
    return Inference({p.name: _kernel(p, canonical, given.kernels.get(p.name) if given
                                      else None, fixed, given_sizes - set(fixed))
                      for p in canonical.procedures}, given)


def apply_inferred_threads(module: GModule, inference: Inference
                           ) -> list[tuple[GProcedure, str]]:
    """Record in GPragma.global_dim the thread space inference found for each kernel that no
    guard, grid-stride loop, #define, pragma or metadata gave one (a kernel without a bounds
    guard: a free size ``globalDimX`` per unguarded axis), so that
    the passes may give it a bounds guard over that space (tiling/bounds_guard.py) as they do
    for one whose thread space a pragma names. Returns the kernels it recorded one for, each
    with where its extents come from (for a remark).

    Inference's names are the user's; a kernel whose thread space names a size the output
    renames keeps it unknown (the guard would name the wrong thing)."""
    out = []
    for proc in module.procedures:
        kernel = inference.kernels.get(proc.name)
        if proc.pragma.global_dim != (None, None) or kernel is None or \
                kernel.spec.threads is None:
            continue
        threads = kernel.spec.threads[:2]
        renamed = set(proc.renamed) | set(proc.renamed.values())
        if any(n in renamed for t in threads for n in _NAME.findall(str(t))):
            continue
        proc.pragma.global_dim = (str(threads[0]), str(threads[1]))
        proc.pragma.global_dim_source = "inferred"
        how = [f"{t}: a free size the launch gives" for t in threads if t in _FREE_DIMS]
        out.append((proc, "; ".join(how)))
    return out


def small_sizes(inference: Inference) -> dict[str, int]:
    """The sizes of the small roles (a tap radius, a mask width: they bound a thread's taps
    or offset its index) at the value a problem of interest has: the pragma's (its
    ``default`` set first) where it gives one, else SMALL's odd value (3). Estimating at the
    default problem size instead (4096) would make a 3x3 filter a 8193x8193 one."""
    given = inference.given.sizes if inference.given and inference.given.sizes else {}
    sets = sorted(given.items(), key=lambda kv: kv[0] != "default")
    out: dict[str, int] = {}
    for k in inference.kernels.values():
        for name, role in k.roles.items():
            if role != "small" or name in out:
                continue
            out[name] = next((s[name] for _, s in sets if name in s), SMALL[1])
    return out


def file_spec(inference: Inference, final: GModule) -> FileSpec:
    """The spec verification runs with; ``final`` is the module after the optimization passes
    (the blocks and tiles the inferred sizes are multiples of)."""
    given = inference.given
    provenance = dict(given.provenance) if given else {}
    if given and given.sizes:
        sizes = given.sizes
        provenance["sizes"] = "pragma"
        named = set().union(*sizes.values())
        sizes = _free_extents(inference, sizes, named)
        named = set().union(*sizes.values())
        for k in inference.kernels.values():
            # a free extent (globalDimZ) the pragma's sizes do not give and no value fits:
            # the thread space is unknown, and the check says which pragma gives it
            if any(t in _FREE_DIMS and t not in named for t in k.spec.threads or ()):
                k.spec.threads = None
    else:
        sizes = _size_sets(inference.kernels, {p.name: p for p in final.procedures})
        provenance["sizes"] = "inferred"
    kernels = {name: k.spec for name, k in inference.kernels.items()}
    return FileSpec("pragma" if given and given.sizes else "inferred", sizes, kernels,
                    provenance=provenance)


#: The most naive blocks an unguarded axis that the pragma's sizes leave open is given.
FREE_BLOCKS = 8


def _free_extents(inference: Inference, sets: dict[str, dict[str, int]], named: set[str]
                  ) -> dict[str, dict[str, int]]:
    """The pragma's size sets with a value for each free extent of an unguarded x or y axis
    (``globalDimY``: no bounds guard) that they do not name: the
    largest number of whole naive blocks, up to FREE_BLOCKS, at which every kernel using it
    :func:`_fits` (inside the arrays whose shape the pragma gives, no index below 0, no two
    threads storing to one element). Without such a value the extent stays open
    (the thread space is unknown, as before)."""
    free = {t for k in inference.kernels.values() for t in (k.spec.threads or ())[:2]
            if t in _FREE_DIMS[:2] and t not in named}
    if not free:
        return sets
    out = {name: dict(values) for name, values in sets.items()}
    steps = {dim: _naive_step(inference.kernels.values(), dim) for dim in free}
    # one extent at a time, the others open at one block: stores and extents only grow
    # (and least indices only fall) with the thread space, so the greedy choice is the
    # largest that fits
    for dim in sorted(free):
        users = [k for k in inference.kernels.values() if dim in (k.spec.threads or ())]
        for values in out.values():
            blocks = _most_blocks(FREE_BLOCKS, lambda m: all(
                _fits(k, {**k.fixed, **{d: steps[d] for d in free}, **values,
                          dim: steps[dim] * m}) for k in users))
            if not blocks:
                break
            values[dim] = steps[dim] * blocks
        else:
            continue
        for values in out.values():         # one set without a value: none has one
            values.pop(dim, None)
    return out


def _most_blocks(most: int, fits) -> int:
    """The largest m in 1..``most`` with ``fits(m)``, 0 if none: fits holds for every m below
    one it holds for (a smaller thread space stores less), so a binary search finds it."""
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _naive_step(kernels, dim: str) -> int:
    """The step a free extent ``dim`` (``globalDimX``) grows by: whole naive blocks (times
    the elements each thread takes) of every kernel whose thread space names it."""
    axis = _FREE_DIMS.index(dim)
    return math.lcm(*(int(k.naive_block[axis]) * k.spec.per_thread[axis] for k in kernels
                      if dim in (k.spec.threads or ())))


def _unraced(found: dict[str, _Kernel], sets: dict[str, dict[str, int]]) -> None:
    """Cut each free extent of an unguarded axis (``globalDimX``) in ``sets`` to the largest
    number of whole naive blocks at which every kernel :func:`_fits`: a free extent past a
    row's width makes the unguarded threads there write the next row's elements (the naive
    kernel races: its output would depend on the order its threads run in), or reach past
    the arrays a pragma shapes, or below an index's 0 (``A[N - 1 - i]``)."""
    for values in sets.values():
        for dim in _FREE_DIMS[:2]:
            users = [k for k in found.values() if dim in (k.spec.threads or ())]
            if dim not in values or not users:
                continue
            step = _naive_step(users, dim)

            def fits(m: int) -> bool:
                sizes = {**values, dim: step * m}
                return all(_fits(k, {**k.fixed, **sizes}) for k in users)

            if fits(values[dim] // step) or values[dim] % step:
                continue
            blocks = _most_blocks(values[dim] // step - 1, fits)
            if blocks:
                values[dim] = step * blocks


def _within_tables(found: dict[str, _Kernel], sets: dict[str, dict[str, int]]) -> None:
    """Cut the sizes of each set in ``sets`` until no naive kernel reads a fixed-length table
    past its end (``CT[i % 33]`` is fine, ``CT[k]`` with k below K allows K up to CT's
    length; check._past_tables): one size the tables depend on at a time, in order, each to
    the largest value (whole naive blocks for a free extent) at which they hold, or its
    least where none does, while the next sizes are still cut. A set no cut makes fit, or whose cut
    makes a kernel race or leave an array (:func:`_fits`), stays as it was: verification
    then says why it does not run."""
    limited = [k for k in found.values() if k.spec.limits]
    if not limited:
        return

    def excess(values: dict[str, int]) -> int:
        """How far the furthest table read goes past its table (<= 0: none does)."""
        worst = -1
        for k in limited:
            for extent, length in k.spec.limits.values():
                try:
                    worst = max(worst, extent({**k.fixed, **values}) - length)
                except (ValueError, ZeroDivisionError, TypeError):
                    continue
        return worst

    def within(values: dict[str, int]) -> bool:
        return excess(values) <= 0

    for values in sets.values():
        if within(values):
            continue
        cut = dict(values)
        for name in list(cut):
            users = [k for k in found.values() if name in (k.spec.threads or ())]
            step = _naive_step(users, name) if name in _FREE_DIMS and users else 1
            if excess({**cut, name: step}) >= excess(cut):
                continue                    # the tables do not depend on this size
            best = _most_blocks(cut[name] // step, lambda m: within({**cut, name: step * m}))
            cut[name] = step * (best or 1)
            if best:
                break
        if within(cut) and all(_fits(k, {**k.fixed, **cut}) for k in found.values()):
            values.update(cut)


def _races(k: _Kernel, sizes: dict[str, int]) -> bool:
    """Whether two threads of the naive kernel ``k`` certainly store to one element at
    ``sizes`` (False where that cannot be decided)."""
    try:
        return any(extent.overlap(sizes) for extent in k.spec.accesses.values())
    except (ValueError, ZeroDivisionError, TypeError):
        return False


def _fits(k: _Kernel, sizes: dict[str, int]) -> bool:
    """Whether the naive kernel ``k`` at ``sizes`` stays inside the arrays whose shape the
    pragma gives, reaches no index below 0 and does not race (:func:`_races`)."""
    try:
        for extent in k.spec.accesses.values():
            extent.geometry.sizes(sizes)        # the launch at these sizes (ValueError: open)
            if extent.least(sizes) < 0:
                return False
        for name, extent in k.spec.overridden.items():
            shape = next(a.shape for a in k.spec.args if a.name == name)
            if extent(sizes) > math.prod(int(evaluate(d, sizes)) for d in shape):
                return False
    except (ValueError, ZeroDivisionError, TypeError, StopIteration):
        return False
    return not _races(k, sizes)


def _kernel(proc: GProcedure, module: GModule, given: KernelSpec | None,
            fixed: dict[str, int], given_sizes: set[str]) -> _Kernel:
    am = AnalysisManager(module)
    symbols = am.get(proc, SymbolAnalysis)
    iterators = {lp.iterator for lp in proc.loops if lp.iterator}
    env = SymbolEnv(set(symbols.uniforms), set(symbols.loops) | iterators,
                    {k: v for k, v in symbols.aliases.items() if k not in iterators},
                    set(symbols.signed) if symbols.signed is not None else None,
                    z_ids=True, divisions=True)
    facts: dict[str, str] = {}

    def user(name: str) -> str:
        return proc.renamed.get(name, name)

    threads, guarded = _thread_space(proc, given, facts, user, env.aliases)
    block = given.block if given and given.block else None
    geo = geometry(proc, block=block, thread_space=threads)
    shapes = {a.name: a.shape for a in given.args if a.shape} if given else {}
    pointers = [p for p in proc.params if p.is_pointer and p.address_space != "local"]
    inferred = extents(proc, env, geo, [p.name for p in pointers])
    # dynamic shared memory: as many elements as the naive kernel's accesses reach
    inferred.update(extents(proc, env, geo, [p.name for p in dynamic_shared.params(proc)],
                            "shared"))
    written = {user(m.array) for m in proc.memory_expressions if m.is_write} | \
        {user(name) for name in stored_through(proc)}
    roles = _roles(proc, module, threads, inferred, fixed, user)
    for name in sorted(given_sizes):    # a size the pragma gives is one, wherever it is used
        roles.setdefault(name, "k")
    # the scalars a pragma's scalar(...) names (the others' default values are no facts)
    named = {g[0] for g in pragma_clauses(module).get("scalar", []) if g}
    scalars = {a.name: a for a in given.args if a.role == "scalar" and a.name in named} \
        if given else {}
    args, overridden = [], {}
    for p in proc.params:
        name = user(p.name)
        elem = element(p.base_type)
        if p.is_pointer and p.address_space == "local":
            extent = [inferred[p.name]] if name not in shapes else shapes[name]
            facts[f"shape {name}"] = "pragma" if name in shapes else "inferred"
            args.append(ArgSpec(name, "local", p.base_type, list(extent)))
        elif p.is_pointer:
            if name in shapes:
                shape, facts[f"shape {name}"] = shapes[name], "pragma"
                overridden[name] = inferred[p.name]
            else:
                extent = inferred[p.name]
                shape, facts[f"shape {name}"] = [extent], "inferred"
            args.append(ArgSpec(name, "inout" if name in written else "in", p.base_type,
                                list(shape)))
        elif name in scalars:
            args.append(scalars[name])
        elif elem is not None and not elem.is_float and name in roles:
            args.append(ArgSpec(name, "size", p.base_type))
        elif elem is not None and not elem.is_float and name in fixed:
            # a size parameter -D fixes (``-D n=768``): passed its value, which the arrays'
            # shapes and the thread space are evaluated at too (a drawn scalar would launch
            # the kernel on another size than its buffers)
            args.append(ArgSpec(name, "scalar", p.base_type, value=str(fixed[name])))
            facts[f"value {name}"] = "-D"
        else:
            args.append(ArgSpec(name, "scalar", p.base_type, value=_scalar(name, elem)))
            facts[f"value {name}"] = "inferred"
    # the naive block, said explicitly: the written-back naive kernel no longer shows the ids
    # that make launch.default_block choose a 2-D block
    naive_block = geo.block[:2] if geo.block[2] == 1 else geo.block
    facts.setdefault("block", "pragma" if block else "default")
    # fixed-length tables (file-scope, or declared in the kernel: const float w[3] = ...)
    # limit the sizes the naive kernel may run at (check._past_tables)
    tables = {g.name: math.prod(g.extents) for g in module.globals if g.dims}
    read = extents(proc, env, geo, list(tables), "constant")
    own = {name: math.prod(dims) for name, (space, dims)
           in declared_arrays(proc, module.macros).items() if space == "local" and all(dims)}
    read.update(extents(proc, env, geo, list(own), "local"))
    tables.update(own)
    limits = {name: (extent, tables[name]) for name, extent in read.items()
              if extent.accesses and not extent.why}
    # a size that is a macro the file leaves to the build (#ifndef N / #define N 4096) is
    # compiled in with -D at each size set, into the naive kernel and the output alike
    defines = [name for name in roles if name in module.macros]
    spec = KernelSpec(proc.name, threads, naive_block, args, defines=defines,
                      per_thread=proc.pragma.naive_coarsen,
                      provenance=facts, limits=limits, overridden=overridden,
                      accesses={user(name): extent for name, extent in inferred.items()})
    return _Kernel(spec, guarded, geo.block[:2], roles, inferred, dict(fixed))


def stored_through(proc: GProcedure) -> set[str]:
    """The pointer parameters a store reaches other than as an indexed element, which the
    memory-expression analysis does not list as writes: through a cast
    (``reinterpret_cast<float4 *>(x)[i] = v``, ``((float2 *)y)[i].x = ...``)."""
    from pycparser import c_ast

    pointers = {p.name for p in proc.params if p.is_pointer and p.address_space != "local"}
    out = set()
    for node, _ in walk(proc.body):
        target = node.lvalue if isinstance(node, c_ast.Assignment) else \
            node.expr if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++",
                                                                        "p--") else None
        through_cast = False
        while target is not None and not isinstance(target, c_ast.ID):
            if isinstance(target, c_ast.Cast):
                through_cast = True
                target = target.expr
            elif isinstance(target, c_ast.ArrayRef):
                target = target.name
            elif isinstance(target, c_ast.StructRef):
                target = target.name
            elif isinstance(target, c_ast.UnaryOp) and target.op == "*":
                target = target.expr
            else:
                target = None
        if through_cast and target is not None and target.name in pointers:
            out.add(target.name)
    return out


def _thread_space(proc: GProcedure, given: KernelSpec | None, facts: dict[str, str], user,
                  aliases) -> tuple[tuple[str, str, str], tuple[bool, bool]]:
    """The thread space and whether the code bounds each of x and y: the pragma's, the
    guard's (early return, grid-stride loop: GPragma.global_dim holds whichever applied,
    passes/functional/thread_space.py), or for an unguarded axis a free size
    ``globalDimX``/``globalDimY``: what the launch covers. The row width a written index
    implies (``C[row * W + col]``) is no bound: read as the thread space, it made the
    output's launch cover W columns where the user's covered m < W (a padded leading
    dimension), writing rows the naive kernel never touched; verification, which launched
    the naive kernel on the same W, could not see it. Verification still runs the free size
    at values inside the arrays (:func:`_free_extents`), a padded launch among them."""
    pragma = proc.pragma
    source = pragma.global_dim_source or "inferred"
    bounded = source in ("guard", "grid-stride")
    gx, gy = (_user_expr(_expand(e, aliases), user) for e in pragma.global_dim)
    guarded = (gx is not None and bounded, gy is not None and bounded)
    if gx is None:
        gx = "globalDimX"
    if gy is None:
        gy = "globalDimY" if _uses(proc, "idy", "tidy", "bidy") else "1"
    gz = _user_expr(_expand(pragma.global_dim_z, aliases), user) or ("globalDimZ" if z_used(proc) else "1")
    facts["threads"] = source if any(guarded) or pragma.global_dim[0] else "inferred"
    return (gx, gy, gz), guarded


def _expand(expr: str | None, aliases, depth: int = 0) -> str | None:
    """``expr`` with the locals a guard bounds by replaced by their single definitions
    (``int N = B * T * C; if (idx < N)``): the host knows the sizes, not the locals."""
    if not expr or depth > 8:
        return expr
    return _NAME.sub(lambda m: f"({_expand(to_c(aliases[m.group(0)]), aliases, depth + 1)})"
                     if m.group(0) in aliases else m.group(0), expr)


def _user_expr(expr: str | None, user) -> str | None:
    return _NAME.sub(lambda m: user(m.group(0)), expr) if expr else None


def _uses(proc: GProcedure, *names: str) -> bool:
    from ..ir import PredefId

    return any(isinstance(n, PredefId) and n.name in names for n, _ in walk(proc.body))


def _roles(proc: GProcedure, module: GModule, threads, inferred: dict[str, Extent],
           fixed: dict[str, int], user) -> dict[str, str]:
    """Each size name the kernel's launch and accesses use, with its role: the x, y or z
    extent of the thread space, ``small`` (offsets a thread's index, bounds its taps, or
    bounds its ids from below: a radius, a mask width, LU's step ``k`` in ``j > k``),
    ``residue`` (compared with a remainder: red-black Gauss-Seidel's ``(i + j) % 2 ==
    color``), or ``k`` (a loop extent, a row width). Sizes are the integer parameters and
    host-set integer globals, the macros this compile does not fix, and the free
    thread-space names."""
    roles: dict[str, str] = {}
    sizes = {user(p.name) for p in proc.params if not p.is_pointer and
             (e := element(p.base_type)) is not None and not e.is_float}
    sizes |= set(module.macros) | set(_FREE_DIMS)
    # integers the host sets (``__constant__ int c_n;``): sizes like parameters
    # (spec.with_file_data passes each its size set's value)
    sizes |= {g.name for g in module.globals if g.name in proc.global_args and not g.dims
              and (e := element(g.base_type)) is not None and not e.is_float}
    sizes -= set(fixed)

    rank = {"k": 0, "small": 1, "residue": 2, "factor": 3, "x": 3, "y": 3, "z": 3}

    def add(name: str, role: str) -> None:
        # a thread-space extent over an offset or tap bound over a loop extent or width
        name = user(name)
        if name in sizes and (name not in roles or rank[role] > rank[roles[name]]):
            roles[name] = role

    guarded = proc.pragma.global_dim_source in ("guard", "grid-stride")
    for axis, text in zip("xyz", threads):
        subtracted = _subtracted(text or "")
        factors = _factors(text or "") if guarded else []
        if factors:
            # the innermost factor (``idx % OW``'s, else the last) keeps its tiles: the
            # outputs' full tiles and vectors run along it
            inner = _remainder_of(inferred, factors) or factors[-1]
            factors = [f for f in factors if f != inner]
        for name in _NAME.findall(text or ""):
            # ``Size - 1 - t`` (Rodinia's gaussian: row t eliminated): t shrinks the thread
            # space, an offset, not an extent; as large as Size it would leave no thread
            add(name, "small" if name in subtracted else "factor" if name in factors else axis)
    loops = {lp.iterator for lp in proc.loops if lp.iterator}
    for extent in inferred.values():
        for access in extent.accesses:
            # (the kernel's own loops: not the stand-in loop of a data-dependent index)
            window, shifts = _windows(access.index, {it: upper for it, _, upper, _ in
                                                     access.loops if it in loops})
            for name in shifts:
                add(name, "small")
            taps = _tap_loops(access.index, loops) | window
            for it, lower, upper, _ in access.loops:
                for s in _ordered(lower.free_symbols | upper.free_symbols):
                    add(s.name, "small" if it in taps else "k")
            reversed_axis = _reversed_axis(access.index)
            for s in _ordered(access.index.free_symbols):
                if s.name not in loops:
                    # ``A[N - 1 - i]``: N bounds the thread space along i's axis, it does
                    # not shift it by a radius
                    add(s.name, reversed_axis if reversed_axis and
                        _offset_only(access.index, s) else
                        "small" if _offset_only(access.index, s) else "k")
            for cond in access.conditions:
                for s in _ordered(cond.free_symbols):
                    if s.name not in loops:
                        add(s.name, _condition_role(cond, s))
    return roles


_THREAD_SYMBOLS = {"idx", "idy", "idz", "tidx", "tidy", "tidz", "bidx", "bidy", "bidz"}


def _condition_role(cond, size: sympy.Symbol) -> str:
    """The role a guard of an access gives ``size``: ``residue`` where a conjunct compares it
    with a remainder (``Eq(CMod(i + j, 2), color)``: a value below the modulus, or the test
    never holds), ``small`` where one bounds a thread's id from below by it (``idx > k``: at
    a value past the thread space no thread works), else ``k``."""
    conjuncts = cond.args if isinstance(cond, sympy.And) else (cond,)
    for c in conjuncts:
        if not c.has(size):
            continue
        if isinstance(c, sympy.Eq):
            for side, other in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
                if side == size and isinstance(other, CMod) and other.args[1].is_Integer \
                        and other.args[1] > 1:
                    return "residue"
        if isinstance(c, (sympy.StrictGreaterThan, sympy.GreaterThan, sympy.StrictLessThan,
                          sympy.LessThan)):
            ids = {s.name for s in c.gts.free_symbols} & _THREAD_SYMBOLS
            if ids and c.lts.has(size) and not {s.name for s in c.lts.free_symbols} & \
                    _THREAD_SYMBOLS:
                return "small"
    return "k"


def _factors(text: str) -> list[str]:
    """The sizes of a thread-space extent that is the product of three or more of them
    (``N * K * OH * OW``: a flattened 4-D output, one thread an element), in the order
    written: the outer ones take small values, as problem sizes their product would be past
    any work budget."""
    names = _NAME.findall(text)
    if len(set(names)) < 3 or not re.fullmatch(r"[\s()]*\w+(?:[\s()]*\*[\s()]*\w+)+[\s()]*",
                                                text):
        return []
    return list(dict.fromkeys(names))


def _remainder_of(inferred: dict[str, Extent], sizes: list[str]) -> str:
    """The size of ``sizes`` an access takes the global x id's remainder by (``idx % OW``:
    the innermost dimension of a flattened index), or ''."""
    for extent in inferred.values():
        for access in extent.accesses:
            for m in access.index.atoms(CMod):
                arg, by = m.args
                if isinstance(by, sympy.Symbol) and by.name in sizes and \
                        any(s.name == "idx" for s in arg.free_symbols) and \
                        not arg.atoms(CMod) - {arg} and not any(
                            isinstance(a, sympy.Function) for a in sympy.preorder_traversal(arg)):
                    return by.name
    return ""


def _subtracted(text: str) -> set[str]:
    """The names a thread-space extent (C text) subtracts: linear with a negative
    coefficient, beside a positive term (``Size - 1 - t`` -> {t}; ``N - M`` -> {M})."""
    names = set(_NAME.findall(text))
    if not names:
        return set()
    try:
        expr = sympy.parse_expr(text.replace("/", "//"),
                                local_dict={n: sympy.Symbol(n) for n in names})
    except (sympy.SympifyError, SyntaxError, TypeError, TokenError):
        return set()
    if not isinstance(expr, sympy.Expr):
        return set()            # not arithmetic (``i ^ j`` parses as a logical Xor)
    expr = sympy.expand(expr)
    out = set()
    for name in names:
        coeff = expr.coeff(sympy.Symbol(name), 1)
        if coeff.is_number and coeff < 0 and expr.has(*(sympy.Symbol(n) for n in names - {name})):
            out.add(name)
    return out


def _ordered(symbols) -> list:
    """``symbols`` by name: sizes get their values in an order that does not depend on the
    process's string hashing."""
    return sorted(symbols, key=lambda s: s.name)


def _tap_loops(index: sympy.Expr, loops: set[str]) -> set[str]:
    """The loops of ``index`` whose iterator moves it like a thread id does (the same
    coefficient): the taps of a stencil or filter around each thread's element."""
    expanded = sympy.expand(index)
    coefficients = {s.name: expanded.coeff(s) for s in expanded.free_symbols}
    ids = [c for n, c in coefficients.items() if n in _IDS and c != 0]
    return {n for n, c in coefficients.items() if n in loops and c != 0 and c in ids}


def _dimensions(index: sympy.Expr) -> list[list[sympy.Expr]]:
    """The terms of each dimension of a row-major index, innermost first: ``W*(H*(C*n + c) +
    kh - pad + stride*oh) + kw - pad + stride*ow`` is [[kw, -pad, stride*ow], [kh, -pad,
    stride*oh], [C*n, c]] (a term times a sum is the next dimension's row)."""
    out = []
    for _ in range(16):
        terms = list(sympy.Add.make_args(index))
        rows = [t for t in terms if isinstance(t, sympy.Mul) and
                sum(isinstance(f, sympy.Add) for f in t.args) == 1]
        if len(rows) != 1:
            break
        out.append([t for t in terms if t is not rows[0]])
        index = next(f for f in rows[0].args if isinstance(f, sympy.Add))
    out.append(list(sympy.Add.make_args(index)))
    return out


def _windows(index: sympy.Expr, loops: dict[str, sympy.Expr]) -> tuple[set[str], set[str]]:
    """(the tap loops, the sizes that shift or scale a window) of a convolution's index, a
    dimension at a time: where a dimension adds a loop iterator to a thread's coordinate
    (``ih = oh * stride - pad + kh * dilation``), the iterator's loop runs over a window's
    taps, and the sizes that scale the iterator (dilation), shift the window (pad) or scale
    the coordinate (stride: of a remainder, ``stride * (i % OW)``, or of the dimension's one
    coordinate) are small ones. At a problem size's value each multiplies the arrays and
    the work: a direct convolution was verified at KH = 112, pad = 176, stride = 192, which
    ran past the time limit (unverified). A loop over a whole dimension is no window: in
    ``C * n + c`` the coordinate's multiplier is the loop's bound (a sum over channels)."""
    taps: set[str] = set()
    shifts: set[str] = set()

    def names(e: sympy.Expr) -> set[str]:
        return {s.name for s in e.free_symbols}

    for terms in _dimensions(index):
        # (a product of sums, ``(K + 2)*(N - idx - 1)``, is a row of an outer dimension
        # that _dimensions could not split off: no coordinate of this one)
        coords = [t for t in terms if names(t) & _THREAD_SYMBOLS and
                  not any(isinstance(f, sympy.Add) for f in sympy.Mul.make_args(t))]
        steps = [t for t in terms if names(t) & set(loops) and not names(t) & _THREAD_SYMBOLS]
        # (a block id's factor, ``BLOCK_SIZE*bidx + tidx``, is the block size: no stride)
        scales = {f for t in coords if not names(t) & {"bidx", "bidy", "bidz"}
                  for f in sympy.Mul.make_args(t)
                  if isinstance(f, sympy.Symbol) and f.name not in _THREAD_SYMBOLS}
        found = set()
        for t in steps:
            factors = [f for f in sympy.Mul.make_args(t) if not f.is_number]
            its = [f for f in factors if isinstance(f, sympy.Symbol) and f.name in loops]
            # an iterator scaled by a size beside an unscaled coordinate walks rows (BiCG's
            # ``A[i * ny + j]``), one scaled (dilation) beside a strided coordinate is a tap
            if len(its) == 1 and all(isinstance(f, sympy.Symbol) for f in factors) and \
                    loops[its[0].name] not in scales and (len(factors) == 1 or scales):
                found.add(its[0].name)
                shifts |= {f.name for f in factors if f is not its[0]}
        if not coords or not found:
            continue
        taps |= found
        for t in terms:
            factors = [f for f in sympy.Mul.make_args(t) if not f.is_number]
            if len(factors) == 1 and isinstance(factors[0], sympy.Symbol) and \
                    factors[0].name not in set(loops) | _THREAD_SYMBOLS:
                shifts.add(factors[0].name)                     # -pad
        for t in coords:
            factors = [f for f in sympy.Mul.make_args(t) if not f.is_number]
            sizes = [f for f in factors if isinstance(f, sympy.Symbol) and
                     f.name not in _THREAD_SYMBOLS]
            atoms = [f for f in factors if f not in sizes]
            if len(sizes) == 1 and len(atoms) == 1 and (
                    isinstance(atoms[0], CMod) or len(coords) == 1):
                shifts.add(sizes[0].name)                       # stride * ow
    return taps, shifts


def _reversed_axis(index: sympy.Expr) -> str:
    """The axis of a global thread id that ``index`` walks backwards (``N - 1 - idx``:
    'x'), or ''."""
    expanded = sympy.expand(index)
    for name, axis in (("idx", "x"), ("idy", "y"), ("idz", "z")):
        symbol = next((s for s in expanded.free_symbols if s.name == name), None)
        coefficient = expanded.coeff(symbol) if symbol is not None else sympy.Integer(0)
        if coefficient.is_number and coefficient < 0:
            return axis
    return ""


def _offset_only(index: sympy.Expr, symbol: sympy.Symbol) -> bool:
    """Whether ``symbol`` only shifts an index that a thread id moves (``i - r``)."""
    expanded = sympy.expand(index)
    has_id = any(s.name in _IDS for s in expanded.free_symbols)
    return has_id and all(not (t.has(symbol) and len(t.free_symbols) > 1)
                          for t in sympy.Add.make_args(expanded))


def _scalar(name: str, elem) -> str:
    """A value for a scalar that is not a size (alpha, beta, eps): drawn for the name, of its
    type, away from the values that make a kernel degenerate (0 and 1)."""
    draw = zlib.crc32(name.encode()) % 1000 / 1000
    if elem is not None and not elem.is_float:
        return str(2 + int(draw * 5))
    return f"{0.5 + draw * 0.4 if draw < 0.5 else 1.1 + draw * 0.8:.3f}"


# ------------------------------------------------------------------ choosing the sizes
def _size_sets(found: dict[str, _Kernel], finals: dict[str, GProcedure]
               ) -> dict[str, dict[str, int]]:
    tiles = {"x": 1, "y": 1}
    naive = {"x": 1, "y": 1}
    for name, k in found.items():
        proc = finals.get(name)
        if proc is None:
            continue
        px, py = k.spec.per_thread
        bx, by = int(k.naive_block[0]) * px, int(k.naive_block[1]) * py
        naive["x"], naive["y"] = math.lcm(naive["x"], bx), math.lcm(naive["y"], by)
        lx, ly = proc.launch_block or (bx, by)
        cx, cy = proc.coarsen
        mx, my = proc.launch_multiple or (1, 1)
        tiles["x"] = math.lcm(tiles["x"], int(lx) * cx // proc.lanes, int(bx), mx)
        tiles["y"] = math.lcm(tiles["y"], int(ly) * cy, int(by), my)
    tiles = {a: min(t, MAX_TILE) for a, t in tiles.items()}
    tiles["k"] = min(math.lcm(tiles["x"], tiles["y"]), MAX_TILE)
    roles: dict[str, str] = {}
    # sizes an unguarded axis launches exactly -> that axis (whose naive block they keep a
    # multiple of, whatever role the kernel's indices give them)
    bound: dict[str, str] = {}
    for k in found.values():
        for name, role in k.roles.items():
            if name not in roles or roles[name] in ("k", "small") and role in "xyz":
                roles[name] = role
        for axis, is_guarded, text in zip("xy", k.guarded, k.spec.threads[:2]):
            if not is_guarded:
                bound.update({n: axis for n in _NAME.findall(text or "") if n not in bound})
    test, odd = _choose(roles, tiles, naive, bound)
    while _work(found, odd) > WORK_BUDGET or _elements(found, odd) > ELEMENT_BUDGET:
        # loop extents and widths first, then the thread space, in smaller tiles (an unguarded
        # axis keeps whole naive blocks)
        floor = {"k": MIN_TILE, "x": max(MIN_TILE, naive["x"] if bound else 1),
                 "y": max(MIN_TILE, naive["y"] if bound else 1)}
        shrink = [a for a in ("k", "x", "y") if tiles[a] // 2 >= floor[a]]
        if not shrink:
            break
        axis = max(shrink, key=lambda a: (tiles[a], a == "k"))
        tiles[axis] //= 2
        test, odd = _choose(roles, tiles, naive, bound)
    sets = {"inferred": test}
    if odd != test:
        sets["inferred-odd"] = odd
    _unraced(found, sets)
    _within_tables(found, sets)
    if sets.get("inferred-odd") == test:
        del sets["inferred-odd"]
    return sets


#: Loop iterations (over all threads) one run of a kernel may take at the inferred sizes, and
#: the smallest tile sizes are cut to to stay under it: a check takes seconds on PoCL.
WORK_BUDGET = 3 * 10 ** 7
#: Array elements the arguments of one kernel may take at the inferred sizes (the tiles are
#: cut to stay under it as for the work): a direct convolution's input at the product of
#: four sizes was past what verification allocates.
ELEMENT_BUDGET = 1 << 24
MIN_TILE = 16


def _choose(roles: dict[str, str], tiles: dict[str, int], naive: dict[str, int],
            bound: dict[str, str]) -> tuple[dict[str, int], dict[str, int]]:
    """The test and odd values of each size (see the module docstring)."""
    test: dict[str, int] = {}
    odd: dict[str, int] = {}

    def distinct(value: int, taken: dict[str, int], step: int) -> int:
        while value in taken.values():      # W = K would hide a swap of the two
            value += step
        return value

    for i, (name, role) in enumerate(roles.items()):
        if role == "small":
            test[name], odd[name] = SMALL
            continue
        if role == "residue":
            test[name], odd[name] = RESIDUES
            continue
        if role == "factor":
            n = sum(1 for r in list(roles.values())[:i] if r == "factor")
            test[name], odd[name] = FACTORS[0][n % 6], FACTORS[1][n % 6]
            continue
        if role == "z":
            test[name], odd[name] = Z_SIZES
            continue
        tile = tiles.get(role, tiles["k"])
        base = MULTIPLES[i % len(MULTIPLES)] * tile
        test[name] = base = distinct(base, test, tile)
        if name in bound:
            step = naive[bound[name]]
            odd[name] = distinct(base + step if step < tile else base + tile, odd, step)
        else:
            odd[name] = int(sympy.nextprime(distinct(base + tile // 2, odd, 1)))
    return test, odd


def _elements(found: dict[str, _Kernel], sizes: dict[str, int]) -> int:
    """The most array elements one kernel's arguments take at ``sizes`` (0 where an extent
    cannot be evaluated)."""
    worst = 0
    for k in found.values():
        values = {**k.fixed, **sizes}
        total = 0
        for extent in k.extents.values():
            try:
                total += int(extent(values))
            except (ValueError, ZeroDivisionError, TypeError, KeyError):
                pass
        worst = max(worst, total)
    return worst


def _work(found: dict[str, _Kernel], sizes: dict[str, int]) -> int:
    """About how many loop iterations the costliest kernel runs at ``sizes``: its threads times
    the trip counts of the deepest loop nest around an access (a bound that depends on a
    thread or an outer iterator counted at the largest size: an over-estimate)."""
    worst = 0
    for k in found.values():
        values = {**k.fixed, **sizes}
        try:
            threads = math.prod(max(1, int(evaluate(t, values))) for t in k.spec.threads)
        except (ValueError, ZeroDivisionError):
            continue
        largest = max(values.values(), default=1)
        trips = 1
        for extent in k.extents.values():
            for access in extent.accesses:
                count = 1
                for _, lower, upper, _ in access.loops:
                    # a clamped bound (``k < min(K, 64)``: IntMin) as the number it is
                    span = (upper - lower).replace(IntMin, sympy.Min).replace(IntMax, sympy.Max)
                    span = span.xreplace({s: sympy.Integer(values.get(s.name, largest))
                                          for s in span.free_symbols})
                    try:
                        count *= max(1, int(span))
                    except TypeError:           # still symbolic (an opaque value)
                        count *= largest
                trips = max(trips, count)
        worst = max(worst, threads * trips)
    return worst


# ------------------------------------------------------------------ provenance
def facts(spec: FileSpec, kernel: KernelSpec, sets: dict[str, dict[str, int]],
          macros: dict[str, int]) -> dict:
    """What verification ran ``kernel`` with and where each fact came from (``inferred``,
    ``pragma``, ``metadata``, ``guard``, ``grid-stride``, ``-D``...), for ``--json``,
    ``--explain`` and the report: the size sets, the thread space, the naive block, each
    array's element count per set and each scalar's value."""
    origin = "metadata" if spec.origin not in ("pragma", "inferred") else None
    source = kernel.provenance

    def where(key: str, default: str) -> str:
        return origin or source.get(key, default)

    arrays = {}
    for arg in kernel.args:
        if arg.role not in ("in", "out", "inout"):
            continue
        counts = {}
        for name, sizes in sets.items():
            try:
                counts[name] = math.prod(int(evaluate(d, {**macros, **sizes}))
                                         for d in arg.shape)
            except (ValueError, ZeroDivisionError, TypeError):
                counts[name] = None
        arrays[arg.name] = {"source": where(f"shape {arg.name}", "pragma"),
                            "shape": [str(d) for d in arg.shape], "elements": counts}
        extent = kernel.overridden.get(arg.name)
        if extent is not None and not extent.why:
            own = {}
            for name, sizes in sets.items():
                try:
                    own[name] = extent({**macros, **sizes})
                except ValueError:
                    own[name] = None
            # the pragma's shape and the kernel's accesses disagree (where both are known)
            if own != counts and None not in own.values():
                arrays[arg.name]["inferred_elements"] = own
    scalars = {a.name: {"source": where(f"value {a.name}", "pragma"), "value": a.value}
               for a in kernel.args if a.role == "scalar"}
    return {"sizes": {"source": origin or spec.provenance.get("sizes", "pragma"),
                      "sets": sets},
            "threads": {"source": where("threads", "pragma"),
                        "value": list(kernel.threads) if kernel.threads else None},
            "block": {"source": where("block", "pragma"),
                      "value": list(kernel.block) if kernel.block else None},
            "arrays": arrays, "scalars": scalars}


def facts_line(facts: dict) -> str:
    """``facts`` as one line of ``--explain``."""
    sets = "; ".join(f"{name}: " + ", ".join(f"{k}={v}" for k, v in sizes.items())
                     for name, sizes in facts["sizes"]["sets"].items())
    parts = [f"sizes {facts['sizes']['source']} ({sets or 'none to choose'})"]
    if facts["threads"]["value"]:
        parts.append(f"thread space ({', '.join(facts['threads']['value'])}) from "
                     f"{facts['threads']['source']}")
    for name, a in facts["arrays"].items():
        counts = "/".join(str(c) for c in a["elements"].values())
        own = a.get("inferred_elements")
        disagree = "; the kernel's accesses reach " + "/".join(str(c) for c in own.values()) \
            + ": they disagree" if own else ""
        parts.append(f"{name} {counts} elements ({a['source']}{disagree})")
    for name, v in facts["scalars"].items():
        parts.append(f"{name}={v['value']} ({v['source']})")
    return "; ".join(parts)
