"""A 1-D kernel over a flattened 2-D space read as a 2-D kernel.

ML and tutorial code often launches one thread per element of a matrix in 1-D and splits the
id itself::

    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < M * N) {
        int row = idx / N, col = idx % N;
        ... A[row * K + k] * B[k * N + col] ...
        C[idx] = sum;
    }

To the analyses the row and the column are divisions of the id: no pass can tile, stage or
merge such a kernel. Its threads are the threads of a 2-D launch over (N, M) in row-major
order: thread i is (i % N, i / N), and i is ``idy * N + idx``. :class:`Delinearize` rewrites
the kernel so (``i / N`` is ``idy``, ``i % N`` is ``idx``, any other use of i is
``idy * N + idx``, the guard ``i < M * N`` is ``idy < M && idx < N``), with thread space
(N, M), before the optimization passes: the matrix product above is then the one they know.

The two kernels do the same work only where:

- the kernel reads no thread id but the 1-D global id (no ``threadIdx``, no block or grid
  size: a thread's place in its block is another under a 2-D launch);
- a bounds guard gives its thread space as a product with the width as a factor
  (``i < M * N``, ``i < N * N``, a local defined once as one): each naive thread below it is
  exactly one thread of the 2-D space, and the ones past it do nothing in either;
- every ``i % W`` divides by the one width W, which (with the height) is a plain expression of
  parameters the kernel never assigns or macros: the launch computes them.

:class:`RestoreDelinearized` (after the optimization passes) puts the 1-D kernel back where
no pass changed the launch: the user's launch, and the host code's, stay as written. Where a
pass did, the output is launched over (N, M) (its launcher, the rewritten host launches) and
its block is fixed, so that a stale 1-D launch traps.
"""
from __future__ import annotations

import copy
from collections import Counter

from pycparser import c_ast

from ...analysis.guards import (guard_bounds, id_aliases, row_bound, row_width,
                               thread_guards, upper_bounds)
from ...analysis.manager import PreservedAnalyses
from ...analysis.shape import is_pure
from ...ir import GProcedure, PredefId
from ...ir.cgen import to_c
from ...ir.gprocedure import Delinearized
from ...ir.rewrite import assigned_names, identifiers, map_children, map_uses, walk
from ...launch import evaluate, launch_changed, parse, untransformable
from ...targets import find_target
from ..manager import Pass, PassContext, reanalyse
from .canonicalize.locals import declarations, drop_unused
from .launch_extents import extent_obstacle, is_macro


def _bare(node: c_ast.Node) -> c_ast.Node:
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return node


def _factors(node: c_ast.Node) -> list[c_ast.Node]:
    node = _bare(node)
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


def _product(factors: list[c_ast.Node]) -> c_ast.Node:
    out = copy.deepcopy(factors[0])
    for f in factors[1:]:
        out = c_ast.BinaryOp("*", out, copy.deepcopy(f))
    return out


class _Form:
    """The kernel's 1-D id: the locals that hold it, and how each use reads it."""

    def __init__(self, proc: GProcedure) -> None:
        self.aliases = id_aliases(proc)
        self.locals = {name for name, gid in self.aliases.items() if gid == "idx"}
        decls = declarations(proc.body)
        # the alias's type, where it is not int (an i declared size_t keeps its width)
        self.types: dict[str, c_ast.Node] = {}
        for name in self.locals:
            decl = decls[name][0]
            words = getattr(getattr(decl.type, "type", None), "names", None)
            if isinstance(decl.type, c_ast.TypeDecl) and words not in (["int"], ["unsigned",
                                                                                 "int"]):
                self.types[name] = decl.type

    def is_id(self, node: c_ast.Node) -> bool:
        node = _bare(node)
        return (isinstance(node, PredefId) and node.name == "idx") or (
            isinstance(node, c_ast.ID) and node.name in self.locals)

    def divisions(self, proc: GProcedure, op: str) -> list[c_ast.BinaryOp]:
        """The id divided (``/``) or taken modulo (``%``) by something."""
        return [n for n, _ in walk(proc.body) if isinstance(n, c_ast.BinaryOp) and
                n.op == op and self.is_id(n.left)]


def _expand(node: c_ast.Node, proc: GProcedure, depth: int = 0) -> c_ast.Node:
    """A guard's bound through a local defined once as a pure expression (``int total = M *
    N; if (i < total)``)."""
    node = _bare(node)
    if isinstance(node, c_ast.ID) and depth < 4:
        decls = declarations(proc.body).get(node.name, [])
        if len(decls) == 1 and decls[0].init is not None and is_pure(decls[0].init) and \
                assigned_names(proc.body).get(node.name) == 1:
            return _expand(decls[0].init, proc, depth + 1)
    return node


def _guards(proc: GProcedure, form: _Form) -> list[tuple[c_ast.BinaryOp, bool, c_ast.Node]]:
    """The top-level guards' comparisons that bound the 1-D id: (the comparison, whether it
    is an early return's, the bound)."""
    out = []
    for stmt, negated in thread_guards(proc):
        out += [(cmp, negated, bound) for cmp, var, bound, op in
                upper_bounds(stmt.cond, negated) if op == "<" and form.is_id(var)]
    return out


def _split(extent: c_ast.Node, width: c_ast.Node) -> c_ast.Node | None:
    """``extent`` over ``width`` where the width's factors are among the extent's (``M * N``
    over ``N`` is ``M``), else None; None too where nothing is left (one row)."""
    have = [to_c(f) for f in _factors(extent)]
    need = Counter(to_c(f) for f in _factors(width))
    if need - Counter(have):
        return None
    left, taken = [], Counter()
    for node, text in zip(_factors(extent), have):
        if taken[text] < need[text]:
            taken[text] += 1
        else:
            left.append(node)
    return _product(left) if left else None


def _known(text: str, fixed: dict[str, int]) -> int | None:
    """The value of a size this compile fixes (a literal, a -D or #define), or None."""
    tree = parse(text)
    try:
        value = evaluate(tree, fixed) if tree is not None else None
    except (ValueError, ZeroDivisionError, TypeError, KeyError):
        return None
    return None if value is None else int(value)


class Delinearize(Pass):
    """Read a 1-D kernel over a flattened 2-D space as the 2-D kernel (module docstring)."""

    name = "delinearize"
    requires = ("predefined",)
    preserves = PreservedAnalyses.all()

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses | None:
        form = _Form(proc)
        # the width: what the id is taken modulo, else what it is divided by (``col = i -
        # row * N``)
        moduli = form.divisions(proc, "%") or form.divisions(proc, "/")
        if not moduli or untransformable(proc):
            return PreservedAnalyses.all()
        widths = {to_c(m.right): m.right for m in moduli}
        head = f"{to_c(moduli[0])}: the 1-D thread space kept"
        why, guards, height = self._obstacle(proc, ctx, form, widths)
        if why:
            ctx.remark("missed", self.name, proc, f"{head}: {why}")
            return PreservedAnalyses.all()
        (wtext, width), = widths.items()
        original = copy.deepcopy(proc.body)
        extent = proc.pragma.global_dim[0]
        replaced = self._rewrite(proc, form, width, height, guards)
        # the id's locals, and those the guard alone read (``size_t total = rows * cols``)
        gone = form.locals | {n for _, _, bound in guards for n in identifiers(bound)}
        dropped: list[str] = []
        while True:                     # ``int tid = idx; int i = tid;``: i first, then tid
            more = drop_unused(proc.body, gone - set(dropped))
            if not more:
                break
            dropped += more
        _bound_x(proc, width)
        proc.pragma.global_dim = (wtext, to_c(height))
        proc.delinearized = Delinearized(extent, wtext, to_c(height), original,
                                         to_c(proc.body), replaced)
        reanalyse(proc, ctx)
        ctx.remark("analysis", self.name, proc, f"the 1-D thread space ({extent}) read as "
                   f"{to_c(height)} rows of {wtext} threads: the id / {wtext} is idy, the id % "
                   f"{wtext} is idx" + (f", {', '.join(dropped)} no longer declared"
                                        if dropped else "") +
                   "; the 1-D kernel is written back where no pass changes the launch")
        return PreservedAnalyses.none()

    def _obstacle(self, proc: GProcedure, ctx: PassContext, form: _Form,
                  widths: dict[str, c_ast.Node]
                  ) -> tuple[str, list, c_ast.Node | None]:
        """Why the kernel may not be read as 2-D ('' where it may), its guard's comparisons
        of the id and the height."""
        others = sorted({n.name for n, _ in walk(proc.body) if isinstance(n, PredefId) and
                         n.name != "idx"})
        if others:
            return f"the kernel reads {', '.join(others)}, which a 2-D launch changes", [], None
        pragma = proc.pragma
        if pragma.block_id_axes or any(pragma.block_constant) or any(pragma.coarsened):
            return "the naive kernel's block is part of its index", [], None
        if len(widths) != 1:
            return f"it divides the id by {' and '.join(widths)}", [], None
        if pragma.global_dim_source not in ("guard", "grid-stride") or pragma.global_dim[1] not in ("1", None):
            return "no bounds guard gives its thread space", [], None
        guards = _guards(proc, form)
        (wtext, width), = widths.items()
        row = row_bound(proc)
        if not guards and (row is None or to_c(row[1]) != wtext):
            return "no bounds guard gives its thread space", [], None
        heights = set()
        height = row[0] if row is not None else None       # ``if (row < M)``, row = i / W
        for cmp, _, bound in guards:
            height = _split(_expand(bound, proc), width)
            if height is None:
                return (f"its thread space ({to_c(bound)}) is not a product of {wtext} and a "
                        "height"), [], None
            heights.add(to_c(height))
        if len(heights) > 1:
            return "its guards bound the id by different extents", [], None
        assigned = assigned_names(proc.body)
        for part in (width, height):
            text = to_c(part)
            if not is_pure(part):
                return f"{text} reads memory", [], None
            for name in sorted(identifiers(part)):
                if name in assigned or not (proc.param(name) is not None or
                                            is_macro(name, ctx.module)):
                    return (f"{text} is not a size the launch can compute (it reads {name}, "
                            "not an unassigned parameter or a macro)"), [], None
            why = extent_obstacle(text, proc, ctx.module)
            if why:
                return why, [], None
        narrow = _known(wtext, ctx.module.fixed)
        target = find_target(ctx.arch)
        warp = target.warp_size if target else 32
        if narrow is not None and narrow < warp:
            return (f"its rows are {narrow} threads wide ({wtext}), narrower than a warp of "
                    f"{warp}: a 2-D launch would leave most of each block idle"), [], None
        return "", guards, height

    def _rewrite(self, proc: GProcedure, form: _Form, width: c_ast.Node, height: c_ast.Node,
                 guards: list) -> list[tuple[str, str]]:
        wtext = to_c(width)
        tests = {id(cmp): negated for cmp, negated, _ in guards}
        # each 1-D test in terms that stay declared (the id, the bound through the locals
        # dropped below), for the write-back
        one_d = {id(cmp): _one_d(cmp, bound, form, proc) for cmp, _, bound in guards}
        replaced: list[tuple[str, str]] = []
        counts = assigned_names(proc.body)
        rows = {d.name for n, _ in walk(proc.body) if isinstance(d := n, c_ast.Decl) and
                d.init is not None and counts.get(d.name) == 1 and _is_div(d.init, form, wtext)}

        def column(n: c_ast.Node) -> bool:
            """``i - row * W`` (``W * row``, ``(i / W) * W``): the column."""
            if not (isinstance(n, c_ast.BinaryOp) and n.op == "-" and form.is_id(n.left)):
                return False
            right = _bare(n.right)
            if not (isinstance(right, c_ast.BinaryOp) and right.op == "*"):
                return False
            for a, b in ((right.left, right.right), (right.right, right.left)):
                a = _bare(a)
                if to_c(b) == wtext and ((isinstance(a, c_ast.ID) and a.name in rows) or
                                         _is_div(a, form, wtext)):
                    return True
            return False

        def linear(name: str | None) -> c_ast.Node:
            row: c_ast.Node = PredefId("idy")
            if name in form.types:
                # in the local's type (``size_t i``): the product may pass 2^31
                kind = copy.deepcopy(form.types[name])
                kind.declname = None
                row = c_ast.Cast(c_ast.Typename(None, [], None, kind), row)
            return c_ast.BinaryOp("+", c_ast.BinaryOp("*", row, copy.deepcopy(width)),
                                  PredefId("idx"))

        def fn(n: c_ast.Node) -> c_ast.Node | None:
            if id(n) in tests:
                new = _test(tests[id(n)], wtext, height, width)
                replaced.append((to_c(new), to_c(one_d[id(n)])))
                return new
            if isinstance(n, c_ast.BinaryOp) and n.op in "/%" and form.is_id(n.left) and \
                    to_c(n.right) == wtext:
                return PredefId("idy" if n.op == "/" else "idx")
            if column(n):
                return PredefId("idx")
            if form.is_id(n) and not isinstance(n, c_ast.Cast):
                return linear(n.name if isinstance(n, c_ast.ID) else None)
            if isinstance(n, c_ast.Decl) and n.name in form.locals:
                return n            # its declaration (dropped below when nothing reads it)
            return None

        map_uses(proc.body, fn)
        return replaced


def _is_div(node: c_ast.Node, form: _Form, wtext: str) -> bool:
    """Whether ``node`` is the id divided by the width (the row)."""
    width = row_width(node, form.aliases)
    return width is not None and to_c(width) == wtext


def _bound_x(proc: GProcedure, width: c_ast.Node) -> None:
    """Give the guard that bounds idy a bound on idx where none does: the 1-D kernel's
    ``row = i / W; if (row < H)`` never saw a column of W or more, the 2-D launch's padded
    rows do."""
    aliases = id_aliases(proc)
    bounds: dict[str, c_ast.Node] = {}
    guards = thread_guards(proc)
    for stmt, negated in guards:
        bounds.update(guard_bounds(stmt.cond, aliases, negated=negated))
    if "idx" in bounds:
        return
    for stmt, negated in guards:
        if "idy" in guard_bounds(stmt.cond, aliases, negated=negated):
            stmt.cond = c_ast.BinaryOp("||" if negated else "&&", stmt.cond, c_ast.BinaryOp(
                ">=" if negated else "<", PredefId("idx"), copy.deepcopy(width)))
            return


def _one_d(cmp: c_ast.BinaryOp, bound: c_ast.Node, form: _Form, proc: GProcedure
           ) -> c_ast.Node:
    """A guard's comparison with the id's locals as the id and its bound through locals
    (``total``) as their definitions: the rewrite drops those locals."""
    side = _expand(bound, proc)
    if cmp.right is bound:
        return c_ast.BinaryOp(cmp.op, PredefId("idx"), copy.deepcopy(side))
    return c_ast.BinaryOp(cmp.op, copy.deepcopy(side), PredefId("idx"))


def _test(negated: bool, wtext: str, height: c_ast.Node, width: c_ast.Node) -> c_ast.Node:
    """The 2-D guard: ``idy < H && idx < W`` (an early return's ``idy >= H || idx >= W``)."""
    op, join = (">=", "||") if negated else ("<", "&&")
    return c_ast.BinaryOp(join, c_ast.BinaryOp(op, PredefId("idy"), copy.deepcopy(height)),
                          c_ast.BinaryOp(op, PredefId("idx"), copy.deepcopy(width)))


class RestoreDelinearized(Pass):
    """After the optimization passes: a delinearized kernel whose launch no pass changed is
    the 1-D kernel again (the body as it was where no pass changed it, else each id written
    in the 1-D one); one whose launch changed gets its block fixed (module docstring)."""

    name = "restore-delinearized"

    def run(self, proc: GProcedure, ctx: PassContext) -> PreservedAnalyses:
        from ...launch import default_block

        done = proc.delinearized
        if done is None:
            return PreservedAnalyses.all()
        # a pass that read the 2-D launch's blocks (partition-camping's diagonal block
        # order) made a kernel no 1-D launch runs, whether or not it changed the launch
        blocks = sorted({n.name for n, _ in walk(proc.body) if isinstance(n, PredefId) and
                         n.name not in ("idx", "idy")})
        if launch_changed(proc) or blocks:
            if proc.launch_block is None:
                proc.launch_block = default_block(proc)
                ctx.remark("analysis", self.name, proc, f"launched in 2-D over ({done.width}, "
                           f"{done.height}) with its block fixed at {proc.launch_block[0]}x"
                           f"{proc.launch_block[1]}, so that a stale 1-D launch traps" +
                           (f" (the kernel reads {', '.join(blocks)} of the 2-D launch)"
                            if blocks else ""))
            return PreservedAnalyses.all()
        if to_c(proc.body) == done.rewritten:
            proc.func.body = done.original
            how = "as it was"
        else:
            _write_back(proc, done)
            how = "with each id in 1-D terms"
        proc.pragma.global_dim = (done.extent, "1")
        proc.delinearized = None
        ctx.am.tree_changed(proc)
        ctx.remark("analysis", self.name, proc, f"written back as the 1-D kernel ({how}): no "
                   "pass changed the launch, so the user's launch stays")
        return PreservedAnalyses.none()


def _write_back(proc: GProcedure, done: Delinearized) -> None:
    """The 2-D body in 1-D terms: idy is the id / W, idx the id % W, ``idy * W + idx`` the id,
    each 2-D guard test the 1-D one it replaced."""
    from ...ir.build import expression

    tests = dict(done.guards)
    linear = f"idy * {done.width} + idx"

    def one_d(text: str) -> c_ast.Node:
        return expression(f"({text})")

    def visit(n: c_ast.Node) -> c_ast.Node:
        text = to_c(n) if isinstance(n, c_ast.BinaryOp) else None
        if text in tests:
            return _as_ids(one_d(tests[text]))
        if text == linear:
            return PredefId("idx")
        if isinstance(n, PredefId) and n.name in ("idx", "idy"):
            return c_ast.BinaryOp("/" if n.name == "idy" else "%", PredefId("idx"),
                                  one_d(done.width))
        return map_children(n, lambda child, slot: visit(child))

    proc.func.body = visit(proc.body)


def _as_ids(node: c_ast.Node) -> c_ast.Node:
    """A parsed expression with its ``idx`` as the predefined id."""
    def visit(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name == "idx":
            return PredefId("idx")
        return map_children(n, lambda child, slot: visit(child))
    return visit(node)
