"""Integer arrays whose values index other arrays: what random data keeps them in range.

A gather ``A[idx[i]]`` or a CSR product ``for (j = rowptr[i]; j < rowptr[i+1]; j++)
s += val[j] * x[col[j]]`` reads out of bounds on random integers: the naive kernel itself
crashes or reads garbage, and the check proves nothing. Verification fills such arrays with
values that keep every access in range:

- an array whose value is a whole subscript (``A[idx[i]]``, or ``A[k]`` with ``k`` only ever
  assigned ``idx[...]``): values in [0, extent of A);
- an array whose values bound a loop (``rowptr``, directly or through such a variable) whose
  iterator is a whole subscript in the loop body (``val[j]``): a sorted, non-decreasing
  sequence in [0, extent] of those arrays (the bound is exclusive), so that every row range is
  in range and none is reversed.

Other uses in an index (``A[idx[i] * W + j]``, a loop whose iterator is scaled) are recorded
as unresolved, with why: the arrays keep the default data, and if the naive kernel then fails
the kernel is reported as data-dependent (not verified) rather than as failed.

Where no pragma or metadata gives the extents, verify/extents.py reads an index array's
values as variables in [0, FREE_VALUES) and infers the extents they reach; such an array is
filled in that range too (IndexFill.limit), also where its values are part of a computed
index (spec.with_kernel_facts).

The analysis reads the naive kernel's statement tree (pycparser c_ast) directly: the
subscripts it needs are exactly the ones the IR's memory expressions cannot decompose.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

from ..ir import GProcedure
from ..ir.elements import element
from ..ir.literals import integer_value


#: The values an index array holds under verification where no known extent bounds them:
#: [0, FREE_VALUES). An array indexed by such values without a pragma gets the extent they
#: reach (verify/extents.py reads each value as a variable in this range).
FREE_VALUES = 64


@dataclass
class IndexFill:
    """How to fill one integer array: values in [0, min over ``bounds`` and ``limit``) where
    each bound is (array, inclusive): the extent of that array, plus one when the value may
    equal it; ``limit``: FREE_VALUES where an inferred extent assumed that range."""

    bounds: list[tuple[str, bool]] = field(default_factory=list)
    sorted: bool = False
    limit: int | None = None


def data_values(proc: GProcedure):
    """A function of a node: the integer array parameter whose element the node's value is
    (``idx[i]``, ``(int)idx[i]``, a local only ever assigned such a read), or None."""
    ints = {p.name for p in proc.params if p.is_pointer and p.address_space != "local" and
            (e := element(p.base_type)) and not e.is_float}
    aliases = _aliases(proc.body, ints) if ints else {}

    def value_of(node) -> str | None:
        while isinstance(node, c_ast.Cast):
            node = node.expr
        if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID) and \
                node.name.name in ints:
            return node.name.name
        if isinstance(node, c_ast.ID):
            return aliases.get(node.name)
        return None
    return value_of


def index_facts(proc: GProcedure, shapes: dict[str, list[str]]
                ) -> tuple[dict[str, IndexFill], dict[str, str]]:
    """The fills of ``proc``'s integer index arrays, and those left unresolved (name -> why).
    ``shapes`` are the arrays whose extents are known."""
    if not any(p.is_pointer and p.address_space != "local" and (e := element(p.base_type))
               and not e.is_float for p in proc.params):
        return {}, {}
    value_of = data_values(proc)
    fills: dict[str, IndexFill] = {}
    unresolved: dict[str, str] = {}

    declared = _declared_extents(proc.body)

    def add(array: str, target: str, inclusive: bool, sort: bool = False) -> None:
        if target in declared and target not in shapes:     # a __shared__ or local array
            fill = fills.setdefault(array, IndexFill())
            bound = declared[target] + (1 if inclusive else 0)
            fill.limit = min(fill.limit or bound, bound)
            fill.sorted = fill.sorted or sort
            return
        if target not in shapes:
            unresolved.setdefault(array, f"the extent of {target}, which {array} indexes, "
                                  "is unknown")
            return
        fill = fills.setdefault(array, IndexFill())
        fill.bounds.append((target, inclusive))
        fill.sorted = fill.sorted or sort

    for ref in _nodes(proc.body, c_ast.ArrayRef):
        if not isinstance(ref.name, c_ast.ID):
            continue
        whole = value_of(ref.subscript)
        if whole is not None:
            add(whole, ref.name.name, False)
            continue
        for inner in _reads(ref.subscript, value_of):
            unresolved.setdefault(inner, f"{inner}'s values are part of a computed index of "
                                  f"{ref.name.name}")
    for loop in _nodes(proc.body, c_ast.For):
        _loop_bounds(loop, value_of, add, unresolved)
    return fills, unresolved


def _loop_bounds(loop: c_ast.For, value_of, add, unresolved) -> None:
    """Record the arrays whose values bound ``loop`` (see the module docstring)."""
    iterator, lower = _init(loop.init)
    cond = loop.cond
    upper, inclusive = None, False
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and \
            isinstance(cond.left, c_ast.ID) and cond.left.name == iterator:
        upper, inclusive = cond.right, cond.op == "<="
    sources = {s for s in (value_of(lower) if lower is not None else None,
                           value_of(upper) if upper is not None else None) if s}
    data_bound = [r for r in _reads(cond, value_of)] + (
        [r for r in _reads(lower, value_of)] if lower is not None else [])
    if not sources:
        for name in data_bound:
            unresolved.setdefault(name, f"{name}'s values bound a loop in a computed form")
        return
    uses = [ref for ref in _nodes(loop.stmt, c_ast.ArrayRef)
            if iterator in _own_identifiers(ref.subscript)]
    whole = [ref for ref in uses if isinstance(ref.subscript, c_ast.ID) and
             isinstance(ref.name, c_ast.ID)]
    for name in sources:
        if len(whole) != len(uses):
            unresolved.setdefault(name, f"{name}'s values bound a loop whose iterator "
                                  f"{iterator} is part of a computed index")
            continue
        for ref in whole:
            add(name, ref.name.name, not inclusive, sort=True)


def _declared_extents(body: c_ast.Node) -> dict[str, int]:
    """The element counts of the kernel's own arrays of constant size (``__shared__ unsigned
    int temp[256];``), by name."""
    out = {}
    for decl in _nodes(body, c_ast.Decl):
        t, count = decl.type, 1
        while isinstance(t, c_ast.ArrayDecl):
            dim = integer_value(t.dim.value) if isinstance(t.dim, c_ast.Constant) else None
            if dim is None:
                break
            count, t = count * dim, t.type
        else:
            if count > 1 or isinstance(decl.type, c_ast.ArrayDecl):
                out[decl.name] = count
    return out


def _init(init) -> tuple[str | None, c_ast.Node | None]:
    """The iterator and initial value of a for loop's init (``int j = e`` or ``j = e``)."""
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        init = init.decls[0]
    if isinstance(init, c_ast.Decl):
        return init.name, init.init
    if isinstance(init, c_ast.Assignment) and init.op == "=" and \
            isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name, init.rvalue
    return None, None


def _aliases(body: c_ast.Node, ints: set[str]) -> dict[str, str]:
    """Local variables only ever assigned a plain read of one integer array (``k = idx[i]``):
    variable -> array."""
    assigned: dict[str, set] = {}

    def note(name: str, value) -> None:
        while isinstance(value, c_ast.Cast):
            value = value.expr
        source = value.name.name if isinstance(value, c_ast.ArrayRef) and isinstance(
            value.name, c_ast.ID) and value.name.name in ints else None
        assigned.setdefault(name, set()).add(source)

    for decl in _nodes(body, c_ast.Decl):
        if decl.init is not None and decl.name:
            note(decl.name, decl.init)
    for assign in _nodes(body, c_ast.Assignment):
        if isinstance(assign.lvalue, c_ast.ID):
            note(assign.lvalue.name, assign.rvalue if assign.op == "=" else None)
    for op in _nodes(body, c_ast.UnaryOp):
        if op.op in ("++", "--", "p++", "p--") and isinstance(op.expr, c_ast.ID):
            assigned.setdefault(op.expr.name, set()).add(None)
    return {name: next(iter(sources)) for name, sources in assigned.items()
            if len(sources) == 1 and None not in sources}


def _reads(node, value_of) -> list[str]:
    """Integer arrays whose values appear anywhere in ``node``."""
    found = []
    for sub in _nodes(node, (c_ast.ArrayRef, c_ast.ID)):
        name = value_of(sub)
        if name and name not in found:
            found.append(name)
    return found


def _own_identifiers(node) -> set[str]:
    """Identifiers of a subscript outside nested array reads (``j`` in ``x[col[j]]`` is
    col's subscript, checked with col, not part of x's)."""
    names, stack = set(), [node]
    while stack:
        current = stack.pop()
        if isinstance(current, c_ast.ID):
            names.add(current.name)
        elif current is not None and not isinstance(current, c_ast.ArrayRef):
            stack.extend(child for _, child in current.children())
        elif isinstance(current, c_ast.ArrayRef):
            stack.append(current.name)
    return names


def _nodes(node, kind) -> list:
    """Every node of type ``kind`` in the tree under ``node`` (``node`` included)."""
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        if current is None:
            continue
        if isinstance(current, kind):
            out.append(current)
        stack.extend(child for _, child in current.children())
    return out[::-1]
