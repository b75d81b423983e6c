"""Launch geometry: the block size and grid a kernel needs, as functions of the problem size.

The thread space (gx, gy, gz) is what the naive kernel needs (from metadata, pragma, #define
globalDimX/Y or its bounds guard). A kernel whose threads each compute (cx, cy) outputs (thread
merge) is launched with ceil(gx / (bx*cx)) x ceil(gy / (by*cy)) x ceil(gz / bz) blocks of
(bx, by, bz) threads. The z dimension is never transformed: passes keep the naive block z (1
unless metadata or a pragma says otherwise) and a kernel indexed by blockIdx.z is launched with
one block per z index, so every naive thread is run.

Geometry is kept as small expression trees (:func:`parse`) over the problem sizes, so that the
header can print C a host program can paste (``(nx - 1 + 63) / 64``, :func:`to_c`), the sidecar
can carry a form JSON consumers evaluate, and verification launches from the same trees
(:func:`evaluate`, C integer semantics). Kernels that read arrays through textures
(``--memory texture``) also say how the host makes each texture object / image from its array.
"""
from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, replace

from .ir import GlobalVar, GModule, GProcedure, PredefId, atomics, dynamic_shared, structs
from .ir.globals import describe, elements, kernel_globals, parameter_text
from .ir.nodes import TEXTURE_ELEMENTS
from .ir.rewrite import walk
from .ir.textures import TextureParam
from .ir.typenames import without_integer_casts
from .targets import NAIVE_BLOCK_1D, NAIVE_BLOCK_2D

# ------------------------------------------------------------------- geometry expressions
#: An expression tree: {"const": int} | {"var": name} | {"op": OP, "args": [tree, ...]} with OP
#: one of + - * / % (C integer semantics: / truncates toward zero), "neg", "ceil_div" (a / b
#: rounded up, for a >= 0 and b > 0), "min", "max". docs/kernel-metadata.md documents it.
Tree = dict

_PY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/",
           ast.Mod: "%"}
#: The suffix a C name that is a Python keyword carries while Python's parser reads it.
_KW = "__kw"
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def parse(text: str | int) -> Tree | None:
    """The tree of a thread-space expression (C or metadata arithmetic on names and integer
    literals, ``ceil(a, b)``, ``min``/``max``), or None when it is not in that subset (a cast,
    a call, a float): such a geometry is printed as text only and cannot be evaluated."""
    if isinstance(text, int):
        return {"const": text}
    # a cast to an integer type (``(long) w``, ``(size_t)(n / 2)``) changes no size: sizes
    # are non-negative and in range, and the tree's arithmetic is C's integer arithmetic
    text = without_integer_casts(str(text))
    # C names that are Python keywords (a size parameter named 'class') parse under a suffix
    # (and a struct's member so named: ``o.class``)
    text = re.sub(r"(?<!\w)[A-Za-z_]\w*",
                  lambda m: m.group(0) + _KW if keyword.iskeyword(m.group(0)) else m.group(0),
                  str(text))
    try:
        node = ast.parse(text.strip(), mode="eval").body
        return _from_py(node)
    except (SyntaxError, ValueError):
        return None


def _from_py(node: ast.AST) -> Tree:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {"const": node.value}
    if isinstance(node, ast.Name):
        return {"var": node.id.removesuffix(_KW)}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        # a member of a struct parameter (ir/structs.py): ``p.n``
        return {"var": f"{node.value.id.removesuffix(_KW)}.{node.attr.removesuffix(_KW)}"}
    if isinstance(node, ast.BinOp) and type(node.op) in _PY_OPS:
        return {"op": _PY_OPS[type(node.op)], "args": [_from_py(node.left),
                                                      _from_py(node.right)]}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _from_py(node.operand)
        return {"op": "neg", "args": [inner]} if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = {"ceil": "ceil_div"}.get(node.func.id, node.func.id)
        if name in ("ceil_div", "min", "max") and len(node.args) == 2:
            return {"op": name, "args": [_from_py(a) for a in node.args]}
    raise ValueError("not a geometry expression")


def evaluate(tree: Tree, sizes: dict[str, int]) -> int:
    """The value of ``tree`` at ``sizes``, with C's integer semantics (the reference evaluator
    of the sidecar's ``*_tree`` fields; verification, profiling and benchmarks launch with
    it). Raises ValueError for an unknown name or a bad tree."""
    if "const" in tree:
        return int(tree["const"])
    if "var" in tree:
        name = tree["var"]
        if name not in sizes and "." in name:      # ``p.n``, read as a scalar (ir/structs.py)
            name = structs.member_symbol(*name.split(".", 1))
        if name not in sizes:
            raise ValueError(f"unknown name {tree['var']!r} in the launch geometry")
        return int(sizes[name])
    args = [evaluate(a, sizes) for a in tree["args"]]
    op = tree["op"]
    if op == "neg":
        return -args[0]
    if op in ("/", "%", "ceil_div") and args[1] == 0:
        raise ValueError("division by zero in the launch geometry")
    if op == "/":
        q = abs(args[0]) // abs(args[1])
        return q if (args[0] >= 0) == (args[1] >= 0) else -q
    if op == "%":
        return args[0] - args[1] * evaluate({"op": "/", "args": [
            {"const": args[0]}, {"const": args[1]}]}, {})
    if op == "ceil_div":
        return -(-args[0] // args[1])
    if op in ("+", "-", "*"):
        return {"+": args[0] + args[1], "-": args[0] - args[1], "*": args[0] * args[1]}[op]
    if op in ("min", "max"):
        return min(args) if op == "min" else max(args)
    raise ValueError(f"unknown operator {op!r} in the launch geometry")


def variables(tree: Tree) -> set[str]:
    """The size names ``tree`` reads."""
    if "var" in tree:
        return {tree["var"]}
    return set().union(*(variables(a) for a in tree.get("args", [])))


def to_c(tree: Tree) -> str:
    """C text of ``tree``: integer arithmetic a host can paste into ``dim3(...)`` or a
    ``size_t global[]`` (ceil_div as ``(a + b - 1) / b``, min/max as conditionals)."""
    return _c(tree)[0]


def _c(tree: Tree) -> tuple[str, int]:
    """(text, precedence): 3 atom, 2 multiplicative, 1 additive, 0 conditional."""
    if "const" in tree:
        v = int(tree["const"])
        return (str(v), 3) if v >= 0 else (f"({v})", 3)
    if "var" in tree:
        return tree["var"], 3
    op, args = tree["op"], tree["args"]
    if op == "neg":
        text, prec = _c(args[0])
        return f"-{text if prec == 3 else '(' + text + ')'}", 3
    if op == "ceil_div":
        a, b = args
        if "const" in b:
            return _c(_binary("/", _binary("+", a, {"const": int(b["const"]) - 1}), b))
        return _c(_binary("/", _binary("-", _binary("+", a, b), {"const": 1}), b))
    if op in ("min", "max"):
        a, b = (_wrap(*_c(x), 3) for x in args)
        return f"{a} {'<' if op == 'min' else '>'} {b} ? {a} : {b}", 0
    prec = _PREC[op]
    left = _wrap(*_c(args[0]), prec)
    right = _wrap(*_c(args[1]), prec + 1)
    return f"{left} {op} {right}", prec


def _wrap(text: str, prec: int, need: int) -> str:
    return text if prec >= need else f"({text})"


def _binary(op: str, a: Tree, b: Tree) -> Tree:
    return {"op": op, "args": [a, b]}


def ceil_div(space: Tree | None, text: str, cover: int) -> tuple[Tree | None, str]:
    """The number of blocks of ``cover`` threads that cover ``space`` (tree and C text)."""
    if cover == 1:
        return space, text if space is None else to_c(space)
    if space is None:
        return None, f"(({text}) + {cover - 1}) / {cover}"
    if "const" in space:
        value = -(-int(space["const"]) // cover)
        return {"const": value}, str(value)
    tree = {"op": "ceil_div", "args": [space, {"const": cover}]}
    return tree, to_c(tree)


@dataclass
class LaunchGeometry:
    """A launch: blocks of ``block`` threads, each computing ``coarsen`` outputs, over the
    naive kernel's ``thread_space``; all (x, y, z), 2-tuples are padded with z = 1."""

    block: tuple[int, ...]
    coarsen: tuple[int, ...]
    thread_space: tuple[str, ...]
    # what the thread space must be a multiple of, where that is more than the naive
    # kernel needed (an unguarded kernel launched on a coverage its naive block does not
    # divide, allowed by a thread space fixed at compile time): GProcedure.launch_multiple
    multiple: tuple[int, int] | None = None
    # threads per output along x (GProcedure.lanes): a block covers block_x * coarsen_x /
    # lanes of the thread space's x
    lanes: int = 1

    def __post_init__(self) -> None:
        self.block = tuple(int(b) for b in self.block) + (1,) * (3 - len(self.block))
        if self.lanes < 1 or self.block[0] % self.lanes:
            raise ValueError(f"{self.lanes} lanes per output do not divide the block's "
                             f"{self.block[0]} threads along x")
        self.coarsen = tuple(int(c) for c in self.coarsen) + (1,) * (3 - len(self.coarsen))
        self.thread_space = tuple(str(t) for t in self.thread_space) + \
            ("1",) * (3 - len(self.thread_space))

    @property
    def three_d(self) -> bool:
        """Whether the launch needs a z dimension (the header then prints three)."""
        return self.block[2] != 1 or self.thread_space[2] != "1"

    @property
    def thread_space_trees(self) -> tuple[Tree | None, ...]:
        return tuple(parse(t) for t in self.thread_space)

    def _grid(self) -> list[tuple[Tree | None, str]]:
        covers = [b * c for b, c in zip(self.block, self.coarsen)]
        covers[0] //= self.lanes
        return [ceil_div(tree, text, cover) for tree, text, cover in zip(
            self.thread_space_trees, self.thread_space, covers)]

    @property
    def grid(self) -> tuple[str, ...]:
        """The number of blocks per dimension, as C integer expressions."""
        return tuple(text for _, text in self._grid())

    @property
    def grid_trees(self) -> tuple[Tree | None, ...]:
        return tuple(tree for tree, _ in self._grid())

    def _global(self) -> list[tuple[Tree | None, str]]:
        out = []
        for (tree, text), b in zip(self._grid(), self.block):
            if tree is not None:
                total = tree if b == 1 else {"op": "*", "args": [tree, {"const": b}]}
                if "const" in tree:
                    total = {"const": int(tree["const"]) * b}
                out.append((total, to_c(total)))
            else:
                out.append((None, text if b == 1 else f"({text}) * {b}"))
        return out

    @property
    def global_size(self) -> tuple[str, ...]:
        """The OpenCL NDRange global size: grid * block, as C integer expressions."""
        return tuple(text for _, text in self._global())

    @property
    def global_size_trees(self) -> tuple[Tree | None, ...]:
        return tuple(tree for tree, _ in self._global())

    def sizes(self, values: dict[str, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """The OpenCL (global, local) sizes of the launch at concrete problem sizes,
        evaluated from the same trees the sidecar carries."""
        out = []
        for axis, tree in zip("xyz", self.global_size_trees):
            if tree is None:
                raise ValueError(f"the launch geometry's {axis} size "
                                 f"{self.thread_space['xyz'.index(axis)]!r} is not integer "
                                 "arithmetic on the sizes")
            out.append(evaluate(tree, values))
        return tuple(out), tuple(self.block)  # type: ignore[return-value]

    def to_json(self) -> dict:
        out = {"block": list(self.block), "grid": list(self.grid),
               "global_size": list(self.global_size), "thread_space": list(self.thread_space),
               "outputs_per_thread": list(self.coarsen),
               "grid_tree": list(self.grid_trees),
               "global_size_tree": list(self.global_size_trees),
               "thread_space_tree": list(self.thread_space_trees)}
        if self.multiple:
            out["thread_space_multiple_of"] = list(self.multiple)
        if self.lanes > 1:
            out["threads_per_output"] = self.lanes
        return out


def z_used(proc: GProcedure) -> bool:
    """Whether the kernel reads a z thread/block id or size (blockIdx.z, threadIdx.z,
    get_global_id(2)...: kept as CUDA built-ins in the IR, block-uniform where block z = 1)."""
    return any(is_z_builtin(n) for n, _ in walk(proc.body))


def is_z_builtin(node) -> bool:
    from pycparser import c_ast

    return isinstance(node, c_ast.StructRef) and node.type == "." and \
        isinstance(node.name, c_ast.ID) and isinstance(node.field, c_ast.ID) and \
        node.field.name == "z" and node.name.name in ("blockIdx", "threadIdx", "blockDim",
                                                       "gridDim")


def block_z(proc: GProcedure) -> int:
    """The naive (and every output's) block z: metadata/pragma ``block(X, Y, Z)``, else 1."""
    z = proc.pragma.block_dim_z
    return int(z) if z and str(z).isdigit() else 1


def untransformable(proc: GProcedure) -> str:
    """Why the optimization passes must leave a kernel alone, or '': a launch in the file's
    host code that cannot be rewritten to the output's launch (GProcedure.keep_launch); a
    block with more than one thread along z (their plans reshape x and y only and assume
    every thread of a block has a distinct (x, y)); a coarsened naive kernel (its launch is
    read from its own loop over the rows a thread covers, GPragma.coarsened); an atomic
    update (the passes' plans read and write elements with plain accesses); dynamic shared
    memory (its size comes with the user's launch, which a pass's new block would outgrow,
    and the passes' shared-memory budgets do not count it)."""
    if proc.keep_launch:
        return proc.keep_launch
    dynamic = dynamic_shared.params(proc)
    if dynamic:
        return (f"the kernel's shared array {dynamic[0].name} is sized by its launch (dynamic "
                "shared memory): the optimization passes keep such kernels as written")
    updated = atomics.atomic_arrays(proc.body)
    if updated:
        name, op = next(iter(updated.items()))
        return (f"the kernel updates {name} atomically ({op}): the optimization passes keep "
                "kernels with atomics as written")
    if any(proc.pragma.coarsened):
        axes = " and ".join(a for a, c in zip("xy", proc.pragma.coarsened) if c)
        return (f"the naive kernel's threads each cover several outputs along {axes} (a "
                "coarsened kernel): the optimization passes keep its launch")
    if block_z(proc) > 1:
        return (f"the naive block has {block_z(proc)} threads along z (threadIdx.z): the "
                "optimization passes transform 2-D blocks only")
    return ""


def launch_changed(proc: GProcedure) -> bool:
    """Whether the output needs another launch than its naive kernel: a pass fixed its block
    or merged outputs into its threads (a kernel whose launch did not change takes the
    user's, and the host code's launches of it stay as written)."""
    return proc.launch_block is not None or tuple(proc.coarsen) != (1, 1) or proc.lanes != 1


def uses_y(proc: GProcedure) -> bool:
    """Whether the kernel's threads are laid out in 2-D."""
    return any(isinstance(n, PredefId) and n.name in ("idy", "tidy", "bidy", "blockDimY")
               for n, _ in walk(proc.body))


def default_block(proc: GProcedure) -> tuple[int, int]:
    """The block a naive kernel is launched with when nothing says otherwise
    (targets.NAIVE_BLOCK_1D / NAIVE_BLOCK_2D), within the threads its own
    ``__launch_bounds__`` allow (a launch of more fails)."""
    bx, by = proc.pragma.block_dim
    if bx and str(bx).isdigit():
        return int(bx), int(by) if by and str(by).isdigit() else 1
    x, y = _unbounded_block(proc)
    # an axis whose block the kernel's index names (a block constant) keeps it
    cx, cy = (b or (c[0] if c else None)
              for b, c in zip(proc.pragma.block_constant, proc.pragma.coarsened))
    most = proc.max_threads
    while most and x * y > most:
        if y > 1 and not cy and (y >= x // 4 or cx):
            y //= 2                               # fewer rows first: rows keep x coalesced
        elif x > 1 and not cx:
            x //= 2
        else:
            break
    return x, y


def takes_naive_launch(proc: GProcedure, target: str, block: tuple[int, ...]) -> bool:
    """Whether an output for ``target`` whose grid a pass changes, launched on work-groups
    of ``block``, would also run on the naive kernel's launch (its global size and its
    work-group). A CUDA output traps a stale launch (launcher.launch_check); OpenCL has no
    trap, so there only ``reqd_work_group_size`` refusing the naive work-group (and a NULL
    local size, which the attribute makes an error) keeps a host that still launches the
    naive kernel's NDRange from computing wrong numbers: the split mv's 8 rows a
    work-group of 256 on H work-items computed H / 32 rows. Where the output keeps the naive
    block, it takes that launch; the passes that choose among blocks prefer another one."""
    return target == "opencl" and tuple(block[:2]) + (1,) * (2 - len(block[:2])) == \
        tuple(default_block(proc))


def _unbounded_block(proc: GProcedure) -> tuple[int, int]:
    cx, cy = (b or (c[0] if c else None)
              for b, c in zip(proc.pragma.block_constant, proc.pragma.coarsened))
    if cx or cy:
        # the block constants of the kernel's index (predefined.py), or a coarsened kernel's
        # step: the author's block along their axes; along another, the default as far as
        # 1024 threads allow
        x, y = _default_block(proc)
        x, y = cx or x, cy or y
        return (x, y) if x * y <= 1024 else (cx or max(1, 1024 // y), cy or max(1, 1024 // x))
    return _default_block(proc)


def _default_block(proc: GProcedure) -> tuple[int, int]:
    only = proc.pragma.block_id_axes
    if only:
        # an axis carried by blockIdx alone (rewritten to a global id by the predefined
        # pass): the naive kernel ran one thread per block along it, and a row of threads
        # along x where y has none
        x, y = NAIVE_BLOCK_1D if "y" in only or not uses_y(proc) else NAIVE_BLOCK_2D
        return 1 if "x" in only else x, y
    return NAIVE_BLOCK_2D if uses_y(proc) else NAIVE_BLOCK_1D


def geometry(proc: GProcedure, block: tuple[int, int] | None = None,
             thread_space: tuple[str, str] | None = None,
             naive_coarsen: tuple[int, int] | None = None) -> LaunchGeometry:
    """The launch geometry of a (possibly transformed) kernel, in the user's names of its
    parameters (a parameter a translation renamed is still the user's to the host).

    A coarsened naive kernel's threads each cover several outputs (GPragma.coarsened; a
    kernel not yet analysed is told them by ``naive_coarsen``): its blocks cover that many
    times their threads, on top of the outputs the passes merged into a thread."""
    space = tuple(structs.spell(proc, t) for t in thread_space) if thread_space else \
        tuple(_user_names(proc, e) for e in proc.pragma.global_dim)
    gx, gy = space[:2]
    gz = space[2] if len(space) > 2 else _user_names(proc, proc.pragma.global_dim_z)
    if not gz:
        gz = "globalDimZ" if z_used(proc) else "1"
    bx, by = (block or proc.launch_block or default_block(proc))[:2]
    bz = int(block[2]) if block and len(block) > 2 else block_z(proc)
    naive = naive_coarsen or proc.pragma.naive_coarsen
    coarsen = tuple(a * b for a, b in zip(proc.coarsen, naive))
    return LaunchGeometry((bx, by, bz), coarsen,
                          (gx or "globalDimX", gy or ("globalDimY" if uses_y(proc) else "1"),
                           gz), proc.launch_multiple, proc.lanes)


def _user_names(proc: GProcedure, expr: str | None) -> str | None:
    expr = structs.spell(proc, expr)
    if not expr or not proc.renamed:
        return expr
    return _NAME.sub(lambda m: proc.renamed.get(m.group(0), m.group(0)), expr)


def allowed_blocks(proc: GProcedure, candidates: list[tuple[int, int]], guarded: bool
                   ) -> list[tuple[int, int]]:
    """The candidate blocks a transformation may launch with.

    A kernel with a bounds guard runs correctly on any block (the grid is rounded up and the
    guard masks the excess). One without a guard relies on its launch covering the thread
    space exactly: see :func:`unguarded_obstacle`."""
    if guarded:
        return candidates
    return [b for b in candidates if not unguarded_obstacle(proc, b)]


# --------------------------------------------------------------- unguarded kernels' launches
_NAME = re.compile(r"[A-Za-z_]\w*")
_FUNCTIONS = {"ceil", "min", "max"}


def apply_extents(module: GModule, fixed: dict[str, int], overridable: set[str]) -> None:
    """Record in each kernel's GPragma its thread space as integers, per axis, where the
    compile fixes it (``fixed``: frontend.fixed_macros, the -D values and unconditional
    #defines), and how that is known or why it is not (``overridable``: names that are only
    #ifndef defaults)."""
    for proc in module.procedures:
        facts = [_extent(expr, fixed, overridable) for expr in proc.pragma.global_dim]
        proc.pragma.extents = (facts[0][0], facts[1][0])
        proc.pragma.extents_why = (facts[0][1], facts[1][1])


def _extent(expr: str | None, fixed: dict[str, int], overridable: set[str]
            ) -> tuple[int | None, str]:
    from .verify.expr import evaluate

    if not expr:
        return None, "the thread space is unknown"
    names = sorted(set(_NAME.findall(expr)) - _FUNCTIONS)
    try:
        value = evaluate(expr, fixed)
    except (ValueError, ZeroDivisionError):
        value = None
    if isinstance(value, int) and value > 0:
        how = ", ".join(f"{n}={fixed[n]}" for n in names)
        return value, f"{expr} = {value}" + (f" ({how} fixed at compile time)" if how else "")
    why = [f"{n} is a #ifndef default that a build may override" if n in overridable else
           f"{n} is not a compile-time constant" for n in names if n not in fixed]
    return None, "; ".join(why) or f"{expr} is not a positive integer"


def unguarded_obstacle(proc: GProcedure, cover: tuple[int, int]) -> str:
    """Why a kernel without a bounds guard may not be launched with blocks that cover
    ``cover`` threads (block x outputs per thread), or '' when it may.

    Such a kernel relies on its launch covering the thread space exactly: the grid
    ceil(thread space / cover) must not reach past it. That holds for a cover that divides
    the naive block (the naive launch already needs the thread space to be a multiple of
    that), and for one that divides the thread space itself where the compile fixes it
    (GPragma.extents: -D sizes, unconditional #defines, literal thread spaces). A cover of
    neither kind could run threads past the thread space, which nothing in the kernel
    stops."""
    naive = default_block(proc)
    reasons = []
    for axis, c, n, extent, why in zip("xy", cover, naive, proc.pragma.extents,
                                       proc.pragma.extents_why):
        if n % c == 0 or (extent is not None and extent % c == 0):
            continue
        reasons.append(f"{why}, not a multiple of {c}" if extent is not None else why)
    if not reasons:
        return ""
    gx, gy = proc.pragma.global_dim
    return (f"no bounds guard, and {cover[0]}x{cover[1]} divides neither the naive block "
            f"{naive[0]}x{naive[1]} nor the thread space ({gx}, {gy}) as the compile fixes "
            f"it: {'; '.join(reasons)}")


def size_arguments(names: list[str], sizes: dict[str, int]) -> list[int]:
    """The values a runner passes for a kernel's added size parameters (GProcedure.size_params:
    a bounds guard over the thread space), after the naive kernel's arguments, at ``sizes``."""
    from .verify.expr import evaluate

    return [int(evaluate(name, sizes)) for name in names]


def relied_multiple(proc: GProcedure, cover: tuple[int, int], guarded: bool
                    ) -> tuple[int, int] | None:
    """``cover`` where an unguarded kernel's launch on it relies on a fixed thread space
    (it does not divide the naive block), else None: GProcedure.launch_multiple."""
    nx, ny = default_block(proc)
    if guarded or (nx % cover[0] == 0 and ny % cover[1] == 0):
        return None
    return cover


def texture_json(t: TextureParam, target: str, elements: str | None) -> dict:
    """How the host makes texture/image parameter ``t`` from its array (launch sidecar).

    ``elements`` is the array's element count as an expression of the sizes (from metadata),
    when known. The texture covers the array's existing linear buffer: no host allocation
    changes, which is why naiveopt uses 1-D fetches (tex2D would need cudaMallocPitch'd or
    cudaArray storage)."""
    count = elements or f"number of elements of {t.array}"
    texels = count if t.width == 1 else f"({count}) / {t.width}"
    value = t.elem if t.width == 1 else f"{t.elem}{t.width}"
    out = {"param": t.param, "array": t.array, "argument": t.position, "element": t.elem,
           "width": t.width, "texels": texels}
    if target == "cuda":
        kind = TEXTURE_ELEMENTS[t.elem][0]
        out["cuda"] = {
            "type": "cudaTextureObject_t", "fetch": f"tex1Dfetch<{value}>({t.param}, i)",
            "create": "cudaCreateTextureObject(&tex, &res, &desc, NULL)",
            "resource": {"resType": "cudaResourceTypeLinear",
                         "res.linear.devPtr": f"the device buffer of {t.array}",
                         "res.linear.desc": f"cudaCreateChannelDesc<{value}>() ({kind}, "
                                            f"{t.width} x 32 bits)",
                         "res.linear.sizeInBytes": f"{texels} * sizeof({value})"},
            "texture": {"readMode": "cudaReadModeElementType",
                        "filterMode": "cudaFilterModePoint", "normalizedCoords": 0},
            "host_code": (f"cudaResourceDesc res = {{}}; res.resType = cudaResourceTypeLinear; "
                          f"res.res.linear.devPtr = d_{t.array}; res.res.linear.desc = "
                          f"cudaCreateChannelDesc<{value}>(); res.res.linear.sizeInBytes = "
                          f"{texels} * sizeof({value}); cudaTextureDesc desc = {{}}; "
                          f"desc.readMode = cudaReadModeElementType; cudaTextureObject_t "
                          f"{t.param}; cudaCreateTextureObject(&{t.param}, &res, &desc, NULL);"),
            "limits": "devPtr must be a multiple of cudaDeviceProp::textureAlignment; texels "
                      "<= cudaDeviceProp::maxTexture1DLinear",
        }
    else:
        order = "CL_R" if t.width == 1 else "CL_RGBA"
        out["opencl"] = {
            "type": "read_only image1d_buffer_t",
            "create": "clCreateImage(context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err)",
            "format": {"image_channel_order": order,
                       "image_channel_data_type": TEXTURE_ELEMENTS[t.elem][1]},
            "desc": {"image_type": "CL_MEM_OBJECT_IMAGE1D_BUFFER", "image_width": texels,
                     "buffer": f"the cl_mem buffer of {t.array}"},
            "limits": "image_width <= CL_DEVICE_IMAGE_MAX_BUFFER_SIZE (at least 65536); a "
                      "sub-buffer must start on CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT",
        }
    return out


def texture_note(t: TextureParam, target: str) -> str:
    """One short line for the output file's header (the sidecar has the details): what the
    host passes for parameter ``t``."""
    value = t.elem if t.width == 1 else f"{t.elem}{t.width}"
    if target == "cuda":
        return f"{t.param}: texture object over {t.array} (linear, {value})"
    order = "CL_R" if t.width == 1 else "CL_RGBA"
    return f"{t.param}: image1d_buffer over {t.array} ({order}, {TEXTURE_ELEMENTS[t.elem][1]})"


# ------------------------------------------------------------------ file-scope data
def _data_entry(g: GlobalVar, target: str) -> dict:
    out = {"name": g.name, "element": g.base_type, "dims": list(g.dims),
           "elements": elements(g), "input": describe(g),
           "space": "__constant__" if g.space == "constant" else "__device__",
           "initialized": g.initialized}
    if target == "cuda":
        out["host_fill"] = None if g.initialized else (
            f"cudaMemcpyToSymbol({g.name}, host_{g.name}, "
            f"{_times(elements(g), f'sizeof({g.base_type})')}) before the launch")
    else:
        out["opencl"] = "kernel argument" if g.host_filled else "program-scope __constant"
    return out


def _times(count: str, size: str) -> str:
    return size if count == "1" else f"{count} * {size}"


def _position(proc: GProcedure, name: str) -> int:
    params = proc.func.decl.type.args.params if proc.func.decl.type.args is not None else []
    return next(i for i, d in enumerate(params) if getattr(d, "name", None) == name)


def _read_data(module: GModule, proc: GProcedure) -> list[GlobalVar]:
    """The globals ``proc`` reads now, and those it takes as arguments (fixed at parse
    time, GProcedure.global_args), in source order."""
    names = {g.name for g in kernel_globals(module, proc)} | set(proc.global_args)
    return [g for g in module.globals if g.name in names]


def data_json(module: GModule, proc: GProcedure, target: str) -> dict:
    """The file-scope data kernel ``proc`` reads, for the launch sidecar (ir/globals.py):
    ``constant_data`` (every global it reads and where it comes from) and, in OpenCL, the
    ``extra_args`` the host passes after the kernel's own: position, declaration, element
    count, and the symbol of the input it stands for; ``size_args``, the sizes a bounds guard
    added as parameters. Empty when it has none of these."""
    used = _read_data(module, proc)
    out: dict = {}
    if proc.size_params:
        # sizes a bounds guard added (passes/optimize/tiling/bounds_guard.py)
        out["size_args"] = [{"name": n, "argument": _position(proc, c),
                             "declaration": f"int {c}",
                             "from": "the size of the thread space the launch covers"}
                            for n, c in proc.size_param_names.items()]
    if not used:
        return out
    out["constant_data"] = [_data_entry(g, target) for g in used]
    if target == "opencl":
        out["extra_args"] = [
            {"name": g.name, "argument": _position(proc, g.name),
             "declaration": parameter_text(g), "element": g.base_type,
             "elements": elements(g),
             "from": f"file-scope {'__constant__' if g.space == 'constant' else '__device__'}"
                     f" {describe(g)} of the CUDA input (cudaMemcpyToSymbol data): pass a "
                     + ("buffer of its elements" if g.dims else "value")}
            for g in used if g.name in proc.global_args]
    return out


def constant_symbols(module: GModule) -> list[dict]:
    """The CUDA output's symbols the host must fill with cudaMemcpyToSymbol (launch
    sidecar, per file): the uninitialized file-scope data some kernel reads."""
    read = {g.name for p in module.procedures for g in _read_data(module, p)}
    return [_data_entry(g, "cuda") for g in module.globals
            if g.host_filled and g.name in read]


def data_notes(module: GModule, proc: GProcedure, target: str) -> list[str]:
    """Lines for the output file's header naming the file-scope data a kernel reads (short
    ones: clang-format would reflow a long comment), and the template instance it is."""
    notes = [f"instance of {proc.instance_of} (a kernel template)"] if proc.instance_of else []
    notes += proc.layout_notes
    for g in _read_data(module, proc):
        space = "__constant__" if g.space == "constant" else "__device__"
        # the input's own name (OpenCL renames a reserved one: ``half`` -> ``half_``)
        user = replace(g, name=proc.renamed.get(g.name, g.name))
        if g.initialized:
            where = "initialized in this file" if target == "cuda" else \
                "program-scope __constant" + (f" {g.name}" if g.name != user.name else "") + \
                ", initialized here"
            notes.append(f"constant data: {describe(user)} ({where})")
        elif target == "cuda":
            notes.append(f"constant data: {space} {describe(g)}, filled by the host:")
            notes.append(f"  cudaMemcpyToSymbol({g.name}, host_{g.name}, "
                         f"{_times(elements(g), f'sizeof({g.base_type})')})")
        else:
            what = f"a buffer of {elements(g)} {g.base_type}" if g.dims else "its value"
            notes.append(f"argument {_position(proc, g.name)}: {parameter_text(g)}: {what}")
            notes.append(f"  (the data of the input's {space} {describe(user)})")
    for p in dynamic_shared.params(proc):
        if target == "cuda":
            notes.append(f"dynamic shared memory: {p.name}, sized by the launch:")
            notes.append(f"  <<<grid, block, bytes>>>; {proc.name}_launch takes "
                         f"{p.name}_bytes")
        else:
            notes.append(f"argument {proc.params.index(p)}: __local {p.base_type} "
                         f"*{p.name}: dynamic")
            notes.append(f"  local memory, clSetKernelArg(k, {proc.params.index(p)}, bytes, "
                         "NULL)")
    extents = {param: axis.lower() for axis, param in proc.launch_extents}
    for name, param in proc.size_param_names.items():
        # (tiling/bounds_guard.py: the input had no bounds guard, its blocks now overhang;
        # passes/functional/launch_extents.py: it read its launch's size)
        where = f"argument {_position(proc, param)}: " if target == "opencl" else ""
        axis = extents.get(param)
        read = (f"get_global_size({'xy'.index(axis)})" if target == "opencl" else
                f"blockDim.{axis} * gridDim.{axis}") if axis else ""
        notes.append(f"{where}int {param}: new parameter, {name}:")
        notes.append(f"  the thread space's {axis} extent, the naive kernel's {read}" if axis
                     else "  the thread-space size its added bounds guard tests")
    return notes
