"""Facts about a kernel's local scalars and statements that the canonicalization passes
share: where a name is declared and referenced, whether it is an integer, which compound
holds a statement.

The passes move declarations and statements, so they ask these questions of the tree as it is
now; nothing here is cached.
"""
from __future__ import annotations

import copy
from collections.abc import Iterator

from pycparser import c_ast

from ....ir.rewrite import map_uses, walk
from ....ir.typenames import INTEGER_WORDS, UNSIGNED_WORDS


def type_words(decl: c_ast.Decl) -> list[str] | None:
    """The type words of a plain scalar declaration (``int``, ``unsigned int``), or None
    for arrays, pointers, structs and functions. A typedef'd type is spelled as the front end
    resolved it, several words in one name (``size_t`` is ``['unsigned long']``): each word
    counts on its own, else a ``size_t c;`` iterator would not be an integer."""
    t = decl.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        return [w for name in t.type.names for w in name.split()]
    return None


def is_integer(decl: c_ast.Decl) -> bool:
    words = type_words(decl)
    return bool(words) and all(w in INTEGER_WORDS for w in words)


def is_signed_integer(decl: c_ast.Decl) -> bool:
    words = type_words(decl) or []
    return is_integer(decl) and not set(words) & UNSIGNED_WORDS and words != ["char"]


def is_plain_local(decl: c_ast.Decl) -> bool:
    """A scalar local the passes may move: no storage class (static, __shared__...), not
    volatile."""
    return type_words(decl) is not None and not decl.storage and "volatile" not in decl.quals \
        and not getattr(decl, "funcspec", None)


def declarations(node: c_ast.Node) -> dict[str, list[c_ast.Decl]]:
    """Every declaration under ``node``, by name."""
    out: dict[str, list[c_ast.Decl]] = {}
    for n, _ in walk(node):
        if isinstance(n, c_ast.Decl) and n.name:
            out.setdefault(n.name, []).append(n)
    return out


def references(node: c_ast.Node, name: str) -> list[c_ast.ID]:
    """The uses of ``name`` under ``node`` (IDs; declarations are not uses)."""
    return [n for n, _ in walk(node) if isinstance(n, c_ast.ID) and n.name == name]


def mentions(node: c_ast.Node | None, name: str) -> bool:
    return node is not None and bool(references(node, name))


def parents(root: c_ast.Node) -> dict[int, c_ast.Node]:
    """id(node) -> its parent, for every node under ``root``."""
    return {id(n): p for n, p in walk(root) if p is not None}


def compounds(root: c_ast.Node) -> Iterator[c_ast.Compound]:
    """Every compound statement under ``root`` (``root`` first if it is one)."""
    for n, _ in walk(root):
        if isinstance(n, c_ast.Compound):
            yield n


def has_jumps(node: c_ast.Node, kinds: tuple[type, ...]) -> bool:
    """Whether ``node`` holds a statement of ``kinds`` (break, continue, return, goto...)."""
    return any(isinstance(n, kinds) for n, _ in walk(node))


def has_loop_jump(node: c_ast.Node, kind: type) -> bool:
    """Whether ``node`` holds a ``break``/``continue`` (``kind``) that leaves or restarts the
    loop whose body ``node`` is: one not inside a nested loop (or, for break, a switch)."""
    nested = (c_ast.For, c_ast.While, c_ast.DoWhile) + (
        (c_ast.Switch,) if kind is c_ast.Break else ())

    def visit(n: c_ast.Node) -> bool:
        if isinstance(n, kind):
            return True
        if isinstance(n, nested):
            return False
        return any(visit(c) for _, c in n.children())

    return visit(node)


def replace_names(node: c_ast.Node, values: dict[str, c_ast.Node], seen: list[str] | None = None
               ) -> c_ast.Node:
    """``node`` with each use of a name in ``values`` replaced by a copy of its value (a
    struct field or a called function's name is not a use); ``seen`` collects the names
    replaced."""
    def fn(n: c_ast.Node) -> c_ast.Node | None:
        if isinstance(n, c_ast.ID):
            if n.name in values:
                if seen is not None:
                    seen.append(n.name)
                return copy.deepcopy(values[n.name])
            return n
        return None

    return map_uses(node, fn)


def uses(body: c_ast.Node) -> dict[int, list[c_ast.ID]]:
    """id(declaration) -> the IDs that name it, by C's scopes: a block's declarations from
    where they stand to the block's end, a for loop's for the loop. Names declared nowhere in
    ``body`` (parameters, macros) are left out."""
    out: dict[int, list[c_ast.ID]] = {}

    def visit(n: c_ast.Node, scopes: list[dict[str, c_ast.Decl]]) -> None:
        if isinstance(n, c_ast.ID):
            for scope in reversed(scopes):
                if n.name in scope:
                    out.setdefault(id(scope[n.name]), []).append(n)
                    break
            return
        if isinstance(n, c_ast.StructRef):
            visit(n.name, scopes)
            return
        if isinstance(n, c_ast.FuncCall):
            if n.args is not None:
                visit(n.args, scopes)
            return
        if isinstance(n, c_ast.Decl):
            for _, child in n.children():
                visit(child, scopes)
            if n.name:
                scopes[-1][n.name] = n
            return
        if isinstance(n, (c_ast.Compound, c_ast.For)):
            scopes = scopes + [{}]
        for _, child in n.children():
            visit(child, scopes)

    visit(body, [{}])
    return out


def drop_unused(body: c_ast.Node, names: set[str]) -> list[str]:
    """Remove the declarations of ``names`` that nothing reads any more and whose
    initializers are pure (a rewrite took their last use); returns the names removed."""
    from ....analysis.shape import is_pure

    removed = []
    named = uses(body)
    up = parents(body)
    for decl in [n for n, _ in walk(body) if isinstance(n, c_ast.Decl) and n.name in names]:
        home = up.get(id(decl))
        if named.get(id(decl)) or not isinstance(home, c_ast.Compound) or \
                not is_pure(decl.init):
            continue
        home.block_items = [s for s in home.block_items if s is not decl]
        removed.append(decl.name)
    return removed
