"""How many elements of each array a naive kernel touches: the exact maximum flat index + 1.

Verification must allocate every array the naive kernel reads or writes, and no more than it
touches (canary zones then catch an output that writes beyond). Without metadata or pragmas
that extent comes from the kernel itself: each access's flat index is an affine function of
the thread ids and loop iterators, over the domain that the launch, the enclosing loops and
the enclosing conditions (bounds guards, early returns, zero-padding tests) describe. With the
problem sizes fixed to numbers that domain is a Presburger set and islpy maximizes the index
over it exactly: triangular loops (``k <= i``), strided loops, reversed loops and padded
layouts included. Products of a size and an iterator (``i * N``) are only affine once N is a
number, so an :class:`Extent` is computed per size set (and cached), not once symbolically.

The values of an integer index array in an index or a loop bound (``x[col[j]]``, ``wte[ix *
C + c]``, ``j < rowptr[i + 1]``) are variables in [0, FREE_VALUES), the range verification
fills that array with (verify/indices.py): one more loop of the domain. What cannot be
modelled gives a reason instead of a guess: another value read from data (``A[(int)B[i]]``,
a store through index data, which random values would make race), a loop without a bound,
a non-affine index. A condition naiveopt cannot read is
dropped, which only enlarges the domain (the extent stays safe, if less tight).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import sympy
from pycparser import c_ast

from ..ir import GLoop, GProcedure, MemoryExpression, atomics
from ..ir.cgen import to_c
from ..ir.literals import integer_value
from ..ir.rewrite import walk
from ..ir.symbolic import CDiv, CMod, IntMax, IntMin, SymbolEnv, Unresolved, to_sympy
from ..launch import LaunchGeometry
from .indices import FREE_VALUES, data_values

#: The thread-id symbols of the IR and of a 3-D grid (ir/symbolic.py: z ids read as these
#: under ``SymbolEnv.z_ids``), as block id * block size + thread id per axis.
_AXES = {"x": ("idx", "tidx", "bidx", "blockDimX", "gridDimX"),
         "y": ("idy", "tidy", "bidy", "blockDimY", "gridDimY"),
         "z": ("idz", "tidz", "bidz", "blockDimZ", "gridDimZ")}


class NoExtent(ValueError):
    """The extent of an array cannot be computed; the message says why."""


@dataclass
class Access:
    """One access with what bounds it: its index, the loops around it (outer first) and the
    conditions that hold where it runs (sympy relations; unreadable ones left out)."""

    index: sympy.Expr
    loops: list[tuple[str, sympy.Expr, sympy.Expr, int | None]]   # it, lower, upper (excl.), step
    conditions: list[sympy.Basic]
    why: str = ""                  # why this access cannot be bounded ('' when it can)
    # index arrays whose values the index or a loop bound holds, each read as a variable in
    # [0, FREE_VALUES) (verify/indices.py fills them so)
    data: set[str] = field(default_factory=set)
    # a plain store (not an atomic update), whose domain is exactly where it runs: every
    # condition and loop bound read, no return or break the domain leaves out (a race
    # between two such stores is certain: Extent.overlap)
    write: bool = False
    exact: bool = False


@dataclass
class Extent:
    """The element count of one array as a function of the problem sizes: call it with a
    size set (verify/expr.evaluate does) to get the exact maximum flat index + 1 at those
    sizes under the naive launch ``geometry``."""

    array: str
    accesses: list[Access]
    geometry: LaunchGeometry
    renamed: dict[str, str] = field(default_factory=dict)   # IR name -> the user's (sizes)
    _cache: dict = field(default_factory=dict, repr=False)

    def __call__(self, sizes: dict[str, int]) -> int:
        key = tuple(sorted(sizes.items()))
        if key not in self._cache:
            self._cache[key] = self._compute(sizes)
        value = self._cache[key]
        if isinstance(value, NoExtent):
            raise value
        return value

    def __str__(self) -> str:
        return f"inferred({self.array})"

    def overlap(self, sizes: dict[str, int], element: int | None = None) -> str:
        """Two threads of the naive launch that certainly store to the same element at
        ``sizes`` (to ``element`` where it is given), said as a witness (``threads (x=48,
        y=0) and (x=0, y=1) both write C[48]``), or '' where no exact store shows one
        (verify/check.py: such a kernel's result there depends on the order its threads run
        in, so a mismatch there proves nothing)."""
        sizes = self._ir_sizes(sizes)
        stores = [a for a in self.accesses if a.write and a.exact and not a.why]
        for i, first in enumerate(stores):
            for second in stores[i:]:
                try:
                    found = _overlap(first, second, sizes, self.geometry, element)
                except (NoExtent, ValueError):
                    continue
                if found:
                    return found.replace("ARRAY", self.array)
        return ""

    def least(self, sizes: dict[str, int]) -> int:
        """The least flat index any access reaches at ``sizes`` (0 where none runs; below 0:
        the naive kernel reaches before the array's start there). Raises NoExtent where an
        access cannot be bounded."""
        sizes = self._ir_sizes(sizes)
        found = [_index_bound(a, sizes, self.geometry, upper=False)
                 for a in self.accesses if a.why == "" or _raise(a.why)]
        return min([0] + [v for v in found if v is not None])

    def outside(self, sizes: dict[str, int], elements: int) -> str:
        """An access the naive kernel certainly makes outside ``elements`` elements at
        ``sizes`` (``writes D[2026]``, ``reads A[-27]``), or '' where no exact access does
        (verify/check.py: the naive kernel cannot run at such sizes). Only accesses whose
        domain is exactly where they run (Access.exact, and every condition affine at
        ``sizes``) count: an index bound over a domain that left a condition out (one on a
        scalar the sizes do not give) may be one no thread reaches."""
        sizes = self._ir_sizes(sizes)
        for a in self.accesses:
            if a.why or not a.exact:
                continue
            for upper in (True, False):
                try:
                    value = _index_bound(a, sizes, self.geometry, upper, exact=True)
                except (NoExtent, ValueError):
                    break
                if value is not None and (value >= elements if upper else value < 0):
                    verb = "writes" if a.write else "reads"
                    return f"{verb} {self.array}[{value}]"
        return ""

    def _ir_sizes(self, sizes: dict[str, int]) -> dict[str, int]:
        # sizes are the user's names; the IR renamed those the dialect reserves
        return {**{ir: sizes[user] for ir, user in self.renamed.items() if user in sizes},
                **sizes}

    @property
    def why(self) -> str:
        """Why the extent cannot be computed at any size ('' when it can)."""
        return next((a.why for a in self.accesses if a.why), "")

    @property
    def data(self) -> set[str]:
        """The index arrays whose values this extent assumed in [0, FREE_VALUES)."""
        return set().union(*(a.data for a in self.accesses)) if self.accesses else set()

    def _compute(self, sizes: dict[str, int]) -> int | NoExtent:
        try:
            sizes = self._ir_sizes(sizes)
            return max([1] + [_max_index(a, sizes, self.geometry) + 1 for a in self.accesses
                              if a.why == "" or _raise(a.why)])
        except NoExtent as exc:
            return NoExtent(f"the extent of {self.array} cannot be inferred: {exc}")


def _raise(why: str) -> bool:
    raise NoExtent(why)


def extents(proc: GProcedure, env: SymbolEnv, geometry: LaunchGeometry,
            arrays: list[str], space: str = "global") -> dict[str, Extent]:
    """The :class:`Extent` of each of ``arrays`` (global arrays of ``proc``) from the kernel's
    memory expressions; ``env`` reads every loop iterator (canonical or not) as a loop symbol
    and z ids as symbols. ``space`` "global": pointer parameters, whose reads are global or,
    for an OpenCL ``__constant float *`` parameter, constant; "constant": file-scope
    tables."""
    context = _contexts(proc, env)
    out = {name: Extent(name, [], geometry, dict(proc.renamed)) for name in arrays}
    spaces = {"global", "constant"} if space == "global" else {space}
    data = _DataValues(data_values(proc), env)
    updated = {id(atomics.atomic_target(n)) for n, _ in walk(proc.body)
               if atomics.atomic_target(n) is not None}
    plain = _plain_control(proc)
    chosen = _constant_locals(proc, env)
    for m in proc.memory_expressions:
        if m.array in out and m.space in spaces:
            # a store through data values (out[idx[i]] = v) races wherever two values meet,
            # and random values meet: only reads and atomic updates take them
            scatter = m.is_write and id(m.node) not in updated
            access = _access(m, context.get(id(m.node)), env, None if scatter else data,
                             chosen)
            access.write = scatter
            access.exact = access.exact and plain
            out[m.array].accesses.append(access)
    for name, why in _escapes(proc, set(arrays)).items() if space == "global" else ():
        out[name].accesses.append(Access(sympy.Integer(0), [], [], why))
    return out


def _escapes(proc: GProcedure, arrays: set[str]) -> dict[str, str]:
    """The arrays the kernel uses other than by indexing them (passed to a helper function,
    copied into a pointer): their accesses are not all in its memory expressions, so no
    extent computed from those would be safe."""
    out = {}
    for node, parent in walk(proc.body):
        if isinstance(node, c_ast.ID) and node.name in arrays and node.name not in out and \
                not (isinstance(parent, c_ast.ArrayRef) and parent.name is node) and \
                not (isinstance(parent, c_ast.StructRef) and parent.field is node) and \
                not _null_test(parent):
            # (a component name, acc.x, is no use of an array named x)
            if isinstance(parent, c_ast.ExprList):
                call = next((n for n, _ in walk(proc.body) if isinstance(n, c_ast.FuncCall)
                             and n.args is parent), None)
                what = f"passed to {to_c(call.name)}()" if call is not None else "passed on"
            else:
                what = f"used in '{to_c(parent)}'" if parent is not None else "used"
            out[node.name] = f"{node.name} is {what}, not only indexed"
    return out


class _DataValues:
    """Reads the values of index arrays in an index or a loop bound as variables in [0,
    FREE_VALUES) (``x[col[j]]``, ``wte[ix * C + c]``, ``for (j = rowptr[i]; j <
    rowptr[i + 1]; j++)``): verification fills those arrays so (verify/indices.py), so the
    extent over them is the extent of every run it makes. A value must enter the expression
    with a positive coefficient (a number, or one times the kernel's size parameters, which
    verification runs positive), so that its smallest value 0 is the index's smallest too."""

    def __init__(self, value_of, env: SymbolEnv) -> None:
        self.value_of, self.env, self.count = value_of, env, 0

    def read(self, node: c_ast.Node, loops: list, arrays: set[str], upper: bool = False
             ) -> sympy.Expr | None:
        """``node`` as sympy with each index-array value a fresh variable, whose range is
        appended to ``loops`` and whose array to ``arrays``; None where that leaves the
        expression opaque or the value's coefficient is not positive. ``upper``: the
        expression is a loop's exclusive bound, whose value may equal FREE_VALUES."""
        found: dict[str, str] = {}

        def swap(n):
            if n is None:
                return n
            array = self.value_of(n)
            if array is not None:
                self.count += 1
                name = f"nv_data{self.count}"
                found[name] = array
                return c_ast.ID(name)
            for slot in n.__slots__:
                child = getattr(n, slot, None)
                if isinstance(child, c_ast.Node):
                    setattr(n, slot, swap(child))
                elif isinstance(child, list):
                    setattr(n, slot, [swap(c) if isinstance(c, c_ast.Node) else c
                                      for c in child])
            return n

        tree = swap(copy.deepcopy(node))
        if not found:
            return None
        expr = to_sympy(tree, self.env.scoped(set(self.env.loops) | set(found)))
        if _opaque(expr):
            return None
        for name in found:
            d = sympy.Symbol(name, integer=True)
            coeff = sympy.expand(expr).coeff(d)
            factor, rest = coeff.as_coeff_Mul()
            if not (factor.is_number and factor > 0) or not rest.is_commutative or \
                    not all(isinstance(f, sympy.Symbol) and f.name in self.env.uniforms
                            for f in (sympy.Mul.make_args(rest) if rest != 1 else ())) or \
                    sympy.expand(expr - coeff * d).has(d):
                return None
        for name, array in found.items():
            loops.append((name, sympy.Integer(0),
                          sympy.Integer(FREE_VALUES + (1 if upper else 0)), None))
            arrays.add(array)
        return expr


def _constant_locals(proc: GProcedure, env: SymbolEnv) -> dict[str, tuple[int, int]]:
    """The locals every assignment of which is an integer constant, with the least and
    greatest of them: a bin chosen by branches (``if (v < 0.5f) bin = 2; else bin = 3;``, a
    switch's cases). An index through one ranges over those values (a superset of the ones
    it takes, which keeps an extent safe)."""
    values: dict[str, list[int]] = {}
    spoiled: set[str] = set(env.loops) | {p.name for p in proc.params}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.TypeDecl):
            target, value = node.name, node.init
            if value is None:
                values.setdefault(target, [])
                continue
        elif isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
            target, value = node.lvalue.name, node.rvalue if node.op == "=" else None
        elif isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--", "&") \
                and isinstance(node.expr, c_ast.ID):
            spoiled.add(node.expr.name)
            continue
        else:
            continue
        number = to_sympy(value, env) if value is not None else None
        if isinstance(number, sympy.Integer):
            values.setdefault(target, []).append(int(number))
        else:
            spoiled.add(target)
    return {name: (min(found), max(found)) for name, found in values.items()
            if found and name not in spoiled}


def _access(m: MemoryExpression, context, env: SymbolEnv, data: _DataValues | None,
            chosen: dict[str, tuple[int, int]] | None = None) -> Access:
    if context is None:
        return Access(sympy.Integer(0), [], [], f"the access {to_c(m.node)} was not found")
    loops, held = context
    conditions = [c for c, _ in held]
    exact = all(whole for _, whole in held)
    node = m.node
    bounded: list = []
    arrays: set[str] = set()
    subscript = None
    if isinstance(node, c_ast.ArrayRef) and not isinstance(node.name, c_ast.ArrayRef):
        subscript = node.subscript
        index = to_sympy(subscript, env)
    else:
        index = m.index
    if subscript is not None and _opaque(index) and data is not None:
        index = data.read(subscript, bounded, arrays) or index
    index = index * m.vector_width + (m.vector_width - 1) if m.vector_width > 1 else index
    by_branch = False
    for atom in _opaque(index):
        name = str(atom.args[0]).split("_", 1)[-1]
        if chosen and name in chosen:
            # a local set to constants on several branches: a variable over their range
            low, high = chosen[name]
            v = sympy.Symbol(f"nv_local_{name}", integer=True)
            index = index.xreplace({atom: v})
            bounded.append((v.name, sympy.Integer(low), sympy.Integer(high + 1), None))
            by_branch = True
    why = _unresolved(index, f"the index of {to_c(m.node)}")
    for lp in loops:
        found = _range(lp)
        # a counting-up loop of known step is its range; one read from its header (counting
        # down, halving) covers a superset of its values
        exact = exact and lp.lower is not None and lp.upper is not None and \
            lp.step is not None and lp.step > 0
        if found is None:
            why = why or f"the loop over {lp.iterator or '?'} has no bound naiveopt can read " \
                f"({lp.why_not_canonical or 'no iterator'})"
            continue
        lower, upper = (to_sympy(b, env) if isinstance(b, c_ast.Node) else b for b in found)
        if _opaque(lower) and isinstance(found[0], c_ast.Node) and data is not None:
            lower = data.read(found[0], bounded, arrays) or lower
        if _opaque(upper) and isinstance(found[1], c_ast.Node) and data is not None:
            upper = data.read(found[1], bounded, arrays, upper=True) or upper
        why = why or _unresolved(lower, f"the lower bound of the loop over {lp.iterator}") or \
            _unresolved(upper, f"the bound of the loop over {lp.iterator}")
        bounded.append((lp.iterator, lower, upper, lp.step))
    readable = [c for c in conditions if c is not None and not _opaque(c)]
    exact = exact and len(readable) == len(conditions) and not arrays and not by_branch
    return Access(index, bounded, readable, why, data=arrays if not why else set(),
                  exact=exact and not why)


def _null_test(node) -> bool:
    """Whether ``node`` only tests a pointer against null (``bias != NULL``, ``!bias``)."""
    if isinstance(node, c_ast.UnaryOp) and node.op == "!":
        return True
    if not (isinstance(node, c_ast.BinaryOp) and node.op in ("==", "!=")):
        return False
    return any(isinstance(n, c_ast.ID) and n.name in ("NULL", "nullptr") or
               isinstance(n, c_ast.Constant) and n.value == "0" or isinstance(n, c_ast.Cast)
               for n in (node.left, node.right))


def _range(lp: GLoop):
    """The iterator's range [lower, upper) of a loop: the loop analysis's for a counting-up
    loop; for one counting down (``for (k = m - 1; k >= 0; k--)``, ``k -= s``, or halving:
    ``s >>= 1``) from its header: [bound (+1 for ``>``), start + 1). None when the header
    says neither."""
    if lp.lower is not None and lp.upper is not None:
        return lp.lower, lp.upper
    node, it = lp.node, lp.iterator
    if not isinstance(node, c_ast.For) or it is None or lp.lower is None:
        return None
    cond, step = node.cond, node.next
    down = isinstance(step, c_ast.UnaryOp) and step.op in ("--", "p--") and \
        isinstance(step.expr, c_ast.ID) and step.expr.name == it or \
        isinstance(step, c_ast.Assignment) and isinstance(step.lvalue, c_ast.ID) and \
        step.lvalue.name == it and (
            step.op == "-=" or step.op in ("/=", ">>=") and _shrinks(step.op[:-1], step.rvalue)
            or step.op == "=" and isinstance(step.rvalue, c_ast.BinaryOp) and
            isinstance(step.rvalue.left, c_ast.ID) and step.rvalue.left.name == it and
            (step.rvalue.op == "-" or _shrinks(step.rvalue.op, step.rvalue.right)))
    if not down or not isinstance(cond, c_ast.BinaryOp):
        return None
    ops = {">=": 0, ">": 1}
    mirrored = {"<=": ">=", "<": ">"}
    if isinstance(cond.left, c_ast.ID) and cond.left.name == it and cond.op in ops:
        bound, op = cond.right, cond.op
    elif isinstance(cond.right, c_ast.ID) and cond.right.name == it and cond.op in mirrored:
        bound, op = cond.left, mirrored[cond.op]
    else:
        return None
    return (c_ast.BinaryOp("+", bound, c_ast.Constant("int", str(ops[op]))),
            c_ast.BinaryOp("+", lp.lower, c_ast.Constant("int", "1")))


def _shrinks(op: str, amount) -> bool:
    """Whether ``it op amount`` brings a positive iterator down towards 0: halving loops
    (``s >>= 1``, ``s /= 2``, the tree reductions' ``for (s = blockDim.x / 2; s > 0; s >>=
    1)``). Their values lie between the bound and the start, as a decrement's do (a
    superset of them, which keeps the extent safe)."""
    if not isinstance(amount, c_ast.Constant) or amount.type != "int":
        return False
    value = integer_value(amount.value)
    return value is not None and (op == ">>" and value >= 1 or op == "/" and value >= 2)


def _opaque(expr) -> set:
    """The opaque values of ``expr`` (clamps are not: isl reads min and max)."""
    return {u for u in expr.atoms(Unresolved) if not isinstance(u, (IntMin, IntMax))}


def _unresolved(expr: sympy.Expr, what: str) -> str:
    opaque = _opaque(expr)
    if not opaque:
        return ""
    parts = sorted({_KINDS.get(name, name) for name in
                    (str(u.args[0]).split("_", 1)[-1] for u in opaque)})
    return f"{what} depends on {', '.join(parts)}"


#: How an opaque value (ir/symbolic.Unresolved) came about, as a reason says it.
_KINDS = {"ArrayRef": "a value read from an array (data-dependent)",
          "FuncCall": "a function call", "div": "a division", "mod": "a remainder",
          "float": "a float", "Cast": "a cast", "op": "an operator naiveopt does not model",
          "TernaryOp": "a conditional expression", "StructRef": "a field or built-in"}


# ------------------------------------------------------------------ loops and conditions
def _contexts(proc: GProcedure, env: SymbolEnv) -> dict[int, tuple[list[GLoop], list]]:
    """For each array access node: the loops around it and the conditions that hold there."""
    loop_of = {id(lp.node): lp for lp in proc.loops}
    out: dict[int, tuple[list[GLoop], list]] = {}
    _visit(proc.body, [], [], loop_of, env, out)
    return out


def _visit(node, loops, conds, loop_of, env, out) -> None:
    if node is None:
        return
    if isinstance(node, c_ast.ArrayRef):
        out[id(node)] = (list(loops), list(conds))
    if isinstance(node, (c_ast.If, c_ast.TernaryOp)):      # both branches, each under its test
        _visit(node.cond, loops, conds, loop_of, env, out)
        _visit(node.iftrue, loops, conds + [_held(node.cond, env)], loop_of, env, out)
        _visit(node.iffalse, loops, conds + [_held(node.cond, env, negate=True)],
               loop_of, env, out)
        return
    if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        _visit(node.left, loops, conds, loop_of, env, out)
        _visit(node.right, loops, conds + [_held(node.left, env, negate=node.op == "||")],
               loop_of, env, out)
        return
    if isinstance(node, c_ast.Compound):
        held = list(conds)
        for item in node.block_items or []:
            _visit(item, loops, held, loop_of, env, out)
            if isinstance(item, c_ast.If) and _leaves(item.iftrue) and item.iffalse is None:
                held = held + [_held(item.cond, env, negate=True)]   # early return
        return
    if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)) and id(node) in loop_of:
        lp = loop_of[id(node)]
        for part in ("init", "cond", "next"):
            _visit(getattr(node, part, None), loops, conds, loop_of, env, out)
        _visit(node.stmt, loops + [lp], conds, loop_of, env, out)
        return
    for _, child in node.children():
        _visit(child, loops, conds, loop_of, env, out)


def _held(node, env: SymbolEnv, negate: bool = False) -> tuple:
    """(the condition ``node`` as :func:`condition` reads it, whether it read all of it)."""
    lost: list[bool] = []
    return condition(node, env, negate, lost), not lost


def _plain_control(proc: GProcedure) -> bool:
    """Whether every path through the kernel is what the access domains say: no break,
    continue, goto or switch, and returns only as early returns (``if (...) return;``) in a
    block outside any loop."""
    loops = {id(lp.node) for lp in proc.loops}
    early: set[int] = set()

    def visit(node, in_loop: bool) -> bool:
        if isinstance(node, (c_ast.Break, c_ast.Continue, c_ast.Goto, c_ast.Switch,
                             c_ast.Label)):
            return False
        if isinstance(node, c_ast.Return):
            return id(node) in early
        if isinstance(node, c_ast.Compound) and not in_loop:
            for item in node.block_items or []:
                if isinstance(item, c_ast.If) and item.iffalse is None and _leaves(item.iftrue):
                    early.add(id(item.iftrue))
                    if isinstance(item.iftrue, c_ast.Compound):
                        early.add(id(item.iftrue.block_items[-1]))
        inside = in_loop or id(node) in loops or isinstance(
            node, (c_ast.For, c_ast.While, c_ast.DoWhile))
        return all(visit(child, inside) for _, child in node.children())

    body = proc.body
    items = body.block_items or [] if isinstance(body, c_ast.Compound) else []
    if items and isinstance(items[-1], c_ast.Return):
        early.add(id(items[-1]))
    return visit(body, False)


def _leaves(stmt) -> bool:
    """Whether ``stmt`` always returns (or continues past nothing): ``return;``, ``{ ...;
    return; }``."""
    if isinstance(stmt, c_ast.Return):
        return True
    return isinstance(stmt, c_ast.Compound) and bool(stmt.block_items) and \
        isinstance(stmt.block_items[-1], c_ast.Return)


_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge,
              "==": sympy.Eq, "!=": sympy.Ne}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def condition(node, env: SymbolEnv, negate: bool = False, lost: list | None = None):
    """``node`` (or its negation) as a sympy relation / And / Or over the kernel's symbols, or
    None where it is not a comparison of integer expressions naiveopt can read (the domain is
    then left larger: an extent over it stays safe). Where a part is left out, True is
    appended to ``lost``."""
    lost = [] if lost is None else lost
    if isinstance(node, c_ast.UnaryOp) and node.op == "!":
        return condition(node.expr, env, not negate, lost)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        left = condition(node.left, env, negate, lost)
        right = condition(node.right, env, negate, lost)
        conj = (node.op == "&&") != negate
        if conj:                       # a && b: what of it is readable still holds
            parts = [p for p in (left, right) if p is not None]
            return sympy.And(*parts) if parts else None
        return None if left is None or right is None else sympy.Or(left, right)
    if isinstance(node, c_ast.BinaryOp) and node.op in _RELATIONS:
        op = _NEGATED[node.op] if negate else node.op
        left, right = to_sympy(node.left, env), to_sympy(node.right, env)
        if _opaque(left) or _opaque(right):
            lost.append(True)
            return None
        relation = _RELATIONS[op](left, right, evaluate=False)
        return relation
    lost.append(True)
    return None


# ------------------------------------------------------------------ the isl computation
@dataclass
class _Domain:
    """Where one access runs at concrete sizes, as isl text pieces: ``threads`` (its thread's
    block and thread ids, outer axis first) and ``hidden`` (loop iterators and step
    multiples) are the variables; ``bounds`` the launch's and the loops' constraints,
    ``conditions`` the enclosing conditions' (None where one is not affine at these sizes);
    ``index`` the flat index over them; ``gids`` the thread's global id per axis."""

    threads: list[str]
    hidden: list[str]
    bounds: list[str]
    conditions: list[str | None]
    index: sympy.Expr
    gids: list[sympy.Expr]


def _domain(access: Access, sizes: dict[str, int], geometry: LaunchGeometry,
            prefix: str = "v") -> _Domain:
    global_size, local = geometry.sizes(sizes)
    names: dict[sympy.Symbol, sympy.Expr] = {}
    threads, hidden, bounds, gids = [], [], [], []
    for axis, g, b in zip("xyz", global_size, local):
        gid, tid, bid, bdim, gdim = _AXES[axis]
        groups = -(-g // b)
        t = sympy.Symbol(f"{prefix}_t{axis}", integer=True)
        bl = sympy.Symbol(f"{prefix}_b{axis}", integer=True)
        threads[:0] = [bl.name, t.name]        # z, y, x: a lexmin is row-major
        bounds += [f"0 <= {t} < {b}", f"0 <= {bl} < {groups}"]
        gids.append(bl * b + t)
        for name, value in ((gid, bl * b + t), (tid, t), (bid, bl), (bdim, sympy.Integer(b)),
                            (gdim, sympy.Integer(groups))):
            names[sympy.Symbol(name, integer=True)] = value
    for name, value in sizes.items():
        names.setdefault(sympy.Symbol(name, integer=True), sympy.Integer(int(value)))
    for it, lower, upper, step in access.loops:
        v = sympy.Symbol(f"{prefix}_it_{it}", integer=True)
        lo, hi = _sub(lower, names), _sub(upper, names)
        free = {s.name for s in (lo.free_symbols | hi.free_symbols)} - set(threads + hidden)
        if free:
            raise NoExtent(f"the bounds of loop {it} name {', '.join(sorted(free))}, which no "
                           "size set gives")
        names[sympy.Symbol(it, integer=True)] = v
        hidden.append(v.name)
        bounds.append(f"{_isl(lo)} <= {v} < {_isl(hi)}")
        if step and step > 1:
            hidden.append(f"{prefix}_e_{it}")
            bounds.append(f"{v} = {_isl(lo)} + {step}*{prefix}_e_{it}")
    conditions = []
    for cond in access.conditions:
        cond = _sub(cond, names)
        if cond is not sympy.true:
            conditions.append(_isl_condition(cond))
    index = _sub(access.index, names)
    free = {s.name for s in index.free_symbols} - set(threads + hidden)
    if free:
        raise NoExtent(f"the index {access.index} names {', '.join(sorted(free))}, which no "
                       "size set gives")
    return _Domain(threads, hidden, bounds, conditions, index, gids)


def _max_index(access: Access, sizes: dict[str, int], geometry: LaunchGeometry) -> int:
    """The greatest flat index ``access`` reaches at ``sizes`` (-1 where it never runs)."""
    value = _index_bound(access, sizes, geometry, upper=True)
    return -1 if value is None else value


def _index_bound(access: Access, sizes: dict[str, int], geometry: LaunchGeometry,
                 upper: bool, exact: bool = False) -> int | None:
    """The greatest (``upper``) or least flat index ``access`` reaches at ``sizes``, over its
    domain (conditions not affine at these sizes left out: a larger domain; with ``exact``,
    NoExtent instead); None where the domain is empty (the access never runs)."""
    import islpy as isl

    d = _domain(access, sizes, geometry)
    space = f"[{', '.join(d.threads + d.hidden)}]"
    domain = isl.Set(f"{{ {space} : {' and '.join(d.bounds)} }}")
    for text in d.conditions:
        try:        # a condition that is not affine at these sizes is left out (domain larger)
            if text is None:
                raise isl.Error
            domain = domain.intersect(isl.Set(f"{{ {space} : {text} }}"))
        except isl.Error:
            if exact:
                raise NoExtent("a condition is not affine at these sizes") from None
    try:
        index = isl.PwAff(f"{{ {space} -> [({_isl(d.index)})] }}").intersect_domain(domain)
        value = index.max_val() if upper else index.min_val()
    except isl.Error as exc:
        raise NoExtent(f"the index {access.index} is not affine in the thread ids and loop "
                       "iterators") from exc
    if value.is_nan():                       # an empty domain: the access never runs
        return None
    if value.is_infty() or value.is_neginfty():
        raise NoExtent(f"the index {access.index} is unbounded over the kernel's loops")
    return int(value.to_python())


def _overlap(first: Access, second: Access, sizes: dict[str, int],
             geometry: LaunchGeometry, element: int | None = None) -> str:
    """A witness that two distinct threads run ``first`` and ``second`` on the same element
    at ``sizes`` ('' when none do): one isl set over both threads' ids and the element, the
    loop iterators of each existentially quantified."""
    import islpy as isl

    a, b = _domain(first, sizes, geometry, "a"), _domain(second, sizes, geometry, "b")
    if None in a.conditions + b.conditions:
        raise NoExtent("a condition is not affine at these sizes")
    apart = " or ".join(f"({_isl(x)} < {_isl(y)} or {_isl(x)} > {_isl(y)})"
                        for x, y in zip(a.gids, b.gids))
    free = ["elem"] + a.threads + b.threads
    hidden = a.hidden + b.hidden
    body = " and ".join(a.bounds + b.bounds + [f"({c})" for c in a.conditions + b.conditions]
                        + [f"elem = {_isl(a.index)}", f"elem = {_isl(b.index)}", f"({apart})"]
                        + ([f"elem = {int(element)}"] if element is not None else []))
    text = f"{{ [{', '.join(free)}] : " + \
        (f"exists ({', '.join(hidden)} : {body})" if hidden else body) + " }"
    try:
        point = isl.Set(text).lexmin().sample_point()     # the first element, thread
    except isl.Error as exc:
        raise NoExtent("not affine at these sizes") from exc
    if point.is_void():
        return ""
    value = {name: int(point.get_coordinate_val(isl.dim_type.set, i).to_python())
             for i, name in enumerate(free)}
    global_size, local = geometry.sizes(sizes)

    def thread(prefix: str) -> str:
        shown = [f"{axis}={value[f'{prefix}_b{axis}'] * size + value[f'{prefix}_t{axis}']}"
                 for axis, size, g in zip("xyz", local, global_size) if axis == "x" or g > 1]
        return f"({', '.join(shown)})"

    return f"threads {thread('a')} and {thread('b')} both write ARRAY[{value['elem']}]"


def _sub(expr, names):
    return expr.xreplace(names)


def _isl(expr: sympy.Expr) -> str:
    """An integer sympy expression as isl text (C's truncating division of non-negative
    values by a positive constant as floor). isl reads a coefficient only as a bare number
    (``-3*b``, not ``(-3)*b``)."""
    if isinstance(expr, (CDiv, CMod)):
        divisor = expr.args[1]
        if not isinstance(divisor, sympy.Integer) or divisor <= 0:
            raise NoExtent(f"{expr} divides by a value that is not a positive constant")
        if isinstance(expr, CDiv):
            return f"floor(({_isl(expr.args[0])})/{int(divisor)})"
        return f"(({_isl(expr.args[0])}) mod {int(divisor)})"
    if isinstance(expr, (IntMin, IntMax)):
        name = "min" if isinstance(expr, IntMin) else "max"
        return f"{name}({_isl(expr.args[0])}, {_isl(expr.args[1])})"
    if isinstance(expr, sympy.Add):
        return " + ".join(_isl(a) for a in expr.args)
    if isinstance(expr, sympy.Mul):
        return "*".join(_isl(a) if isinstance(a, (sympy.Integer, sympy.Symbol)) else
                        f"({_isl(a)})" for a in expr.args)
    if isinstance(expr, sympy.Integer):
        return str(int(expr))
    if isinstance(expr, sympy.Symbol):
        return expr.name
    raise NoExtent(f"{expr} is not integer arithmetic")


def _isl_condition(cond) -> str | None:
    if cond is sympy.true:
        return None
    if cond is sympy.false:
        return "1 = 0"
    if isinstance(cond, sympy.And):
        parts = [p for p in (_isl_condition(a) for a in cond.args) if p is not None]
        return " and ".join(f"({p})" for p in parts) if parts else None
    if isinstance(cond, sympy.Or):
        parts = [_isl_condition(a) for a in cond.args]
        return None if None in parts else " or ".join(f"({p})" for p in parts)
    ops = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.StrictGreaterThan: ">",
           sympy.GreaterThan: ">=", sympy.Equality: "=", sympy.Unequality: "!="}
    op = ops.get(type(cond))
    if op is None:
        return None
    try:
        left, right = _isl(cond.lhs), _isl(cond.rhs)
    except NoExtent:
        return None
    if op == "!=":
        return f"{left} < {right} or {left} > {right}"
    return f"{left} {op} {right}"
