"""Predefined ids (paper 002, functional pass (2)).

Rewrites CUDA built-ins into the IR's unified ids: ``threadIdx.x`` -> tidx, ``blockIdx.y`` ->
bidy, ``blockDim.x`` -> blockDimX, and ``blockIdx.x*blockDim.x+threadIdx.x`` in any operand order
-> idx. The thread space is read later, from the canonical form of the kernel (the
thread-space pass, thread_space.py).

Two more facts make every naive thread part of the launch (issue 11):

* an axis the kernel indexes by ``blockIdx`` alone (``int row = blockIdx.y;`` with no
  threadIdx.y, blockDim.y or gridDim.y) was launched with one thread per block along it; with
  a block of 1 there ``blockIdx.y == blockIdx.y * blockDim.y + threadIdx.y``, so it is
  rewritten to the global id idy (GPragma.block_id_axes records it: the naive launch keeps
  block 1 there, launch.default_block) and the passes may then reshape it like any other;
* z ids (blockIdx.z, threadIdx.z, get_global_id(2)...) stay CUDA built-ins that the passes do
  not transform (launch.py).

A kernel in the CUDA samples' style indexes by a compile-time block constant instead of
blockDim (``blockIdx.x * BLOCK_SIZE + threadIdx.x``, BLOCK_SIZE an integer literal or a macro
the compile fixes, with no blockDim.x): it computes one output per thread only when its blocks
are BLOCK_SIZE wide, and its author launches it so. Where nothing gives the naive block
(metadata, a pragma, the host code's launches) or what does agrees, the constant is taken as
the block size along that axis (GPragma.block_constant: launch.default_block launches the
naive kernel so), and the thread-ids canonicalization pass reads the index as the global id.
The naive kernel that verification runs keeps the index as written (this pass only records
the block), so that verification checks that reading under the naive launch.
"""
from __future__ import annotations

from pycparser import c_ast

from ...analysis.guards import is_id
from ...ir import GProcedure, PredefId, PREDEFINED_IDS
from ...ir.cgen import to_c
from ...ir.rewrite import identifiers, map_nodes, walk
from ...ir.typenames import is_wide_integer
from ..manager import Pass, PassContext
from .thread_id_forms import (BUILTIN_IDS, GLOBAL_IDS, alias_resolver, block_constant_index,
                              builtin_aliases, constant_value)

def _global_id(node: c_ast.Node) -> str | None:
    """'idx'/'idy' if node is block*dim + thread in some operand order."""
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "+"):
        return None
    for mul, tid in ((node.left, node.right), (node.right, node.left)):
        if not (isinstance(mul, c_ast.BinaryOp) and mul.op == "*"):
            continue
        for bid, dim, thread, result in GLOBAL_IDS.values():
            if is_id(tid, thread) and ((is_id(mul.left, bid) and is_id(mul.right, dim)) or
                                       (is_id(mul.left, dim) and is_id(mul.right, bid))):
                return result
    return None


def to_predefined(node: c_ast.Node, wide: set[str] | None = None) -> c_ast.Node:
    """``node`` with CUDA's built-in ids as the IR's (module docstring); also for a helper's
    value written into a kernel (canonicalize/inline_helpers.py). The global ids computed
    in 64 bits (an operand cast to a 64-bit integer: ``(int64_t)blockIdx.x * blockDim.x +
    threadIdx.x``) are added to ``wide``."""
    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.StructRef) and n.type == "." and \
                isinstance(n.name, c_ast.ID) and isinstance(n.field, c_ast.ID):
            key = (n.name.name, n.field.name)
            if key in BUILTIN_IDS:
                return PredefId(BUILTIN_IDS[key], n.coord)
        if isinstance(n, c_ast.Cast) and isinstance(n.expr, PredefId) and \
                to_c(n.to_type) == "int":
            return n.expr          # ids are int already: (int)get_global_id(0)
        gid = _global_id(n)
        if gid and wide is not None and any(
                isinstance(c, c_ast.Cast) and is_wide_integer(c.to_type)
                for m in (n.left, n.right) if isinstance(m, c_ast.BinaryOp)
                for c in (m.left, m.right)):
            wide.add(gid)
        return PredefId(gid, n.coord) if gid else n

    return map_nodes(node, fn)


class Predefined(Pass):
    name = "predefined"
    requires = ()

    def run(self, proc: GProcedure, ctx: PassContext) -> None:
        to_predefined(proc.body, proc.wide_ids)
        self._block_id_axes(proc, ctx)
        self._block_constants(proc, ctx)
        self._host_block(proc, ctx)
        used = name_ids(proc)
        ctx.remark("analysis", self.name, proc,
                   "thread ids: " + (", ".join(used) if used else "none"))

    def _block_id_axes(self, proc: GProcedure, ctx: PassContext) -> None:
        """Rewrite an axis indexed by blockIdx alone into its global id (module docstring)."""
        used = ids_used(proc)
        axes = ""
        for axis, block_dim in zip("xy", proc.pragma.block_dim):
            bid, dim, tid, gid = GLOBAL_IDS[axis]
            grid = "gridDim" + axis.upper()
            if bid in used and not used & {dim, tid, gid, grid} and block_dim in (None, "1"):
                axes += axis
        if not axes:
            return

        def fn(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, PredefId) and node.name in ("bidx", "bidy") and \
                    node.name[-1] in axes:
                return PredefId("id" + node.name[-1], node.coord)
            return node

        map_nodes(proc.body, fn)
        proc.pragma.block_id_axes = axes
        ctx.remark("analysis", self.name, proc, "indexed by blockIdx alone along "
                   f"{' and '.join(axes)} (one thread per block there in the naive launch): "
                   "read as the global id, " + ", ".join(f"blockIdx.{a} -> id{a}"
                                                         for a in axes))

    def _block_constants(self, proc: GProcedure, ctx: PassContext) -> None:
        """Take a block constant of the kernel's index as the naive block along its axis
        (module docstring), or say why not."""
        aliases = builtin_aliases(proc)
        found: dict[str, list[c_ast.Node]] = {"x": [], "y": []}
        texts: dict[str, str] = {}
        terms: dict[str, list[tuple[c_ast.Node, c_ast.Node | None]]] = {"x": [], "y": []}
        for node, parent in walk(proc.body):
            term = block_constant_index(node, alias_resolver(aliases))
            if term is not None:
                found[term.axis].append(term.constant)
                terms[term.axis].append((node, parent))
                texts.setdefault(term.axis, to_c(node))
        if not any(found.values()):
            return
        module = ctx.module
        used = ids_used(proc)
        block = list(proc.pragma.block_constant)
        coarsened = list(proc.pragma.coarsened)
        unknown: list[str] = []
        launched = any(site.kernel == proc.name for site in module.launch_sites)
        for i, axis in enumerate("xy"):
            if not found[axis]:
                continue
            dim = GLOBAL_IDS[axis][1]
            names = sorted({to_c(k) for k in found[axis]})
            values = {constant_value(k, proc, module) for k in found[axis]}
            c = next(iter(values)) if len(values) == 1 else None
            why, blind = "", False
            if None in values:
                name = next(to_c(k) for k in found[axis]
                            if constant_value(k, proc, module) is None)
                why = (f"{name} is a #ifndef default that a build may override"
                       if name in module.overridable else
                       f"{name} is not an integer the compile fixes")
            elif c is None:
                why = f"the index uses different constants ({', '.join(names)})"
                blind = True
            elif dim in used:
                why = f"the kernel also reads blockDim.{axis}"
            elif not 1 <= c <= 1024:
                why = f"{c} is not a block size"
                blind = True
            elif (stepped := _stepped_by_loop(proc, terms[axis], c, module, GLOBAL_IDS[axis][2])):
                what = "columns" if axis == "x" else "rows"
                name, step = stepped
                why = (f"the kernel adds the loop iterator {name} to it, so that a thread "
                       f"covers several {what} (its block along {axis} is a fraction of {c}: "
                       "a coarsened kernel)")
                if step and 1 < step <= c and c % step == 0:
                    # the launch the author's loop implies: step-wide blocks, c / step rows
                    # a thread; read so unless the pragma or the host code say otherwise (a
                    # step of 1 would mean one-thread blocks, which no author indexes by
                    # threadIdx: a window over neighbours, ``s[threadIdx.x + k]``, is likelier)
                    given = proc.pragma.block_dim[i]
                    disagree = (f"the naive launch's block is {given} along {axis} (metadata "
                                f"or pragma), not {step}") \
                        if given is not None and given != str(step) else \
                        _host_block_disagrees(proc, module, i, step)
                    if not disagree:
                        coarsened[i] = (step, c // step)
                        ctx.remark("analysis", self.name, proc, f"{texts[axis]}: the loop over "
                                   f"{name} from 0 to {names[0]} = {c} by {step}: the naive "
                                   f"block along {axis} is {step} threads, each covering "
                                   f"{c // step} {what} (a coarsened kernel; the optimization "
                                   "passes keep its launch)")
                        continue
                    why += f"; {disagree}"
                else:
                    blind = True
            elif proc.pragma.block_dim[i] is not None and proc.pragma.block_dim[i] != str(c):
                why = (f"the naive launch's block is {proc.pragma.block_dim[i]} along {axis} "
                       "(metadata or pragma), not " + str(c))
            else:
                # an instance's own template argument (MatrixMulCUDA<16>'s BLOCK_SIZE): the
                # host chose the instance for its block, also where that block is a variable
                instance = set(names) <= set(proc.instance_constants)
                why = _host_block_disagrees(proc, module, i, c, unreadable_ok=instance)
            if why:
                ctx.remark("missed", self.name, proc, f"{texts[axis]}: {names[0]} not taken as "
                           f"the block size along {axis}: {why}")
                if blind and proc.pragma.block_dim[i] is None and not launched:
                    unknown.append(f"{texts[axis]} along {axis}: {why}")
                continue
            block[i] = c
        proc.pragma.coarsened = (coarsened[0], coarsened[1])
        proc.pragma.launch_unknown = "; ".join(unknown)
        sizes = [b or (cb[0] if cb else None) for b, cb in zip(block, coarsened)]
        if sizes[0] and sizes[1] and sizes[0] * sizes[1] > 1024:
            proc.pragma.coarsened = (None, None)
            ctx.remark("missed", self.name, proc, f"block constants {sizes[0]} x {sizes[1]} "
                       "not taken as the block: more than 1024 threads")
            return
        if block[0] and block[1] and block[0] * block[1] > 1024:
            ctx.remark("missed", self.name, proc, f"block constants {block[0]} x {block[1]} "
                       "not taken as the block: more than 1024 threads")
            return
        if block == [None, None]:
            return
        proc.pragma.block_constant = (block[0], block[1])
        ctx.remark("analysis", self.name, proc, "; ".join(
            f"{texts[a]}: {sorted({to_c(k) for k in found[a]})[0]} = {b} taken as the block "
            f"size along {a} (no blockDim.{a}: the naive launch has {b}-wide blocks there"
            + (f"; the argument of the template instance {proc.instance_of}, which the host "
               "chooses for its block)" if proc.instance_constants and
               {to_c(k) for k in found[a]} <= set(proc.instance_constants) else ")")
            for a, b in zip("xy", block) if b))


    def _host_block(self, proc: GProcedure, ctx: PassContext) -> None:
        """The host code's block as the naive block of a kernel whose meaning depends on its
        block (it reads its thread or block ids, or the block size, on their own: shared
        memory sized for the block, a reduction by threadIdx), where nothing else gives the
        block and every launch in the file agrees on one naiveopt can read: verification
        then runs the naive kernel as the user's program does, and the header gives that
        launch (the samples' transpose launched with 32x8 blocks was run on the default
        16x16, where its rows overlap)."""
        from ...frontend.launch_sites import launch_block

        if proc.pragma.block_dim != (None, None) or any(proc.pragma.coarsened) or \
                proc.pragma.block_id_axes:
            return
        if not ids_used(proc) & {"tidx", "tidy", "bidx", "bidy", "blockDimX", "blockDimY"}:
            return
        module = ctx.module
        sites = [s for s in module.launch_sites if s.kernel == proc.name]
        blocks = {launch_block(s, module.host_code, module.fixed) for s in sites}
        if len(blocks) != 1 or None in blocks:
            return
        (block,) = blocks
        if proc.max_threads is not None and block[0] * block[1] * block[2] > proc.max_threads:
            return
        if any(c is not None and c != b for c, b in zip(proc.pragma.block_constant, block)):
            return                      # (a block constant the launch disagrees with: kept)
        proc.pragma.block_dim = (str(block[0]), str(block[1]))
        if block[2] > 1:
            proc.pragma.block_dim_z = str(block[2])
        ctx.remark("analysis", self.name, proc, f"the naive block is the host code's launch "
                   f"block ({', '.join(map(str, block))}, line "
                   f"{', '.join(str(s.line) for s in sites)}): the kernel reads its thread "
                   "ids or block size on their own")


def _stepped_by_loop(proc: GProcedure, terms: list[tuple[c_ast.Node, c_ast.Node | None]],
                     c: int, module, tid: str) -> tuple[str, int | None] | None:
    """(name, step) of a loop iterator running from 0 to the block constant ``c`` that the
    kernel adds to a block-constant index (the index itself, a local it is stored in, or the
    thread id ``tid`` of its axis: ``tile[threadIdx.y + j]``),
    step None where it is not a constant; None if there is no such iterator. ``y + j`` with
    ``j`` stepping through the tile (the NVIDIA blog's transpose, ``blockIdx.y * TILE_DIM +
    threadIdx.y``, ``for (j = 0; j < TILE_DIM; j += BLOCK_ROWS)``, launched with TILE_DIM x
    BLOCK_ROWS threads) means each thread covers TILE_DIM / BLOCK_ROWS rows: the block along
    that axis is the step, not the constant, and reading the index as the global id under a
    TILE_DIM-row block would change what the kernel computes under its real launch. A
    stencil's taps (``y + dy``, dy over -R..R) are no such loop."""
    nodes = {id(node) for node, _ in terms}
    # locals a block-constant index is stored in (``int y = ...;`` or ``y = ...;``, also
    # where the kernel later reuses the local: the blog's transpose reassigns y)
    names = {parent.name for _, parent in terms if isinstance(parent, c_ast.Decl)} | \
        {parent.lvalue.name for _, parent in terms if isinstance(parent, c_ast.Assignment)
         and isinstance(parent.lvalue, c_ast.ID)}
    iterators: dict[str, int | None] = {}
    for node, _ in walk(proc.body):
        if not (isinstance(node, c_ast.For) and isinstance(node.cond, c_ast.BinaryOp) and
                node.cond.op == "<" and isinstance(node.cond.left, c_ast.ID) and
                constant_value(node.cond.right, proc, module) == c):
            continue
        name = node.cond.left.name
        starts = [n.init if isinstance(n, c_ast.Decl) else n.rvalue
                  for n, _ in walk(node.init) if node.init is not None and (
                      isinstance(n, c_ast.Decl) and n.name == name and n.init is not None or
                      isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and
                      n.lvalue.name == name)]
        if starts and all(constant_value(v, proc, module) == 0 for v in starts):
            iterators[name] = _constant_step(node.next, name, proc, module)

    def is_index(n: c_ast.Node) -> bool:
        while isinstance(n, c_ast.Cast):
            n = n.expr
        return id(n) in nodes or (isinstance(n, c_ast.ID) and n.name in names) or \
            (isinstance(n, PredefId) and n.name == tid)

    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.BinaryOp) and node.op in "+-":
            for a, b in ((node.left, node.right), (node.right, node.left)):
                while isinstance(b, c_ast.Cast):
                    b = b.expr
                if is_index(a) and isinstance(b, c_ast.ID) and b.name in iterators:
                    return b.name, iterators[b.name]
    return None


def _constant_step(node: c_ast.Node | None, name: str, proc: GProcedure, module) -> int | None:
    """The positive constant a loop's increment ``name++`` / ``name += S`` / ``name = name +
    S`` adds to its iterator, or None."""
    if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++") and \
            isinstance(node.expr, c_ast.ID) and node.expr.name == name:
        return 1
    if not (isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and
            node.lvalue.name == name):
        return None
    step = None
    if node.op == "+=":
        step = constant_value(node.rvalue, proc, module)
    elif node.op == "=" and isinstance(node.rvalue, c_ast.BinaryOp) and node.rvalue.op == "+":
        left, right = node.rvalue.left, node.rvalue.right
        if isinstance(left, c_ast.ID) and left.name == name:
            step = constant_value(right, proc, module)
        elif isinstance(right, c_ast.ID) and right.name == name:
            step = constant_value(left, proc, module)
    return step if step and step > 0 else None


def _host_block_disagrees(proc: GProcedure, module, axis: int, c: int,
                          unreadable_ok: bool = False) -> str:
    """Why the host code's launches of ``proc`` do not show a block of ``c`` along ``axis``,
    or '' when they all do (or there are none); ``unreadable_ok``: a launch whose block
    naiveopt cannot evaluate does not disagree."""
    from ...frontend.launch_sites import launch_block

    for site in module.launch_sites:
        if site.kernel != proc.name:
            continue
        if site.problem or len(site.config) < 2:
            return f"line {site.line}: the host code's use of the kernel is not a launch " \
                   "naiveopt can read"
        block = launch_block(site, module.host_code, module.fixed)
        if block is None and unreadable_ok:
            continue
        if block is None:
            return (f"line {site.line}: the host code launches it with block "
                    f"'{site.config[1].strip()}', which naiveopt cannot evaluate")
        if block[axis] != c:
            return (f"line {site.line}: the host code launches it with {block[axis]} "
                    f"threads along {'xy'[axis]}, not {c}")
    return ""


def name_ids(proc: GProcedure) -> list[str]:
    """Give each predefined id the kernel uses a C name that no identifier of the kernel
    takes (``idx``, else ``idx_1``...): the postprocessor declares them under these names.
    Ids named before keep their names. Returns the ids used, sorted."""
    used = sorted({n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)})
    taken = identifiers(proc.func) | set(proc.predefined_names.values())
    for name in used:
        if name in proc.predefined_names:
            continue
        var, k = name, 0
        while var in taken:
            k += 1
            var = f"{name}_{k}"
        proc.predefined_names[name] = var
        taken.add(var)
    return used


def ids_used(proc: GProcedure) -> set[str]:
    """The predefined ids the kernel uses."""
    return {n.name for n, _ in walk(proc.body) if isinstance(n, PredefId)}


__all__ = ["Predefined", "PREDEFINED_IDS"]
