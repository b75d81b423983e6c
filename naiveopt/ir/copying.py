"""Deep copies of kernels that share what cannot change.

Passes copy trees all the time: the pass manager snapshots every kernel before every pass
(so that an internal error puts it back), the variant builders copy the kernel per candidate,
the unroller copies a loop body per iteration, the resource query copies each variant before
lowering it. ``copy.deepcopy`` does this generically: per node it looks the type up, calls
``__reduce_ex__`` and rebuilds the object through ``_reconstruct``, and it rebuilds every
sympy expression of the memory-expression analysis the same way, although sympy expressions
are immutable (hash-consed, never changed in place). With the register-blocked stencils'
unrolled bodies (thousands of nodes per variant) that was a third of a compile.

Importing this module (``naiveopt.ir`` does) gives

- every c_ast node (pycparser's and ours) a ``__deepcopy__`` that copies its slots directly,
  sharing strings, numbers and source coordinates (``Coord``; nothing in naiveopt changes one
  in place) and keeping ``copy``'s memo, so that references into a tree copied together with
  it (a MemoryExpression's ``node``) still point into the copy;
- sympy's ``Basic`` a ``__deepcopy__`` that returns the expression itself.

Both keep the semantics of a deep copy for everything that can be mutated."""
from __future__ import annotations

import copy

import sympy
from pycparser import c_ast
from pycparser.c_parser import Coord

#: Values shared by a copy: immutable, or (Coord) never changed in place.
_SHARED = frozenset({str, int, float, bool, type(None), Coord})
_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(cls: type) -> tuple[str, ...]:
    names = _SLOTS.get(cls)
    if names is None:
        seen: list[str] = []
        for klass in cls.__mro__:
            for name in klass.__dict__.get("__slots__", ()):
                if name not in ("__weakref__", "__dict__") and name not in seen:
                    seen.append(name)
        names = _SLOTS[cls] = tuple(seen)
    return names


def _copy(value, memo: dict):
    kind = type(value)
    if kind in _SHARED:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if kind is list:
        new: list = []
        memo[id(value)] = new
        new.extend(_copy(item, memo) for item in value)
        return new
    if isinstance(value, c_ast.Node):
        return _copy_node(value, memo)
    return copy.deepcopy(value, memo)


def _copy_node(node: c_ast.Node, memo: dict) -> c_ast.Node:
    cls = type(node)
    new = object.__new__(cls)
    memo[id(node)] = new
    for name in _slots(cls):
        try:
            value = getattr(node, name)
        except AttributeError:      # a slot never assigned stays unassigned
            continue
        setattr(new, name, _copy(value, memo))
    state = getattr(node, "__dict__", None)     # node classes without __slots__ (TexFetch)
    if state:
        new.__dict__.update({key: _copy(value, memo) for key, value in state.items()})
    return new


def _share(expr: sympy.Basic, memo: dict) -> sympy.Basic:
    return expr


c_ast.Node.__deepcopy__ = _copy_node        # type: ignore[attr-defined]
sympy.Basic.__deepcopy__ = _share           # type: ignore[attr-defined]
