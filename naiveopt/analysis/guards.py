"""Thread-id aliases and the bounds a kernel's guards put on the global ids.

Naive kernels name their global ids (``int i = idx;``) and guard their work with them
(``if (i < n) { ... }`` or ``if (i >= n) return;``). The thread-space pass reads the thread space
from those bounds (also through ids offset by a constant, ``int j = idx + 1;``); the kernel
shape (shape.py) keeps the bounds of the guard it recognises.
"""
from __future__ import annotations

from pycparser import c_ast

from ..ir import GProcedure, PredefId
from ..ir.atomics import is_atomic_name
from ..ir.literals import integer_value
from ..ir.rewrite import assigned_names, walk
from ..ir.typenames import integer_type
from .manager import Analysis, AnalysisManager


def is_id(node: c_ast.Node, name: str) -> bool:
    """Whether ``node`` is the predefined id ``name``, through casts."""
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return isinstance(node, PredefId) and node.name == name


def id_aliases(proc: GProcedure) -> dict[str, str]:
    """Locals defined once as a global id, or as such a local: ``int i = idx;`` -> {'i':
    'idx'}, and ``int tid = idx; size_t i = tid;`` -> {'tid': 'idx', 'i': 'idx'} (a
    grid-stride loop's iterator, made one element per thread, is such a copy)."""
    counts = assigned_names(proc.body)
    out: dict[str, str] = {}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.init is not None and counts.get(node.name) == 1:
            for gid in ("idx", "idy"):
                if is_id(node.init, gid):
                    out[node.name] = gid
            init = node.init
            while isinstance(init, c_ast.Cast):
                init = init.expr
            if isinstance(init, c_ast.ID) and init.name in out:
                out[node.name] = out[init.name]
    return out


def id_offsets(proc: GProcedure) -> dict[str, tuple[str, int]]:
    """Locals defined once as a global id plus an integer constant, as 1-based code writes
    them: ``int j = idx + 1;`` -> {'j': ('idx', 1)} (``idx - 2`` -> ('idx', -2))."""
    counts = assigned_names(proc.body)
    out = {}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.init is not None and \
                counts.get(node.name) == 1:
            found = _id_plus_constant(node.init)
            if found is not None:
                out[node.name] = found
    return out


def _id_plus_constant(node: c_ast.Node) -> tuple[str, int] | None:
    while isinstance(node, c_ast.Cast):
        node = node.expr
    if not (isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-")):
        return None
    pairs = [(node.left, node.right)] + ([(node.right, node.left)] if node.op == "+" else [])
    for var, const in pairs:
        value = integer_value(const.value) if isinstance(const, c_ast.Constant) and \
            const.type == "int" else None
        gid = next((g for g in ("idx", "idy") if is_id(var, g)), None)
        if gid is not None and value is not None:
            return gid, value if node.op == "+" else -value
    return None


def plus_constant(node: c_ast.Node, value: int) -> c_ast.Node:
    """``node + value`` as a C expression, folding a constant term: ``(m + 1) - 1`` is ``m``."""
    if value == 0:
        return node
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-") and \
            isinstance(node.right, c_ast.Constant) and node.right.type == "int":
        have = integer_value(node.right.value)
        if have is not None:
            return plus_constant(node.left, value + (have if node.op == "+" else -have))
    if isinstance(node, c_ast.Constant) and node.type == "int" and \
            integer_value(node.value) is not None:
        return c_ast.Constant("int", str(integer_value(node.value) + value))
    return c_ast.BinaryOp("+" if value > 0 else "-", node, c_ast.Constant("int", str(abs(value))))


class ThreadIdAliases(Analysis[dict[str, str]]):
    """:func:`id_aliases` of a kernel."""

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> dict:
        return id_aliases(proc)


def is_return(stmt: c_ast.Node) -> bool:
    if isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    return isinstance(stmt, c_ast.Return)


def _uncast(node: c_ast.Node) -> c_ast.Node:
    """``node`` without the casts to integer types around it."""
    while isinstance(node, c_ast.Cast) and integer_type(node.to_type):
        node = node.expr
    return node


def upper_bounds(cond: c_ast.Node, negated: bool = False):
    """The tests of a guard that bound a value from above, left to right: (the comparison,
    the value, the bound, '<' or '<='), each written the guard's way round (``n > i`` bounds
    i). A guard's conjuncts are its tests; ``negated`` reads an early return's condition, whose
    disjuncts are (``i >= n`` is the test ``i < n``)."""
    joiner = "||" if negated else "&&"
    if isinstance(cond, c_ast.BinaryOp) and cond.op == joiner:
        yield from upper_bounds(cond.left, negated)
        yield from upper_bounds(cond.right, negated)
        return
    if not isinstance(cond, c_ast.BinaryOp):
        return
    ops = {">=": "<", ">": "<="} if negated else {"<": "<", "<=": "<="}
    flipped = {"<=": "<", "<": "<="} if negated else {">": "<", ">=": "<="}
    if cond.op in ops:
        yield cond, cond.left, cond.right, ops[cond.op]
    if cond.op in flipped:
        yield cond, cond.right, cond.left, flipped[cond.op]


def guard_bounds(cond: c_ast.Node, aliases: dict[str, str], negated: bool = False,
                 z_id=None, offsets: dict[str, tuple[str, int]] | None = None
                 ) -> dict[str, c_ast.Node]:
    """Exclusive upper bounds a guard puts on idx / idy: ``i < n && j < m`` -> {idx: n, idy: m}.

    ``negated`` reads the condition of an early return (``if (i >= n) return;``). ``offsets``
    (id_offsets) reads a bound on an id plus a constant as one on the id: with
    ``j = idx + 1``, ``j <= m`` bounds idx by m."""
    out: dict[str, c_ast.Node] = {}
    for _, var, bound, op in upper_bounds(cond, negated):
        # ``x >= (long)w``, ``(size_t)i < n``: a cast to an integer type changes neither the
        # id nor a size (both non-negative and in range); the thread space is ``w``
        var, bound = _uncast(var), _uncast(bound)
        gid = var.name if isinstance(var, PredefId) else (
            aliases.get(var.name) if isinstance(var, c_ast.ID) else None)
        shift = 0
        if gid is None and offsets and isinstance(var, c_ast.ID) and var.name in offsets:
            gid, shift = offsets[var.name]
        if gid is None and z_id is not None and z_id(var):
            gid = "idz"     # only where the caller asks for z (thread_space._z_from_guard)
        if gid in ("idx", "idy", "idz"):
            if shift:
                out[gid] = plus_constant(bound, (op == "<=") - shift)
            else:
                out[gid] = bound if op == "<" else c_ast.BinaryOp(
                    "+", bound, c_ast.Constant("int", "1"))
    return out


def row_bound(proc: GProcedure) -> tuple[c_ast.Node, c_ast.Node] | None:
    """(H, W) where a top-level guard of a 1-D kernel bounds the row ``idx / W`` by H
    (``int row = idx / N; int col = idx % N; if (row < M && col < N)``; an early return's
    ``row >= M``): its threads past H * W do nothing, so that is its thread space. None
    otherwise (the x id bounded by a guard of its own is GuardBounds')."""
    counts = assigned_names(proc.body)
    aliases = id_aliases(proc)
    rows: dict[str, c_ast.Node] = {}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.init is not None and \
                counts.get(node.name) == 1:
            width = row_width(node.init, aliases)
            if width is not None:
                rows[node.name] = width

    def row(node: c_ast.Node) -> c_ast.Node | None:
        node = _uncast(node)
        if isinstance(node, c_ast.ID) and node.name in rows:
            return rows[node.name]
        return row_width(node, aliases)

    for stmt, negated in thread_guards(proc):
        for _, var, bound, op in upper_bounds(stmt.cond, negated):
            width = row(var) if op == "<" else None
            if width is not None and is_uniform_size(bound, counts):
                return _uncast(bound), width
    return None


def row_width(node: c_ast.Node, aliases: dict[str, str]) -> c_ast.Node | None:
    """W where ``node`` is the x id (or a local holding it, ``aliases``: id_aliases) divided
    by W, else None."""
    node = _uncast(node)
    if isinstance(node, c_ast.BinaryOp) and node.op == "/":
        left = _uncast(node.left)
        if (isinstance(left, PredefId) and left.name == "idx") or (
                isinstance(left, c_ast.ID) and aliases.get(left.name) == "idx"):
            return node.right
    return None


def is_uniform_size(node: c_ast.Node, counts: dict[str, int]) -> bool:
    """Whether ``node`` is arithmetic on names no statement assigns (parameters, macros) and
    integer literals: the same for every thread, and computable by the launch."""
    for n, _ in walk(node):
        if isinstance(n, (c_ast.ArrayRef, c_ast.FuncCall, c_ast.StructRef, c_ast.UnaryOp,
                          PredefId)) and not (isinstance(n, c_ast.UnaryOp) and n.op == "-"):
            return False
        if isinstance(n, c_ast.ID) and n.name in counts:
            return False
    return True


def thread_guards(proc: GProcedure) -> list[tuple[c_ast.If, bool]]:
    """The kernel's top-level ``if`` statements that bound the threads doing any work, in
    order, each with whether it is an early return (whose condition is negated): an early
    return (``if (i >= n) return;``), or an ``if`` without an ``else`` that ends the kernel
    (``if (i < n) { ... }``), so long as no statement before it stores to global memory
    (a thread's own locals and its block's shared memory are no work past the guard: a
    block past it does nothing anyone sees). Any other ``if`` is the thread's work, not a
    test of the thread space: ``if (i < n - 2) b[i] = ...; else b[i] = 0;`` after ``if (i
    >= n) return;`` writes every b[i] below n, and ``if (i < m) {...}`` after a store every
    thread makes leaves that store to the threads past m (read as the thread space, n - 2 or
    m dropped the last elements from the launch, and verification, which runs the naive
    kernel on the same launch, saw nothing)."""
    items = list(proc.body.block_items or [])
    own, arrays = _private_names(proc)
    out: list[tuple[c_ast.If, bool]] = []
    for k, stmt in enumerate(items):
        if isinstance(stmt, c_ast.If) and stmt.iffalse is None and is_return(stmt.iftrue):
            out.append((stmt, True))
            continue
        if isinstance(stmt, c_ast.If) and stmt.iffalse is None and \
                all(_no_op(s) for s in items[k + 1:]):
            out.append((stmt, False))
            break
        if stores(stmt, own, arrays):
            break
    return out


def _no_op(stmt: c_ast.Node) -> bool:
    return isinstance(stmt, c_ast.EmptyStatement) or (
        isinstance(stmt, c_ast.Return) and stmt.expr is None)


def _private_names(proc: GProcedure) -> tuple[set[str], set[str]]:
    """(the names the kernel declares as its threads' own, the arrays no other block sees:
    its block's shared memory, ``__shared__`` arrays and OpenCL ``__local`` parameters, and
    a thread's own arrays, ``float w[9];``)."""
    own, arrays = set(), {p.name for p in proc.params if p.address_space == "local"}
    for n, _ in walk(proc.body):
        if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
            storage = set(n.storage or [])
            if "__shared__" in storage:
                arrays.add(n.name)
            elif not storage & {"static", "extern"}:
                own.add(n.name)
                if isinstance(n.type, c_ast.ArrayDecl):
                    arrays.add(n.name)
    return own, arrays


def _base(node: c_ast.Node) -> str | None:
    """The variable an lvalue or address names (``s[i][j]``, ``p.x``, ``(T *)q``: s, p, q)."""
    while True:
        if isinstance(node, c_ast.Cast):
            node = node.expr
        elif isinstance(node, c_ast.ArrayRef):
            node = node.name
        elif isinstance(node, c_ast.StructRef) and node.type == ".":
            node = node.name
        else:
            break
    return node.name if isinstance(node, c_ast.ID) else None


def stores(node: c_ast.Node, own: set[str], arrays: set[str] = frozenset()) -> bool:
    """Whether ``node`` may change global memory: an assignment, increment or atomic of
    anything but a thread's own local (``own``) or an element of an array no other block
    sees (``arrays``: shared memory, a thread's own arrays), or a call that is handed an
    address or an array it might write through."""
    def mine(lv: c_ast.Node) -> bool:
        while isinstance(lv, c_ast.Cast):
            lv = lv.expr
        if isinstance(lv, c_ast.UnaryOp) and lv.op == "&":
            return mine(lv.expr)
        if isinstance(lv, c_ast.ID):
            return lv.name in own or lv.name in arrays
        return _base(lv) in arrays

    for n, _ in walk(node):
        if isinstance(n, c_ast.Assignment) and not mine(n.lvalue):
            return True
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                not mine(n.expr):
            return True
        if isinstance(n, c_ast.FuncCall):
            name = n.name.name if isinstance(n.name, c_ast.ID) else ""
            args = n.args.exprs if n.args else []
            if not name or name == "printf" or (is_atomic_name(name) and args and
                                                 not mine(args[0])):
                return True
            if any((isinstance(a, c_ast.UnaryOp) and a.op == "&" or isinstance(a, c_ast.ID))
                   and not mine(a) for a in args):
                return True             # an array parameter (a helper may write through it)
    return False


class GuardBounds(Analysis[dict[str, c_ast.Node]]):
    """The bounds on idx / idy of a kernel's guards (:func:`thread_guards`; a later guard's
    bound on an id replaces an earlier one's: both hold, so either covers the threads that
    work)."""

    requires = (ThreadIdAliases,)

    @classmethod
    def compute(cls, proc: GProcedure, am: AnalysisManager) -> dict:
        aliases = am.get(proc, ThreadIdAliases)
        offsets = id_offsets(proc)
        varying = thread_varying(proc)
        bounds: dict[str, c_ast.Node] = {}
        for stmt, negated in thread_guards(proc):
            found = guard_bounds(stmt.cond, aliases, negated=negated, offsets=offsets)
            # a bound that moves with the thread (bitonic sort's ``if (ixj > i)``, ixj =
            # i ^ j) is a test of the thread's work, not of the thread space
            bounds.update({gid: b for gid, b in found.items() if not _varies(b, varying)})
        return bounds


def thread_varying(proc: GProcedure) -> set[str]:
    """The locals whose value depends on the thread: defined (anywhere) from a thread id or
    from such a local."""
    out: set[str] = set()
    definitions: list[tuple[str, c_ast.Node]] = []
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.name and node.init is not None:
            definitions.append((node.name, node.init))
        elif isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
            definitions.append((node.lvalue.name, node.rvalue))
    changed = True
    while changed:
        changed = False
        for name, value in definitions:
            if name not in out and _varies(value, out):
                out.add(name)
                changed = True
    return out


def _varies(node: c_ast.Node, varying: set[str]) -> bool:
    return any(isinstance(n, PredefId) or (isinstance(n, c_ast.ID) and n.name in varying)
               for n, _ in walk(node))
