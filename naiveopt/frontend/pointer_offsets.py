"""Local pointers that offset an array parameter, read as indexed accesses of the array.

llm.c and much tutorial code seek to a row before walking it::

    const float* x = inp + idx * C;      // x[i] is inp[idx * C + i]
    float* out_btc = out + b * T * C + t * C + c;
    *out_btc = *wte_ix + *wpe_tc;        // *p is p[0]

naiveopt's IR has no pointer variables: every analysis (memory expressions, coalescing, tiling)
reads accesses as ``array[index]`` of a kernel parameter. So the front end resolves such a
pointer when it reads the kernel: the declaration disappears and every use becomes an access of
the parameter at ``offset + index``. That is only the same program when the offset means the
same at every use as at the declaration, and when the pointer is only ever indexed or
dereferenced; :class:`PointerOffsets` proves both or the file is refused with a located error
naming the reason:

- the pointer is never assigned after its declaration (no ``p++``, no ``p = q``), or, declared
  without an initializer (C89), assigned once, as a statement of its own, and used only after
  that statement in its block (the assignment then stands for the initializer);
- no variable of the offset is assigned while the pointer lives, between the declaration and
  the end of its block (the offset is evaluated anew at each use); a loop's increment
  outside that block is no such assignment (``for (y = ...; y < h; y += n) { const float
  *row = M + y * w; ... }`` declares the pointer anew in each iteration);
- the pointer's element type is the parameter's (a cast to another element type reinterprets
  bytes, which an index of the parameter cannot say);
- every use indexes it (``p[e]``) or dereferences it (``*p``, ``*(p + e)``).

Offsets chain: ``const float* row = a + i * n; const float* x = row + j;`` makes ``x[k]``
``a[i * n + j + k]``.

A pointer that moves (Caffe's and PyTorch's im2col: ``float* data_col_ptr = data_col;
data_col_ptr += (c_col * height_col + h_col) * width_col + w_col;`` and, per tap,
``*data_col_ptr = ...; data_col_ptr += height_col * width_col;``) is an element offset
instead: a ``ptrdiff_t`` local of the pointer's name holding its offset from the parameter,
moved by the same ``+=``, ``-=``, ``++`` and ``--``, and every access ``base[offset + i]``.
That is the same program when every write of the pointer is such a move, and every other
use indexes or dereferences it (a pointer set from it would keep the moving local's later
value: refused).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import clang.cindex as ci
from pycparser import c_ast

K = ci.CursorKind
_WRITES = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


def _key(decl: ci.Cursor) -> tuple[int, str]:
    """A declaration's identity across cursors that reference it."""
    return decl.location.offset, decl.spelling


def _refers(cursor: ci.Cursor, decl: ci.Cursor) -> bool:
    """Whether ``cursor`` is a reference to the declaration ``decl``."""
    return cursor.kind == K.DECL_REF_EXPR and cursor.referenced is not None and \
        _key(cursor.referenced) == _key(decl)


def strip(cursor: ci.Cursor) -> ci.Cursor:
    """The cursor under implicit casts and parentheses."""
    while cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
        children = list(cursor.get_children())
        if len(children) != 1:
            break
        cursor = children[0]
    return cursor


def is_pointer(cursor: ci.Cursor) -> bool:
    return cursor.type.get_canonical().kind == ci.TypeKind.POINTER


def _pointee(cursor_or_type) -> str:
    """A pointer's element type without qualifiers (``const float`` and ``float`` agree)."""
    t = cursor_or_type.type if isinstance(cursor_or_type, ci.Cursor) else cursor_or_type
    return t.get_canonical().get_pointee().get_canonical().spelling.replace("const ", "") \
        .replace("volatile ", "").strip()


@dataclass
class Alias:
    """A local pointer resolved to its array parameter: uses become ``base[offset + i]``."""

    base: str                    # the array parameter's name
    offset: c_ast.Node | None    # the element offset as a c_ast expression (None: 0)
    moving: bool = False         # the offset is a local of the pointer's name, moved by +=

    def access(self, index: c_ast.Node | None, coord=None) -> c_ast.ArrayRef:
        """``base[offset + index]`` (either part may be absent)."""
        parts = [copy.deepcopy(p) for p in (self.offset, index) if p is not None]
        subscript = parts[0] if len(parts) == 1 else (
            c_ast.BinaryOp("+", parts[0], parts[1]) if parts else c_ast.Constant("int", "0"))
        return c_ast.ArrayRef(c_ast.ID(self.base), subscript, coord=coord)


class PointerOffsets:
    """The resolved local pointers of the functions a translator reads.

    ``error(cursor, message)`` makes the translator's located error; ``expr(cursor)``
    translates an integer expression."""

    def __init__(self, error, expr) -> None:
        self.error, self.expr = error, expr
        self.aliases: dict[tuple[int, str], Alias] = {}
        # the assignments that stand for the initializers of pointers declared without one
        # (file offsets): the translation drops them with the declarations
        self.assignments: set[int] = set()
        self._writes: dict[tuple[int, str], dict[tuple[int, str], list[int]]] = {}
        self._scopes: dict[tuple[int, str], list[tuple[int, int]]] = {}

    # ------------------------------------------------------------ declarations
    def declare(self, decl: ci.Cursor, init: ci.Cursor | None) -> c_ast.Node | None:
        """Resolve the local pointer ``decl`` or raise. Returns None (its declaration is
        dropped), or, for a pointer that moves, the element offset it starts at (its
        declaration becomes that of an offset local: module docstring)."""
        name = decl.spelling
        fn = self._function(decl)
        writes = self._scan(fn)
        at = decl
        if init is None:
            at = self._assigned_once(decl, fn, writes)
            init = list(at.get_children())[1]
        elif writes.get(_key(decl)):
            moved = self._moved_once(decl, fn, writes)
            if moved is None:
                return self._moving(decl, init, fn)
            # ``p = base; p += e;``: the two statements set one fixed offset
            from .clang_setup import binary_operator

            base, offset = self._resolve(init, decl)
            step = self.expr(list(moved.get_children())[1])
            if binary_operator(moved) == "-=":
                step = c_ast.UnaryOp("-", step)
            offset = step if offset is None else c_ast.BinaryOp("+", offset, step)
            self._check_offset_fixed(decl, list(moved.get_children())[1], fn, writes, moved)
            self.assignments.add(moved.extent.start.offset)
            return self._alias(decl, base, offset, init, fn, writes, decl)
        base, offset = self._resolve(init, decl)
        if at is not decl:
            self.assignments.add(at.extent.start.offset)
        return self._alias(decl, base, offset, init, fn, writes, at)

    def _alias(self, decl: ci.Cursor, base: ci.Cursor, offset: c_ast.Node | None,
               init: ci.Cursor, fn: ci.Cursor, writes: dict, at: ci.Cursor) -> None:
        """Record ``decl`` as ``base`` at ``offset`` (after the checks of module docstring)."""
        name = decl.spelling
        if _pointee(decl) != _pointee(base):
            raise self.error(decl, f"local pointer '{name}' reinterprets '{base.spelling}' "
                             f"({_pointee(base)}) as {_pointee(decl)}: not supported")
        self._check_offset_fixed(decl, init, fn, writes, at)
        alias = self.aliases.get(_key(base.referenced))
        if alias is not None:        # an offset of an offset
            offset = offset if alias.offset is None else (
                copy.deepcopy(alias.offset) if offset is None else
                c_ast.BinaryOp("+", copy.deepcopy(alias.offset), offset))
            self.aliases[_key(decl)] = Alias(alias.base, offset)
        else:
            self.aliases[_key(decl)] = Alias(base.spelling, offset)

    def _moved_once(self, decl: ci.Cursor, fn: ci.Cursor, writes: dict) -> ci.Cursor | None:
        """The one move of a pointer that the statement right after its declaration makes
        (Caffe's ``const float* data_im_ptr = data_im; data_im_ptr += (c_im * height +
        h_offset) * width + w_offset;``), or None: the two set a fixed offset."""
        from .clang_setup import binary_operator

        if len(writes.get(_key(decl), [])) != 1:
            return None
        for block in fn.walk_preorder():
            if block.kind != K.COMPOUND_STMT:
                continue
            items = list(block.get_children())
            for first, second in zip(items, items[1:]):
                if first.kind == K.DECL_STMT and any(c == decl for c in first.get_children()) \
                        and second.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and \
                        binary_operator(second) in ("+=", "-=") and \
                        _refers(strip(next(iter(second.get_children()))), decl):
                    return second
        return None

    def _moving(self, decl: ci.Cursor, init: ci.Cursor, fn: ci.Cursor) -> c_ast.Node:
        """A pointer moved after its declaration, as an offset local (module docstring):
        its first offset, after checking that every write moves it and every other use
        indexes or dereferences it."""
        from .clang_setup import binary_operator, unary_operator

        name = decl.spelling
        base, offset = self._resolve(init, decl)
        if _pointee(decl) != _pointee(base):
            raise self.error(decl, f"local pointer '{name}' reinterprets '{base.spelling}' "
                             f"({_pointee(base)}) as {_pointee(decl)}: not supported")
        alias = self.aliases.get(_key(base.referenced))
        if alias is not None and alias.offset is not None:
            offset = copy.deepcopy(alias.offset) if offset is None else \
                c_ast.BinaryOp("+", copy.deepcopy(alias.offset), offset)

        def parents(node: ci.Cursor, up: list):
            for child in node.get_children():
                yield child, up
                yield from parents(child, up + [child])

        for use, up in parents(fn, [fn]):
            if not _refers(use, decl):
                continue
            chain = [c for c in reversed(up) if c.kind not in (K.UNEXPOSED_EXPR,
                                                              K.PAREN_EXPR)]
            parent = chain[0] if chain else None
            ok = False
            if parent is not None and parent.kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
                ok = binary_operator(parent) in ("+=", "-=") and \
                    _refers(strip(next(iter(parent.get_children()))), decl)
            elif parent is not None and parent.kind == K.UNARY_OPERATOR:
                op = unary_operator(parent)
                ok = op in ("++", "--", "p++", "p--") or op == "*"
            elif parent is not None and parent.kind == K.ARRAY_SUBSCRIPT_EXPR:
                ok = _refers(strip(next(iter(parent.get_children()))), decl)
            elif parent is not None and parent.kind == K.BINARY_OPERATOR and \
                    binary_operator(parent) in ("+", "-") and len(chain) > 1 and \
                    chain[1].kind == K.UNARY_OPERATOR and unary_operator(chain[1]) == "*":
                ok = True                                    # *(p + e)
            elif parent is not None and parent.kind == K.BINARY_OPERATOR and \
                    binary_operator(parent) == "=" and \
                    _refers(strip(next(iter(parent.get_children()))), decl):
                raise self.error(parent, f"local pointer '{name}' is set again: only moves "
                                 f"('{name} += n', '{name}++') of a pointer into an array "
                                 "parameter are supported")
            if not ok:
                raise self.error(use, f"local pointer '{name}', which moves, is used other "
                                 f"than by indexing it ('{name}[i]', '*{name}') or moving it: "
                                 "not supported")
        self.aliases[_key(decl)] = Alias(alias.base if alias is not None else base.spelling,
                                         c_ast.ID(name), moving=True)
        return offset if offset is not None else c_ast.Constant("int", "0")

    def _assigned_once(self, decl: ci.Cursor, fn: ci.Cursor, writes: dict) -> ci.Cursor:
        """The one assignment of a pointer declared without an initializer (C89's
        ``const float *row; ... row = a + i * n;``), which then stands for its initializer:
        a statement of its own in a block, and every use of the pointer after it, in that
        block (where the assignment has run, and run last)."""
        from .clang_setup import binary_operator

        name = decl.spelling
        found = [c for block in fn.walk_preorder() if block.kind == K.COMPOUND_STMT
                 for c in block.get_children()
                 if c.kind == K.BINARY_OPERATOR and binary_operator(c) == "=" and
                 _refers(strip(next(iter(c.get_children()))), decl)]
        if len(writes.get(_key(decl), [])) != 1 or len(found) != 1:
            raise self.error(decl, f"local pointer '{name}' has no initializer and is not "
                             "assigned exactly once, as a statement of its own: only a "
                             "pointer set once to an offset of an array parameter is "
                             "supported ('p = a + i * n')")
        (assignment,) = found
        block = next(b for b in fn.walk_preorder() if b.kind == K.COMPOUND_STMT and
                     any(c == assignment for c in b.get_children()))
        after, end = assignment.extent.end.offset, block.extent.end.offset
        for use in fn.walk_preorder():
            if use.kind == K.DECL_REF_EXPR and _refers(use, decl) and \
                    not assignment.extent.start.offset <= use.extent.start.offset < after \
                    and not after <= use.extent.start.offset < end:
                raise self.error(use, f"local pointer '{name}' is used where its assignment "
                                 f"(line {assignment.location.line}) may not have run: only "
                                 "uses after it in its block are supported")
        return assignment

    def _resolve(self, init: ci.Cursor, decl: ci.Cursor) -> tuple[ci.Cursor, c_ast.Node | None]:
        """(the pointer the initializer offsets, the offset) of ``a``, ``a + e``, ``e + a``,
        ``a - e``, ``&a[e]`` and sums of these (``out + b * T * C + t * C + c``)."""
        from .clang_setup import binary_operator, unary_operator

        init = strip(init)
        if init.kind == K.DECL_REF_EXPR and self._is_array(init):
            return init, None
        if init.kind == K.BINARY_OPERATOR and binary_operator(init) in ("+", "-"):
            left, right = (strip(c) for c in init.get_children())
            op = binary_operator(init)
            if op == "+" and is_pointer(right) and not is_pointer(left):
                left, right = right, left
            if is_pointer(left) and not is_pointer(right):
                base, offset = self._resolve(left, decl)
                step = self.expr(right)
                if op == "-":
                    step = c_ast.UnaryOp("-", step)
                return base, step if offset is None else c_ast.BinaryOp(
                    "-" if op == "-" else "+", offset, self.expr(right) if op == "-" else step)
        if init.kind == K.UNARY_OPERATOR and unary_operator(init) == "&":
            (operand,) = [strip(c) for c in init.get_children()]
            if operand.kind == K.ARRAY_SUBSCRIPT_EXPR:
                base, index = (strip(c) for c in operand.get_children())
                if base.kind == K.DECL_REF_EXPR and self._is_array(base):
                    return base, self.expr(index)
        raise self.error(decl, f"local pointer '{decl.spelling}': only an offset of an array "
                         "parameter is supported ('p = a + i * n', '&a[i * n]')")

    def _is_array(self, ref: ci.Cursor) -> bool:
        """A reference to a pointer parameter or to a resolved local pointer."""
        target = ref.referenced
        return target is not None and is_pointer(ref) and (
            target.kind == K.PARM_DECL or _key(target) in self.aliases)

    def _check_offset_fixed(self, decl: ci.Cursor, init: ci.Cursor, fn: ci.Cursor,
                            writes: dict, start: ci.Cursor) -> None:
        """Every variable of the offset keeps its value while the pointer lives: from the
        declaration to the end of the block that declares it (or the ``for`` whose header
        does). A write before the declaration in that block runs before it, and one outside
        the block (a loop's increment around it: ``for (y = id; y < h; y += n) { const float
        *row = M + y * w; ... }``) runs while no instance of the pointer lives: each
        iteration declares it anew. ``start`` is the declaration, or the assignment that
        stands for its initializer (:meth:`_assigned_once`), from which the pointer lives."""
        at = start.extent.start.offset
        end = min((hi for lo, hi in self._scopes[_key(fn)] if lo <= at < hi), default=None)
        for ref in init.walk_preorder():
            if ref.kind != K.DECL_REF_EXPR or ref.referenced is None or is_pointer(ref):
                continue
            for where in writes.get(_key(ref.referenced), []):
                if where > at and (end is None or where < end) and \
                        where != start.extent.start.offset:
                    raise self.error(decl, f"local pointer '{decl.spelling}' offsets by "
                                     f"'{ref.spelling}', which changes after the pointer is "
                                     "set: index the array instead")

    def _function(self, decl: ci.Cursor) -> ci.Cursor:
        fn = decl.semantic_parent
        while fn is not None and fn.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
            fn = fn.semantic_parent
        return fn

    def _scan(self, fn: ci.Cursor) -> dict[tuple[int, str], list[int]]:
        """Where each variable of ``fn`` is written (file offsets), and its loops' extents."""
        from .clang_setup import binary_operator, unary_operator

        key = _key(fn)
        if key in self._writes:
            return self._writes[key]
        writes: dict[tuple[int, str], list[int]] = {}
        scopes = []
        for c in fn.walk_preorder():
            target = None
            if c.kind in (K.COMPOUND_STMT, K.FOR_STMT):
                scopes.append((c.extent.start.offset, c.extent.end.offset))
            elif c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                if binary_operator(c) in _WRITES:
                    target = strip(next(iter(c.get_children())))
            elif c.kind == K.UNARY_OPERATOR and unary_operator(c) in ("p++", "p--", "++", "--"):
                target = strip(next(iter(c.get_children())))
            if target is not None and target.kind == K.DECL_REF_EXPR and target.referenced:
                writes.setdefault(_key(target.referenced), []).append(c.extent.start.offset)
        self._writes[key], self._scopes[key] = writes, scopes
        return writes

    # -------------------------------------------------------------------- uses
    def is_assignment(self, cursor: ci.Cursor) -> bool:
        """Whether the statement ``cursor`` is the assignment (or the move right after its
        declaration) that set a resolved pointer."""
        return cursor.extent.start.offset in self.assignments and \
            cursor.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR)

    def alias_of(self, cursor: ci.Cursor) -> Alias | None:
        """The resolved pointer ``cursor`` (under casts) refers to, or None."""
        cursor = strip(cursor)
        if cursor.kind != K.DECL_REF_EXPR or cursor.referenced is None:
            return None
        return self.aliases.get(_key(cursor.referenced))

    def dereference(self, operand: ci.Cursor, coord) -> c_ast.Node | None:
        """``*p`` / ``*(p + e)`` / ``*(a + e)`` as an array access, or None when ``operand``
        is not such a pointer expression."""
        from .clang_setup import binary_operator

        alias = self.alias_of(operand)
        if alias is not None:
            return alias.access(None, coord)
        operand = strip(operand)
        if operand.kind == K.UNARY_OPERATOR:
            from .clang_setup import unary_operator

            op = unary_operator(operand)
            (inner,) = list(operand.get_children())
            alias = self.alias_of(inner)
            if alias is not None and alias.moving and op in ("p++", "p--", "++", "--"):
                # ``*out++ = v``: the element at the offset before (or after) the move
                return c_ast.ArrayRef(c_ast.ID(alias.base), c_ast.UnaryOp(
                    op, c_ast.ID(strip(inner).spelling)), coord=coord)
        if operand.kind == K.DECL_REF_EXPR and operand.referenced is not None and \
                operand.referenced.kind == K.PARM_DECL and is_pointer(operand):
            return c_ast.ArrayRef(c_ast.ID(operand.spelling), c_ast.Constant("int", "0"),
                                  coord=coord)
        found = self._sum(operand)
        if found is not None:
            left, offset = found
            alias = self.alias_of(left)
            if alias is not None:
                return alias.access(offset, coord)
            if left.referenced is not None and left.referenced.kind == K.PARM_DECL:
                return c_ast.ArrayRef(c_ast.ID(left.spelling), offset, coord=coord)
        return None

    def _sum(self, operand: ci.Cursor) -> tuple[ci.Cursor, c_ast.Node] | None:
        """``p + e``, ``e + p``, ``p - e`` and chains of them (Rodinia's ``*(m + Size * (i +
        1) + t)``) as (the pointer named, the offset), or None."""
        from .clang_setup import binary_operator

        operand = strip(operand)
        if operand.kind == K.DECL_REF_EXPR and is_pointer(operand):
            return operand, None
        if operand.kind != K.BINARY_OPERATOR or binary_operator(operand) not in ("+", "-"):
            return None
        op = binary_operator(operand)
        left, right = (strip(c) for c in operand.get_children())
        if op == "+" and is_pointer(right):
            left, right = right, left
        if not is_pointer(left) or is_pointer(right):
            return None
        inner = self._sum(left)
        if inner is None:
            return None
        base, offset = inner
        term = self.expr(right)
        if offset is None:
            return base, c_ast.UnaryOp("-", term) if op == "-" else term
        return base, c_ast.BinaryOp(op, offset, term)
