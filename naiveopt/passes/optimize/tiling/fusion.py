"""One loop nest for all of a thread's outputs: fusing thread-merge copies.

Thread merge (copies.py) gives a thread one copy of the kernel's body per output, each under
its own active flag. For a stencil that means MX*MY separate loop nests over the filter: each
tap's weight is loaded MX*MY times and no input value read by one output's taps is seen to be
the one a neighbouring output reads. Fused, the copies share one nest, its body holding every
copy's statements side by side:

    float sum_0 = 0, sum_1 = 0;                 float sum_0 = 0; ...loop 0...
    for (i) for (j) {                    <-     if (active_0) out[...] = sum_0;
        sum_0 += s_in[..][j + 0] * f[i][j];     float sum_1 = 0; ...loop 1...
        sum_1 += s_in[..][j + 1] * f[i][j];     if (active_1) out[...] = sum_1;
    }
    if (active_0) out[...] = sum_0;
    if (active_1) out[...] = sum_1;

so that nvcc (or the pass, unrolling: ir/unroll.py) keeps the weight and the shared inputs in
registers across copies.

Why it is safe. The copies were threads of the naive kernel, which may run in any order and
do not communicate, and fusion keeps each copy's own statements in order; so reordering
statements of different copies changes nothing, provided that what a copy now runs without
its flag (the fused loops) does no harm for a copy that is inactive:

- the fused loops have the same header in every copy (one iteration space), with no memory
  access and no side effect but the iterator's step;
- inside them, statements only read shared memory (a window or tile, whose every cell an
  inactive copy's indices stay inside: their loop bounds are the active copies'), read and
  write the copy's own locals (every local is renamed per copy), and call pure functions;
  no global memory, no store to an array, no barrier, no exit from the loop, no division by
  a value that is not a constant (an inactive copy's garbage could be zero: a trap on a CPU);
- declarations before the loops move out of the flag when their initialiser is equally
  harmless; otherwise the variable is declared bare and assigned under the flag (an inactive
  copy computes with an unset value whose result it never stores).

Straight-line statements that are as harmless (a 3x3 filter written out tap by tap) are
fused the same way: side by side, outside the flags. Other statements keep their flags. A nest
whose headers differ between copies is left per copy, under its flag.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....ir.build import fresh, statements
from ....ir.cgen import to_c
from ....ir.rewrite import map_nodes, side_effect_free, walk
from ...functional.builtins import PURE_CALLS

_EXITS = (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label)


def fuse_copies(copies: list[list[c_ast.Node]], actives: list[str | None], shared: set[str],
                params: set[str], elements: dict[str, str] | None = None,
                taken: set[str] | None = None) -> tuple[list[c_ast.Node] | None, str]:
    """The fused statements of the thread's copies (each a list of statements of the same
    shape, ``actives`` their flags, None where a copy is always active), or (None, why not).
    ``shared``: the arrays fused loops may read; ``params``: the kernel's parameters (not
    renamed per copy, so never assigned in a fused loop); ``elements``: the element type of
    each global array, for a store ``A[i] = VALUE`` whose value is computed outside the flag
    in a local of that type (named from ``taken``) and stored under it."""
    elements = elements or {}
    taken = taken if taken is not None else set()
    if len({len(c) for c in copies}) != 1:
        return None, "the copies differ in shape"
    out: list[c_ast.Node] = []
    pending: list[list[c_ast.Node]] = [[] for _ in copies]
    fused = 0
    refused = ""                            # why a nest could not be fused

    def flush() -> None:
        for c, items in enumerate(pending):
            if items:
                out.extend(_when(actives[c], items))
            pending[c] = []

    for k in range(len(copies[0])):
        items = [c[k] for c in copies]
        if all(isinstance(s, c_ast.For) for s in items):
            loop, why = _fuse_loop(items, shared, params)
            if loop is not None:
                flush()
                out.append(loop)
                fused += 1
                continue
            refused = refused or why
        if all(isinstance(s, c_ast.Decl) for s in items):
            flush()
            for c, decl in enumerate(items):
                if decl.init is None or _harmless_expr(decl.init, shared):
                    out.append(decl)
                elif isinstance(decl.type, c_ast.TypeDecl) and \
                        not isinstance(decl.init, c_ast.InitList):
                    bare = copy.copy(decl)
                    bare.init = None
                    out.append(bare)
                    pending[c].append(c_ast.Assignment("=", c_ast.ID(decl.name), decl.init))
                else:
                    return None, f"{decl.name} is declared with an initialiser that reads " \
                        "memory"
            continue
        if not any(isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)) for s in items) and \
                not any(_harm(s, shared, params) for s in items):
            # straight-line code as harmless as a fused loop's body (a 3x3 filter written
            # out): every copy's statement side by side, outside the flags, in one block
            flush()
            out.extend(items)
            fused += 1
            continue
        split = [_split_store(s, shared, params, elements, taken) for s in items]
        if all(parts is not None for parts in split):
            # a store of a harmless value (conv2d's 9 taps written into B[i][j]): the value
            # side by side outside the flags, the store under each copy's flag
            flush()
            for c, (decl, store) in enumerate(split):
                out.append(decl)
                pending[c].append(store)
            fused += 1
            continue
        for c, s in enumerate(items):
            pending[c].append(s)
    flush()
    if not fused:
        return None, refused or "no loop nest is the same in every copy"
    return out, ""


def _split_store(st: c_ast.Node, shared: set[str], params: set[str],
                 elements: dict[str, str], taken: set[str]
                 ) -> tuple[c_ast.Decl, c_ast.Assignment] | None:
    """``TYPE v = VALUE;`` and ``A[i] = v;`` for a store ``A[i] = VALUE`` of a global array
    of known element type whose value is harmless (fused loops' rules), else None."""
    if not (isinstance(st, c_ast.Assignment) and st.op == "=" and
            isinstance(st.lvalue, c_ast.ArrayRef)):
        return None
    array = _base(st.lvalue)
    elem = elements.get(array or "")
    if not any(isinstance(n, c_ast.ArrayRef) for n, _ in walk(st.rvalue)):
        return None                         # nothing read to share (out[i] = sum)
    if elem is None or array in shared or _harm(c_ast.Compound([c_ast.Assignment(
            "=", c_ast.ID("__naiveopt_value"), st.rvalue)]), shared, params):
        return None
    name = fresh(taken, f"{array}_value")
    decl = statements(f"{elem} {name} = VALUE;", VALUE=st.rvalue)[0]
    return decl, c_ast.Assignment("=", st.lvalue, c_ast.ID(name))


def _when(active: str | None, items: list[c_ast.Node]) -> list[c_ast.Node]:
    if active is None:
        return items
    return [c_ast.If(c_ast.ID(active), c_ast.Compound(items), None)]


def _iterator(loop: c_ast.For) -> str | None:
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        return init.decls[0].name
    return None


def _renamed(node: c_ast.Node, old: str, new: str) -> c_ast.Node:
    node = copy.deepcopy(node)
    if old == new:
        return node

    def fn(n: c_ast.Node) -> c_ast.Node:
        if isinstance(n, c_ast.ID) and n.name == old:
            n.name = new
        elif isinstance(n, c_ast.Decl) and n.name == old:
            n.name = new
            t = n.type
            while not isinstance(t, c_ast.TypeDecl):
                t = t.type
            t.declname = new
        return n

    return map_nodes(node, fn)


def _fuse_loop(loops: list[c_ast.For], shared: set[str], params: set[str]
               ) -> tuple[c_ast.For | None, str]:
    """One loop for the copies' loops (module docstring), or (None, why not)."""
    names = [_iterator(lp) for lp in loops]
    if None in names:
        return None, "a loop does not declare its iterator"
    loops = [_renamed(lp, n, names[0]) for lp, n in zip(loops, names)]
    head = loops[0]
    text = [(to_c(lp.init), to_c(lp.cond), to_c(lp.next)) for lp in loops]
    if any(t != text[0] for t in text[1:]):
        return None, "the loop headers differ between copies"
    for part in (head.init, head.cond):
        if part is not None and not _harmless_expr(part, set()):
            return None, "a loop header reads memory or has side effects"
    if head.next is not None and any(isinstance(n, (c_ast.ArrayRef, c_ast.FuncCall))
                                     for n, _ in walk(head.next)):
        return None, "a loop step reads memory"
    bodies = [lp.stmt.block_items or [] if isinstance(lp.stmt, c_ast.Compound) else [lp.stmt]
              for lp in loops]
    if len({len(b) for b in bodies}) != 1:
        return None, "the loop bodies differ in shape"
    fused: list[c_ast.Node] = []
    for k in range(len(bodies[0])):
        items = [b[k] for b in bodies]
        if all(isinstance(s, c_ast.For) for s in items):
            inner, _ = _fuse_loop(items, shared, params)
            if inner is not None:
                fused.append(inner)
                continue
        for s in items:
            why = _harm(s, shared, params)
            if why:
                return None, why
            fused.append(s)
    return c_ast.For(head.init, head.cond, head.next, c_ast.Compound(fused)), ""


def _harmless_expr(node: c_ast.Node, shared: set[str]) -> bool:
    return side_effect_free(node, PURE_CALLS) and not _reads_memory(node, shared) and \
        not _divides(node)


def _reads_memory(node: c_ast.Node, shared: set[str]) -> bool:
    for n, _ in walk(node):
        if isinstance(n, c_ast.ArrayRef) and _base(n) not in shared:
            return True
        if isinstance(n, c_ast.UnaryOp) and n.op == "*":
            return True
        if isinstance(n, c_ast.StructRef) and n.type == "->":
            return True
    return False


def _divides(node: c_ast.Node) -> bool:
    """Whether ``node`` divides by something that is not a nonzero literal."""
    for n, _ in walk(node):
        if isinstance(n, c_ast.BinaryOp) and n.op in ("/", "%"):
            if not (isinstance(n.right, c_ast.Constant) and n.right.value.strip("0.fFuUlL")):
                return True
    return False


def _base(ref: c_ast.ArrayRef) -> str | None:
    node = ref
    while isinstance(node, c_ast.ArrayRef):
        node = node.name
    return node.name if isinstance(node, c_ast.ID) else None


def _harm(st: c_ast.Node, shared: set[str], params: set[str]) -> str:
    """Why statement ``st`` may not run for an inactive copy ('' if it may)."""
    for n, _ in walk(st):
        if isinstance(n, _EXITS):
            return "a fused loop's body leaves the loop"
        if isinstance(n, c_ast.FuncCall) and not (isinstance(n.name, c_ast.ID) and
                                                   n.name.name in PURE_CALLS):
            return "a fused loop's body calls a function that may have side effects"
        if isinstance(n, (c_ast.Assignment, c_ast.UnaryOp)):
            target = n.lvalue if isinstance(n, c_ast.Assignment) else \
                n.expr if n.op in ("++", "--", "p++", "p--") else None
            if target is not None and not (isinstance(target, c_ast.ID) and
                                           target.name not in params):
                return "a fused loop's body stores to memory or to a parameter"
    if _reads_memory(st, shared):
        return "a fused loop's body reads global memory"
    if _divides(st):
        return "a fused loop's body divides by a value that may be zero"
    return ""
