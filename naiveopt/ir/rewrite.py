"""Generic rewriting of c_ast trees.

pycparser ships a visitor but no transformer; passes rewrite trees bottom-up with
:func:`map_nodes`, and collect facts with :func:`walk`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from pycparser import c_ast


#: Nodes that hold statements, and the slots a statement stands in (a block's items, a
#: branch, a loop body, a case's statements).
STATEMENT_SLOTS: dict[type, tuple[str, ...]] = {
    c_ast.Compound: ("block_items",), c_ast.If: ("iftrue", "iffalse"),
    c_ast.For: ("stmt",), c_ast.While: ("stmt",), c_ast.DoWhile: ("stmt",),
    c_ast.Case: ("stmts",), c_ast.Default: ("stmts",), c_ast.Label: ("stmt",)}


def _slots(node: c_ast.Node) -> list[str]:
    return [s for s in node.__slots__ if s not in ("coord", "__weakref__")]


def map_nodes(node: c_ast.Node, fn: Callable[[c_ast.Node], c_ast.Node]) -> c_ast.Node:
    """Rebuild ``node``'s children with ``map_nodes`` and return ``fn(node)`` (post-order).

    ``fn`` returns the node itself or a replacement; children are updated in place.
    """
    return fn(map_children(node, lambda child, slot: map_nodes(child, fn)))


def map_children(node: c_ast.Node, fn: Callable[[c_ast.Node, str], c_ast.Node]
                 ) -> c_ast.Node:
    """Replace each child of ``node`` by ``fn(child, slot)`` (the slot's name: ``iftrue``,
    ``block_items``...), in place; returns ``node``. The step of a pre-order rewrite that
    decides at a node before it descends (:func:`map_nodes` is post-order)."""
    for slot in _slots(node):
        value = getattr(node, slot)
        if isinstance(value, c_ast.Node):
            setattr(node, slot, fn(value, slot))
        elif isinstance(value, list) and value and isinstance(value[0], c_ast.Node):
            setattr(node, slot, [fn(v, slot) for v in value])
    return node


def map_uses(node: c_ast.Node, fn: Callable[[c_ast.Node], c_ast.Node | None]) -> c_ast.Node:
    """A pre-order rewrite of the expressions ``node`` reads: ``fn`` returns a node's
    replacement (not descended into) or None to go on into its children. A struct field's
    name and a called function's name are not reads and are not visited."""
    def visit(n: c_ast.Node) -> c_ast.Node:
        new = fn(n)
        if new is not None:
            return new
        if isinstance(n, c_ast.StructRef):
            n.name = visit(n.name)
            return n
        if isinstance(n, c_ast.FuncCall):
            if n.args is not None:
                n.args = visit(n.args)
            return n
        return map_children(n, lambda child, slot: visit(child))

    return visit(node)


def pointer_root(node: c_ast.Node) -> str | None:
    """The array a pointer expression points into (``x``, ``&x[i]``, ``x + 4 * i``,
    ``(char *)x``), or None."""
    while True:
        if isinstance(node, c_ast.ID):
            return node.name
        if isinstance(node, c_ast.Cast):
            node = node.expr
        elif isinstance(node, c_ast.UnaryOp) and node.op == "&":
            node = node.expr
        elif isinstance(node, c_ast.ArrayRef):
            node = node.name
        elif isinstance(node, c_ast.BinaryOp) and node.op in "+-":
            node = node.left
        else:
            return None


def walk(node: c_ast.Node, parent: c_ast.Node | None = None
         ) -> Iterator[tuple[c_ast.Node, c_ast.Node | None]]:
    """Pre-order (node, parent) pairs of a tree.

    An explicit stack, not recursive generators: each level of ``yield from`` costs every
    item passing through it, and the unrolled stencil bodies are trees of thousands of nodes
    walked by most analyses. A node's children are read after the node has been yielded, as
    before, so a caller may still replace them when it sees the node."""
    stack: list[tuple[c_ast.Node, c_ast.Node | None]] = [(node, parent)]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        yield item
        current = item[0]
        push([(child, current) for _, child in reversed(current.children())])


def replace_child(parent: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> bool:
    """Put ``new`` where ``parent`` holds ``old`` (a slot, or an item of a list slot);
    whether it was there. With a parent map (``walk``) this replaces one statement without
    rebuilding the tree, as ``map_nodes`` would."""
    for slot in _slots(parent):
        value = getattr(parent, slot)
        if value is old:
            setattr(parent, slot, new)
            return True
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return True
    return False


def identifiers(node: c_ast.Node) -> set[str]:
    """Every identifier name appearing in a tree (uses and declarations)."""
    names = set()
    for n, _ in walk(node):
        if isinstance(n, c_ast.ID):
            names.add(n.name)
        elif isinstance(n, c_ast.Decl) and n.name:
            names.add(n.name)
    return names


def assigned_names(node: c_ast.Node) -> dict[str, int]:
    """How many times each plain variable is (re)defined: declarations with an initializer,
    assignments and increments. Used to decide which locals are single-definition aliases."""
    counts: dict[str, int] = {}
    for n, _ in walk(node):
        target = None
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            target = n.lvalue.name
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                isinstance(n.expr, c_ast.ID):
            target = n.expr.name
        elif isinstance(n, c_ast.Decl) and n.name and n.init is not None:
            target = n.name
        if target:
            counts[target] = counts.get(target, 0) + 1
    return counts


def side_effect_free(node: c_ast.Node, pure_calls: frozenset[str] | set[str] = frozenset()
                     ) -> bool:
    """Whether evaluating ``node`` twice is the same as once: no assignment, increment, or
    call other than to a function of ``pure_calls``."""
    for n, _ in walk(node):
        if isinstance(n, c_ast.Assignment) or (
                isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")):
            return False
        if isinstance(n, c_ast.FuncCall) and not (
                isinstance(n.name, c_ast.ID) and n.name.name in pure_calls):
            return False
    return True


def increment(node: c_ast.Node | None, name: str) -> c_ast.Node | None:
    """What an update ``name += X`` / ``name = name + X`` / ``name = X + name`` adds to
    ``name`` (X), else None: a loop's step, a reduction's term."""
    if not (isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and
            node.lvalue.name == name):
        return None
    if node.op == "+=":
        return node.rvalue
    value = node.rvalue
    if node.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op == "+":
        for mine, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(mine, c_ast.ID) and mine.name == name:
                return other
    return None
